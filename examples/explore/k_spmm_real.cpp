// tl-explore: the generated spmm kernels for double values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(spmm, double)
