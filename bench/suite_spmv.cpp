// SpMV on real matrices (bench/suite.hpp): y(i) = A(i,j) * x(j).
//
//   spmv/<hand|eigen|tensorlev|tensorlev_kokkos>/<csr|coo|dia|ell|sell8|sell8s>/<matrix>
//   spmv/<tensorlev|tensorlev_kokkos>/csr_long_rows/<matrix>   (CSR's arrays, split sums)
//   spmv/<hand|tensorlev|tensorlev_kokkos>/<rows4|rows8>/<matrix>  (grouped_rows<4>, <8>)
//   spmv/<hand|tensorlev|tensorlev_kokkos>/diab16/<matrix>  (blocked_dia<16>)
//   spmv/<hand|tensorlev|tensorlev_kokkos>/dcsr/<matrix>  (DCSR: the rows that hold entries)
//   spmv_once/<tensorlev_direct|tensorlev_convert>/coo/<matrix>
//   stream/triad/<serial|kokkos>/n:<doubles>
//
// spmv sets bytes_per_second to the least memory traffic of one product
// (every stored array read once, x read once, y written once), so that
// bytes_per_second / triad's bytes_per_second is the fraction of the
// bandwidth bound it reaches (bench/summarize.py prints it). DIA, ELL and
// SELL-8 (sell<8>: slices of 8 rows, a block workspace) and grouped rows
// (grouped_rows<G>: G rows share one list of columns, G values a column, a
// block workspace) run only where they store at most max_padding (4) times
// the nonzeros: groups of 4 rows store 3.1-3.3x on the collaboration and
// e-mail graphs and beat CSR there (bench/README.md, "Grouped rows").
// sell8s is SELL-8-sigma (sell_sigma<8, 256>: SELL-8 over the rows sorted by
// length within windows of 256, the permutation stored). diab16 is blocked
// DIA (blocked_dia<16>: blocks of 16 rows, the diagonals each block
// touches, no column indices), also within max_padding. dcsr is DCSR (the
// rows that hold entries, each with its columns): CSR's entries without
// the empty rows' bounds, which tl-explore names on NotreDame_www, where
// 58% of the rows are empty (bench/README.md, "Three whole-suite runs").
// spmv_once is seed 003's Figure 14: one product with a COO matrix, computed
// directly against converting to CSR first and multiplying.
#include <Eigen/SparseCore>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>

#include "suite.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/pack.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;
using tlbench::matrix_input;

// One matrix in every format, built on first use.
struct problem {
  std::shared_ptr<const matrix_input> in;
  std::unique_ptr<tensor<double, csr>> csr_;
  std::unique_ptr<tensor<double, csr_long_rows>> csr_long_;
  std::unique_ptr<tensor<double, coo>> coo_;
  std::unique_ptr<tensor<double, dia>> dia_;
  std::unique_ptr<tensor<double, ell>> ell_;
  std::unique_ptr<tensor<double, sell<8>>> sell_;
  std::unique_ptr<tensor<double, sell_sigma<8, 256>>> sells_;
  std::unique_ptr<tensor<double, grouped_rows<4>>> rows4_;
  std::unique_ptr<tensor<double, grouped_rows<8>>> rows8_;
  std::unique_ptr<tensor<double, blocked_dia<16>>> diab16_;
  std::unique_ptr<tensor<double, dcsr>> dcsr_;
  std::unique_ptr<Eigen::SparseMatrix<double, Eigen::RowMajor, int>> eigen_;
  tensor<double, dense_vector> x;
  Eigen::VectorXd x_eigen;

