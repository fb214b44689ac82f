// Stand-ins for the must-not-compile cases about device memory
// (tests/fail/device_*.cpp):
//  - device_memory: borrowed storage that says its arrays are a device's
//    (as kokkos_storage<Kokkos::CudaSpace> does through host_accessible);
//  - stub_launcher: a device launcher that runs everything on the calling
//    thread; reaches<S> is the host's reach, or with TL_STUB_DEVICE_ONLY
//    device memory only (as kokkos_executor<Kokkos::Cuda> reaches
//    CudaSpace and no host memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensorlev/storage.hpp"

struct device_memory : tensorlev::borrowed<> {
  static constexpr bool host_accessible = false;
  using borrowed_type = tensorlev::borrowed<>;
};

struct stub_launcher {
  struct device_launcher_tag {};
  template <class S>
#ifdef TL_STUB_DEVICE_ONLY
  static constexpr bool reaches = !S::host_accessible;
#else
  static constexpr bool reaches = S::host_accessible;
#endif
  template <class T>
  const T* upload(const T& x) const {
    return &x;
  }
  template <class F>
  void for_each(std::size_t n, const F& f) const {
    for (std::size_t c = 0; c < n; ++c) (void)f(c);
  }
  template <class V, class F>
  V sum(std::size_t n, const F& f) const {
    V s{};
    for (std::size_t c = 0; c < n; ++c) s += f(c);
    return s;
  }
  template <class T>
  std::vector<T> alloc(std::size_t n, bool) const {
    return std::vector<T>(n);
  }
  template <class T>
  std::uint64_t exclusive_scan(T* a, std::size_t n) const {
    std::uint64_t s = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const T v = a[k];
      a[k] = static_cast<T>(s);
      s += static_cast<std::uint64_t>(v);
    }
    return s;
  }
};
