// EXPECT: einsum_into: every tensor must be dense row-major
// einsum_into moves blocks of dense row-major tensors; a CSR input is
// refused by name (sparse inputs go through einsum_distributed).
#include "tensorlev/dist/einsum_into.hpp"
using namespace tensorlev;
namespace td = tensorlev::dist;
using Out = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
using B = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
#ifdef TL_SHOULD_FAIL
using A = td::dist_tensor<double, csr, td::distribution<"xy->x">>;
#else
using A = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
#endif
void f(Out& C, const A& a, const B& b) { (void)td::einsum_into<"ik,kj->ij">(C, a, b); }
int main() { return 0; }
