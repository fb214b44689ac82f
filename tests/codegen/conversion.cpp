// Iterator conversion through scratch copies: operands whose unordered
// levels must be merged are sorted once into an ordered copy; operands
// that must be located at a blocked format's computed coordinates are
// copied densely. Checked against dense references, and in the printed
// loop nest.
#include <algorithm>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

struct unordered_sparse_vector : format<levels<compressed<sparse_options{.ordered = false}>>> {
  static constexpr std::string_view name = "unordered sparse vector";
};
struct unordered_csr : format<levels<dense<>, compressed<sparse_options{.ordered = false}>>> {
  static constexpr std::string_view name = "unordered CSR";
};

// pack stores ordered data even into an unordered level; shuffle each
// segment so the iteration order really is arbitrary.
template <class V, class F, class I>
tensor<V, F, I> shuffled(const tensor<V, F, I>& t, std::mt19937_64& rng) {
  constexpr std::size_t L = F::num_levels;
  auto lv = t.levels();
  auto& last = std::get<L - 1>(lv);
  std::vector<I> pos = last.pos(), crd = last.crd();
  std::vector<V> vals(t.values().begin(), t.values().end());
  for (std::size_t p = 0; p + 1 < pos.size(); ++p) {
    std::vector<std::size_t> idx;
    for (I q = pos[p]; q < pos[p + 1]; ++q) idx.push_back(static_cast<std::size_t>(q));
    auto perm = idx;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<I> c2;
    std::vector<V> v2;
    for (std::size_t q : perm) c2.push_back(crd[q]), v2.push_back(vals[q]);
    for (std::size_t u = 0; u < idx.size(); ++u) crd[idx[u]] = c2[u], vals[idx[u]] = v2[u];
  }
  last = std::tuple_element_t<L - 1, typename tensor<V, F, I>::level_tuple>(last.dimension(), pos, crd);
  return tensor<V, F, I>(t.dims(), std::move(lv), std::move(vals));
}

TEST(CodegenConversion, UnorderedOperandsAreSortedOnceThenMerged) {
  std::mt19937_64 rng(70);
  std::size_t bad = 0;
  for (int n = 0; n <= 8; ++n)
    for (double f : {0.0, 0.3, 0.7, 1.0}) {
      auto x = random_operand<unordered_sparse_vector>(std::array<int, 1>{n}, f, rng);
      const auto xs = shuffled(x.t, rng);
      ASSERT_EQ(to_dense(xs), x.d);
      auto z = random_operand<sparse_vector>(std::array<int, 1>{n}, 0.5, rng);
      std::vector<double> sum(x.d.size()), prod(x.d.size());
      for (std::size_t e = 0; e < sum.size(); ++e) sum[e] = x.d[e] + z.d[e], prod[e] = x.d[e] * z.d[e];
      tensor<double, dense_vector> y({n});
      y(i) = xs(i) + z.t(i);
      bad += count_mismatches<double>(y.values(), sum, "unordered x + z");
      y(i) = z.t(i) * xs(i);
      bad += count_mismatches<double>(y.values(), prod, "z * unordered x");
      tensor<double, sparse_vector> s = pack<sparse_vector>(coordinate_list<double, int>({n}));
      s(i) = xs(i) - z.t(i);
      std::vector<double> diff(x.d.size());
      for (std::size_t e = 0; e < diff.size(); ++e) diff[e] = x.d[e] - z.d[e];
      bad += mismatches(s, diff, "unordered x - z -> sparse");
    }
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 5; ++n) {
      auto A = random_operand<unordered_csr>(std::array<int, 2>{m, n}, 0.5, rng);
      const auto As = shuffled(A.t, rng);
      auto B = random_operand<csr>(std::array<int, 2>{m, n}, 0.5, rng);
      std::vector<double> sum(A.d.size());
      for (std::size_t e = 0; e < sum.size(); ++e) sum[e] = A.d[e] + B.d[e];
      tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, n}));
      C(i, j) = As(i, j) + B.t(i, j);
      bad += mismatches(C, sum, "unordered CSR + CSR -> CSR");
      // Alone, an unordered level needs no copy: SpMV walks it as stored.
      auto x = random_operand<dense_vector>(std::array<int, 1>{n}, 1.0, rng);
      std::vector<double> ref(static_cast<std::size_t>(m), 0.0);
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c) ref[r] += A.d[r * n + c] * x.d[c];
      tensor<double, dense_vector> y({m});
      y(i) = As(i, j) * x.t(j);
      bad += count_mismatches<double>(y.values(), ref, "unordered CSR SpMV");
    }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenConversion, PrintedNestNamesTheScratchCopies) {
  auto x = pack<unordered_sparse_vector>(coordinate_list<double, int>({3}));
  auto z = pack<sparse_vector>(coordinate_list<double, int>({3}));
  auto B = pack<bcsr<2>>(coordinate_list<double, int>({3, 3}));
  tensor<double, dense_vector> y({3});
  const std::string s1 = loop_nest(y(i), x(i) + z(i), {"y", "x", "z"});
  EXPECT_NE(s1.find("scratch copies made first: x (ordered)"), std::string::npos) << s1;
  const std::string s2 = loop_nest(y(i), B(i, j) * z(j), {"y", "B", "z"});
  EXPECT_NE(s2.find("scratch copies made first: z (dense)"), std::string::npos) << s2;
  using K = cg::kernel<decltype(y(i)), decltype(x(i) * z(i)), false, 0>;
  static_assert(K::sorted_copies == 2 && K::dense_copies == 0);
  using K2 = cg::kernel<decltype(y(i)), decltype(B(i, j) * x(j)), false, 0>;
  static_assert(K2::dense_copies == 4);
}

}  // namespace
