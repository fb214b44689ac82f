// The precompute schedule (taco's workspaces): each top-level term scattered
// into a dense workspace row by its own loops, then appended in order.
// Row-wise sparse add, Gustavson SpGEMM, three-term and Einstein-split
// statements, += and dense outputs, against dense references.
#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
using tensorlev::precompute;

// C = A + B - 2 D, row-wise: every row's terms scattered into w, then
// appended. The result stores the union of the three patterns.
template <class FC, class FA, class FB, class FD>
std::size_t add_case(int m, int n, double f, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, f, rng);
  auto D = random_operand<FD>(std::array<int, 2>{m, n}, f, rng);
  std::vector<double> ref(A.d.size());
  std::size_t pattern = 0;
  const auto pa = stored_pattern(A.t), pb = stored_pattern(B.t), pd = stored_pattern(D.t);
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x] - 2.0 * D.d[x], pattern += pa[x] || pb[x] || pd[x];
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, n}));
  compute(C(i, j), A.t(i, j) + B.t(i, j) - 2.0 * D.t(i, j), precompute(j));
  const std::string what = "row-wise " + fname<FA>() + " + " + fname<FB>() + " - 2 " + fname<FD>() + " -> " +
                           fname<FC>() + " " + std::to_string(m) + "x" + std::to_string(n);
  std::size_t bad = mismatches(C, ref, what);
  if (!all_dense<FC> && components(C) != pattern)
    ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, expected " << pattern;
  return bad;
}

TEST(CodegenPrecompute, RowWiseAdd) {
  std::mt19937_64 rng(70);
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 5; ++n)
      for (double f : {0.0, 0.3, 0.7, 1.0}) {
        bad += add_case<csr, csr, csr, csr>(m, n, f, rng);
        bad += add_case<csr, coo, hash_rows, dcsr>(m, n, f, rng);
        bad += add_case<dense_row_major, csr, coo, dense_row_major>(m, n, f, rng);
        bad += add_case<csr, csr, dense_row_major, coo_aos>(m, n, f, rng);
      }
  bad += add_case<csr, csr, csr, csr>(150, 120, 0.04, rng);
  bad += add_case<csr, coo, hash_rows, dcsr>(150, 120, 0.04, rng);
  EXPECT_EQ(bad, 0u);
}

// A hashed operand is never merged under precompute: each term is iterated
// alone, so CSR + hash rows costs O(nnz) per row. Without the schedule the
// merged add must cover j by a counter over its whole extent and locate
// into the hash rows (O(n) per row) and assemble by sorting a stream.
TEST(CodegenPrecompute, UnorderedOperandNeedsNoCopy) {
  using C_t = tensor<double, csr>;
  using H_t = tensor<double, hash_rows>;
  using out_t = decltype(std::declval<C_t&>()(i, j));
  using e_t = decltype(std::declval<const C_t&>()(i, j) + std::declval<const H_t&>()(i, j));
  using with = cg::kernel<out_t, e_t, false, 'j'>;
  using without = cg::kernel<out_t, e_t, false, 0>;
  static_assert(with::O.out == cg::out_kind::workspace && with::O.scatter == 1 && with::O.nterms == 2);
  static_assert(with::sorted_copies == 0 && without::sorted_copies == 0);
  static_assert(without::O.out == cg::out_kind::stream);
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({3, 3})), C = A;
  tensor<double, hash_rows> H = pack<hash_rows>(coordinate_list<double, int>({3, 3}));
  const std::string s = loop_nest(C(i, j), A(i, j) + H(i, j), precompute(j), {"C", "A", "H"});
  EXPECT_EQ(s.find("j_extent"), std::string::npos) << s;
  EXPECT_NE(s.find("w[j] += H_vals[pH2]"), std::string::npos) << s;
  const std::string merged = loop_nest(C(i, j), A(i, j) + H(i, j), {"C", "A", "H"});
  EXPECT_NE(merged.find("j_extent"), std::string::npos) << merged;
}

template <class FC, class FA, class FB>
std::size_t spgemm_case(int m, int n, int p, double f, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, f, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * p), 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c) ref[r * p + c] += A.d[r * n + q] * B.d[q * p + c];
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, p}));
  compute(C(i, j), A.t(i, k) * B.t(k, j), loop_order<'i', 'k', 'j'>{}, precompute(j));
  return mismatches(C, ref, "precomputed SpGEMM " + fname<FA>() + " x " + fname<FB>() + " -> " + fname<FC>());
}

