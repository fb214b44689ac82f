// --threads N: the executor of Kokkos' default host space initialized with
// N threads (tensorlev::kokkos_executor), or, in a tl-explore built
// without Kokkos, an error saying so. Kept apart from main.cpp so that only
// this file includes Kokkos; the kernels take the type-erased executor.
#include <stdexcept>
#include <string>

#include "explore.hpp"

#ifdef TENSORLEV_EXPLORE_KOKKOS
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <tensorlev/kokkos.hpp>

namespace tlx {
tensorlev::executor threads_executor(int n) {
  if (!Kokkos::is_initialized()) {
    // Kokkos' warnings (OMP_PROC_BIND unset, ...) would go to stdout, into
    // the table or the JSON; thread binding is the user's (OMP_PROC_BIND,
    // OMP_PLACES).
#if KOKKOS_VERSION >= 30700
    Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(n).set_disable_warnings(true));
#else
    Kokkos::InitArguments args;
    args.num_threads = n;
    args.disable_warnings = true;
    Kokkos::initialize(args);
#endif
    std::atexit([] { Kokkos::finalize(); });
  }
  const int got = Kokkos::DefaultHostExecutionSpace().concurrency();
  if (got != n)
    throw std::invalid_argument("--threads " + std::to_string(n) + ": Kokkos' host space (" +
                                Kokkos::DefaultHostExecutionSpace::name() + ") runs " + std::to_string(got) +
                                " threads");
  static const tensorlev::kokkos_executor<> ex;  // outlives every kernel; destroyed before Kokkos::finalize
  return ex;
}
}  // namespace tlx
#else
namespace tlx {
tensorlev::executor threads_executor(int n) {
  throw std::invalid_argument("--threads " + std::to_string(n) +
                              ": this tl-explore was built without Kokkos; only --threads 1 is accepted");
}
}  // namespace tlx
#endif
