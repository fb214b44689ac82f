// tl-explore: the generated spgemm kernels for cplx values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(spgemm, cplx)