  explicit problem(std::shared_ptr<const matrix_input> m) : in(std::move(m)), x({in->cols()}), x_eigen(in->cols()) {
    for (int j = 0; j < in->cols(); ++j) x.values()[static_cast<std::size_t>(j)] = x_eigen[j] = tlbench::x_value(j);
  }
  const tensor<double, csr>& A_csr() {
    if (!csr_) csr_ = std::make_unique<tensor<double, csr>>(pack<csr>(in->entries));
    return *csr_;
  }
  const tensor<double, csr_long_rows>& A_csr_long() {
    if (!csr_long_) csr_long_ = std::make_unique<tensor<double, csr_long_rows>>(pack<csr_long_rows>(in->entries));
    return *csr_long_;
  }
  const tensor<double, dcsr>& A_dcsr() {
    if (!dcsr_) dcsr_ = std::make_unique<tensor<double, dcsr>>(pack<dcsr>(in->entries));
    return *dcsr_;
  }
  const tensor<double, coo>& A_coo() {
    if (!coo_) coo_ = std::make_unique<tensor<double, coo>>(pack<coo>(in->entries));
    return *coo_;
  }
  const tensor<double, dia>& A_dia() {
    if (!dia_) dia_ = std::make_unique<tensor<double, dia>>(pack<dia>(in->entries));
    return *dia_;
  }
  const tensor<double, ell>& A_ell() {
    if (!ell_) ell_ = std::make_unique<tensor<double, ell>>(pack<ell>(in->entries));
    return *ell_;
  }
  const tensor<double, sell<8>>& A_sell() {
    if (!sell_) sell_ = std::make_unique<tensor<double, sell<8>>>(pack<sell<8>>(in->entries));
    return *sell_;
  }
  const tensor<double, blocked_dia<16>>& A_diab16() {
    if (!diab16_) diab16_ = std::make_unique<tensor<double, blocked_dia<16>>>(pack<blocked_dia<16>>(in->entries));
    return *diab16_;
  }
  const tensor<double, sell_sigma<8, 256>>& A_sell_sigma() {
    if (!sells_) sells_ = std::make_unique<tensor<double, sell_sigma<8, 256>>>(pack<sell_sigma<8, 256>>(in->entries));
    return *sells_;
  }
  template <std::size_t G>
  const tensor<double, grouped_rows<G>>& A_rows() {
    static_assert(G == 4 || G == 8, "grouped rows of 4 or 8 only");
    auto& a = [this]() -> auto& {
      if constexpr (G == 4) return rows4_;
      else return rows8_;
    }();
    if (!a) a = std::make_unique<tensor<double, grouped_rows<G>>>(pack<grouped_rows<G>>(in->entries));
    return *a;
  }
  const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& A_eigen() {
    if (!eigen_) {
      const auto& A = A_csr();  // Eigen's arrays copied from the summed, sorted CSR
      eigen_ = std::make_unique<Eigen::SparseMatrix<double, Eigen::RowMajor, int>>(in->rows(), in->cols());
      const auto& pos = A.level<1>().pos();
      const auto& crd = A.level<1>().crd();
      eigen_->resizeNonZeros(static_cast<Eigen::Index>(crd.size()));
      std::copy(pos.begin(), pos.end(), eigen_->outerIndexPtr());
      std::copy(crd.begin(), crd.end(), eigen_->innerIndexPtr());
      std::copy(A.values().begin(), A.values().end(), eigen_->valuePtr());
    }
    return *eigen_;
  }
  // Least bytes one product moves: the format's arrays, x and y once each.
  double bytes(const std::string& format) {
    const double m = in->rows(), n = in->cols();
    double a = 0;
    if (format == "csr" || format == "csr_long_rows")
      a = static_cast<double>(A_csr().stored()) * 12 + (m + 1) * 4;
    else if (format == "coo")
      a = static_cast<double>(A_coo().stored()) * 16 + (m + 1) * 4;
    else if (format == "dcsr")  // a row index and a bound per row held
      a = static_cast<double>(A_dcsr().stored()) * 12 + static_cast<double>(A_dcsr().level<0>().crd().size()) * 8 + 8;
    else if (format == "dia")
      a = static_cast<double>(A_dia().values().size()) * 8;
    else if (format == "sell8")
      a = static_cast<double>(A_sell().values().size()) * 12 + (m / 8 + 2) * 4;
    else if (format == "sell8s")  // the permutation: a row index per row
      a = static_cast<double>(A_sell_sigma().values().size()) * 12 + (m / 8 + 2) * 4 + m * 4;
    else if (format == "rows4")
      a = static_cast<double>(A_rows<4>().values().size()) * (8 + 4.0 / 4) + (m / 4 + 2) * 4;
    else if (format == "rows8")
      a = static_cast<double>(A_rows<8>().values().size()) * (8 + 4.0 / 8) + (m / 8 + 2) * 4;
    else if (format == "diab16")  // a diagonal index per block and diagonal
      a = static_cast<double>(A_diab16().values().size()) * (8 + 4.0 / 16) + (m / 16 + 2) * 4;
    else
      a = static_cast<double>(A_ell().values().size()) * 12;
    return a + 8 * n + 8 * m;
  }
};

