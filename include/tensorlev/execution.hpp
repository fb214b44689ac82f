#pragma once
/// @file execution.hpp
/// Where a generated kernel runs. The generator splits a kernel's outermost
/// loop into chunks when every chunk writes its own part of the output (see
/// docs/design.md, "Parallel execution") and hands the chunks to an
/// executor; `serial` runs the plain loop on the calling thread. The
/// executor is type-erased (a function pointer), so a kernel is
/// instantiated once whatever runs it, and this header needs no threading
/// library: `tensorlev/kokkos.hpp` makes one from a Kokkos execution space.
///
///     tensorlev::compute(tensorlev::serial, y(i), A(i, j) * x(j));
///     tensorlev::compute(tensorlev::kokkos_executor<Kokkos::OpenMP>{}, y(i), A(i, j) * x(j));

#include <cstddef>
#include <cstdint>

#include "detail/atomic.hpp"

namespace tensorlev {

/// Runs chunks 0..n-1 of a kernel, each exactly once, in any order and on
/// any threads of the host. A default-constructed executor is serial: the
/// kernel runs its ordinary loop without chunking.
class executor {
 public:
  /// One chunk of work: `fn(ctx, chunk)`.
  using chunk_fn = void (*)(void* ctx, std::size_t chunk);
  /// Runs `fn(ctx, c)` for every c in [0, n); returns when all are done.
  using run_fn = void (*)(const void* self, std::size_t n, chunk_fn fn, void* ctx);

  constexpr executor() noexcept = default;
  /// `self` is passed back to `run` and must outlive every kernel run with
  /// this executor; `concurrency` is how many chunks may run at once.
  constexpr executor(const void* self, run_fn run, std::size_t concurrency) noexcept
      : self_(self), run_(run), concurrency_(concurrency > 0 ? concurrency : 1) {}

  /// Whether kernels split their outer loop into chunks for this executor.
  [[nodiscard]] constexpr bool parallel() const noexcept { return run_ != nullptr; }
  [[nodiscard]] constexpr std::size_t concurrency() const noexcept { return concurrency_; }

  void for_chunks(std::size_t n, chunk_fn fn, void* ctx) const {
    if (run_ == nullptr) {
      for (std::size_t c = 0; c < n; ++c) fn(ctx, c);
    } else {
      run_(self_, n, fn, ctx);
    }
  }

 private:
  const void* self_ = nullptr;
  run_fn run_ = nullptr;
  std::size_t concurrency_ = 1;
};

/// A device launcher runs kernels in their device form: one typed launch
/// per loop nest, with every operand read where the launcher runs
/// (kernel::run_device). `tensorlev/kokkos.hpp` makes one from a Kokkos
/// execution space (kokkos_device_executor, and kokkos_executor on a
/// device space). A launcher L has a member type `device_launcher_tag` and
///  - `upload(const T& x) -> const T*`: a bytewise copy of x in the
///    launcher's memory, alive while the launcher is;
///  - `for_each(n, f)`: `f(c)` for every c in [0, n), concurrently, where
///    the launcher runs (f's call operator is TENSORLEV_HOST_DEVICE);
///  - `sum<V>(n, f) -> V`: the sum of `f(c)` over c in [0, n), on the host.
/// and, for sparse outputs (assembled where the launcher runs),
///  - `alloc<T>(n, zeroed) -> A`: an array of n T in the launcher's memory
///    (zero-filled if asked), with `data()`; the output tensor's arrays
///    adopt it (they are constructible from an A);
///  - `exclusive_scan(a, n) -> std::uint64_t`: replaces a[0, n) (T*, in the
///    launcher's memory, non-negative entries) by its exclusive prefix sums
///    where the launcher runs, and returns the sum of the old entries,
///    computed in 64 bits (the caller checks that it fits T).
template <class L>
concept device_launcher = requires { typename L::device_launcher_tag; };

namespace detail {
inline std::uint64_t kernel_count = 0;  // atomic: kernels run on several threads
inline void count_kernel() noexcept { (void)atomic_fetch_add_relaxed(&kernel_count, std::uint64_t{1}); }
}  // namespace detail

/// How many loop nests generated kernels have run in this process, on any
/// executor: each kernel a statement runs (one, or one per group of terms,
/// or two for `+=` with a reduction into a sparse output; operand
/// conversions are not counted), and a
/// fused kernel of `fuse` (fuse.hpp) once. Read it before and after a piece
/// of code to count what that code ran (examples/cg prints it per
/// iteration).
[[nodiscard]] inline std::uint64_t kernels_run() noexcept {
  return detail::atomic_load_relaxed(&detail::kernel_count);
}

/// The default: the calling thread, no chunking.
inline constexpr executor serial{};

/// Runs every chunk on the calling thread, in a scrambled order: for tests
/// of the chunked code path without threads (and under sanitizers).
class chunked_serial_executor {
 public:
  explicit chunked_serial_executor(std::size_t concurrency = 4) noexcept : concurrency_(concurrency) {}
  // NOLINTNEXTLINE(google-explicit-constructor): converts where an executor is expected
  operator executor() const noexcept { return executor(this, &run, concurrency_); }

 private:
  static void run(const void*, std::size_t n, executor::chunk_fn fn, void* ctx) {
    // Odd chunks backwards, then even chunks forwards.
    for (std::size_t c = n; c-- > 0;)
      if (c % 2 == 1) fn(ctx, c);
    for (std::size_t c = 0; c < n; c += 2) fn(ctx, c);
  }
  std::size_t concurrency_;
};

}  // namespace tensorlev
