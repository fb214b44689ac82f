// tl-explore --device: add and spgemm in the device form (real values; sparse CSR results).
#include "device_exec.hpp"

TLX_DEFINE_DEVICE_TABLE(add)
TLX_DEFINE_DEVICE_TABLE(spgemm)
