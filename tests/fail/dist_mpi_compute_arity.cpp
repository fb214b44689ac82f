// EXPECT: an input's variable string must name one variable per dimension
// A statement whose input string names two variables for a vector.
#include "tensorlev/dist/compute.hpp"
using namespace tensorlev;
namespace td = tensorlev::dist;
using T1 = td::dist_tensor<double, dense_vector, td::distribution<"x->x">>;
using T2 = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
void f(T1& y, const T2& A, const T1& x) {
#ifdef TL_SHOULD_FAIL
  td::compute<"i", "ij", "jk">(y, td::statement_schedule().distribute("i"), A, x);
#else
  td::compute<"i", "ij", "j">(y, td::statement_schedule().distribute("i"), A, x);
#endif
}
int main() { return 0; }
