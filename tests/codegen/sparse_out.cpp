// Sparse outputs: sums, element-wise products, SpGEMM, SDDMM and
// third-order kernels into sparse formats, checked component by component
// against dense references, with the stored pattern checked exactly
// (union for +, intersection for *).
#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class FC, class FA, class FB, int Op>
std::size_t ew_case(int m, int n, double fa, double fb, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fa, rng);
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, fb, rng);
  std::vector<double> ref(A.d.size());
  std::size_t pattern = 0;
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, n}));
  const auto pa = stored_pattern(A.t), pb = stored_pattern(B.t);
  if constexpr (Op == 0) {
    C(i, j) = A.t(i, j) + B.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x], pattern += pa[x] || pb[x];
  } else {
    C(i, j) = A.t(i, j) * B.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] * B.d[x], pattern += pa[x] && pb[x];
  }
  const std::string what = fname<FA>() + (Op == 0 ? " + " : " * ") + fname<FB>() + " -> " + fname<FC>() + " " +
                           std::to_string(m) + "x" + std::to_string(n);
  std::size_t bad = mismatches(C, ref, what);
  // The result stores exactly the union (intersection) of the operands'
  // patterns, with no duplicates.
  if (!all_dense<FC> && components(C) != pattern)
    ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, expected " << pattern;
  return bad;
}

template <class FC, class FA, class FB, int Op>
std::size_t ew_sweep(std::mt19937_64& rng) {
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double fa : {0.0, 0.4, 1.0})
        for (double fb : {0.0, 0.4, 1.0}) bad += ew_case<FC, FA, FB, Op>(m, n, fa, fb, rng);
  bad += ew_case<FC, FA, FB, Op>(120, 90, 0.05, 0.08, rng);
  return bad;
}

TEST(CodegenSparseOut, Sums) {
  std::mt19937_64 rng(40);
  std::size_t bad = 0;
  bad += ew_sweep<coo, coo, coo, 0>(rng);
  bad += ew_sweep<csr, csr, csr, 0>(rng);
  bad += ew_sweep<dense_row_major, csr, coo, 0>(rng);
  bad += ew_sweep<dcsr, csr, dcsr, 0>(rng);
  bad += ew_sweep<csr, hash_rows, coo_aos, 0>(rng);
  bad += ew_sweep<hash_rows, csr, dense_row_major, 0>(rng);
  bad += ew_sweep<csc, csc, dense_col_major, 0>(rng);
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, ElementwiseProducts) {
  std::mt19937_64 rng(41);
  std::size_t bad = 0;
  bad += ew_sweep<csr, csr, dense_row_major, 1>(rng);
  bad += ew_sweep<csr, csr, coo, 1>(rng);
  bad += ew_sweep<coo, coo, coo, 1>(rng);
  bad += ew_sweep<dcsr, dcsr, hash_rows, 1>(rng);
  EXPECT_EQ(bad, 0u);
}

template <class FC, class FA, class FB>
std::size_t spgemm_case(int m, int n, int p, double f, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, f, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * p), 0.0);
  std::vector<char> pat(ref.size(), 0);
  const auto pa = stored_pattern(A.t), pb = stored_pattern(B.t);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c) {
        ref[r * p + c] += A.d[r * n + q] * B.d[q * p + c];
        if (pa[r * n + q] && pb[q * p + c]) pat[r * p + c] = 1;
      }
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, p}));
  C(i, j) = A.t(i, k) * B.t(k, j);
  const std::string what = "SpGEMM " + fname<FA>() + " x " + fname<FB>() + " -> " + fname<FC>();
  std::size_t bad = mismatches(C, ref, what);
  std::size_t pattern = 0;
  for (char c : pat) pattern += c;
  if (components(C) != pattern) ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, expected " << pattern;
  return bad;
}

