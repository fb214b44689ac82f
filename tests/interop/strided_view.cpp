// Strided dense views (levels/strided.hpp; dense_view(rows, cols, ld, values)):
// a submatrix of a larger array, rows (columns) ld apart. Generated cases:
// row- and column-major, extents 0, 1 and more, ld equal to and above the
// row length, as operands (SpMV, sums with CSR, a transposed read, a
// repeated operand into a scalar) and as outputs (`=` stored directly, `=`
// that must zero first, `+=`, SpMM, a transposed write), serially and in
// chunks; every result against a dense reference, and every position
// between the rows (a sentinel) unchanged.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../codegen/common.hpp"
#include "tensorlev/interop/raw.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

static_assert(level<strided_level<int>> && locatable_level<strided_level<int>> &&
              coord_iterable_level<strided_level<int>> && always_found_level<strided_level<int>>);
static_assert(!strided_level<int>::is_compact && strided_level<int>::contiguous);
static_assert(tensorlev::detail::has_gaps_v<tensor<double, strided_row_major>> &&
              !tensorlev::detail::has_gaps_v<tensor<double, dense_row_major>>);

// -0.0: adding +0.0 into a gap (a private copy added over the whole span)
// turns it into +0.0, so even that shows.
constexpr double sentinel = -0.0;
bool is_sentinel(double v) { return v == 0.0 && std::signbit(v); }

// An m x n matrix inside a backing array: rows (row-major) or columns
// (col-major) ld apart, starting `off` values in; every other value of the
// backing array is the sentinel.
struct backed {
  int m = 0, n = 0, ld = 0, off = 0;
  bool row_major = true;
  std::vector<double> store;
  std::size_t at(int r, int c) const {
    return static_cast<std::size_t>(off + (row_major ? r * ld + c : c * ld + r));
  }
  backed(int m_, int n_, int ld_, int off_, bool rm) : m(m_), n(n_), ld(ld_), off(off_), row_major(rm) {
    const int outer = rm ? m : n;
    store.assign(static_cast<std::size_t>(off + outer * ld + 3), sentinel);
  }
  void set(const std::vector<double>& d) {  // d: m x n row-major
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) store[at(r, c)] = d[static_cast<std::size_t>(r * n + c)];
  }
  std::vector<double> get() const {
    std::vector<double> d(static_cast<std::size_t>(m * n));
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) d[static_cast<std::size_t>(r * n + c)] = store[at(r, c)];
    return d;
  }
  // The positions no component holds still hold the sentinel.
  std::size_t gaps_touched() const {
    std::vector<char> mine(store.size(), 0);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) mine[at(r, c)] = 1;
    std::size_t bad = 0;
    for (std::size_t x = 0; x < store.size(); ++x)
      if (mine[x] == 0 && !is_sentinel(store[x])) ++bad;
    return bad;
  }
};

template <dense_layout L>
auto view_of(backed& b) {
  return dense_view<L>(b.m, b.n, b.ld, b.store.data() + b.off);
}

std::vector<double> random_dense(int m, int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<double> v(static_cast<std::size_t>(m * n));
  for (double& x : v) x = d(rng);
  return v;
}

