// tl-explore: the generated spgemm kernels for double values, one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(spgemm, double)
