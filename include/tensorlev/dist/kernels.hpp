#pragma once
/// @file dist/kernels.hpp
/// Distributed kernels over dist_tensors: each rank runs the generated
/// local kernel (codegen, on any tensorlev executor: serial or Kokkos) on
/// its pieces; the communication is the algorithm's and nothing else.
///
/// - `spmv_rows(y, A, x)`: y(i) = A(i,j) x(j) with A in row blocks
///   (`"xy->x"`, any sparse or dense format) and x, y in blocks (`"x->x"`)
///   on a 1D grid. x is all-gathered (the replicated operand, SuperTaco's
///   row-blocked SpMV); nothing else moves.
/// - The dense products (`summa`, `cannon`, `matmul`) are presets of the
///   one engine in compute.hpp and schedule.hpp; this file holds the
///   leaf product they share (`detail::gemm_add`) and the fixed-schedule
///   sparse kernels.
///
/// Every kernel checks that the tensors' distributions fit together and
/// throws shape_error on every rank when they do not.

#include <algorithm>
#include <complex>
#include <optional>
#include <span>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "../codegen.hpp"
#include "../execution.hpp"
#include "../formats.hpp"
#include "../view.hpp"
#include "tensor.hpp"

#if defined(TENSORLEV_DIST_BLAS)
// The Fortran BLAS matrix product (OpenBLAS, reference BLAS, MKL, ...).
extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
// Complex: std::complex<T> has the layout of T[2] (C++ [complex.numbers]),
// the Fortran COMPLEX*16 / COMPLEX the BLAS takes.
void zgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const void* alpha,
            const void* a, const int* lda, const void* b, const int* ldb, const void* beta, void* c, const int* ldc);
void cgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const void* alpha,
            const void* a, const int* lda, const void* b, const int* ldb, const void* beta, void* c, const int* ldc);
}
#endif

