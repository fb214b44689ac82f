// The device form (what kokkos_executor runs on a GPU) on one of Kokkos'
// host spaces, TL_DEVICE_SPACE (Serial or OpenMP): every tensor copied
// with to_space into the space's memory, each statement one launch over
// the space, results copied back with to_space<HostSpace> and compared with
// the serial executor. On a CUDA build of Kokkos the same file compiles for
// Kokkos::Cuda (tests/device).
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include "tensorlev/kokkos.hpp"

#ifndef TL_DEVICE_SPACE
#define TL_DEVICE_SPACE Kokkos::DefaultExecutionSpace
#endif

namespace tltest {
using dev_space = TL_DEVICE_SPACE;

template <class Out, class E>
void dev_compute(const Out& out, const E& e) {
  compute(tensorlev::kokkos_device_executor<dev_space>{}, out, e);
}
template <class Out, class E>
void dev_compute_add(const Out& out, const E& e) {
  compute_add(tensorlev::kokkos_device_executor<dev_space>{}, out, e);
}
template <class T>
auto to_dev(const T& t) {
  return tensorlev::to_space<typename dev_space::memory_space>(t);
}
template <class T>
auto to_host(const T& t) {
  return tensorlev::to_space<Kokkos::HostSpace>(t);
}
}  // namespace tltest

#include "../codegen/device_cases.hpp"

// What the executors are: a kokkos_executor on a host space converts to a
// host executor; on a device space it runs the device form (no conversion).
static_assert(std::is_convertible_v<tensorlev::kokkos_executor<Kokkos::DefaultHostExecutionSpace>, tensorlev::executor>);
static_assert(!std::is_convertible_v<tensorlev::kokkos_device_executor<tltest::dev_space>, tensorlev::executor>);
static_assert(tensorlev::device_launcher<tensorlev::detail::kokkos_launcher<tltest::dev_space>>);
static_assert(std::is_same_v<decltype(tltest::to_dev(std::declval<const tensorlev::tensor<double, tensorlev::csr>&>())),
                             tensorlev::tensor<double, tensorlev::csr, int,
                                               tensorlev::kokkos_storage<tltest::dev_space::memory_space, int, int>>>);

TEST(DeviceForm, RunsOnTheRequestedSpace) {
  std::printf("device form on %s, concurrency %d\n", tltest::dev_space::name(),
              static_cast<int>(tltest::dev_space().concurrency()));
  SUCCEED();
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