// Diagonals and the longest row, from the entries (duplicates counted once
// per diagonal; rows by entries, an upper bound).
struct shape_facts {
  std::size_t diagonals = 0, longest_row = 0;
  std::size_t sell8 = 0;  // SELL-8's stored slots: 8 times each slice's longest row
  std::size_t sell8s = 0;  // the same over the rows sorted by length within windows of 256 (SELL-8-sigma)
  std::size_t rows4 = 0, rows8 = 0;  // grouped rows' stored values: G x distinct (row / G, column) pairs
  std::size_t diab16 = 0;  // blocked DIA's stored values: 16 x distinct (row / 16, diagonal) pairs
};
shape_facts facts(const matrix_input& m) {
  std::vector<char> diag(static_cast<std::size_t>(m.rows() + m.cols()), 0);
  std::vector<std::size_t> row(static_cast<std::size_t>(m.rows()), 0);
  const int* x = m.entries.raw_coords().data();
  shape_facts f;
  for (std::size_t e = 0; e < m.entries.size(); ++e) {
    const int r = x[2 * e], c = x[2 * e + 1];
    char& d = diag[static_cast<std::size_t>(c - r + m.rows())];
    if (!d) d = 1, ++f.diagonals;
    f.longest_row = std::max(f.longest_row, ++row[static_cast<std::size_t>(r)]);
  }
  for (std::size_t s = 0; s < row.size(); s += 8)
    f.sell8 += 8 * *std::max_element(row.begin() + static_cast<std::ptrdiff_t>(s),
                                     row.begin() + static_cast<std::ptrdiff_t>(std::min(row.size(), s + 8)));
  for (std::size_t w = 0; w < row.size(); w += 256)
    std::sort(row.begin() + static_cast<std::ptrdiff_t>(w),
              row.begin() + static_cast<std::ptrdiff_t>(std::min(row.size(), w + 256)), std::greater<>());
  for (std::size_t s = 0; s < row.size(); s += 8) f.sell8s += 8 * row[s];
  f.rows4 = tlbench::grouped_values(m.entries, 4);
  f.rows8 = tlbench::grouped_values(m.entries, 8);
  std::vector<std::uint64_t> pairs(m.entries.size());
  for (std::size_t e = 0; e < m.entries.size(); ++e)
    pairs[e] = (static_cast<std::uint64_t>(x[2 * e] / 16) << 32) |
               static_cast<std::uint32_t>(x[2 * e + 1] - x[2 * e] + m.rows());
  std::sort(pairs.begin(), pairs.end());
  f.diab16 = 16 * static_cast<std::size_t>(std::unique(pairs.begin(), pairs.end()) - pairs.begin());
  return f;
}

