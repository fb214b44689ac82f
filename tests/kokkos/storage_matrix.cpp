// The kernel matrix of tests/codegen/storage_matrix.hpp (SpMV, sparse add
// into every output format, SpGEMM, SDDMM, MTTKRP, in every format those
// tests cover) with the third storage Kokkos Views: operands and sparse
// outputs whose arrays are `Kokkos::View<std::int64_t*>` positions and
// `Kokkos::View<std::int32_t*>` coordinates in host memory. Results must
// equal the owning and borrowed runs and the dense reference.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "tensorlev/kokkos.hpp"

namespace tlstorage {
using wide = tensorlev::kokkos_storage<Kokkos::HostSpace, std::int64_t, std::int32_t>;
}
#define TL_STORAGE_SUITE KokkosStorageMatrix
#include "../codegen/storage_matrix.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
