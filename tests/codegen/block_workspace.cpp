// Block workspaces (plan_block): a dense vector output over a coordinate
// computed from blocks (SELL-C slices and lanes, BCSR and CSB block rows)
// is summed per full block in a local array and added into the output once
// per block (stored, for `=`: y is not zero-filled first); the last block,
// when it reaches past the extent, runs the plain loops (after zeroing its
// rows, for `=`). Generated: block sizes 1, 3, 8 (SELL), 2, 3 (BCSR), 1, 3, 4,
// 8 (grouped rows), 2 (CSB), SELL-C-sigma (rows through a permutation);
// extents 0, 1, around one and two blocks and larger; fills 0, sparse, half,
// full; expression shapes (negation, difference, repeated operand, constant,
// sum of operands, an extra dense term, a factor indexed by the row); `=`
// over a garbage-filled y and `+=`; serial and in chunks; double, float,
// int, complex, 64-bit indices.
// Small integer values: every sum is exact, so results compare exactly.
// Three translation units (TL_PART): 0 the SELL sweeps, the compile-time
// facts and the small cases; 1 BCSR, CSB, grouped rows and the value and
// index types; 2 blocked DIA. As one, clang's ASan build took 17 GB and 6
// minutes, and CI's two compile jobs ran out of 24 GB. Each part is built
// twice: with TENSORLEV_BLOCK_LOCALS as the compiler has it, and flipped
// (the _locals targets), so that each compiler's build runs both forms
// (CI's sanitized build is clang's: it runs GCC's form there).
#ifndef TL_PART
#define TL_PART 0
#endif
#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
namespace cg = tensorlev::cg;

template <class T>
T& lval();

// The order plan of y(o) = A(a, b) * x(v) for A in format F.
template <class F, char O = 'i', char Va = 'i', char Vb = 'j', char Vx = 'j'>
constexpr cg::order_plan spmv_order() {
  using y_t = decltype(lval<tensor<double, dense_vector>>()(tensorlev::index_var<O>{}));
  using A_t = decltype(lval<const tensor<double, F>>()(tensorlev::index_var<Va>{}, tensorlev::index_var<Vb>{}));
  using x_t = decltype(lval<const tensor<double, dense_vector>>()(tensorlev::index_var<Vx>{}));
  constexpr auto d = cg::describe<y_t, decltype(lval<const A_t>() * lval<const x_t>()), false>();
  return cg::make_order(d, 0);
}
// Planned where a loop lies between the block coordinate and the lane.
static_assert(spmv_order<sell<8>>().block == 0 && spmv_order<sell<1>>().block == 0);

#if TL_PART == 0
// The workspace as one vector value (kernel::lane_vector) where B
// floating-point sums fill 16, 32 or 64 bytes, and the lanes' loop (loop 2
// in SELL's slices, slots, lanes, row, column and grouped rows' groups,
// columns, lanes, row) adds into it at once; an array otherwise. The
// sweeps below run both forms.
template <class F, class V>
using spmv_kernel = cg::kernel<decltype(lval<tensor<V, dense_vector>>()(i)),
                               decltype(lval<const tensor<V, F>>()(i, j) * lval<const tensor<V, dense_vector>>()(j)),
                               false, 0>;
#if TENSORLEV_LANE_VECTORS
static_assert(spmv_kernel<sell<8>, double>::lane_vector && spmv_kernel<sell<8>, double>::lane_vector_slot<2, cg::block_bit, 0>());
static_assert(spmv_kernel<sell<4>, float>::lane_vector && spmv_kernel<sell<2>, double>::lane_vector);
static_assert(spmv_kernel<grouped_rows<8>, double>::lane_vector_slot<2, cg::block_bit, 0>());
static_assert(spmv_kernel<grouped_rows<4>, double>::lane_vector_slot<2, cg::block_bit, 0>());
static_assert(spmv_kernel<sell_sigma<8>, double>::lane_vector_slot<2, cg::block_bit, 0>());
static_assert(!spmv_kernel<sell<8>, double>::lane_vector_slot<1, cg::block_bit, 0>());  // the slots
// The slots' loop keeps the vector and its position in locals where
// TENSORLEV_BLOCK_LOCALS is on (test_codegen_block_workspace_*_locals flips
// the compiler's default), and only that loop, inside a block.
static_assert(spmv_kernel<sell<8>, double>::lane_block_loop<1, cg::block_bit>() == bool(TENSORLEV_BLOCK_LOCALS));
static_assert(spmv_kernel<grouped_rows<4>, double>::lane_block_loop<1, cg::block_bit>() ==
              bool(TENSORLEV_BLOCK_LOCALS));
