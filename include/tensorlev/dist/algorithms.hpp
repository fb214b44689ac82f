#pragma once
/// @file dist/algorithms.hpp
/// More distributed kernels, each with its data distribution and schedule
/// fixed (SuperTaco §4.5 for the sparse ones, DISTAL §7.2 for the
/// higher-order ones). Each rank runs the generated local kernel, in any
/// format its pieces have (CSF included), on any executor. For dense
/// tensors the same statements run in any distribution under any
/// distribute schedule through `compute` / `reduce` (compute.hpp).
///
/// - `spmv_cols(a, d, B, c, how)`: a(i) = d(i) + B(i,j) c(j) with j split:
///   B in column blocks (`"xy->y"`), c in the matching blocks. Each rank
///   forms a private partial of the whole of a (output extension); the
///   partials are summed either by a tree reduction that leaves each rank
///   its block of a (`reduction::tree`: MPI_Reduce_scatter) or by
///   sequential accumulation along the ranks (`reduction::sequential`: rank
///   r adds its partial to the running sum from rank r - 1 and passes it
///   on; the last rank sends each block of a to its owner).
/// - `spmv_2d(y, A, x)`: y(i) = A(i,j) x(j) with A in 2D tiles
///   (`"xy->xy"`), x's blocks along the grid's second dimension and
///   replicated along its first (`"x->*x"`): the matrix stays put, each
///   rank multiplies its tile, and the partial rows are reduced along the
///   grid rows onto y (`"x->x0"`, or `"x->x*"` for y on every column).
/// - `ttm(A, B, C)`: A(i,j,l) = B(i,j,k) C(k,l), B and A split by i
///   (`"xyz->x"`), C replicated (`"xy->*"`): no communication.
/// - `ttv(A, B, c)`: A(i,j) = B(i,j,k) c(k), B and A in (i, j) tiles, c
///   replicated: no communication.
/// - `innerprod(B, C)`: sum of B(i,j,k) C(i,j,k) over tensors in the same
///   distribution: local sums, then one all-reduce.
/// - `mttkrp(A, B, C, D)`: A(i,l) = B(i,j,k) C(j,l) D(k,l) on a 3D grid
///   (Ballard et al.): B stays in its (i, j, k) tiles, C and D are
///   replicated where their rows are read (`"xy->*x*"`, `"xy->**x"`), and
///   the partial rows of A are reduced onto the face `"xy->x00"`.

#include <algorithm>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace tensorlev::dist {

/// How private partials of an output are summed.
enum class reduction : unsigned char { tree, sequential };

namespace detail {
template <class D>
inline constexpr bool replicated_v = [] {
  for (std::size_t m = 0; m < D::machine_order(); ++m)
    if (D::statement().machine[m].kind != machine_dim_kind::broadcast) return false;
  return D::levels == 1;
}();

}  // namespace detail

