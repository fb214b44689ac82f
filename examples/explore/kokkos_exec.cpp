// --threads N: the executor of Kokkos' default host space initialized with
// N threads (tensorlev::kokkos_executor); --device: Kokkos initialized for
// the device form on its default execution space, and the dispatch to the
// device-form runners (dk_*.cpp). In a tl-explore built without Kokkos,
// errors saying so. Kept apart from main.cpp so that only this file (and
// dk_*.cpp) includes Kokkos; the host kernels take the type-erased executor.
#include <stdexcept>
#include <string>

#include "explore.hpp"

#ifdef TENSORLEV_EXPLORE_KOKKOS
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <tensorlev/kokkos.hpp>

namespace tlx {
namespace {
// Kokkos initialized once: with n threads on its host space when n > 1,
// with its own defaults otherwise.
void init_kokkos(int n) {
  if (Kokkos::is_initialized()) return;
  // Kokkos' warnings (OMP_PROC_BIND unset, ...) would go to stdout, into
  // the table or the JSON; thread binding is the user's (OMP_PROC_BIND,
  // OMP_PLACES).
#if KOKKOS_VERSION >= 30700
  auto settings = Kokkos::InitializationSettings().set_disable_warnings(true);
  if (n > 1) settings.set_num_threads(n);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments args;
  if (n > 1) args.num_threads = n;
  args.disable_warnings = true;
  Kokkos::initialize(args);
#endif
  std::atexit([] { Kokkos::finalize(); });
}
}  // namespace

tensorlev::executor threads_executor(int n) {
  init_kokkos(n);
  const int got = Kokkos::DefaultHostExecutionSpace().concurrency();
  if (got != n)
    throw std::invalid_argument("--threads " + std::to_string(n) + ": Kokkos' host space (" +
                                Kokkos::DefaultHostExecutionSpace::name() + ") runs " + std::to_string(got) +
                                " threads");
  static const tensorlev::kokkos_executor<> ex;  // outlives every kernel; destroyed before Kokkos::finalize
  return ex;
}

std::string device_init(int threads, int& concurrency) {
  init_kokkos(threads);
  using space = Kokkos::DefaultExecutionSpace;
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, space::memory_space>::accessible;
  concurrency = space().concurrency();
  const int host_threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  if (threads > 1 && host_threads != threads)
    throw std::invalid_argument("--threads " + std::to_string(threads) + ": Kokkos' host space (" +
                                Kokkos::DefaultHostExecutionSpace::name() + ") runs " +
                                std::to_string(host_threads) + " threads");
  if (host)
    return std::string(space::name()) + " (Kokkos' default execution space is a host space: this Kokkos has no " +
           "GPU back end, so the device form runs on " + std::to_string(space().concurrency()) + " host threads)";
  return std::string(space::name()) + " (a device space; operands copied to " + space::memory_space::name() + ")";
}

std::span<const runner<double>> device_table(kernel_id k) {
  switch (k) {
    case kernel_id::spmv: return device_table_spmv();
    case kernel_id::spmm: return device_table_spmm();
    case kernel_id::sddmm: return device_table_sddmm();
    case kernel_id::add: return device_table_add();
    case kernel_id::spgemm: return device_table_spgemm();
    case kernel_id::ttv: return device_table_ttv();
    case kernel_id::ttm: return device_table_ttm();
    case kernel_id::mttkrp: return device_table_mttkrp();
    case kernel_id::innerprod: return device_table_innerprod();
    case kernel_id::plus: return device_table_plus();
  }
  return {};
}
}  // namespace tlx
#else
namespace tlx {
tensorlev::executor threads_executor(int n) {
  throw std::invalid_argument("--threads " + std::to_string(n) +
                              ": this tl-explore was built without Kokkos; only --threads 1 is accepted");
}
std::string device_init(int, int&) {
  throw std::invalid_argument("--device: this tl-explore was built without Kokkos (the device form runs on a Kokkos "
                              "execution space; configure with -DTENSORLEV_KOKKOS=ON and a Kokkos with CUDA or HIP)");
}
std::span<const runner<double>> device_table(kernel_id) { return {}; }
}  // namespace tlx
#endif
