// tl-explore --device: spmv, spmm and sddmm in the device form (real values).
#include "device_exec.hpp"

TLX_DEFINE_DEVICE_TABLE(spmv)
TLX_DEFINE_DEVICE_TABLE(spmm)
TLX_DEFINE_DEVICE_TABLE(sddmm)
