// Inputs and helpers shared by the suite benchmarks (bench_suite_*): real
// matrices from scripts/fetch-bench-matrices.sh plus one synthetic 3D
// 27-point stencil, registered at run time as
//
//   <kernel>/<impl>/<format>/<matrix>
//
// Matrices: every *.mtx in the folder named by $TENSORLEV_BENCH_MATRICES
// (sorted by name; none if unset), then `stencil27_<n>` (n^3 rows, n from
// $TENSORLEV_BENCH_STENCIL, default 100 (2.6e7 nonzeros); 0 leaves it out).
//
// Impls: `hand` (a loop over the format's arrays, written as a careful
// person would), `eigen` (Eigen 3.4), `tensorlev` (the generated kernel,
// serial), `tensorlev_kokkos` (the same statement on
// kokkos_executor<DefaultHostExecutionSpace>; its thread count is
// --kokkos-threads, recorded in the `threads` counter). bench/run-suite.sh
// runs every binary twice: once with one Kokkos thread for everything but
// tensorlev_kokkos, once with two threads for tensorlev_kokkos only, so that
// idle OpenMP threads never spin beside a serial measurement.
#pragma once

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "inputs.hpp"
#include "tensorlev/io/matrix_market.hpp"

namespace tlbench {

struct matrix_input {
  std::string name;
  tensorlev::coordinate_list<double, int> entries;
  [[nodiscard]] int rows() const { return entries.dims()[0]; }
  [[nodiscard]] int cols() const { return entries.dims()[1]; }
  [[nodiscard]] bool square() const { return rows() == cols(); }
};

inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// The real matrices (sorted by file name), then the stencil.
inline std::vector<std::shared_ptr<const matrix_input>> load_matrices() {
  std::vector<std::shared_ptr<const matrix_input>> out;
  if (const char* dir = std::getenv("TENSORLEV_BENCH_MATRICES"); dir != nullptr && *dir != '\0') {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".mtx") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      out.push_back(std::make_shared<const matrix_input>(
          matrix_input{f.stem().string(), tensorlev::io::read_matrix_market<double, int>(f.string())}));
    if (files.empty()) std::cerr << "warning: no .mtx files in " << dir << "\n";
  } else {
    std::cerr << "note: TENSORLEV_BENCH_MATRICES is not set; only the synthetic stencil runs "
                 "(scripts/fetch-bench-matrices.sh prints the folder)\n";
  }
  if (const int n = env_int("TENSORLEV_BENCH_STENCIL", 100); n > 0)
    out.push_back(std::make_shared<const matrix_input>(matrix_input{"stencil27_" + std::to_string(n), stencil27(n)}));
  return out;
}

inline bool parallel_impl(const std::string& impl) { return impl == "tensorlev_kokkos"; }

// Wall-clock time (the parallel runs' work is on other threads too).
inline void common_options(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

// Records the thread count and the nonzeros processed per second.
inline void set_counters(benchmark::State& state, const std::string& impl, double nnz) {
  state.counters["threads"] = parallel_impl(impl) ? Kokkos::DefaultHostExecutionSpace().concurrency() : 1;
  state.counters["nnz"] = nnz;
  state.SetItemsProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * nnz));
}

// Kokkos first, then Google Benchmark's flags, then `register_all` with the
// loaded matrices.
template <class Register>
int suite_main(int argc, char** argv, Register register_all) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  {
    const auto matrices = load_matrices();
    register_all(matrices);
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace tlbench
