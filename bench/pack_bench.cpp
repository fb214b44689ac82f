// Packing unsorted triplets into CSR: tensorlev::pack<csr> against Eigen's
// SparseMatrix<RowMajor>::setFromTriplets, on the same triplets in the same
// run. Both sum duplicates and produce sorted CSR.
//
//   pack/tensorlev/<rows>/<nnz>   pack/eigen/<rows>/<nnz>
//   pack/tensorlev_threads:T/<rows>/<nnz>: pack on a kokkos_executor over
//   the default host space's T threads (built when Kokkos is found)
#include <benchmark/benchmark.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "tensorlev/tensorlev.hpp"
#ifdef TENSORLEV_BENCH_KOKKOS
#include <string>

#include "tensorlev/kokkos.hpp"
#endif

namespace {

struct triplets {
  int rows = 0, cols = 0;
  std::vector<int> i, j;
  std::vector<double> v;
};

// Uniformly random coordinates (with the duplicates that brings) in an
// n x n matrix, in random order.
const triplets& random_triplets(int n, std::size_t nnz) {
  static std::map<std::pair<int, std::size_t>, triplets> cache;
  auto [it, fresh] = cache.try_emplace({n, nnz});
  triplets& t = it->second;
  if (fresh) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<int> d(0, n - 1);
    std::uniform_real_distribution<double> val(-1, 1);
    t.rows = t.cols = n;
    t.i.resize(nnz);
    t.j.resize(nnz);
    t.v.resize(nnz);
    for (std::size_t e = 0; e < nnz; ++e) t.i[e] = d(rng), t.j[e] = d(rng), t.v[e] = val(rng);
  }
  return t;
}

// The coordinate list is the input format, built outside the timed loop,
// exactly as Eigen's triplet vector is.
const tensorlev::coordinate_list<double, int>& triplet_list(int n, std::size_t nnz) {
  static std::map<std::pair<int, std::size_t>, tensorlev::coordinate_list<double, int>> cache;
  auto it = cache.find({n, nnz});
  if (it == cache.end()) {
    const auto& t = random_triplets(n, nnz);
    tensorlev::coordinate_list<double, int> list({t.rows, t.cols});
    list.reserve(t.v.size());
    for (std::size_t e = 0; e < t.v.size(); ++e) list.push_back({t.i[e], t.j[e]}, t.v[e]);
    it = cache.emplace(std::pair{n, nnz}, std::move(list)).first;
  }
  return it->second;
}

void tensorlev_pack(benchmark::State& state, const tensorlev::executor& ex) {
  const auto& list = triplet_list(static_cast<int>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  for (auto _ : state) {
    auto a = tensorlev::pack<tensorlev::csr>(ex, list);
    benchmark::DoNotOptimize(a.values().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(1));
}

void eigen_set_from_triplets(benchmark::State& state) {
  const auto& t = random_triplets(static_cast<int>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  std::vector<Eigen::Triplet<double, int>> trips;
  trips.reserve(t.v.size());
  for (std::size_t e = 0; e < t.v.size(); ++e) trips.emplace_back(t.i[e], t.j[e], t.v[e]);
  for (auto _ : state) {
    Eigen::SparseMatrix<double, Eigen::RowMajor, int> a(t.rows, t.cols);
    a.setFromTriplets(trips.begin(), trips.end());
    benchmark::DoNotOptimize(a.valuePtr());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(1));
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "nnz"});
  b->Args({100000, 1000000});   // 10 per row: the case
  b->Args({1000000, 1000000});  // 1 per row, rows dominate
  b->Args({10000, 1000000});    // 100 per row
  b->Args({1000000, 10000000});  // 10^7 triplets, 10 per row
  b->Args({100000, 10000000});   // 10^7 triplets, 100 per row
  b->Unit(benchmark::kMillisecond);
  // The fastest repetition: the most stable estimate on a noisy machine.
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TENSORLEV_BENCH_KOKKOS
  Kokkos::ScopeGuard kokkos(argc, argv);
  const tensorlev::kokkos_executor<> threads;
  const int nthreads = Kokkos::DefaultHostExecutionSpace().concurrency();
  benchmark::RegisterBenchmark(("pack/tensorlev_threads:" + std::to_string(nthreads)).c_str(), tensorlev_pack,
                               tensorlev::executor(threads))
      ->Apply(args);
#endif
  benchmark::RegisterBenchmark("pack/tensorlev", tensorlev_pack, tensorlev::serial)->Apply(args);
  benchmark::RegisterBenchmark("pack/eigen", eigen_set_from_triplets)->Apply(args);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
