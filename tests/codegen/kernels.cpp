// Matrix kernels with dense or scalar outputs, against dense references:
// SpMM, SDDMM, x^T A y, three-operand mixed expressions, reductions to a
// scalar, explicit loop orders, constants.
#include "common.hpp"

// TL_PART 0: SpMM, SDDMM, x'Ay; TL_PART 1: the rest. One TU each.
#ifndef TL_PART
#define TL_PART 0
#endif

namespace {
using namespace tltest;
using namespace tensorlev::indices;

#if TL_PART == 0
template <class FA, class FB>
std::size_t spmm_case(int m, int n, int p, double fa, double fb, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fa, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, fb, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * p), 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c) ref[r * p + c] += A.d[r * n + q] * B.d[q * p + c];
  tensor<double, dense_row_major> C({m, p});
  C(i, k) = A.t(i, j) * B.t(j, k);
  return count_mismatches<double>(C.values(), ref, "SpMM " + fname<FA>() + " * " + fname<FB>());
}

TEST(Codegen, SpMMSparseTimesDense) {
  std::mt19937_64 rng(20);
  std::size_t bad = 0;
  using As = std::tuple<coo, coo_aos, csr, dcsr, hash_rows, dense_row_major>;
  for_each_format<As>([&]<class FA>(std::type_identity<FA>) {
    for (int m = 0; m <= 3; ++m)
      for (int n = 0; n <= 3; ++n)
        for (int p = 1; p <= 3; ++p)
          for (double f : {0.0, 0.5, 1.0}) bad += spmm_case<FA, dense_row_major>(m, n, p, f, 1.0, rng);
    bad += spmm_case<FA, dense_row_major>(40, 50, 7, 0.1, 1.0, rng);
    bad += spmm_case<FA, csr>(40, 50, 30, 0.1, 0.1, rng);  // sparse B: C(i,k) scattered
  });
  EXPECT_EQ(bad, 0u);
}

template <class FB>
std::size_t sddmm_case(int m, int n, int r, double fb, std::mt19937_64& rng) {
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, fb, rng);
  auto C = random_operand<dense_row_major>(std::array<int, 2>{m, r}, 1.0, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{n, r}, 1.0, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < r; ++c) ref[a * n + b] += B.d[a * n + b] * C.d[a * r + c] * D.d[b * r + c];
  tensor<double, dense_row_major> A({m, n});
  A(i, j) = B.t(i, j) * C.t(i, k) * D.t(j, k);
  return count_mismatches<double>(A.values(), ref, "SDDMM " + fname<FB>());
}

TEST(Codegen, SDDMM) {
  std::mt19937_64 rng(21);
  std::size_t bad = 0;
  using Bs = std::tuple<coo, csr, dcsr, hash_rows>;
  for_each_format<Bs>([&]<class FB>(std::type_identity<FB>) {
    for (int m = 0; m <= 3; ++m)
      for (int n = 0; n <= 3; ++n)
        for (double f : {0.0, 0.5, 1.0}) bad += sddmm_case<FB>(m, n, 2, f, rng);
    bad += sddmm_case<FB>(30, 40, 5, 0.1, rng);
  });
  EXPECT_EQ(bad, 0u);
}

template <class FX, class FA, class FY>
std::size_t xay_case(int m, int n, double f, std::mt19937_64& rng) {
  auto x = random_operand<FX>(std::array<int, 1>{m}, f, rng);
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto y = random_operand<FY>(std::array<int, 1>{n}, f, rng);
  double ref = 0;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) ref += x.d[r] * A.d[r * n + c] * y.d[c];
  scalar<double> a(123.0);
  a() = x.t(i) * A.t(i, j) * y.t(j);
  if (a.value() != ref) {
    ADD_FAILURE() << "x A y with " << fname<FX>() << ", " << fname<FA>() << ", " << fname<FY>() << ": " << a.value()
                  << " vs " << ref;
    return 1;
  }
  return 0;
}

TEST(Codegen, ScalarXtAy) {
  std::mt19937_64 rng(22);
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double f : {0.0, 0.5, 1.0}) {
        bad += xay_case<dense_vector, csr, dense_vector>(m, n, f, rng);
        bad += xay_case<sparse_vector, coo, hash_vector>(m, n, f, rng);
        bad += xay_case<hash_vector, dcsr, sparse_vector>(m, n, f, rng);
        bad += xay_case<sparse_vector, csc, dense_vector>(m, n, f, rng);
      }
  bad += xay_case<sparse_vector, csr, sparse_vector>(200, 300, 0.05, rng);
  EXPECT_EQ(bad, 0u);
}
#endif

