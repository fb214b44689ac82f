// tl-explore --device: the third-order kernels in the device form.
#include "device_exec.hpp"

TLX_DEFINE_DEVICE_TABLE(ttv)
TLX_DEFINE_DEVICE_TABLE(ttm)
TLX_DEFINE_DEVICE_TABLE(mttkrp)
TLX_DEFINE_DEVICE_TABLE(innerprod)
TLX_DEFINE_DEVICE_TABLE(plus)
