// tl-explore: the generated spmv kernels for double values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(spmv, double)