static_assert(!spmv_kernel<sell<8>, double>::lane_block_loop<2, cg::block_bit>() &&
              !spmv_kernel<sell<8>, double>::lane_block_loop<1, 0>());
#endif
static_assert(!spmv_kernel<sell<3>, double>::lane_block_loop<1, cg::block_bit>());  // an array, not a vector
// Blocked DIA sums a block of rows in the workspace (one vector at 4 and 8
// doubles); its column level tells when a block's lanes are all found.
static_assert(spmv_order<blocked_dia<8>>().block == 0 && spmv_order<blocked_dia<16>>().block == 0);
static_assert(spmv_kernel<blocked_dia<8>, double>::lane_vector && !spmv_kernel<blocked_dia<16>, double>::lane_vector);
static_assert(tensorlev::lanes_found_level<blocked_dia<8>::level_type<3, int>> &&
              !tensorlev::always_found_level<blocked_dia<8>::level_type<3, int>>);
static_assert(!tensorlev::lanes_found_level<dia::level_type<2, int>> &&
              !tensorlev::lanes_found_level<sell<8>::level_type<3, int>>);
static_assert(!spmv_kernel<sell<3>, double>::lane_vector && !spmv_kernel<sell<1>, double>::lane_vector);
static_assert(!spmv_kernel<sell<4>, int>::lane_vector && !spmv_kernel<sell<4>, std::complex<double>>::lane_vector);
static_assert(!spmv_kernel<csr, double>::lane_vector);
static_assert(spmv_order<bcsr<2>>().block == 0);
static_assert(spmv_order<grouped_rows<1>>().block == 0 && spmv_order<grouped_rows<8>>().block == 0);
static_assert(spmv_order<sell<cg::block_ws_max>>().block == 0);
// Not planned: rows not computed from blocks, a block over the stack's
// budget, the output over a coordinate that is not computed (SELL's
// columns), or a matrix output.
static_assert(spmv_order<csr>().block == -1 && spmv_order<ell>().block == -1 && spmv_order<dia>().block == -1);
// CSB: its inner coordinates are sparse (a block may hold fewer entries
// than the B sums a workspace clears and adds).
static_assert(spmv_order<csb<2>>().block == -1 && spmv_order<csb<2>, 'j', 'i', 'j', 'i'>().block == -1);
static_assert(spmv_order<sell<cg::block_ws_max + 1>>().block == -1);
// SELL-C-sigma: the same workspace; its rows go through the lanes level's
// permutation (a remapping level) and are no range of rows (rows_block).
static_assert(spmv_order<sell_sigma<8>>().block == 0 && spmv_order<sell_sigma<1, 4>>().block == 0);
static_assert(spmv_order<sell_sigma<8>, 'j', 'i', 'j', 'i'>().block == -1);
static_assert(tensorlev::remapping_level<sell_sigma<8>::level_type<2, int>>);
static_assert(!tensorlev::remapping_level<sell<8>::level_type<2, int>>);
static_assert([] {
  using y_t = decltype(lval<tensor<double, dense_vector>>()(i));
  using A_t = decltype(lval<const tensor<double, sell_sigma<8>>>()(i, j));
  using x_t = decltype(lval<const tensor<double, dense_vector>>()(j));
  constexpr auto d = cg::describe<y_t, decltype(lval<const A_t>() * lval<const x_t>()), false>();
  return d.ncomp == 1 && d.comp_remap[0] == 3;  // level 2 of A, plus one
}());
static_assert(spmv_order<sell<8>, 'j', 'i', 'j', 'i'>().block == -1);
static_assert(spmv_order<bcsr<2>, 'j', 'i', 'j', 'i'>().block == 1);  // BCSR's columns are blocks too
// Grouped rows' columns are not blocked: the transpose scatters.
static_assert(spmv_order<grouped_rows<4>, 'j', 'i', 'j', 'i'>().block == -1);
static_assert([] {
  using C_t = decltype(lval<tensor<double, dense_row_major>>()(i, k));
  using A_t = decltype(lval<const tensor<double, sell<4>>>()(i, j));
  using B_t = decltype(lval<const tensor<double, dense_row_major>>()(j, k));
  constexpr auto d = cg::describe<C_t, decltype(lval<const A_t>() * lval<const B_t>()), false>();
  return cg::make_order(d, 0).block == -1;
}());