/// a(i) = d(i) + B(i,j) c(j), B in column blocks.
template <class V, format_type FB, class DB, class Dc, class Da, class Dd, index_type I>
void spmv_cols(dist_tensor<V, dense_vector, Da, I>& a, const dist_tensor<V, dense_vector, Dd, I>& d,
               const dist_tensor<V, FB, DB, I>& B, const dist_tensor<V, dense_vector, Dc, I>& c,
               reduction how = reduction::tree, const executor& ex = serial) {
  static_assert(DB::tensor_order == 2 && DB::machine_order() == 1 && partitions<DB>(0, 1),
                "tensorlev::dist::spmv_cols: B must be distributed in column blocks (\"xy->y\")");
  static_assert(vector_blocks_v<Dc> && vector_blocks_v<Da> && vector_blocks_v<Dd>,
                "tensorlev::dist::spmv_cols: a, d and c must be distributed in blocks (\"x->x\")");
  const machine_grid& g = B.grid();
  std::string why = detail::same_grid("spmv_cols", g, a, d, c);
  if (why.empty()) why = detail::same_dims("spmv_cols", "B's row count", B.dims()[0], "a's length", a.dims()[0]);
  if (why.empty()) why = detail::same_dims("spmv_cols", "B's column count", B.dims()[1], "c's length", c.dims()[0]);
  if (why.empty()) why = detail::same_splits("spmv_cols", "B's columns", B.map().splits(1), "c", c.map().splits(0));
  if (why.empty()) why = detail::same_splits("spmv_cols", "a", a.map().splits(0), "d", d.map().splits(0));
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  const I M = static_cast<I>(a.dims()[0]);
  // d's block first: a may be d (a = a + B c).
  const std::vector<V> dv(d.local().values().begin(), d.local().values().end());
  tensor<V, dense_vector, I> partial({M});
  compute(ex, partial(i), B.local()(i, j) * c.local()(j));
  const auto& as = a.map().splits(0);
  const int p = g.size();
  const int me = g.rank();
  auto out = a.local().values();
  const auto block = [&](int r) {
    return std::array<long long, 2>{as[static_cast<std::size_t>(r)], as[static_cast<std::size_t>(r) + 1]};
  };
  if (how == reduction::tree) {
    std::vector<int> counts(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) counts[static_cast<std::size_t>(r)] = mpi_count(block(r)[1] - block(r)[0], "spmv_cols");
    check_mpi(MPI_Reduce_scatter(partial.values().data(), out.data(), counts.data(), mpi_type<V>(), MPI_SUM, g.comm()),
              "MPI_Reduce_scatter");
    // Logically: each block goes from every other rank to its owner.
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      const long long to_r = counts[static_cast<std::size_t>(r)];
      const long long to_me = counts[static_cast<std::size_t>(me)];
      if (to_r > 0) g.stats().sent(comm_kind::reduce, to_r * static_cast<long long>(sizeof(V)));
      if (to_me > 0) g.stats().received(comm_kind::reduce, to_me * static_cast<long long>(sizeof(V)));
    }
  } else {
    // Running sum along the ranks, then each block to its owner.
    std::vector<V> sum(partial.values().begin(), partial.values().end());
    std::vector<V> incoming(sum.size());
    const std::size_t n = sum.size();
    if (p > 1 && n > 0) {
      std::vector<MPI_Request> reqs;  // in pieces of at most mpi_chunk values
      if (me > 0) {
        detail::irecv_chunked(incoming.data(), static_cast<long long>(n), me - 1, 31, g.comm(), reqs);
        detail::wait_all(reqs);
        g.stats().received(comm_kind::shift, static_cast<long long>(n * sizeof(V)));
        for (std::size_t q = 0; q < n; ++q) sum[q] = incoming[q] + sum[q];
      }
      if (me + 1 < p) {
        detail::isend_chunked(sum.data(), static_cast<long long>(n), me + 1, 31, g.comm(), reqs);
        detail::wait_all(reqs);
        g.stats().sent(comm_kind::shift, static_cast<long long>(n * sizeof(V)));
      }
    }
    const int last = p - 1;
    std::vector<MPI_Request> reqs;
    if (me == last) {
      for (int r = 0; r < last; ++r) {
        const auto b = block(r);
        if (b[1] <= b[0]) continue;
        detail::isend_chunked(sum.data() + b[0], b[1] - b[0], r, 32, g.comm(), reqs);
        g.stats().sent(comm_kind::alltoall, (b[1] - b[0]) * static_cast<long long>(sizeof(V)));
      }
      detail::wait_all(reqs);
      const auto b = block(last);
      std::copy(sum.begin() + b[0], sum.begin() + b[1], out.begin());
    } else {
      const auto b = block(me);
      if (b[1] > b[0]) {
        detail::irecv_chunked(out.data(), b[1] - b[0], last, 32, g.comm(), reqs);
        detail::wait_all(reqs);
        g.stats().received(comm_kind::alltoall, (b[1] - b[0]) * static_cast<long long>(sizeof(V)));
      }
    }
  }
  for (std::size_t q = 0; q < out.size(); ++q) out[q] += dv[q];
}

