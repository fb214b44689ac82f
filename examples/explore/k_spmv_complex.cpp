// tl-explore: the generated spmv kernels for cplx values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(spmv, cplx)
