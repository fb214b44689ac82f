#pragma once
/// @file kokkos.hpp
/// Generated kernels on a Kokkos execution space (link `tensorlev::kokkos`).
///
///     Kokkos::ScopeGuard kokkos(argc, argv);
///     tensorlev::compute(tensorlev::kokkos_executor<Kokkos::OpenMP>{}, y(i), A(i, j) * x(j));
///
/// The kernel's chunks (execution.hpp) become the iterations of one
/// `Kokkos::parallel_for` with a dynamic schedule over the space; the call
/// returns after the space is fenced. Host execution spaces only for now:
/// the tensors' level arrays live in host memory (std::vector).

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <utility>

#include "execution.hpp"

namespace tensorlev {

/// An executor on a Kokkos execution space. Must outlive the kernels it
/// runs (a temporary in the `compute` call does).
template <class Space = Kokkos::DefaultHostExecutionSpace>
class kokkos_executor {
  static_assert(Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible,
                "tensorlev::kokkos_executor: the execution space must reach host memory (tensors live in host "
                "memory for now)");

 public:
  using execution_space = Space;
  explicit kokkos_executor(Space space = Space()) : space_(std::move(space)) {}

  // NOLINTNEXTLINE(google-explicit-constructor): converts where an executor is expected
  operator executor() const noexcept {
    return executor(this, &run, static_cast<std::size_t>(space_.concurrency()));
  }
  [[nodiscard]] const Space& space() const noexcept { return space_; }

 private:
  static void run(const void* self, std::size_t n, executor::chunk_fn fn, void* ctx) {
    const auto& me = *static_cast<const kokkos_executor*>(self);
    Kokkos::parallel_for("tensorlev::kernel",
                         Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>(me.space_, 0, n),
                         [=](std::size_t c) { fn(ctx, c); });
    me.space_.fence();
  }
  Space space_;
};

}  // namespace tensorlev