/// y(i) = A(i,j) x(j), A in 2D tiles; partial rows reduced along grid rows.
template <class V, format_type FA, class DA, class Dx, class Dy, index_type I>
void spmv_2d(dist_tensor<V, dense_vector, Dy, I>& y, const dist_tensor<V, FA, DA, I>& A,
             const dist_tensor<V, dense_vector, Dx, I>& x, const executor& ex = serial) {
  static_assert(tiles_v<DA>, "tensorlev::dist::spmv_2d: A must be distributed in 2D tiles (\"xy->xy\")");
  static_assert(Dx::tensor_order == 1 && Dx::machine_order() == 2 && partitions<Dx>(1, 0) &&
                    Dx::statement().machine[0].kind == machine_dim_kind::broadcast,
                "tensorlev::dist::spmv_2d: x must be split along the grid's second dimension and replicated along "
                "its first (\"x->*x\")");
  static_assert(Dy::tensor_order == 1 && Dy::machine_order() == 2 && partitions<Dy>(0, 0) &&
                    Dy::statement().machine[1].kind != machine_dim_kind::partition,
                "tensorlev::dist::spmv_2d: y must be split along the grid's first dimension, on one column "
                "(\"x->x0\") or on all (\"x->x*\")");
  const machine_grid& g = A.grid();
  std::string why = detail::same_grid("spmv_2d", g, x, y);
  if (why.empty()) why = detail::same_splits("spmv_2d", "A's columns", A.map().splits(1), "x", x.map().splits(0));
  if (why.empty()) why = detail::same_splits("spmv_2d", "A's rows", A.map().splits(0), "y", y.map().splits(0));
  if (why.empty() && Dy::statement().machine[1].kind == machine_dim_kind::fixed &&
      Dy::statement().machine[1].fixed >= g.dims()[1])
    why = "tensorlev::dist::spmv_2d: y's fixed column is outside the grid";
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  tensor<V, dense_vector, I> partial({A.local().dimension(0)});
  compute(ex, partial(i), A.local()(i, j) * x.local()(j));
  auto pv = partial.values();
  if (Dy::statement().machine[1].kind == machine_dim_kind::broadcast) {
    g.allreduce_sum(pv.data(), pv.size(), g.axis(1));
    std::copy(pv.begin(), pv.end(), y.local().values().begin());
  } else {
    const int root = static_cast<int>(Dy::statement().machine[1].fixed);
    g.reduce_sum(pv.data(), pv.size(), root, g.axis(1));
    if (g.coords()[1] == root) std::copy(pv.begin(), pv.end(), y.local().values().begin());
  }
}

/// A(i,j,l) = B(i,j,k) C(k,l), split by i; C replicated.
template <class V, format_type FA, format_type FB, class DA, class DB, class DC, index_type I>
void ttm(dist_tensor<V, FA, DA, I>& A, const dist_tensor<V, FB, DB, I>& B,
         const dist_tensor<V, dense_row_major, DC, I>& C, const executor& ex = serial) {
  static_assert(DB::tensor_order == 3 && DB::machine_order() == 1 && partitions<DB>(0, 0) &&
                    DA::tensor_order == 3 && DA::machine_order() == 1 && partitions<DA>(0, 0),
                "tensorlev::dist::ttm: A and B must be split by their first dimension (\"xyz->x\")");
  static_assert(detail::replicated_v<DC>, "tensorlev::dist::ttm: C must be replicated (\"xy->*\")");
  const machine_grid& g = B.grid();
  std::string why = detail::same_grid("ttm", g, A, C);
  if (why.empty()) why = detail::same_splits("ttm", "A's first dimension", A.map().splits(0), "B's", B.map().splits(0));
  if (why.empty()) why = detail::same_dims("ttm", "B's third dimension", B.dims()[2], "C's rows", C.dims()[0]);
  if (why.empty()) why = detail::same_dims("ttm", "A's third dimension", A.dims()[2], "C's columns", C.dims()[1]);
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  compute(ex, A.local()(i, j, l), B.local()(i, j, k) * C.local()(k, l));
}

/// A(i,j) = B(i,j,k) c(k), (i, j) tiles; c replicated.
template <class V, format_type FA, format_type FB, class DA, class DB, class Dc, index_type I>
void ttv(dist_tensor<V, FA, DA, I>& A, const dist_tensor<V, FB, DB, I>& B, const dist_tensor<V, dense_vector, Dc, I>& c,
         const executor& ex = serial) {
  static_assert(DB::tensor_order == 3 && DB::machine_order() == 2 && partitions<DB>(0, 0) && partitions<DB>(1, 1),
                "tensorlev::dist::ttv: B must be split in (i, j) tiles (\"xyz->xy\")");
  static_assert(tiles_v<DA>, "tensorlev::dist::ttv: A must be split in tiles (\"xy->xy\")");
  static_assert(detail::replicated_v<Dc>, "tensorlev::dist::ttv: c must be replicated (\"x->**\")");
  const machine_grid& g = B.grid();
  std::string why = detail::same_grid("ttv", g, A, c);
  if (why.empty()) why = detail::same_splits("ttv", "A's rows", A.map().splits(0), "B's first dimension", B.map().splits(0));
  if (why.empty())
    why = detail::same_splits("ttv", "A's columns", A.map().splits(1), "B's second dimension", B.map().splits(1));
  if (why.empty()) why = detail::same_dims("ttv", "B's third dimension", B.dims()[2], "c's length", c.dims()[0]);
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  compute(ex, A.local()(i, j), B.local()(i, j, k) * c.local()(k));
}

