// Generated SpMV on a Kokkos execution space against the same kernel run
// serially, on the same matrix, in the same run. Kokkos fixes its thread
// count at initialization: run with --kokkos-threads=N (bench/run-parallel.sh
// runs 1 and 2); the ratio serial/kokkos is the speedup.
//
//   spmv_parallel/<format>/<serial|kokkos>/n:<rows>/per_row:<k>
#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <random>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/kokkos.hpp"
#include "random_matrix.hpp"
#include "tensorlev/pack.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;

struct problem {
  tensor<double, csr> A_csr;
  tensor<double, coo> A_coo;
  tensor<double, dense_vector> x;
};

// n x n, `per_row` uniformly random columns per row (random_matrix.hpp:
// the matrices of bench_spmv).
const problem& get(int n, int per_row) {
  static std::vector<std::pair<std::pair<int, int>, problem*>> cache;
  for (auto& [key, p] : cache)
    if (key == std::make_pair(n, per_row)) return *p;
  const tlbench::random_problem r = tlbench::random_rows(n, per_row);
  auto* p = new problem{pack<csr>(r.matrix), pack<coo>(r.matrix), pack<dense_vector>(r.vector)};
  cache.push_back({{n, per_row}, p});
  return *p;
}

template <class F, bool Parallel>
void spmv(benchmark::State& state) {
  const problem& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const auto& A = [&]() -> const tensor<double, F>& {
    if constexpr (std::is_same_v<F, csr>)
      return p.A_csr;
    else
      return p.A_coo;
  }();
  tensor<double, dense_vector> y({A.dimension(0)});
  const kokkos_executor<> space;
  for (auto _ : state) {
    if constexpr (Parallel)
      compute(space, y(i), A(i, j) * p.x(j));
    else
      y(i) = A(i, j) * p.x(j);
    benchmark::DoNotOptimize(y.values().data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(A.stored()));
  state.counters["threads"] = Parallel ? Kokkos::DefaultHostExecutionSpace().concurrency() : 1;
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "per_row"});
  b->Args({100000, 10});    // in cache (12 MB)
  b->Args({2000000, 10});   // out of cache (240 MB)
  b->Unit(benchmark::kMicrosecond);
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

BENCHMARK_TEMPLATE(spmv, csr, false)->Name("spmv_parallel/csr/serial")->Apply(args);
BENCHMARK_TEMPLATE(spmv, csr, true)->Name("spmv_parallel/csr/kokkos")->Apply(args);
BENCHMARK_TEMPLATE(spmv, coo, false)->Name("spmv_parallel/coo/serial")->Apply(args);
BENCHMARK_TEMPLATE(spmv, coo, true)->Name("spmv_parallel/coo/kokkos")->Apply(args);

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
