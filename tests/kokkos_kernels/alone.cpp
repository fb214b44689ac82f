// interop/kokkos_kernels.hpp stands alone (includes what it uses).
#include "tensorlev/interop/kokkos_kernels.hpp"
