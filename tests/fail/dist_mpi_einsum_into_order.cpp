// EXPECT: einsum_into: each input's order must match its indices
// A vector where the einsum string names a matrix is refused at compile
// time, before any rank communicates.
#include "tensorlev/dist/einsum_into.hpp"
using namespace tensorlev;
namespace td = tensorlev::dist;
using Vec = td::dist_tensor<double, dense_vector, td::distribution<"x->x">>;
using Mat = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
#ifdef TL_SHOULD_FAIL
void f(Vec& y, const Mat& a, const Vec& x) { (void)td::einsum_into<"ij,jk->i">(y, a, x); }
#else
void f(Vec& y, const Mat& a, const Vec& x) { (void)td::einsum_into<"ij,j->i">(y, a, x); }
#endif
int main() { return 0; }
