// EXPECT: every tensor must be dense row-major
// compute runs dense statements; a CSR piece is refused by name.
#include "tensorlev/dist/compute.hpp"
using namespace tensorlev;
namespace td = tensorlev::dist;
using Vec = td::dist_tensor<double, dense_vector, td::distribution<"x->x">>;
#ifdef TL_SHOULD_FAIL
using Mat = td::dist_tensor<double, csr, td::distribution<"xy->x">>;
#else
using Mat = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
#endif
void f(Vec& y, const Mat& A, const Vec& x) { td::compute<"i", "ij", "j">(y, td::statement_schedule().distribute("i"), A, x); }
int main() { return 0; }
