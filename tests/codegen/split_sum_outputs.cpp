// Split sums into every matrix format as the output: the reduction over k
// innermost (dense drivers split from W / 2 positions, W = split_sum_ways),
// the output bound above it and written in its own format. C(i,j) =
// U(i,k) * V(j,k) (dense operands: every component of C) and the SDDMM
// C(i,j) = A(i,j) * U(i,k) * V(j,k) (A in csr_long_rows: C takes A's
// pattern), extents 0, 1 and 3, ranks 0 to 2W + 3 and around
// split_sum_long (below, at and above the thresholds, every remainder of
// W and of W / 2), `=` then `+=` (twice the product). Small integer
// values: every sum exact.
#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class T>
T& lval();
using dense_t = tensor<double, dense_row_major>;
using U_ik = decltype(lval<const dense_t>()(i, k));
using V_jk = decltype(lval<const dense_t>()(j, k));

template <class Out, class E>
constexpr bool splits() {
  constexpr auto d = tensorlev::cg::describe<Out, E, false>();
  constexpr auto o = tensorlev::cg::make_order(d, 0);
  constexpr auto p = tensorlev::cg::plan_loop(d, o, o.n - 1, 0);
  return tensorlev::cg::split_sum(d, o, p, o.n - 1, 0);
}
// The reduction splits whatever the output's format.
template <class F>
constexpr bool product_splits =
    splits<decltype(lval<tensor<double, F>>()(i, j)), decltype(lval<const U_ik>() * lval<const V_jk>())>();
static_assert(product_splits<csr> && product_splits<csr_long_rows> && product_splits<coo> &&
              product_splits<hash_rows> && product_splits<dcsr> && product_splits<csc>);

dense_t dense_of(int rows, int cols, int seed) {
  dense_t t({rows, cols});
  for (std::size_t q = 0; q < t.values().size(); ++q)
    t.values()[q] = static_cast<double>(static_cast<int>((q * 7 + static_cast<std::size_t>(seed)) % 5) - 2);
  return t;
}

// Runs `C = e` then `C += e` into a C of format F, checking each against ref
// (and 2 ref).
template <class F, class Stmt>
std::size_t into(int m, int n, const std::vector<double>& ref, Stmt&& stmt, const std::string& what) {
  tensor<double, F> C = pack<F>(coordinate_list<double, int>(std::vector<int>{m, n}));
  stmt(C, false);
  std::size_t bad = mismatches(C, ref, what + " = into " + fname<F>());
  stmt(C, true);
  std::vector<double> twice(ref);
  for (auto& v : twice) v *= 2;
  return bad + mismatches(C, twice, what + " += into " + fname<F>());
}

template <class F>
std::size_t cases(int m, int n, int R, std::mt19937_64& rng) {
  std::size_t bad = 0;
  const dense_t U = dense_of(m, R, 1), V = dense_of(n, R, 3);
  auto u = [&](int r, int q) { return U.values()[static_cast<std::size_t>(r * R + q)]; };
  auto v = [&](int c, int q) { return V.values()[static_cast<std::size_t>(c * R + q)]; };
  const std::string tag = std::to_string(m) + "x" + std::to_string(n) + " R=" + std::to_string(R);
  std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      for (int q = 0; q < R; ++q) ref[static_cast<std::size_t>(r * n + c)] += u(r, q) * v(c, q);
  bad += into<F>(
      m, n, ref,
      [&](tensor<double, F>& C, bool add) {
        if (add)
          C(i, j) += U(i, k) * V(j, k);
        else
          C(i, j) = U(i, k) * V(j, k);
      },
      "U*V " + tag);
  // SDDMM: A's pattern, A in csr_long_rows.
  auto A = random_operand<csr_long_rows>(std::array<int, 2>{m, n}, 0.5, rng);
  std::vector<double> sref(ref.size(), 0.0);
  for (std::size_t x = 0; x < ref.size(); ++x) sref[x] = A.d[x] * ref[x];
  bad += into<F>(
      m, n, sref,
      [&](tensor<double, F>& C, bool add) {
        if (add)
          C(i, j) += A.t(i, j) * U(i, k) * V(j, k);
        else
          C(i, j) = A.t(i, j) * U(i, k) * V(j, k);
      },
      "SDDMM " + tag);
  return bad;
}

// 0 to 2W + 3, and L - 1 to L + W - 1 around L = split_sum_long (below,
// at, every remainder of W above it), and a half group with a tail.
std::vector<int> ranks() {
  constexpr int W = tensorlev::cg::split_sum_ways, L = tensorlev::cg::split_sum_long;
  std::vector<int> r;
  for (int R = 0; R <= 2 * W + 3; ++R) r.push_back(R);
  for (int R = L - 1; R < L + W; ++R) r.push_back(R);
  r.push_back(L + W + W / 2 + 2);  // a half group, then 2 in order
  return r;
}

template <class Tuple>
void every_output() {
  std::mt19937_64 rng(27);
  std::size_t bad = 0;
  for_each_format<Tuple>([&](auto f) {
    using F = typename decltype(f)::type;
    for (const int m : {0, 1, 3})
      for (const int n : {0, 1, 3})
        for (const int R : ranks()) bad += cases<F>(m, n, R, rng);
  });
  EXPECT_EQ(bad, 0U);
}

TEST(SplitSumOutputs, ModeMatrixFormats) {
  every_output<std::tuple<dense_row_major, dense_col_major, coo, coo_aos, csr, csc, dcsr, hash_rows, hashed_csr,
                          csr_long_rows, csr_unsorted>>();
}
TEST(SplitSumOutputs, DerivedMatrixFormats) { every_output<derived_matrix_formats>(); }

}  // namespace
