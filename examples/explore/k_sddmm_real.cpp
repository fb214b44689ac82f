// tl-explore: the generated sddmm kernels for double values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(sddmm, double)