#if TL_PART == 1
template <class FB, class FC, class FD>
std::size_t mixed_case(int m, int n, int p, double f, std::mt19937_64& rng) {
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, f, rng);
  auto C = random_operand<FC>(std::array<int, 2>{m, p}, f, rng);
  auto D = random_operand<FD>(std::array<int, 2>{p, n}, f, rng);
  std::vector<double> ref(B.d);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < p; ++c) ref[a * n + b] += C.d[a * p + c] * D.d[c * n + b];
  tensor<double, dense_row_major> A({m, n});
  A(i, j) = B.t(i, j) + C.t(i, k) * D.t(k, j);
  return count_mismatches<double>(A.values(), ref,
                                  "B + C D with " + fname<FB>() + ", " + fname<FC>() + ", " + fname<FD>());
}

TEST(Codegen, ThreeOperandMixed) {
  std::mt19937_64 rng(23);
  std::size_t bad = 0;
  for (int m = 0; m <= 3; ++m)
    for (int n = 0; n <= 3; ++n)
      for (int p = 0; p <= 3; ++p)
        for (double f : {0.0, 0.5, 1.0}) {
          bad += mixed_case<csr, csr, dense_row_major>(m, n, p, f, rng);
          bad += mixed_case<coo, csr, csr>(m, n, p, f, rng);
          bad += mixed_case<dense_row_major, coo, hash_rows>(m, n, p, f, rng);
        }
  bad += mixed_case<csr, csr, csr>(30, 40, 20, 0.1, rng);
  EXPECT_EQ(bad, 0u);
}

TEST(Codegen, ExplicitLoopOrderAndConstants) {
  std::mt19937_64 rng(24);
  auto A = random_operand<dense_row_major>(std::array<int, 2>{6, 5}, 0.5, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{5}, 1.0, rng);
  tensor<double, dense_vector> y({6});
  // Column-oriented traversal of a row-major dense matrix: allowed because
  // every level of A is random access.
  compute(y(i), 2.0 * A.t(i, j) * x.t(j) - x.t(j), loop_order<'j', 'i'>{});
  std::vector<double> ref(6, 0.0);
  double xs = 0;
  for (int c = 0; c < 5; ++c) xs += x.d[c];
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 5; ++c) ref[r] += 2.0 * A.d[r * 5 + c] * x.d[c];
    ref[r] -= xs;
  }
  EXPECT_EQ(count_mismatches<double>(y.values(), ref, "explicit order"), 0u);
  // y(i) = 3 broadcasts a constant; += adds. Einstein summation: j is
  // summed over the term that uses it only, so the constant 1 is added once.
  y(i) = 3;
  y(i) += x.t(j) * 0.0 + 1;
  for (double v : y.values()) EXPECT_EQ(v, 4.0);
  // A sum under a product whose sides share j: sum over j of 2 (x_j + x_j).
  y(i) = (x.t(j) + x.t(j)) * 2.0;
  for (double v : y.values()) EXPECT_EQ(v, 4.0 * xs);
}

TEST(Codegen, ComplexAndFloatValues) {
  std::mt19937_64 rng(25);
  using C = std::complex<double>;
  auto c = make_case<C, int, 2>(std::array<int, 2>{4, 5}, 8, 2, rng);
  auto A = pack<csr>(c.list);
  auto cx = make_case<C, int, 1>(std::array<int, 1>{5}, 5, 0, rng);
  auto x = pack<dense_vector>(cx.list);
  tensor<C, dense_vector> y({4});
  y(i) = A(i, j) * x(j);
  std::vector<C> ref(4);
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 5; ++q) ref[r] += c.dense[r * 5 + q] * cx.dense[q];
  EXPECT_EQ(count_mismatches<C>(y.values(), ref, "complex SpMV"), 0u);

  auto cf = make_case<float, std::int64_t, 2>(std::array<std::int64_t, 2>{4, 5}, 8, 2, rng);
  auto Af = pack<coo>(cf.list);
  tensor<float, dense_row_major, std::int64_t> Bf({4, 5});
  Bf(i, j) = Af(i, j) * 2.0f;
  std::vector<float> reff(cf.dense);
  for (auto& v : reff) v *= 2.0f;
  EXPECT_EQ(count_mismatches<float>(Bf.values(), reff, "float int64 scale"), 0u);
}

#endif

}  // namespace