namespace tensorlev::dist {

/// Whether D partitions tensor dimension `tdim` over machine dimension m.
template <class D>
constexpr bool partitions(std::size_t m, std::size_t tdim) {
  return D::levels == 1 && m < D::machine_order() && D::statement().machine[m].kind == machine_dim_kind::partition &&
         D::statement().machine[m].tensor_dim == tdim;
}
/// `"x->x"`: a vector in blocks over a 1D machine.
template <class D>
inline constexpr bool vector_blocks_v = D::tensor_order == 1 && D::machine_order() == 1 && partitions<D>(0, 0);
/// `"xy->x"`: a matrix in row blocks over a 1D machine.
template <class D>
inline constexpr bool row_blocks_v = D::tensor_order == 2 && D::machine_order() == 1 && partitions<D>(0, 0);
/// `"xy->xy"`: a matrix in tiles over a 2D machine.
template <class D>
inline constexpr bool tiles_v =
    D::tensor_order == 2 && D::machine_order() == 2 && partitions<D>(0, 0) && partitions<D>(1, 1);

namespace detail {
// How a rank's range of the stepped variable is cut: n sequential steps
// (divide) or steps of `chunk` indices (split); both 0: the inputs' block
// boundaries. statement_schedule and matmul_schedule share it.
struct step_cut {
  long long parts = 0;
  long long chunk = 0;
  void divide(long long n, const char* who) {
    if (n < 1) throw shape_error(std::string(who) + "::divide: " + std::to_string(n) + " steps");
    parts = n;
    chunk = 0;
  }
  void split(long long c, const char* who) {
    if (c < 1) throw shape_error(std::string(who) + "::split: chunk " + std::to_string(c));
    chunk = c;
    parts = 0;
  }
};
}  // namespace detail

namespace detail {
inline std::string splits_string(const std::vector<long long>& s) {
  std::string out = "{";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "}";
}
// "" when the split points agree, else a message naming both.
inline std::string same_splits(const char* fn, const char* a, const std::vector<long long>& sa, const char* b,
                               const std::vector<long long>& sb) {
  if (sa == sb) return {};
  return std::string("tensorlev::dist::") + fn + ": " + a + " is split at " + splits_string(sa) + " but " + b +
         " at " + splits_string(sb) + " (mismatched distributions)";
}
inline std::string same_dims(const char* fn, const char* a, long long na, const char* b, long long nb) {
  if (na == nb) return {};
  return std::string("tensorlev::dist::") + fn + ": " + a + " is " + std::to_string(na) + " but " + b + " is " +
         std::to_string(nb);
}

template <class... T>
std::string same_grid(const char* fn, const machine_grid& g, const T&... t) {
  if ((t.grid().same_as(g) && ...)) return {};
  return std::string("tensorlev::dist::") + fn + ": the tensors are on different grids";
}
// "" when C(i,j) = A(i,k) B(k,j) composes, else which extents differ.
template <class C, class A, class B>
std::string product_shapes(const char* fn, const C& c, const A& a, const B& b) {
  const auto shape = [](const auto& t) { return std::to_string(t.dims()[0]) + "x" + std::to_string(t.dims()[1]); };
  std::string why = same_dims(fn, "A's column count", a.dims()[1], "B's row count", b.dims()[0]);
  if (why.empty()) why = same_dims(fn, "A's row count", a.dims()[0], "C's row count", c.dims()[0]);
  if (why.empty()) why = same_dims(fn, "B's column count", b.dims()[1], "C's column count", c.dims()[1]);
  if (!why.empty()) why += " (C(i,j) = A(i,k) B(k,j) with A " + shape(a) + ", B " + shape(b) + ", C " + shape(c) + ")";
  return why;
}
template <class V, index_type I>
tensor_view<const V, dense_row_major, I> matrix_view(I rows, I cols, std::span<const V> data) {
  using L = typename tensor_view<const V, dense_row_major, I>::level_tuple;
  return tensor_view<const V, dense_row_major, I>({rows, cols}, L(dense_level<I>(rows), dense_level<I>(cols)), data);
}
/// C (rows x cols) += A (rows x w) B (w x cols), all dense row-major: the
/// local leaf product of the dense algorithms. With TENSORLEV_DIST_BLAS
/// (set by the tensorlev::dist CMake target when a BLAS is found) and
/// `use_blas`, float, double and their complex go to the BLAS's gemm
/// (s, d, c, zgemm); otherwise, and for other value types, to the
/// generated kernel on `ex`, in loop order
/// `order` (a permutation of "ijk"; empty: the planner's order).
template <class V, index_type I>
void gemm_add(I rows, I w, I cols, std::span<const V> a, std::span<const V> b, std::span<V> c, const executor& ex,
              std::string_view order = {}, bool use_blas = true) {
  if (rows <= 0 || w <= 0 || cols <= 0) return;
#if defined(TENSORLEV_DIST_BLAS)
  constexpr long long int_max = 2147483647;
  if constexpr (std::is_same_v<V, double> || std::is_same_v<V, float> || std::is_same_v<V, std::complex<double>> ||
                std::is_same_v<V, std::complex<float>>) {
    if (use_blas && rows <= int_max && w <= int_max && cols <= int_max) {
      // Row-major C = A B is column-major C^T = B^T A^T.
      const int m = static_cast<int>(cols);
      const int n = static_cast<int>(rows);
      const int k = static_cast<int>(w);
      const V one = 1;
      if constexpr (std::is_same_v<V, double>)
        dgemm_("N", "N", &m, &n, &k, &one, b.data(), &m, a.data(), &k, &one, c.data(), &m);
      else if constexpr (std::is_same_v<V, float>)
        sgemm_("N", "N", &m, &n, &k, &one, b.data(), &m, a.data(), &k, &one, c.data(), &m);
      else if constexpr (std::is_same_v<V, std::complex<double>>)
        zgemm_("N", "N", &m, &n, &k, &one, b.data(), &m, a.data(), &k, &one, c.data(), &m);
      else
        cgemm_("N", "N", &m, &n, &k, &one, b.data(), &m, a.data(), &k, &one, c.data(), &m);
      return;
    }
  }
#else
  (void)use_blas;
#endif
  using L = typename tensor_view<V, dense_row_major, I>::level_tuple;
  tensor_view<V, dense_row_major, I> Cv({rows, cols}, L(dense_level<I>(rows), dense_level<I>(cols)), c);
  const auto Av = matrix_view<V, I>(rows, w, a);
  const auto Bv = matrix_view<V, I>(w, cols, b);
  using namespace tensorlev::indices;
  const auto run = [&](auto lo) { compute_add(ex, Cv(i, j), Av(i, k) * Bv(k, j), lo); };
  if (order.empty()) compute_add(ex, Cv(i, j), Av(i, k) * Bv(k, j));
  else if (order == "ijk") run(loop_order<'i', 'j', 'k'>{});
  else if (order == "ikj") run(loop_order<'i', 'k', 'j'>{});
  else if (order == "jik") run(loop_order<'j', 'i', 'k'>{});
  else if (order == "jki") run(loop_order<'j', 'k', 'i'>{});
  else if (order == "kij") run(loop_order<'k', 'i', 'j'>{});
  else if (order == "kji") run(loop_order<'k', 'j', 'i'>{});
  else throw shape_error("tensorlev::dist: leaf loop order \"" + std::string(order) + "\" is not a permutation of ijk");
}
}  // namespace detail

/// Row-blocked SpMV: y(i) = A(i,j) x(j). A's row splits must equal y's;
/// x may be split anywhere (it is all-gathered).
template <class V, format_type FA, class DA, class Dx, class Dy, index_type I>
void spmv_rows(dist_tensor<V, dense_vector, Dy, I>& y, const dist_tensor<V, FA, DA, I>& A,
               const dist_tensor<V, dense_vector, Dx, I>& x, const executor& ex = serial) {
  static_assert(row_blocks_v<DA>, "tensorlev::dist::spmv_rows: A must be distributed in row blocks (\"xy->x\")");
  static_assert(vector_blocks_v<Dx> && vector_blocks_v<Dy>,
                "tensorlev::dist::spmv_rows: x and y must be distributed in blocks (\"x->x\")");
  const machine_grid& g = A.grid();
  std::string why = detail::same_grid("spmv_rows", g, x, y);
  if (why.empty()) why = detail::same_dims("spmv_rows", "A's row count", A.dims()[0], "y's length", y.dims()[0]);
  if (why.empty()) why = detail::same_dims("spmv_rows", "A's column count", A.dims()[1], "x's length", x.dims()[0]);
  if (why.empty())
    why = detail::same_splits("spmv_rows", "A's rows", A.map().splits(0), "y", y.map().splits(0));
  agree(g, why.empty(), why);
  // Replicate x: block k of x lands at its offset.
  const auto& xs = x.map().splits(0);
  std::vector<int> counts(xs.size() - 1), displs(xs.size() - 1);
  for (std::size_t k = 0; k + 1 < xs.size(); ++k) {
    displs[k] = mpi_count(xs[k], "spmv_rows: x's offsets");
    counts[k] = mpi_count(xs[k + 1] - xs[k], "spmv_rows: x's blocks");
  }
  const I n = static_cast<I>(x.dims()[0]);
  tensor<V, dense_vector, I> full({n});
  const auto mine = x.local().values();
  g.allgatherv(mine.data(), mine.size(), full.values().data(), counts, displs, g.comm());
  using namespace tensorlev::indices;
  compute(ex, y.local()(i), A.local()(i, j) * full(j));
}

/// Row-blocked SpMV that moves only the entries of x each rank's rows
/// touch (PETSc's scatter), for repeated products with one matrix. The
/// constructor (collective) finds the columns each rank's piece of A uses,
/// tells their owners, and keeps a copy of the piece with its columns
/// renumbered into that list; each product then exchanges just those
/// entries (one all-to-all among the ranks that share columns, counted as
/// all-to-all traffic) and runs the generated kernel on the copy.
template <class V, format_type FA, class DA, class Dx, index_type I = std::int32_t>
class ghost_spmv {
  static_assert(row_blocks_v<DA>, "tensorlev::dist::ghost_spmv: A must be distributed in row blocks (\"xy->x\")");
  static_assert(vector_blocks_v<Dx>, "tensorlev::dist::ghost_spmv: x must be distributed in blocks (\"x->x\")");