#endif

template <class V>
std::vector<V> matvec(const std::vector<V>& A, int m, int n, const std::vector<V>& x, bool transpose = false) {
  std::vector<V> y(static_cast<std::size_t>(transpose ? n : m), V{});
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      const V a = A[static_cast<std::size_t>(r * n + c)];
      if (transpose)
        y[static_cast<std::size_t>(c)] += a * x[static_cast<std::size_t>(r)];
      else
        y[static_cast<std::size_t>(r)] += a * x[static_cast<std::size_t>(c)];
    }
  return y;
}

template <class V>
std::vector<V> combine(const std::vector<V>& a, const std::vector<V>& b, V sa, V sb) {
  std::vector<V> r(a.size());
  for (std::size_t q = 0; q < a.size(); ++q) r[q] = sa * a[q] + sb * b[q];
  return r;
}

// Runs one statement as `=` over garbage and as `+=` over y0, serially and
// in 3 chunks, comparing with ref (and y0 + ref).
template <class V, class I, class Stmt>
std::size_t check(int m, const std::vector<V>& ref, Stmt&& stmt, const std::string& what) {
  std::size_t bad = 0;
  std::vector<V> y0(ref.size());
  for (std::size_t q = 0; q < y0.size(); ++q) y0[q] = static_cast<V>(static_cast<int>(q % 7) - 3);
  for (std::size_t chunks : {std::size_t{0}, std::size_t{3}}) {
    const std::string tag = what + (chunks ? " (3 chunks)" : "");
    tensor<V, dense_vector, I> y(std::array<I, 1>{static_cast<I>(m)});
    for (auto& v : y.values()) v = static_cast<V>(99);
    stmt(chunks, false, y);
    bad += count_mismatches<V>(y.values(), ref, tag + " =");
    std::copy(y0.begin(), y0.end(), y.values().begin());
    stmt(chunks, true, y);
    bad += count_mismatches<V>(y.values(), combine(y0, ref, V(1), V(1)), tag + " +=");
  }
  return bad;
}

template <class F, class V, class I>
std::size_t cases(int m, int n, double fill, std::mt19937_64& rng) {
  std::size_t bad = 0;
  auto A = random_operand<F, V, I>(std::array<I, 2>{static_cast<I>(m), static_cast<I>(n)}, fill, rng);
  auto x = random_operand<dense_vector, V, I>(std::array<I, 1>{static_cast<I>(n)}, 0.8, rng);
  auto z = random_operand<dense_vector, V, I>(std::array<I, 1>{static_cast<I>(n)}, 0.8, rng);
  auto b = random_operand<dense_vector, V, I>(std::array<I, 1>{static_cast<I>(m)}, 0.8, rng);
  auto xm = random_operand<dense_vector, V, I>(std::array<I, 1>{static_cast<I>(m)}, 0.8, rng);
  const std::string tag = fname<F>() + " " + std::to_string(m) + "x" + std::to_string(n) + " fill " +
                          std::to_string(fill) + " " + typeid(V).name() + "/" + typeid(I).name() + ": ";
  const std::vector<V> Ax = matvec(A.d, m, n, x.d), Az = matvec(A.d, m, n, z.d);
  std::vector<V> xx(x.d.size());
  for (std::size_t q = 0; q < xx.size(); ++q) xx[q] = x.d[q] * x.d[q];
  const auto& At = A.t;
  const auto& xt = x.t;
  const auto& zt = z.t;
  const auto& bt = b.t;

  bad += check<V, I>(m, Ax, [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j)); },
                     tag + "A*x");
  bad += check<V, I>(m, combine(Ax, Ax, V(0), V(-1)),
                     [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), -(At(i, j) * xt(j))); },
                     tag + "-(A*x)");
  bad += check<V, I>(
      m, combine(Ax, Az, V(1), V(-1)),
      [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j) - At(i, j) * zt(j)); },
      tag + "A*x - A*z");
  bad += check<V, I>(m, matvec(A.d, m, n, xx),
                     [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j) * xt(j)); },
                     tag + "A*x*x");
  bad += check<V, I>(
      m, combine(Ax, Az, V(2), V(2)),
      [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), 2 * At(i, j) * (xt(j) + zt(j))); },
      tag + "2*A*(x+z)");
  bad += check<V, I>(m, combine(Ax, b.d, V(1), V(1)),
                     [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j) + bt(i)); },
                     tag + "A*x + b");
  // A factor indexed by the row inside the workspace: b read at the row a
  // lane stands for (SELL-C-sigma: through the permutation).
  std::vector<V> Axb(Ax.size());
  for (std::size_t q = 0; q < Axb.size(); ++q) Axb[q] = Ax[q] * b.d[q];
  bad += check<V, I>(m, Axb,
                     [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j) * bt(i)); },
                     tag + "A*x*b");
  // The transpose: y(j) = A(i,j) * x(i) (blocked columns for BCSR and CSB,
  // a scatter for SELL).
  const auto& xmt = xm.t;
  bad += check<V, I>(n, matvec(A.d, m, n, xm.d, true),
                     [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(j), At(i, j) * xmt(i)); },
                     tag + "A^T*x");
  return bad;
}