template <dense_layout L>
std::size_t cases_for(int m, int n, int pad, const executor& ex, std::mt19937_64& rng, std::size_t& count) {
  constexpr bool rm = L == dense_layout::row_major;
  const std::string tag = std::string(rm ? "row" : "col") + "-major " + std::to_string(m) + "x" + std::to_string(n) +
                          " pad " + std::to_string(pad) + (ex.parallel() ? " chunked" : " serial");
  std::size_t bad = 0;
  const int ld = (rm ? n : m) + pad;
  const std::vector<double> a = random_dense(m, n, rng);
  backed A(m, n, ld, 2, rm);
  A.set(a);
  auto Av = view_of<L>(A);
  auto B = random_operand<csr>(std::array<int, 2>{m, n}, 0.4, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{n}, 1.0, rng);
  auto K = random_operand<dense_row_major>(std::array<int, 2>{n, 3}, 1.0, rng);

  {  // an operand: SpMV-like product, a sum with CSR, a transposed read, a repeated operand into a scalar
    std::vector<double> y_ref(static_cast<std::size_t>(m), 0.0), s_ref(static_cast<std::size_t>(m * n));
    std::vector<double> t_ref(static_cast<std::size_t>(n * m));
    double q_ref = 0;
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const double v = a[static_cast<std::size_t>(r * n + c)];
        y_ref[static_cast<std::size_t>(r)] += v * x.d[static_cast<std::size_t>(c)];
        s_ref[static_cast<std::size_t>(r * n + c)] = v - B.d[static_cast<std::size_t>(r * n + c)];
        t_ref[static_cast<std::size_t>(c * m + r)] = -v;
        q_ref += v * v;
      }
    tensor<double, dense_vector> y({m});
    compute(ex, y(i), Av(i, j) * x.t(j));
    bad += count_mismatches<double>(y.values(), y_ref, "y = A x, " + tag);
    tensor<double, dense_row_major> S({m, n}), T({n, m});
    compute(ex, S(i, j), Av(i, j) - B.t(i, j));
    bad += count_mismatches<double>(S.values(), s_ref, "S = A - B, " + tag);
    compute(ex, T(j, i), -Av(i, j));
    bad += count_mismatches<double>(T.values(), t_ref, "T(j,i) = -A(i,j), " + tag);
    scalar<double> q(5.0);
    compute(ex, q(), Av(i, j) * Av(i, j));
    if (q.value() != q_ref) {
      ++bad;
      ADD_FAILURE() << "q = A . A, " << tag << ": " << q.value() << " vs " << q_ref;
    }
  }
  {  // an output
    backed C(m, n, ld, 1, rm);
    auto Cv = view_of<L>(C);
    std::vector<double> ref(static_cast<std::size_t>(m * n));
    for (std::size_t e = 0; e < ref.size(); ++e) ref[e] = 2.0 * a[e];
    compute(ex, Cv(i, j), 2.0 * Av(i, j));  // every component stored once
    bad += count_mismatches<double>(C.get(), ref, "C = 2 A, " + tag);
    compute(ex, Cv(i, j), B.t(i, j));  // sparse: zeroed first
    bad += count_mismatches<double>(C.get(), B.d, "C = B (CSR), " + tag);
    compute_add(ex, Cv(i, j), Av(i, j) * B.t(i, j));
    for (std::size_t e = 0; e < ref.size(); ++e) ref[e] = B.d[e] + a[e] * B.d[e];
    bad += count_mismatches<double>(C.get(), ref, "C += A * B, " + tag);
    bad += C.gaps_touched();
    // SpMM into a strided m x 3 output, and a transposed write into an n x m one.
    backed P(m, 3, (rm ? 3 : m) + pad, 0, rm), Q(n, m, (rm ? m : n) + pad, 3, rm);
    auto Pv = view_of<L>(P);
    auto Qv = view_of<L>(Q);
    std::vector<double> p_ref(static_cast<std::size_t>(m * 3), 0.0), q_ref(static_cast<std::size_t>(n * m));
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        for (int z = 0; z < 3; ++z)
          p_ref[static_cast<std::size_t>(r * 3 + z)] +=
              B.d[static_cast<std::size_t>(r * n + c)] * K.d[static_cast<std::size_t>(c * 3 + z)];
        q_ref[static_cast<std::size_t>(c * m + r)] = B.d[static_cast<std::size_t>(r * n + c)];
      }
    compute(ex, Pv(i, k), B.t(i, j) * K.t(j, k));
    bad += count_mismatches<double>(P.get(), p_ref, "P = B K, " + tag);
    compute(ex, Qv(j, i), B.t(i, j));
    bad += count_mismatches<double>(Q.get(), q_ref, "Q(j,i) = B(i,j), " + tag);
    bad += P.gaps_touched() + Q.gaps_touched();
  }
  bad += A.gaps_touched();
  ++count;
  return bad;
}