TEST(CodegenPrecompute, GustavsonSpGEMM) {
  std::mt19937_64 rng(71);
  std::size_t bad = 0;
  for (int m = 0; m <= 3; ++m)
    for (int n = 0; n <= 3; ++n)
      for (int p = 0; p <= 3; ++p)
        for (double f : {0.0, 0.5, 1.0}) {
          bad += spgemm_case<csr, csr, csr>(m, n, p, f, rng);
          bad += spgemm_case<csr, coo, hash_rows>(m, n, p, f, rng);
          bad += spgemm_case<dense_row_major, csr, csr>(m, n, p, f, rng);
        }
  bad += spgemm_case<csr, csr, csr>(90, 70, 80, 0.05, rng);
  EXPECT_EQ(bad, 0u);
}

// Terms with different reductions run as separate nests (the second
// accumulates, i.e. old + term, again precomputed); a sparse vector output
// has no dense prefix (the workspace is the whole vector); += keeps the old
// values.
TEST(CodegenPrecompute, MixedTermsVectorsAndAccumulate) {
  std::mt19937_64 rng(72);
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double f : {0.0, 0.5, 1.0}) {
        const int r = 3;
        auto B = random_operand<csr>(std::array<int, 2>{m, n}, f, rng);
        auto Cm = random_operand<csr>(std::array<int, 2>{m, r}, f, rng);
        auto Dm = random_operand<csr>(std::array<int, 2>{r, n}, f, rng);
        std::vector<double> ref(B.d);
        for (int a = 0; a < m; ++a)
          for (int b = 0; b < n; ++b)
            for (int c = 0; c < r; ++c) ref[a * n + b] += Cm.d[a * r + c] * Dm.d[c * n + b];
        tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({m, n}));
        compute(A(i, j), B.t(i, j) + Cm.t(i, k) * Dm.t(k, j), precompute(j));
        bad += mismatches(A, ref, "B + C*D precomputed");
        // The same without the schedule, and += of a product with a
        // reduction into a sparse output (old values are not summed over k).
        tensor<double, csr> A2 = pack<csr>(coordinate_list<double, int>({m, n}));
        A2(i, j) = B.t(i, j) + Cm.t(i, k) * Dm.t(k, j);
        bad += mismatches(A2, ref, "B + C*D -> CSR");
        std::vector<double> ref2(ref);
        for (int a = 0; a < m; ++a)
          for (int b = 0; b < n; ++b)
            for (int c = 0; c < r; ++c) ref2[a * n + b] += Cm.d[a * r + c] * Dm.d[c * n + b];
        A2(i, j) += Cm.t(i, k) * Dm.t(k, j);
        bad += mismatches(A2, ref2, "A += C*D -> CSR");
        // A += B, row-wise.
        for (std::size_t x = 0; x < ref.size(); ++x) ref[x] += B.d[x];
        compute_add(A(i, j), B.t(i, j), precompute(j));
        bad += mismatches(A, ref, "A += B precomputed");

        auto x = random_operand<sparse_vector>(std::array<int, 1>{n}, f, rng);
        auto z = random_operand<hash_vector>(std::array<int, 1>{n}, f, rng);
        std::vector<double> vref(static_cast<std::size_t>(n));
        for (int q = 0; q < n; ++q) vref[q] = x.d[q] - z.d[q];
        tensor<double, sparse_vector> y = pack<sparse_vector>(coordinate_list<double, int>({n}));
        compute(y(i), x.t(i) - z.t(i), precompute(i));
        bad += mismatches(y, vref, "sparse vector x - z precomputed");
      }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenPrecompute, PrintsTheScatter) {
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({3, 3}));
  tensor<double, csr> B = A, C = A;
  const std::string s = loop_nest(C(i, j), A(i, j) + B(i, j), precompute(j), {"C", "A", "B"});
  EXPECT_NE(s.find("precomputed over j"), std::string::npos) << s;
  EXPECT_NE(s.find("// term 1, scattered into w"), std::string::npos) << s;
  EXPECT_NE(s.find("// term 2, scattered into w"), std::string::npos) << s;
  EXPECT_NE(s.find("append the sorted coordinates of w"), std::string::npos) << s;
  const std::string merged = loop_nest(C(i, j), A(i, j) + B(i, j), {"C", "A", "B"});
  EXPECT_EQ(merged.find("scattered"), std::string::npos) << merged;
  const std::string g =
      loop_nest(C(i, j), A(i, k) * B(k, j), tensorlev::loop_order_of<i, k, j>{}, precompute(j), {"C", "A", "B"});
  EXPECT_NE(g.find("loop order: i, k, j"), std::string::npos) << g;
}

}  // namespace
