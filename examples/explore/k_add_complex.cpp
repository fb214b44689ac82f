// tl-explore: the generated add kernels for cplx values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(add, cplx)
