// EXPECT: a distributed statement is a product of accesses
// A sum of accesses in a distributed statement (the engine's leaf is a
// product): a readable error instead of a wrong statement.
#include "tensorlev/dist/compute.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
namespace td = tensorlev::dist;
using M = td::dist_tensor<double, dense_row_major, td::distribution<"xy->xy">>;
void f(M& C, const M& A, const M& B) {
#ifdef TL_SHOULD_FAIL
  td::compute(C(i, j) = A(i, j) + B(i, j), td::statement_schedule().distribute("ij"));
#else
  td::compute(C(i, j) = A(i, k) * B(k, j), td::statement_schedule().distribute("ij"));
#endif
}
int main() { return 0; }
