// EXPECT: the output must be dense row-major
// compute takes sparse inputs (each rank's own piece, never moved) but
// builds dense outputs only; a CSR output is refused by name.
#include "tensorlev/dist/compute.hpp"
using namespace tensorlev;
namespace td = tensorlev::dist;
using Vec = td::dist_tensor<double, dense_vector, td::distribution<"x->x">>;
using In = td::dist_tensor<double, csr, td::distribution<"xy->x">>;
#ifdef TL_SHOULD_FAIL
using Out = td::dist_tensor<double, csr, td::distribution<"xy->x">>;
#else
using Out = td::dist_tensor<double, dense_row_major, td::distribution<"xy->x">>;
#endif
void f(Out& C, const In& A, const Vec& x) { td::compute<"ij", "ij", "j">(C, td::statement_schedule().distribute("i"), A, x); }
int main() { return 0; }
