#pragma once
// The second executor of the fuse tests: chunks scrambled on one thread,
// or, built with TL_FUSE_KOKKOS (tests/kokkos), a kokkos_executor on the
// host space's threads, for which this header also defines main (Kokkos
// initialized around the tests). Include it once per test binary.
#include "common.hpp"
#include "tensorlev/execution.hpp"

#ifdef TL_FUSE_KOKKOS
#include <Kokkos_Core.hpp>

#include "tensorlev/kokkos.hpp"
#endif

namespace tltest {

#ifdef TL_FUSE_KOKKOS
inline const tensorlev::kokkos_executor<>* kokkos_space = nullptr;  // set by main while Kokkos is initialized
inline tensorlev::executor second_executor() { return *kokkos_space; }
#else
inline tensorlev::executor second_executor() {
  static const tensorlev::chunked_serial_executor scrambled(3);
  return scrambled;
}
#endif

}  // namespace tltest

#ifdef TL_FUSE_KOKKOS
int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const tensorlev::kokkos_executor<> space;
  tltest::kokkos_space = &space;
  EXPECT_TRUE(tltest::second_executor().parallel());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
#endif