TEST(StridedView, GeneratedCasesAgainstDenseReferences) {
  std::mt19937_64 rng(41);
  const chunked_serial_executor chunks(2);
  std::size_t bad = 0, count = 0;
  for (int m : {0, 1, 4, 7})
    for (int n : {0, 1, 3, 6})
      for (int pad : {0, 1, 5})
        for (const executor ex : {executor(serial), executor(chunks)}) {
          bad += cases_for<dense_layout::row_major>(m, n, pad, ex, rng, count);
          bad += cases_for<dense_layout::col_major>(m, n, pad, ex, rng, count);
        }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(count, 4u * 4u * 3u * 2u * 2u);
}

// A fused output with gaps zeroed by fuse's chunks (`=` from a sparse
// operand), read back pointwise by the next statement in the same kernel:
// 1500 rows make two chunks or more.
TEST(StridedView, FusedChunksZeroComponentsOnly) {
  std::mt19937_64 rng(43);
  const chunked_serial_executor chunks(3);
  for (const int m : {0, 5, 1500})
    for (const executor ex : {executor(serial), executor(chunks)}) {
      const int n = 4, ld = 7;
      backed C(m, n, ld, 2, true);
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c) C.store[C.at(r, c)] = 100.0 + r;  // stale values, all overwritten
      auto Cv = dense_view(m, n, ld, C.store.data() + C.off);
      auto B = random_operand<csr>(std::array<int, 2>{m, n}, 0.3, rng);
      auto x = random_operand<dense_vector>(std::array<int, 1>{n}, 1.0, rng);
      tensor<double, dense_vector> y({m});
      const std::string plan = fusion_plan(defer(Cv(i, j)) = B.t(i, j), defer(y(i)) = Cv(i, j) * x.t(j));
      EXPECT_EQ(plan.find("kernel 2"), std::string::npos) << plan;
      fuse(ex, defer(Cv(i, j)) = B.t(i, j), defer(y(i)) = Cv(i, j) * x.t(j));
      std::vector<double> y_ref(static_cast<std::size_t>(m), 0.0);
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c)
          y_ref[static_cast<std::size_t>(r)] += B.d[static_cast<std::size_t>(r * n + c)] * x.d[static_cast<std::size_t>(c)];
      EXPECT_EQ(count_mismatches<double>(C.get(), B.d, "fused C = B, m " + std::to_string(m)), 0u);
      EXPECT_EQ(count_mismatches<double>(y.values(), y_ref, "fused y = C x, m " + std::to_string(m)), 0u);
      EXPECT_EQ(C.gaps_touched(), 0u) << m;
    }
}

TEST(StridedView, ShapesAreChecked) {
  std::vector<double> v(20, 0.0);
  // The leading dimension below the row length (row-major) or the column length.
  EXPECT_THROW((void)dense_view(3, 5, 4, v.data()), shape_error);
  EXPECT_THROW((void)dense_view<dense_layout::col_major>(5, 3, 4, v.data()), shape_error);
  EXPECT_THROW((void)dense_view(3, 5, -1, v.data()), shape_error);
  // A range shorter than the span (2 * 7 + 5 = 19 fits 20; 3 * 7 + 5 = 26 does not); a longer one is fine.
  EXPECT_NO_THROW((void)dense_view(3, 5, 7, v));
  EXPECT_THROW((void)dense_view(4, 5, 7, v), shape_error);
  // The span's size overflowing the index type.
  EXPECT_THROW((void)dense_view(70000, 2, 70000, v.data()), overflow_error);
  EXPECT_THROW((strided_level<int>(5, 4)), shape_error);
  // ld equal to the row length is the dense matrix.
  auto D = dense_view(3, 5, 5, v.data());
  EXPECT_EQ(D.values().size(), 15u);
  auto E = dense_view(0, 5, 9, v.data());
  EXPECT_EQ(E.values().size(), 0u);
  // No column: an empty span, whatever the rows and the stride (an empty range is enough).
  auto Z = dense_view(5, 0, 9, std::vector<double>{});
  EXPECT_EQ(Z.values().size(), 0u);
}

TEST(StridedView, PrintedLoopNest) {
  std::vector<double> v(40, 1.0);
  auto A = dense_view(3, 4, 9, v.data());
  tensor<double, dense_vector> x({4}), y({3});
  const std::string s = loop_nest(y(i), A(i, j) * x(j), {"y", "A", "x"});
  EXPECT_NE(s.find("A2_stride"), std::string::npos) << s;
}

}  // namespace
