// What the standalone peer benchmarks share (bench/kokkos_kernels and
// bench/peers: separate CMake projects that cannot link the main build's
// Kokkos): the list of inputs as bench/suite.hpp reads it, Google Benchmark
// options and counters as the suite sets them, and checks of a peer's result
// against tensorlev's by entry count and sums.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "inputs.hpp"
#include "tensorlev/error.hpp"

namespace tlbench {

// A failed check or an unusable input: main reports it and exits with status 1.
struct fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void die(const std::string& msg) { throw fatal(msg); }

// The files given on the command line (after the flags), or else every file
// with extension `ext` in the folder named by the environment variable `env`,
// sorted by name. `from_dir` says which: a folder may hold files a benchmark
// skips, a path given explicitly must load.
inline std::vector<std::string> input_paths(int argc, char** argv, const char* env, const char* ext,
                                            bool& from_dir) {
  std::vector<std::string> paths;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s.size() > 1 && s[0] == '-') die("unrecognized flag '" + s + "'");
    paths.push_back(s);
  }
  from_dir = false;
  if (!paths.empty()) return paths;
  const char* dir = std::getenv(env);
  if (dir == nullptr || *dir == '\0') return paths;
  from_dir = true;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ext && e.is_regular_file()) paths.push_back(e.path().string());
  if (ec) die(std::string("cannot list ") + env + "='" + dir + "': " + ec.message());
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    return std::filesystem::path(a).filename() < std::filesystem::path(b).filename();
  });
  if (paths.empty()) std::fprintf(stderr, "warning: no %s files in %s\n", ext, dir);
  return paths;
}

// $TENSORLEV_BENCH_STENCIL (default 100; 0 leaves the stencil out).
inline int stencil_size() {
  const char* v = std::getenv("TENSORLEV_BENCH_STENCIL");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 100;
}

// As bench/suite.hpp's common_options: milliseconds, wall-clock time, and a
// `min` aggregate when --benchmark_repetitions asks for aggregates.
inline void common_options(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

// Counters as bench/suite.hpp's set_counters: threads, nnz, nnz per second.
inline void set_counters(benchmark::State& state, std::size_t nnz) {
  state.counters["threads"] = 1;
  state.counters["nnz"] = static_cast<double>(nnz);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(nnz));
}

// Least memory traffic of one CSR SpMV with 32-bit indices (every array once).
inline std::int64_t spmv_bytes(std::size_t nnz, int rows, int cols) {
  const auto n = static_cast<std::int64_t>(nnz);
  return 12 * n + 4 * (std::int64_t{rows} + 1) + 8 * std::int64_t{cols} + 8 * std::int64_t{rows};
}

// A default of 0.2 s per benchmark, as a flag placed before the user's (a
// later --benchmark_min_time wins): ->MinTime() would append
// "/min_time:0.200" to every benchmark name. `storage` keeps the strings.
inline std::vector<char*> with_default_min_time(int argc, char** argv, std::string& storage) {
  storage = "--benchmark_min_time=0.2";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + 1, storage.data());
  args.push_back(nullptr);
  return args;
}

// Every input of input_paths loaded by `load(path, name)` (name: the file's
// stem), which returns a pointer to a case with a `name`. A file in a folder
// that tensorlev cannot read (a complex matrix) is skipped with a note; a
// path given explicitly must load; two inputs may not share a name.
template <class Load>
auto load_inputs(int argc, char** argv, const char* env, const char* ext, const char* prog, Load load) {
  std::vector<decltype(load(std::string(), std::string()))> cases;
  bool from_dir = false;
  for (const std::string& p : input_paths(argc, argv, env, ext, from_dir)) {
    const std::string name = std::filesystem::path(p).stem().string();
    for (const auto& c : cases)
      if (c->name == name) die("two inputs named '" + name + "'");
    try {
      cases.push_back(load(p, name));
    } catch (const tensorlev::error& e) {
      if (!from_dir) die(e.what());
      std::fprintf(stderr, "%s: skipping %s: %s\n", prog, p.c_str(), e.what());
    }
  }
  return cases;
}

// Appends `stencil27_<n>` (make(name, stencil27(n))) unless
// TENSORLEV_BENCH_STENCIL is 0.
template <class Case, class Make>
void add_stencil(std::vector<Case>& cases, Make make) {
  const int n = stencil_size();
  if (n <= 0) return;
  const std::string name = "stencil27_" + std::to_string(n);
  for (const auto& c : cases)
    if (c->name == name) die("two inputs named '" + name + "'");
  cases.push_back(make(name, stencil27(n)));
}

// main of a benchmark program: Google Benchmark's flags (0.2 s per
// benchmark unless given), then `run(argc, argv)` registers (the remaining
// arguments are the inputs; run may take flags of its own off them), then
// every benchmark runs. A failure (die, or
// any exception) is reported and gives status 1.
template <class Run>
int benchmark_main(int argc_in, char** argv_in, const char* prog, Run run) {
  std::string min_time;
  std::vector<char*> args = with_default_min_time(argc_in, argv_in, min_time);
  int argc = argc_in + 1;
  char** argv = args.data();
  benchmark::Initialize(&argc, argv);  // removes --benchmark_* flags
  int rc = 0;
  static_assert(std::is_invocable_v<Run&, int&, char**>, "run(int& argc, char** argv)");
  try {
    run(argc, argv);
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    rc = 1;
  }
  benchmark::Shutdown();
  return rc;
}

// A result's entry count and sums, to compare two results whose entries
// may be stored in other orders.
struct summary {
  std::size_t nnz = 0;
  double sum = 0;
  double abs_sum = 0;
};

inline summary summarize(std::span<const double> v) {
  summary s{v.size(), 0, 0};
  for (double d : v) s.sum += d, s.abs_sum += std::abs(d);
  return s;
}

inline void compare(const std::string& what, const char* peer, const summary& p, const summary& tl) {
  // Sums of many terms in different orders: relative 1e-9 of the magnitude.
  const double tol = 1e-9 * std::max(tl.abs_sum, p.abs_sum);
  if (p.nnz != tl.nnz || !(std::abs(p.sum - tl.sum) <= tol)) {
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s check failed: %s nnz %zu sum %.17g, tensorlev nnz %zu sum %.17g", what.c_str(),
                  peer, p.nnz, p.sum, tl.nnz, tl.sum);
    die(buf);
  }
}

// y against a row loop over CSR arrays: 1e-10 of each row's magnitude
// (the same products, possibly summed in another order).
template <class X>
void check_rows(const std::string& what, int rows, const int* pos, const int* crd, const double* val, X x_of,
                const double* y) {
  for (int r = 0; r < rows; ++r) {
    double acc = 0, mag = 0;
    for (int q = pos[r]; q < pos[r + 1]; ++q) {
      acc += val[q] * x_of(crd[q]);
      mag += std::abs(val[q] * x_of(crd[q]));
    }
    if (!(std::abs(y[r] - acc) <= 1e-10 * mag))
      die(what + " check failed: row " + std::to_string(r) + ": " + std::to_string(y[r]) + ", the CSR loop " +
          std::to_string(acc));
  }
}

}  // namespace tlbench
