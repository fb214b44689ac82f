// tl-explore: the generated add kernels for double values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(add, double)
