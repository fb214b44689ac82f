#pragma once
/// @file device_exec.hpp
/// --device: the kernels in their device form on Kokkos' default execution
/// space (Kokkos::Cuda or Kokkos::HIP in a Kokkos built with one; otherwise
/// its default host space, which runs the same device form on host
/// threads). Operands are packed on the host and copied into the space's
/// memory in their format (to_space), results copied back to be checked.
/// Included by the dk_*.cpp translation units, one per group of kernels,
/// which instantiate the (kernel, format) pairs the device form supports
/// (device_unsupported_reason in explore.hpp).

#include <Kokkos_Core.hpp>
#include <tensorlev/kokkos.hpp>

#include "kernels_impl.hpp"

namespace tlx {

struct device_env {
  static constexpr bool device_form = true;
  using space = Kokkos::DefaultExecutionSpace;
  using memory = space::memory_space;
  explicit device_env(const run_options&) {}
  template <class T>
  auto put(const T& t) const {
    return tl::to_space<memory>(t);
  }
  template <class T>
  auto back(const T& t) const {
    return tl::to_owning(tl::to_space<Kokkos::HostSpace>(t));
  }
  template <class Out, class E>
  void compute(const Out& out, const E& e) const {
    tl::compute(tl::kokkos_device_executor<space>{}, out, e);
  }
};

template <kernel_id K, std::size_t F>
constexpr runner<double> device_runner_for() {
  if constexpr (unsupported_reason(K, F) == nullptr && device_unsupported_reason(K, F) == nullptr)
    return &run_format_in<K, double, F, device_env>;
  else
    return nullptr;
}
template <kernel_id K, std::size_t... F>
constexpr std::array<runner<double>, sizeof...(F)> make_device_table(std::index_sequence<F...>) {
  return {device_runner_for<K, F>()...};
}

}  // namespace tlx

/// In a dk_*.cpp file: defines tlx::device_table_<K>(), the device-form
/// runners of kernel K (real values).
#define TLX_DEFINE_DEVICE_TABLE(K)                                                                     \
  namespace tlx {                                                                                      \
  std::span<const runner<double>> device_table_##K() {                                                 \
    static constexpr std::size_t nf =                                                                  \
        kernels[static_cast<int>(kernel_id::K)].order == 2 ? num_matrix_formats : num_tensor_formats;  \
    static constexpr auto t = make_device_table<kernel_id::K>(std::make_index_sequence<nf>{});         \
    return t;                                                                                          \
  }                                                                                                    \
  }
