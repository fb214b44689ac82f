// tl-explore: the generated TTV, TTM and MTTKRP kernels (real values), one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(ttv, double)
TLX_DEFINE_TABLE(ttm, double)
TLX_DEFINE_TABLE(mttkrp, double)