template <class F>
const tensor<double, F>& A_of(problem& p) {
  if constexpr (std::is_same_v<F, csr>) return p.A_csr();
  if constexpr (std::is_same_v<F, csr_long_rows>) return p.A_csr_long();
  if constexpr (std::is_same_v<F, dcsr>) return p.A_dcsr();
  if constexpr (std::is_same_v<F, coo>) return p.A_coo();
  if constexpr (std::is_same_v<F, dia>) return p.A_dia();
  if constexpr (std::is_same_v<F, ell>) return p.A_ell();
  if constexpr (std::is_same_v<F, sell<8>>) return p.A_sell();
  if constexpr (std::is_same_v<F, sell_sigma<8, 256>>) return p.A_sell_sigma();
  if constexpr (std::is_same_v<F, grouped_rows<4>>) return p.A_rows<4>();
  if constexpr (std::is_same_v<F, grouped_rows<8>>) return p.A_rows<8>();
  if constexpr (std::is_same_v<F, blocked_dia<16>>) return p.A_diab16();
}

template <class F>
void spmv_generated(benchmark::State& state, problem& p, const std::string& impl, const std::string& format) {
  const auto& A = A_of<F>(p);
  tensor<double, dense_vector> y({p.in->rows()});
  const kokkos_executor<> space;
  const bool par = tlbench::parallel_impl(impl);
  for (auto _ : state) {
    if (par)
      compute(space, y(i), A(i, j) * p.x(j));
    else
      y(i) = A(i, j) * p.x(j);
    benchmark::DoNotOptimize(y.values().data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, impl, static_cast<double>(p.in->entries.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * p.bytes(format)));
}

// Grouped rows: per group of G rows, its columns once; G sums in a local
// array, x read once per column.
template <std::size_t G>
void spmv_hand_rows(benchmark::State& state, problem& p, std::vector<double>& y) {
  const int m = p.in->rows();
  const double* x = p.x.values().data();
  const auto& A = p.A_rows<G>();
  const int* pos = A.template level<1>().pos().data();
  const int* col = A.template level<1>().crd().data();
  const double* val = A.values().data();
  const int groups = (m + static_cast<int>(G) - 1) / static_cast<int>(G);
  for (auto _ : state) {
    for (int g = 0; g < groups; ++g) {
      double acc[G] = {};
      for (int q = pos[g]; q < pos[g + 1]; ++q) {
        const double xj = x[col[q]];
        for (std::size_t l = 0; l < G; ++l) acc[l] += val[static_cast<std::size_t>(q) * G + l] * xj;
      }
      for (std::size_t l = 0; l < G && g * G + l < static_cast<std::size_t>(m); ++l) y[g * G + l] = acc[l];
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

// SELL-8: slices of 8 rows, each slot's 8 (column, value) pairs side by
// side, 8 sums per slice in a local array; SELL-8-sigma (perm) stores each
// sum into its row through the permutation.
template <bool Permuted, class T>
void spmv_hand_sell(benchmark::State& state, const T& A, const int* perm, int m, const double* x,
                    std::vector<double>& y) {
  const int* pos = A.template level<1>().pos().data();
  const int* col = A.template level<3>().crd().data();
  const double* val = A.values().data();
  const int slices = (m + 7) / 8;
  for (auto _ : state) {
    for (int s = 0; s < slices; ++s) {
      double acc[8] = {};
      for (int q = pos[s]; q < pos[s + 1]; ++q)
        for (int l = 0; l < 8; ++l) acc[l] += val[q * 8 + l] * x[col[q * 8 + l]];
      if constexpr (Permuted)
        for (int l = 0; l < 8 && s * 8 + l < m; ++l) y[static_cast<std::size_t>(perm[s * 8 + l])] = acc[l];
      else
        for (int l = 0; l < 8 && s * 8 + l < m; ++l) y[static_cast<std::size_t>(s * 8 + l)] = acc[l];
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

void spmv_hand(benchmark::State& state, problem& p, const std::string& format) {
  const int m = p.in->rows();
  const double* x = p.x.values().data();
  std::vector<double> y(static_cast<std::size_t>(m));
  if (format == "csr") {
    const auto& A = p.A_csr();
    const int* pos = A.level<1>().pos().data();
    const int* crd = A.level<1>().crd().data();
    const double* val = A.values().data();
    for (auto _ : state) {
      for (int r = 0; r < m; ++r) {
        double acc = 0;
        for (int q = pos[r]; q < pos[r + 1]; ++q) acc += val[q] * x[crd[q]];
        y[static_cast<std::size_t>(r)] = acc;
      }
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  } else if (format == "dcsr") {
    // The rows that hold entries; y zero elsewhere.
    const auto& A = p.A_dcsr();
    const auto nrows = static_cast<std::ptrdiff_t>(A.level<0>().crd().size());
    const int* rows = A.level<0>().crd().data();
    const int* pos = A.level<1>().pos().data();
    const int* crd = A.level<1>().crd().data();
    const double* val = A.values().data();
    for (auto _ : state) {
      std::fill(y.begin(), y.end(), 0.0);
      for (std::ptrdiff_t r = 0; r < nrows; ++r) {
        double acc = 0;
        for (int q = pos[r]; q < pos[r + 1]; ++q) acc += val[q] * x[crd[q]];
        y[static_cast<std::size_t>(rows[r])] = acc;
      }
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  } else if (format == "coo") {
    const auto& A = p.A_coo();
    const auto nnz = static_cast<std::ptrdiff_t>(A.stored());
    const int* row = A.level<0>().crd().data();
    const int* col = A.level<1>().crd().data();
    const double* val = A.values().data();
    for (auto _ : state) {
      std::fill(y.begin(), y.end(), 0.0);
      for (std::ptrdiff_t q = 0; q < nnz; ++q) y[static_cast<std::size_t>(row[q])] += val[q] * x[col[q]];
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  } else if (format == "dia") {
    // One dense row of values per diagonal: y[i] += v[d][i] * x[i + off[d]].
    const auto& A = p.A_dia();
    const auto& off = A.level<1>().offsets();
    const double* val = A.values().data();
    const int n = p.in->cols();
    for (auto _ : state) {
      std::fill(y.begin(), y.end(), 0.0);
      for (std::size_t d = 0; d < off.size(); ++d) {
        const int o = off[d];
        const int lo = std::max(0, -o), hi = std::min(m, n - o);
        const double* v = val + static_cast<std::ptrdiff_t>(d) * m;
        for (int r = lo; r < hi; ++r) y[static_cast<std::size_t>(r)] += v[r] * x[r + o];
      }
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  } else if (format == "sell8") {
    spmv_hand_sell<false>(state, p.A_sell(), nullptr, m, x, y);
  } else if (format == "sell8s") {
    const auto& A = p.A_sell_sigma();
    spmv_hand_sell<true>(state, A, A.level<2>().permutation().data(), m, x, y);
  } else if (format == "rows4") {
    spmv_hand_rows<4>(state, p, y);
  } else if (format == "rows8") {
    spmv_hand_rows<8>(state, p, y);
  } else if (format == "diab16") {
    // Per block of 16 rows, its diagonals: 16 sums in a local array, x read
    // contiguously where the block's columns on a diagonal are all inside.
    constexpr int B = 16;
    const auto& A = p.A_diab16();
    const int* pos = A.level<1>().pos().data();
    const int* crd = A.level<1>().crd().data();
    const int* off = A.level<3>().offsets().data();
    const double* val = A.values().data();
    const int n = p.in->cols(), blocks = (m + B - 1) / B;
    for (auto _ : state) {
      for (int b = 0; b < blocks; ++b) {
        double w[B] = {};
        for (int q = pos[b]; q < pos[b + 1]; ++q) {
          const int c0 = b * B + off[crd[q]];
          const double* v = val + static_cast<std::ptrdiff_t>(q) * B;
          if (c0 >= 0 && c0 + B <= n) {
            for (int l = 0; l < B; ++l) w[l] += v[l] * x[c0 + l];
          } else {
            for (int l = 0; l < B; ++l)
              if (c0 + l >= 0 && c0 + l < n) w[l] += v[l] * x[c0 + l];
          }
        }
        for (int l = 0; l < B && b * B + l < m; ++l) y[static_cast<std::size_t>(b * B + l)] = w[l];
      }
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  } else {
    // ELL, slot-major: K slots of m (column, value) pairs, padded with value 0.
    const auto& A = p.A_ell();
    const int* col = A.level<2>().crd().data();
    const double* val = A.values().data();
    const auto K = static_cast<std::ptrdiff_t>(A.values().size() / (m > 0 ? static_cast<std::size_t>(m) : 1));
    for (auto _ : state) {
      std::fill(y.begin(), y.end(), 0.0);
      for (std::ptrdiff_t k = 0; k < K; ++k) {
        const int* c = col + k * m;
        const double* v = val + k * m;
        for (int r = 0; r < m; ++r) y[static_cast<std::size_t>(r)] += v[r] * x[c[r]];
      }
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
  }
  tlbench::set_counters(state, "hand", static_cast<double>(p.in->entries.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * p.bytes(format)));
}

void spmv_eigen(benchmark::State& state, problem& p) {
  const auto& A = p.A_eigen();
  Eigen::VectorXd y(A.rows());
  for (auto _ : state) {
    y.noalias() = A * p.x_eigen;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, "eigen", static_cast<double>(p.in->entries.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * p.bytes("csr")));
}

// One product with a COO matrix: directly, or converted to CSR (by the
// generated conversion B(i,j) = A(i,j)) and then multiplied.
void spmv_once(benchmark::State& state, problem& p, bool convert) {
  const auto& A = p.A_coo();
  tensor<double, dense_vector> y({p.in->rows()});
  for (auto _ : state) {
    if (convert) {
      tensor<double, csr> B = pack<csr>(coordinate_list<double, int>({p.in->rows(), p.in->cols()}));
      B(i, j) = A(i, j);
      y(i) = B(i, j) * p.x(j);
    } else {
      y(i) = A(i, j) * p.x(j);
    }
    benchmark::DoNotOptimize(y.values().data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, "tensorlev", static_cast<double>(p.in->entries.size()));
}

// STREAM triad a = b + s c over arrays far larger than the last-level cache.
void triad(benchmark::State& state, bool par) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  const double s = 3.0;
  double* pa = a.data();
  const double* pb = b.data();
  const double* pc = c.data();
  for (auto _ : state) {
    if (par) {
      Kokkos::parallel_for(
          "triad", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n),
          [=](std::size_t k) { pa[k] = pb[k] + s * pc[k]; });
      Kokkos::fence();
    } else {
      for (std::size_t k = 0; k < n; ++k) pa[k] = pb[k] + s * pc[k];
    }
    benchmark::DoNotOptimize(pa);
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = par ? Kokkos::DefaultHostExecutionSpace().concurrency() : 1;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * 24));
}

// Padded formats run where they store at most this many times the nonzeros.
constexpr double max_padding = 4;

void register_all(const std::vector<std::shared_ptr<const matrix_input>>& matrices) {
  for (bool par : {false, true})
    benchmark::RegisterBenchmark(par ? "stream/triad/kokkos" : "stream/triad/serial",
                                 [par](benchmark::State& s) { triad(s, par); })
        ->Arg(1 << 25)
        ->ArgName("n")
        ->Apply(tlbench::common_options);
  for (const auto& m : matrices) {
    auto p = std::make_shared<problem>(m);
    const shape_facts f = facts(*m);
    const double nnz = static_cast<double>(std::max<std::size_t>(m->entries.size(), 1));
    const double most = max_padding * nnz;
    const bool dia_ok = static_cast<double>(f.diagonals) * m->rows() <= most;
    const bool ell_ok = static_cast<double>(f.longest_row) * m->rows() <= most;
    const bool sell_ok = static_cast<double>(f.sell8) <= most, sells_ok = static_cast<double>(f.sell8s) <= most;
    const bool rows4_ok = static_cast<double>(f.rows4) <= most, rows8_ok = static_cast<double>(f.rows8) <= most;
    const bool diab_ok = static_cast<double>(f.diab16) <= most;
    if (!dia_ok || !ell_ok || !sell_ok || !sells_ok || !rows4_ok || !rows8_ok || !diab_ok)
      std::cerr << m->name << ": " << (dia_ok ? "" : "DIA ") << (ell_ok ? "" : "ELL ") << (sell_ok ? "" : "SELL-8 ")
                << (sells_ok ? "" : "SELL-8-sigma ")
                << (rows4_ok ? "" : "rows4 ") << (rows8_ok ? "" : "rows8 ") << (diab_ok ? "" : "diab16 ")
                << "left out (padding over " << max_padding << "x the nonzeros: " << f.diagonals << " diagonals, longest row "
                << f.longest_row << ", " << f.sell8 << " SELL-8 slots, grouped rows " << f.rows4 << " and " << f.rows8
                << " values)\n";
    auto add = [&](const std::string& impl, const std::string& format, auto fn) {
      benchmark::RegisterBenchmark(("spmv/" + impl + "/" + format + "/" + m->name).c_str(),
                                   [p, fn](benchmark::State& s) { fn(s, *p); })
          ->Apply(tlbench::common_options);
    };
    for (const std::string format :
         {"csr", "csr_long_rows", "dcsr", "sell8", "sell8s", "rows4", "rows8", "diab16", "coo", "dia", "ell"}) {
      if ((format == "dia" && !dia_ok) || (format == "ell" && !ell_ok) || (format == "sell8" && !sell_ok) ||
          (format == "sell8s" && !sells_ok) || (format == "rows4" && !rows4_ok) || (format == "rows8" && !rows8_ok) ||
          (format == "diab16" && !diab_ok))
        continue;
      if (format != "csr_long_rows")  // the same arrays as csr: its hand loop is csr's
        add("hand", format, [format](benchmark::State& s, problem& q) { spmv_hand(s, q, format); });
      if (format == "csr") add("eigen", format, [](benchmark::State& s, problem& q) { spmv_eigen(s, q); });
      for (const std::string impl : {"tensorlev", "tensorlev_kokkos"}) {
        auto gen = [impl, format](benchmark::State& s, problem& q) {
          if (format == "csr") spmv_generated<csr>(s, q, impl, format);
          if (format == "csr_long_rows") spmv_generated<csr_long_rows>(s, q, impl, format);
          if (format == "dcsr") spmv_generated<dcsr>(s, q, impl, format);
          if (format == "coo") spmv_generated<coo>(s, q, impl, format);
          if (format == "dia") spmv_generated<dia>(s, q, impl, format);
          if (format == "ell") spmv_generated<ell>(s, q, impl, format);
          if (format == "sell8") spmv_generated<sell<8>>(s, q, impl, format);
          if (format == "sell8s") spmv_generated<sell_sigma<8, 256>>(s, q, impl, format);
          if (format == "rows4") spmv_generated<grouped_rows<4>>(s, q, impl, format);
          if (format == "rows8") spmv_generated<grouped_rows<8>>(s, q, impl, format);
          if (format == "diab16") spmv_generated<blocked_dia<16>>(s, q, impl, format);
        };
        add(impl, format, gen);
      }
    }
    for (bool convert : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("spmv_once/") + (convert ? "tensorlev_convert" : "tensorlev_direct") + "/coo/" + m->name)
              .c_str(),
          [p, convert](benchmark::State& s) { spmv_once(s, *p, convert); })
          ->Apply(tlbench::common_options);
  }
}

}  // namespace

int main(int argc, char** argv) { return tlbench::suite_main(argc, argv, register_all); }