/// The sum of B(i,j,k) C(i,j,k) on every rank; B and C in the same
/// distribution (replicated copies count once).
template <class V, format_type FB, format_type FC, class D, index_type I>
[[nodiscard]] V innerprod(const dist_tensor<V, FB, D, I>& B, const dist_tensor<V, FC, D, I>& C,
                          const executor& ex = serial) {
  static_assert(D::tensor_order == 3, "tensorlev::dist::innerprod: third-order tensors");
  const machine_grid& g = B.grid();
  std::string why = detail::same_grid("innerprod", g, C);
  for (std::size_t d = 0; d < 3 && why.empty(); ++d)
    if (B.map().splits(d) != C.map().splits(d) || B.dims()[d] != C.dims()[d])
      why = "tensorlev::dist::innerprod: B and C are split differently in dimension " + std::to_string(d);
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  scalar<V> s;
  if (B.owner()) compute(ex, s(), B.local()(i, j, k) * C.local()(i, j, k));
  V v = B.owner() ? s.value() : V{};
  g.allreduce_sum(&v, 1, g.comm());
  return v;
}

/// A(i,l) = B(i,j,k) C(j,l) D(k,l) on a 3D grid (see the file comment).
template <class V, format_type FB, class DA, class DB, class DC, class DD, index_type I>
void mttkrp(dist_tensor<V, dense_row_major, DA, I>& A, const dist_tensor<V, FB, DB, I>& B,
            const dist_tensor<V, dense_row_major, DC, I>& C, const dist_tensor<V, dense_row_major, DD, I>& D,
            const executor& ex = serial) {
  static_assert(DB::tensor_order == 3 && DB::machine_order() == 3 && partitions<DB>(0, 0) && partitions<DB>(1, 1) &&
                    partitions<DB>(2, 2),
                "tensorlev::dist::mttkrp: B must be split in (i, j, k) tiles on a 3D grid (\"xyz->xyz\")");
  static_assert(DC::machine_order() == 3 && partitions<DC>(1, 0) &&
                    DC::statement().machine[0].kind == machine_dim_kind::broadcast &&
                    DC::statement().machine[2].kind == machine_dim_kind::broadcast,
                "tensorlev::dist::mttkrp: C must be split by rows along the grid's second dimension and replicated "
                "along the others (\"xy->*x*\")");
  static_assert(DD::machine_order() == 3 && partitions<DD>(2, 0) &&
                    DD::statement().machine[0].kind == machine_dim_kind::broadcast &&
                    DD::statement().machine[1].kind == machine_dim_kind::broadcast,
                "tensorlev::dist::mttkrp: D must be split by rows along the grid's third dimension and replicated "
                "along the others (\"xy->**x\")");
  static_assert(DA::machine_order() == 3 && partitions<DA>(0, 0) &&
                    DA::statement().machine[1].kind == machine_dim_kind::fixed &&
                    DA::statement().machine[2].kind == machine_dim_kind::fixed &&
                    DA::statement().machine[1].fixed == 0 && DA::statement().machine[2].fixed == 0,
                "tensorlev::dist::mttkrp: A must be split by rows on the face \"xy->x00\"");
  const machine_grid& g = B.grid();
  std::string why = detail::same_grid("mttkrp", g, A, C, D);
  if (why.empty()) why = detail::same_splits("mttkrp", "A's rows", A.map().splits(0), "B's first dimension", B.map().splits(0));
  if (why.empty()) why = detail::same_splits("mttkrp", "C's rows", C.map().splits(0), "B's second dimension", B.map().splits(1));
  if (why.empty()) why = detail::same_splits("mttkrp", "D's rows", D.map().splits(0), "B's third dimension", B.map().splits(2));
  if (why.empty()) why = detail::same_dims("mttkrp", "C's columns", C.dims()[1], "D's columns", D.dims()[1]);
  if (why.empty()) why = detail::same_dims("mttkrp", "A's columns", A.dims()[1], "C's columns", C.dims()[1]);
  agree(g, why.empty(), why);
  using namespace tensorlev::indices;
  const I L = static_cast<I>(A.dims()[1]);
  tensor<V, dense_row_major, I> partial({B.local().dimension(0), L});
  compute(ex, partial(i, l), B.local()(i, j, k) * C.local()(j, l) * D.local()(k, l));
  auto pv = partial.values();
  g.reduce_sum(pv.data(), pv.size(), 0, g.axis(2));
  if (g.coords()[2] == 0) g.reduce_sum(pv.data(), pv.size(), 0, g.axis(1));
  if (A.holds()) std::copy(pv.begin(), pv.end(), A.local().values().begin());
}

}  // namespace tensorlev::dist