TEST(CodegenSparseOut, SpGEMM) {
  std::mt19937_64 rng(42);
  std::size_t bad = 0;
  for (int m = 0; m <= 3; ++m)
    for (int n = 0; n <= 3; ++n)
      for (int p = 0; p <= 3; ++p)
        for (double f : {0.0, 0.4, 1.0}) {
          bad += spgemm_case<csr, csr, csr>(m, n, p, f, rng);
          bad += spgemm_case<coo, coo, csr>(m, n, p, f, rng);
          bad += spgemm_case<dcsr, dcsr, dcsr>(m, n, p, f, rng);
        }
  bad += spgemm_case<csr, csr, csr>(80, 70, 90, 0.05, rng);
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, SDDMMIntoCSR) {
  std::mt19937_64 rng(43);
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double f : {0.0, 0.5, 1.0}) {
        const int r = 3;
        auto B = random_operand<csr>(std::array<int, 2>{m, n}, f, rng);
        auto C = random_operand<dense_row_major>(std::array<int, 2>{m, r}, 1.0, rng);
        auto D = random_operand<dense_row_major>(std::array<int, 2>{n, r}, 1.0, rng);
        std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
        for (int a = 0; a < m; ++a)
          for (int b = 0; b < n; ++b)
            for (int c = 0; c < r; ++c) ref[a * n + b] += B.d[a * n + b] * C.d[a * r + c] * D.d[b * r + c];
        tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({m, n}));
        A(i, j) = B.t(i, j) * C.t(i, k) * D.t(j, k);
        bad += mismatches(A, ref, "SDDMM -> CSR");
        if (components(A) != components(B.t)) ++bad, ADD_FAILURE() << "SDDMM pattern";
      }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, ThirdOrderIntoCOO) {
  std::mt19937_64 rng(44);
  std::size_t bad = 0;
  for (int I = 0; I <= 3; ++I)
    for (int J = 0; J <= 3; ++J)
      for (int K = 0; K <= 3; ++K)
        for (double f : {0.0, 0.4, 1.0}) {
          auto B = random_operand<coo_tensor<3>>(std::array<int, 3>{I, J, K}, f, rng);
          auto Cc = random_operand<csf>(std::array<int, 3>{I, J, K}, f, rng);
          auto c = random_operand<dense_vector>(std::array<int, 1>{K}, 1.0, rng);
          std::vector<double> ttv(static_cast<std::size_t>(I * J), 0.0), plus(B.d.size());
          for (int a = 0; a < I; ++a)
            for (int b = 0; b < J; ++b)
              for (int q = 0; q < K; ++q) ttv[a * J + b] += B.d[(a * J + b) * K + q] * c.d[q];
          for (std::size_t x = 0; x < plus.size(); ++x) plus[x] = B.d[x] + Cc.d[x];
          tensor<double, coo> A = pack<coo>(coordinate_list<double, int>({I, J}));
          A(i, j) = B.t(i, j, k) * c.t(k);
          bad += mismatches(A, ttv, "TTV -> COO");
          tensor<double, coo_tensor<3>> P = pack<coo_tensor<3>>(coordinate_list<double, int>({I, J, K}));
          P(i, j, k) = B.t(i, j, k) + Cc.t(i, j, k);
          bad += mismatches(P, plus, "PLUS COO + CSF -> COO");
          tensor<double, csf> Q = pack<csf>(coordinate_list<double, int>({I, J, K}));
          Q(i, j, k) = B.t(i, j, k) + Cc.t(i, j, k);
          bad += mismatches(Q, plus, "PLUS COO + CSF -> CSF");
        }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, PlusEqualsKeepsExistingEntries) {
  std::mt19937_64 rng(45);
  auto A = random_operand<csr>(std::array<int, 2>{6, 7}, 0.3, rng);
  auto B = random_operand<csr>(std::array<int, 2>{6, 7}, 0.3, rng);
  tensor<double, csr> C = A.t;
  C(i, j) += B.t(i, j);
  std::vector<double> ref(A.d.size());
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x];
  EXPECT_EQ(mismatches(C, ref, "C += B"), 0u);
}

}  // namespace