template <class F, class V, class I = int>
std::size_t sweep(std::mt19937_64& rng, int B) {
  std::size_t bad = 0;
  std::vector<int> ms{0, 1, 2, B - 1, B, B + 1, 2 * B, 3 * B + 2, 41};
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  for (int m : ms) {
    if (m < 0) continue;
    for (int n : {0, 1, 6, 13})
      for (double fill : {0.0, 0.15, 0.5, 1.0}) bad += cases<F, V, I>(m, n, fill, rng);
  }
  return bad;
}

#if TL_PART == 0
TEST(BlockWorkspace, SellEveryShape) {
  std::mt19937_64 rng(4101);
  std::size_t bad = 0;
  bad += sweep<sell<1>, double>(rng, 1);
  bad += sweep<sell<3>, double>(rng, 3);
  bad += sweep<sell<8>, double>(rng, 8);
  EXPECT_EQ(bad, 0u);
}

// SELL-C-sigma: windows of two slices (sell_sigma<3, 6>) and larger, so
// that the generated cases sort rows across slices (fills 0.15 and 0.5:
// rows of different lengths); `A*x*b` reads b at the remapped row inside
// the workspace, the transpose scatters.
TEST(BlockWorkspace, SellSigmaEveryShape) {
  std::mt19937_64 rng(4106);
  std::size_t bad = 0;
  bad += sweep<sell_sigma<1, 4>, double>(rng, 1);
  bad += sweep<sell_sigma<3, 6>, double>(rng, 3);
  bad += sweep<sell_sigma<8, 16>, double>(rng, 8);
  bad += sweep<sell_sigma<3, 1000>, double>(rng, 3);
  bad += sweep<sell_sigma<4, 8>, std::complex<double>, std::int64_t>(rng, 4);
  bad += sweep<sell_sigma<4, 8>, int>(rng, 4);
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 1
TEST(BlockWorkspace, BlockedRowsEveryShape) {
  std::mt19937_64 rng(4102);
  std::size_t bad = 0;
  bad += sweep<bcsr<2>, double>(rng, 2);
  bad += sweep<bcsr<3>, double>(rng, 3);
  bad += sweep<csb<2>, double>(rng, 2);
  EXPECT_EQ(bad, 0u);
}

TEST(BlockWorkspace, GroupedRowsEveryShape) {
  std::mt19937_64 rng(4105);
  std::size_t bad = 0;
  bad += sweep<grouped_rows<1>, double>(rng, 1);
  bad += sweep<grouped_rows<3>, double>(rng, 3);
  bad += sweep<grouped_rows<4>, double>(rng, 4);
  bad += sweep<grouped_rows<8>, double>(rng, 8);
  bad += sweep<grouped_rows<4>, std::complex<double>, std::int64_t>(rng, 4);
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 2
// Blocked DIA: blocks of 1, 3 (partial last blocks), 4 and 8 (the
// workspace as one vector), 16 (an array); interior blocks run without the
// found checks (lanes_found), blocks at the matrix's edges with them.
TEST(BlockWorkspace, BlockedDiaEveryShape) {
  std::mt19937_64 rng(4107);
  std::size_t bad = 0;
  bad += sweep<blocked_dia<1>, double>(rng, 1);
  bad += sweep<blocked_dia<3>, double>(rng, 3);
  bad += sweep<blocked_dia<4>, double>(rng, 4);
  bad += sweep<blocked_dia<8>, double>(rng, 8);
  bad += sweep<blocked_dia<16>, double>(rng, 16);
  bad += sweep<blocked_dia<4>, std::complex<double>, std::int64_t>(rng, 4);
  bad += sweep<blocked_dia<8>, float>(rng, 8);
  bad += sweep<blocked_dia<3>, int>(rng, 3);
  EXPECT_EQ(bad, 0u);
}

// Banded matrices large enough that most blocks are interior (every lane
// found), with diagonals that leave the matrix on either side, square,
// wide and tall, against the dense reference.
template <class F>
std::size_t banded(int m, int n, const std::vector<int>& offsets, std::mt19937_64& rng) {
  coordinate_list<double, int> l(std::vector<int>{m, n});
  std::vector<double> A(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0);
  std::uniform_int_distribution<int> val(-4, 4);
  for (int r = 0; r < m; ++r)
    for (const int o : offsets)
      if (r + o >= 0 && r + o < n && rng() % 8 != 0) {
        const double v = val(rng);
        l.push_back({r, r + o}, v);
        A[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(r + o)] += v;
      }
  const auto At = pack<F>(l);
  tensorlev::validate(At);
  auto x = random_operand<dense_vector>(std::array<int, 1>{n}, 0.9, rng);
  const auto& xt = x.t;
  return check<double, int>(m, matvec(A, m, n, x.d),
                            [&](std::size_t c, bool add, auto& y) { run_in_chunks(c, add, y(i), At(i, j) * xt(j)); },
                            fname<F>() + " banded " + std::to_string(m) + "x" + std::to_string(n) + ": A*x");
}

TEST(BlockWorkspace, BlockedDiaBanded) {
  std::mt19937_64 rng(4108);
  std::size_t bad = 0;
  const std::vector<int> stencil{-37, -9, -1, 0, 1, 9, 37};
  const std::vector<int> far{-300, -5, 2, 64, 250};
  for (const auto& [m, n] : {std::pair{200, 200}, std::pair{203, 150}, std::pair{120, 333}, std::pair{1, 400}})
    for (const auto* offs : {&stencil, &far}) {
      bad += banded<blocked_dia<4>>(m, n, *offs, rng);
      bad += banded<blocked_dia<8>>(m, n, *offs, rng);
      bad += banded<blocked_dia<16>>(m, n, *offs, rng);
      bad += banded<blocked_dia<7>>(m, n, *offs, rng);
    }
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 1
TEST(BlockWorkspace, ValueAndIndexTypes) {
  std::mt19937_64 rng(4103);
  std::size_t bad = 0;
  bad += sweep<sell<4>, float>(rng, 4);
  bad += sweep<sell<4>, int>(rng, 4);
  bad += sweep<sell<4>, std::complex<double>>(rng, 4);
  bad += sweep<sell<4>, double, std::int64_t>(rng, 4);
  bad += sweep<bcsr<2>, std::int64_t, std::int64_t>(rng, 2);
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 0
// A blocked operand assembled from its levels with fewer blocks than y's
// extent needs (pack never builds one; the tensor constructor takes it):
// `=` stores only the blocks loop 0 visits, so the rows past them must be
// zeroed (kernel::zero_unreached_rows), not left as they were.
template <class F>
void short_block_level(int m, int blocks) {
  coordinate_list<double, int> e(std::vector<int>{m, 5});
  for (int r = 0; r < m; ++r)
    for (int c = 0; c <= r % 5; ++c) e.push_back({r, c}, c == 0 ? 1.0 + r : 0.0);  // rows of 1-5 entries
  const auto A = pack<F>(e);
  auto lv = A.levels();
  std::get<0>(lv) = std::remove_cvref_t<decltype(std::get<0>(lv))>(blocks);
  const tensor<double, F> S({m, 5}, lv, std::vector<double>(A.values().begin(), A.values().end()));
  tensor<double, dense_vector> x({5}), y({m});
  for (auto& v : x.values()) v = 1;
  for (std::size_t chunks : {std::size_t{0}, std::size_t{2}}) {
    for (auto& v : y.values()) v = 99;
    run_in_chunks(chunks, false, y(i), S(i, j) * x(j));
    const auto& lanes = A.template level<2>();
    const int reached = std::min(m, blocks * static_cast<int>(lanes.dimension()));
    std::vector<double> want(static_cast<std::size_t>(m), 0.0);
    for (int k = 0; k < reached; ++k) {  // the rows blocked coordinates 0 .. reached-1 stand for
      int r = k;
      if constexpr (tensorlev::remapping_level<std::remove_cvref_t<decltype(lanes)>>) r = lanes.remap(k);
      want[static_cast<std::size_t>(r)] = 1.0 + r;
    }
    for (int r = 0; r < m; ++r)
      EXPECT_EQ(y.values()[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)])
          << fname<F>() << " row " << r << " of " << m << ", " << blocks << " blocks, chunks " << chunks;
  }
}

TEST(BlockWorkspace, RowsNoBlockReachesAreZeroed) {
  for (int blocks : {0, 1, 2}) {
    short_block_level<sell<8>>(20, blocks);
    short_block_level<sell<4>>(13, blocks);
    short_block_level<sell_sigma<4, 8>>(13, blocks);
    short_block_level<sell_sigma<8, 16>>(20, blocks);
  }
}

// loop_nest prints the workspace, the constant lane loop, the unchecked
// coordinate, the block stored into y, and the last block zeroed before its
// plain loops add (`=`: y is not zero-filled first).
TEST(BlockWorkspace, Printed) {
  const tensor<double, sell<8>> A = pack<sell<8>>(coordinate_list<double, int>(std::vector<int>{3, 4}));
  const tensor<double, csr> C = pack<csr>(coordinate_list<double, int>(std::vector<int>{3, 4}));
  tensor<double, dense_vector> x({4}), y({3});
  const std::string s = loop_nest(y(i), A(i, j) * x(j), std::vector<std::string>{"y", "A", "x"});
  for (const char* want : {"if (qA1 * 8 + 8 <= i_extent) {", "double w[8] = {};",
                           "int pA3_i = 0, pA3_i_end = 8;  // the block: a constant trip count",
                           "i_u_end = i_u + 1;  // blocked coordinate, inside the block", "w[qA3] += acc;",
                           "for (int l = 0; l < 8; ++l) y_vals[qA1 * 8 + l] = w[l];", "} else {",
                           "for (int l = 0; qA1 * 8 + l < i_extent; ++l) y_vals[qA1 * 8 + l] = 0;  // y is not "
                           "zero-filled first",
                           "i_u_end = i_u < i_extent ? i_u + 1 : i_u;  // blocked coordinate", "y_vals[py1] += acc;"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  EXPECT_EQ(loop_nest(y(i), C(i, j) * x(j)).find("workspace"), std::string::npos);
}

// SELL-C-sigma prints its blocks' rows through the permutation.
TEST(BlockWorkspace, SellSigmaPrinted) {
  const auto A = pack<sell_sigma<8>>(coordinate_list<double, int>(std::vector<int>{3, 4}));
  tensor<double, dense_vector> x({4}), y({3});
  const std::string s = loop_nest(y(i), A(i, j) * x(j), std::vector<std::string>{"y", "A", "x"});
  for (const char* want : {"double w[8] = {};", "for (int l = 0; l < 8; ++l) y_vals[A_perm[qA1 * 8 + l]] = w[l];",
                           "for (int l = 0; qA1 * 8 + l < i_extent; ++l) y_vals[A_perm[qA1 * 8 + l]] = 0;",
                           "int i_u = qA1 * 8 + qA3, i_u_end = i_u + 1;  // blocked coordinate, inside the block "
                           "(the lane's row is not read here)",
                           "int i_u = (qA1 * 8 + qA3 < A_perm_size ? A_perm[qA1 * 8 + qA3] : qA1 * 8 + qA3), i_u_end = "
                           "i_u < i_extent ? i_u + 1 : i_u;"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  // A factor indexed by the row inside the workspace: the row is read.
  tensor<double, dense_vector> b({3});
  const std::string t = loop_nest(y(i), A(i, j) * x(j) * b(i), std::vector<std::string>{"y", "A", "x", "b"});
  EXPECT_NE(t.find("int i_u = A_perm[qA1 * 8 + qA3], i_u_end = i_u + 1;  // blocked coordinate, inside the block\n"),
            std::string::npos)
      << t;
}

// pack's rule: rows sorted by their number of entries, longest first,
// stable, within windows of Sigma rows; a slice then pads to rows of
// similar length.
TEST(BlockWorkspace, SellSigmaRowOrder) {
  const std::vector<int> len{1, 3, 2, 0, 5, 4, 4, 1, 0, 2, 6};
  coordinate_list<double, int> e(std::vector<int>{11, 8});
  for (int r = 0; r < 11; ++r)
    for (int c = 0; c < len[static_cast<std::size_t>(r)]; ++c) e.push_back({r, c}, 1.0 + r + 10 * c);
  const auto A = pack<sell_sigma<2, 4>>(e);
  const auto& p = A.level<2>().permutation();
  // windows [0,4): lengths 1 3 2 0 -> rows 1 2 0 3; [4,8): 5 4 4 1 -> 4 5 6 7; [8,11): 0 2 6 -> 10 9 8
  EXPECT_EQ(std::vector<int>(p.begin(), p.end()), (std::vector<int>{1, 2, 0, 3, 4, 5, 6, 7, 10, 9, 8}));
  // slices (1,2) (0,3) (4,5) (6,7) (10,9) (8): widths 3 1 5 4 6 0 -> 19 slots of 2
  EXPECT_EQ(A.stored(), 38u);
  EXPECT_EQ(pack<sell<2>>(e).stored(), 2u * (3 + 2 + 5 + 4 + 2 + 6));  // rows in order: 44
  EXPECT_EQ(to_dense(A), to_dense(pack<csr>(e)));
  // One window over everything: rows by length alone.
  const auto B = pack<sell_sigma<2, 64>>(e);
  const auto& q = B.level<2>().permutation();
  EXPECT_EQ(std::vector<int>(q.begin(), q.end()), (std::vector<int>{10, 4, 5, 6, 1, 2, 9, 0, 7, 3, 8}));
  EXPECT_EQ(to_dense(B), to_dense(pack<csr>(e)));
  // duplicates::error names the caller's coordinates, not the sorted rows.
  e.push_back({9, 1}, 1.0);
  try {
    (void)pack<sell_sigma<2, 4>>(e, tensorlev::duplicates::error);
    ADD_FAILURE() << "no duplicate_error";
  } catch (const tensorlev::duplicate_error& x) {
    EXPECT_NE(std::string(x.what()).find("(9,1)"), std::string::npos) << x.what();
  }
}

#endif

#if TL_PART == 2
// Blocked DIA from arrays held elsewhere: the offsets must be one per
// diagonal (the tensor's constructor checks: a kernel reads them
// unchecked) and increasing (validate), and the columns a kernel forms
// must fit the index type.
TEST(BlockWorkspace, BlockedDiaArrays) {
  coordinate_list<double, int> l(std::vector<int>{10, 9});
  for (int r = 0; r < 10; ++r)
    for (const int o : {-2, 0, 3})
      if (r + o >= 0 && r + o < 9) l.push_back({r, r + o}, 1.0 + r);
  const auto A = pack<blocked_dia<4>>(l);
  EXPECT_NO_THROW(tensorlev::validate(A));
  EXPECT_EQ(A.level<3>().offsets().size(), 3u);
  using L3 = std::remove_cvref_t<decltype(A.level<3>())>;
  const std::vector<double> vals(A.values().begin(), A.values().end());
  auto with = [&](std::vector<int> offsets) {
    auto lv = A.levels();
    std::get<3>(lv) = L3(9, typename L3::offsets_array(std::move(offsets)));
    return tensor<double, blocked_dia<4>>(A.dims(), lv, vals);
  };
  try {
    (void)with({-2, 0});
    ADD_FAILURE() << "no shape_error for 2 offsets";
  } catch (const tensorlev::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("2 diagonal offsets for 3 diagonals"), std::string::npos) << e.what();
  }
  try {
    tensorlev::validate(with({-2, 3, 0}));
    ADD_FAILURE() << "no shape_error for decreasing offsets";
  } catch (const tensorlev::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("level 3 (block offset): block offset level: the diagonal offsets do not "
                                         "increase at entry 2 (3 then 0)"),
              std::string::npos)
        << e.what();
  }
  // 2^29 blocks of 4 rows: row 2^31 - 1 and past it do not fit int (the
  // dense block level stores nothing; the constructor checks first).
  const int blocks = 1 << 29;
  using L0 = std::remove_cvref_t<decltype(A.level<0>())>;
  using L1 = std::remove_cvref_t<decltype(A.level<1>())>;
  using L2 = std::remove_cvref_t<decltype(A.level<2>())>;
  try {
    typename tensor<double, blocked_dia<4>>::level_tuple lv{L0(blocks), L1(1, std::vector<int>{0, 0}, std::vector<int>{}),
                                                            L2(4), L3(9, L3::offsets_array(std::vector<int>{0}))};
    (void)tensor<double, blocked_dia<4>>(std::array<int, 2>{std::numeric_limits<int>::max(), 9}, lv,
                                         std::vector<double>{});
    ADD_FAILURE() << "no overflow_error";
  } catch (const tensorlev::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("past the index type's largest value"), std::string::npos) << e.what();
  }
}

#endif

#if TL_PART == 0
// validate checks the permutation of arrays from elsewhere.
TEST(BlockWorkspace, SellSigmaValidate) {
  std::mt19937_64 rng(4107);
  auto A = random_operand<sell_sigma<4, 8>>(std::array<int, 2>{10, 6}, 0.4, rng);
  EXPECT_NO_THROW(tensorlev::validate(A.t));
  using L2 = std::remove_cvref_t<decltype(A.t.level<2>())>;
  auto broken = [&](std::vector<int> perm, const char* want) {
    auto lv = A.t.levels();
    std::get<2>(lv) = L2(4, std::move(perm));
    const tensor<double, sell_sigma<4, 8>> bad(A.t.dims(), lv,
                                               std::vector<double>(A.t.values().begin(), A.t.values().end()));
    try {
      tensorlev::validate(bad);
      ADD_FAILURE() << "no shape_error for " << want;
    } catch (const tensorlev::shape_error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("level 2 (permuted dense)"), std::string::npos) << e.what();
    }
  };
  broken({0, 1, 2, 3, 4, 5, 6, 7, 8}, "the permutation has 9 entries, expected one per row (10)");
  broken({0, 1, 2, 3, 4, 5, 6, 7, 8, 10}, "permutation entry 9 is 10, outside [0, 10)");
  broken({0, 1, 2, 3, 4, 5, 6, 7, 8, -1}, "permutation entry 9 is -1, outside [0, 10)");
  broken({0, 1, 2, 3, 4, 5, 6, 2, 8, 9}, "permutation entry 7 repeats row 2");
  // A kernel checks the length (its stores read the permutation unchecked
  // for every row of a full block); the entries are validate's.
  for (std::vector<int> perm : {std::vector<int>{0, 1, 2}, std::vector<int>(11, 0)}) {
    auto lv = A.t.levels();
    const std::size_t len = perm.size();
    std::get<2>(lv) = L2(4, std::move(perm));
    const tensor<double, sell_sigma<4, 8>> bad(A.t.dims(), lv,
                                               std::vector<double>(A.t.values().begin(), A.t.values().end()));
    tensor<double, dense_vector> x({6}), y({10});
    try {
      y(i) = bad(i, j) * x(j);
      ADD_FAILURE() << "no shape_error for a permutation of " << len;
    } catch (const tensorlev::shape_error& e) {
      EXPECT_NE(std::string(e.what()).find("operand 1, level 2 (permuted dense): the permutation has " +
                                           std::to_string(len) + " entries, but the dimension it permutes has "
                                                                 "extent 10"),
                std::string::npos)
          << e.what();
    }
  }
  // pack into a stored row type too narrow for the rows: an error, not a
  // truncated permutation.
  coordinate_list<double, int> tall(std::vector<int>{40000, 2});
  for (int r = 0; r < 40000; ++r) tall.push_back({r, r % 2}, 1.0);
  EXPECT_THROW((void)(pack<sell_sigma<4, 8>, tensorlev::owning<void, std::int16_t>>(tall)), tensorlev::overflow_error);
}

// A SELL-C matrix's blocks: the lane level's extent is the block (what the
// kernel's constant lane loop relies on), and validate says so when arrays
// from elsewhere break it.
TEST(BlockWorkspace, LaneLevelExtentIsTheBlock) {
  std::mt19937_64 rng(4104);
  auto A = random_operand<sell<8>>(std::array<int, 2>{21, 9}, 0.3, rng);
  EXPECT_EQ(A.t.level<2>().dimension(), 8);
  EXPECT_NO_THROW(tensorlev::validate(A.t));
  auto lv = A.t.levels();
  std::get<2>(lv) = std::remove_cvref_t<decltype(std::get<2>(lv))>(4);
  const tensor<double, sell<8>> bad(A.t.dims(), lv,
                                    std::vector<double>(A.t.values().begin(), A.t.values().end()));
  EXPECT_THROW(
      {
        try {
          tensorlev::validate(bad);
        } catch (const tensorlev::shape_error& e) {
          EXPECT_NE(std::string(e.what()).find("blocks are 8 wide"), std::string::npos) << e.what();
          throw;
        }
      },
      tensorlev::shape_error);
}
#endif

}  // namespace
