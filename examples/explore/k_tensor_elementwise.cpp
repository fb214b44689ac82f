// tl-explore: the generated INNERPROD and PLUS kernels (real values), one per supported format.
#include "kernels_impl.hpp"

TLX_DEFINE_TABLE(innerprod, double)
TLX_DEFINE_TABLE(plus, double)
