// The device form (what kokkos_executor runs on a GPU) on Kokkos' spaces:
// every tensor copied with to_space into the space's memory, each
// statement one launch over the space, results copied back with
// to_space<HostSpace> and compared with the serial executor.
//  - TL_DEVICE_SPACE defined (Kokkos::Cuda, Kokkos::HIP): that space.
//  - otherwise the host spaces Kokkos has (TL_HAS_SERIAL, TL_HAS_OPENMP) in
//    one binary, the space chosen at run time by TL_DEVICE_HOST_SPACE
//    (Serial or OpenMP; ctest runs it once for each). Both share the
//    generated kernels' instantiations (the operands are the same views
//    in HostSpace), which a binary per space compiled twice.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "tensorlev/kokkos.hpp"

namespace tltest {
#ifdef TL_DEVICE_SPACE
using dev_space = TL_DEVICE_SPACE;
template <class F>
decltype(auto) on_space(F&& f) {
  return f(std::type_identity<dev_space>{});
}
inline std::string space_name() { return dev_space::name(); }
#else
#if !defined(TL_HAS_SERIAL) && !defined(TL_HAS_OPENMP)
#error "tests/kokkos/device.cpp: define TL_DEVICE_SPACE, or TL_HAS_SERIAL and/or TL_HAS_OPENMP"
#endif
using dev_space = Kokkos::DefaultHostExecutionSpace;  // its memory space: HostSpace, as both host spaces'
inline std::string space_name() {
  const char* e = std::getenv("TL_DEVICE_HOST_SPACE");
  return e != nullptr ? std::string(e) : std::string("OpenMP");
}
// Runs f with the space TL_DEVICE_HOST_SPACE names.
template <class F>
decltype(auto) on_space(F&& f) {
  static const std::string name = space_name();
#ifdef TL_HAS_SERIAL
  if (name == "Serial") return f(std::type_identity<Kokkos::Serial>{});
#endif
#ifdef TL_HAS_OPENMP
  if (name == "OpenMP") return f(std::type_identity<Kokkos::OpenMP>{});
#endif
  throw std::runtime_error("TL_DEVICE_HOST_SPACE=" + name + ": this Kokkos has no such host space");
}
#endif

template <class Out, class E>
void dev_compute(const Out& out, const E& e) {
  on_space([&]<class Sp>(std::type_identity<Sp>) { compute(tensorlev::kokkos_device_executor<Sp>{}, out, e); });
}
template <class Out, class E>
void dev_compute_add(const Out& out, const E& e) {
  on_space([&]<class Sp>(std::type_identity<Sp>) { compute_add(tensorlev::kokkos_device_executor<Sp>{}, out, e); });
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
  tltest::on_space([]<class Sp>(std::type_identity<Sp>) {
    EXPECT_EQ(std::string(Sp::name()), tltest::space_name());
    std::printf("device form on %s, concurrency %d\n", Sp::name(), static_cast<int>(Sp().concurrency()));
  });
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