 public:
  ghost_spmv(const dist_tensor<V, FA, DA, I>& A, const distribution_map<Dx>& xmap) : grid_(&A.grid()), xmap_(xmap) {
    const machine_grid& g = A.grid();
    agree(g, xmap.dims()[0] == A.dims()[1] && xmap.machine() == g.extents(),
          "tensorlev::dist::ghost_spmv: x's distribution does not fit A's columns or the grid");
    // The columns this rank's rows use, sorted (so grouped by owner).
    std::vector<I> cols;
    for_each_component(A.local(), [&](const auto& c, const V&) { cols.push_back(c[1]); });
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    const auto& xs = xmap.splits(0);
    const int p = g.size();
    std::vector<std::vector<I>> ask(static_cast<std::size_t>(p));
    for (I c : cols) {
      const auto owner = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), static_cast<long long>(c)) -
                                                  xs.begin()) - 1;
      ask[owner].push_back(c);
    }
    recv_counts_.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) recv_counts_[static_cast<std::size_t>(r)] = static_cast<int>(ask[static_cast<std::size_t>(r)].size());
    // What the others need from this rank (control traffic: not counted).
    const comm_stats before = g.stats();
    send_index_ = g.alltoallv(ask, &send_counts_);
    g.stats() = before;
    const auto lo = static_cast<I>(xs[static_cast<std::size_t>(g.rank())]);
    for (I& q : send_index_) q = static_cast<I>(q - lo);
    displs(send_counts_, send_displs_);
    displs(recv_counts_, recv_displs_);
    // A's piece with columns renumbered into `cols`.
    coordinate_list<V, I> list({A.local().dimension(0), static_cast<I>(cols.size())});
    for_each_component(A.local(), [&](const auto& c, const V& v) {
      const auto at = static_cast<I>(std::lower_bound(cols.begin(), cols.end(), c[1]) - cols.begin());
      list.push_back({c[0], at}, v);
    });
    local_.emplace(pack<FA>(list, duplicates::sum));
    xg_.emplace(std::array<I, 1>{static_cast<I>(cols.size())});
  }

  /// y = A x (y split as A's rows, x as the map given at construction).
  template <class Dy>
  void operator()(dist_tensor<V, dense_vector, Dy, I>& y, const dist_tensor<V, dense_vector, Dx, I>& x,
                  const executor& ex = serial) {
    agree(*grid_, y.grid().same_as(*grid_) && y.local().dimension(0) == local_->dimension(0),
          "tensorlev::dist::ghost_spmv: y does not match the plan (grid, A's rows)");
    exchange(x);
    using namespace tensorlev::indices;
    compute(ex, y.local()(i), (*local_)(i, j) * (*xg_)(j));
  }

  /// Brings the entries of x this rank's rows use into ghost_values() (the one
  /// all-to-all of a product), for a statement of one's own over matrix()
  /// and ghost_values(), e.g. in a fused kernel (dist/fuse.hpp):
  /// `q.local()(i) = matrix()(i, j) * ghost_values()(j)` is this rank's rows of A x.
  void exchange(const dist_tensor<V, dense_vector, Dx, I>& x) {
    const machine_grid& g = *grid_;
    agree(g, x.grid().same_as(g) && x.map().splits(0) == xmap_.splits(0),
          "tensorlev::dist::ghost_spmv: x does not match the plan (grid, x's splits)");
    const auto xv = x.local().values();
    send_.resize(send_index_.size());
    for (std::size_t q = 0; q < send_index_.size(); ++q) send_[q] = xv[static_cast<std::size_t>(send_index_[q])];
    auto xg = xg_->values();
    check_mpi(MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), mpi_type<V>(), xg.data(),
                            recv_counts_.data(), recv_displs_.data(), mpi_type<V>(), g.comm()),
              "MPI_Alltoallv");
    for (int r = 0; r < g.size(); ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == g.rank()) continue;
      if (send_counts_[ur] > 0) g.stats().sent(comm_kind::alltoall, send_counts_[ur] * static_cast<long long>(sizeof(V)));
      if (recv_counts_[ur] > 0)
        g.stats().received(comm_kind::alltoall, recv_counts_[ur] * static_cast<long long>(sizeof(V)));
    }
  }
  /// This rank's rows of A, columns numbered as in ghost_values().
  [[nodiscard]] const tensor<V, FA, I>& matrix() const noexcept { return *local_; }
  /// The entries of x the rows use, as of the last exchange.
  [[nodiscard]] const tensor<V, dense_vector, I>& ghost_values() const noexcept { return *xg_; }

  /// Entries of x this rank receives per product (from other ranks).
  [[nodiscard]] long long ghosts() const {
    long long n = 0;
    for (std::size_t r = 0; r < recv_counts_.size(); ++r)
      if (static_cast<int>(r) != grid_->rank()) n += recv_counts_[r];
    return n;
  }

 private:
  static void displs(const std::vector<int>& counts, std::vector<int>& out) {
    out.assign(counts.size(), 0);
    for (std::size_t r = 1; r < counts.size(); ++r) out[r] = out[r - 1] + counts[r - 1];
  }
  const machine_grid* grid_;
  distribution_map<Dx> xmap_;
  std::optional<tensor<V, FA, I>> local_;
  std::optional<tensor<V, dense_vector, I>> xg_;
  std::vector<I> send_index_;
  std::vector<V> send_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
};

}  // namespace tensorlev::dist
