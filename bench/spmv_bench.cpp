// Generated SpMV against hand-written loops for the same format, on the
// same matrix, in the same run: y(i) = A(i,j) * x(j) with A in CSR and COO
// (Eigen's CSR product for reference).
//
//   spmv/<format>/<impl>/<matrix>
#include <benchmark/benchmark.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "random_matrix.hpp"
#include "tensorlev/pack.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;

struct problem {
  tensor<double, csr> A_csr;
  tensor<double, coo> A_coo;
  tensor<double, dense_vector> x;
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> A_eigen;
  Eigen::VectorXd x_eigen;
};

// n x n, `per_row` uniformly random columns per row (random_matrix.hpp).
const problem& get(int n, int per_row) {
  static std::vector<std::pair<std::pair<int, int>, problem*>> cache;
  for (auto& [key, p] : cache)
    if (key == std::make_pair(n, per_row)) return *p;
  const tlbench::random_problem r = tlbench::random_rows(n, per_row);
  std::vector<Eigen::Triplet<double, int>> trips;
  trips.reserve(r.matrix.size());
  const int* x = r.matrix.raw_coords().data();
  for (std::size_t e = 0; e < r.matrix.size(); ++e) trips.emplace_back(x[2 * e], x[2 * e + 1], r.matrix.value(e));
  Eigen::VectorXd xe(n);
  for (int c = 0; c < n; ++c) xe[c] = r.vector.value(static_cast<std::size_t>(c));
  auto* p = new problem{pack<csr>(r.matrix), pack<coo>(r.matrix), pack<dense_vector>(r.vector), {}, xe};
  p->A_eigen.resize(n, n);
  p->A_eigen.setFromTriplets(trips.begin(), trips.end());
  cache.push_back({{n, per_row}, p});
  return *p;
}

void set_counters(benchmark::State& state, std::size_t nnz) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * nnz));
}

void csr_generated(benchmark::State& state) {
  const auto& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  tensor<double, dense_vector> y({p.A_csr.dimension(0)});
  for (auto _ : state) {
    y(i) = p.A_csr(i, j) * p.x(j);
    benchmark::DoNotOptimize(y.values().data());
    benchmark::ClobberMemory();
  }
  set_counters(state, p.A_csr.stored());
}

void csr_hand(benchmark::State& state) {
  const auto& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const int m = p.A_csr.dimension(0);
  const int* pos = p.A_csr.level<1>().pos().data();
  const int* crd = p.A_csr.level<1>().crd().data();
  const double* val = p.A_csr.values().data();
  const double* x = p.x.values().data();
  std::vector<double> y(static_cast<std::size_t>(m));
  for (auto _ : state) {
    for (int r = 0; r < m; ++r) {
      double acc = 0;
      for (int q = pos[r]; q < pos[r + 1]; ++q) acc += val[q] * x[crd[q]];
      y[r] = acc;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, p.A_csr.stored());
}

void coo_generated(benchmark::State& state) {
  const auto& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  tensor<double, dense_vector> y({p.A_coo.dimension(0)});
  for (auto _ : state) {
    y(i) = p.A_coo(i, j) * p.x(j);
    benchmark::DoNotOptimize(y.values().data());
    benchmark::ClobberMemory();
  }
  set_counters(state, p.A_coo.stored());
}

void coo_hand(benchmark::State& state) {
  const auto& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const int m = p.A_coo.dimension(0);
  const int nnz = static_cast<int>(p.A_coo.stored());
  const int* row = p.A_coo.level<0>().crd().data();
  const int* col = p.A_coo.level<1>().crd().data();
  const double* val = p.A_coo.values().data();
  const double* x = p.x.values().data();
  std::vector<double> y(static_cast<std::size_t>(m));
  for (auto _ : state) {
    std::fill(y.begin(), y.end(), 0.0);
    for (int q = 0; q < nnz; ++q) y[row[q]] += val[q] * x[col[q]];
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, p.A_coo.stored());
}

void csr_eigen(benchmark::State& state) {
  const auto& p = get(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  Eigen::VectorXd y(p.A_eigen.rows());
  for (auto _ : state) {
    y.noalias() = p.A_eigen * p.x_eigen;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<std::size_t>(p.A_eigen.nonZeros()));
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "per_row"});
  b->Args({100000, 10});   // 1e6 nonzeros, x fits in L2
  b->Args({1000000, 8});   // 8e6 nonzeros, memory bound
  b->Args({2000, 200});    // long rows
  b->Unit(benchmark::kMicrosecond);
  // On a shared, noisy machine the fastest repetition is the most stable
  // estimate of the loop's own cost; compare the _min rows.
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

}  // namespace

BENCHMARK(csr_generated)->Name("spmv/csr/tensorlev")->Apply(args);
BENCHMARK(csr_hand)->Name("spmv/csr/hand")->Apply(args);
BENCHMARK(coo_generated)->Name("spmv/coo/tensorlev")->Apply(args);
BENCHMARK(coo_hand)->Name("spmv/coo/hand")->Apply(args);
BENCHMARK(csr_eigen)->Name("spmv/csr/eigen")->Apply(args);
BENCHMARK_MAIN();
