// SpMV y(i) = A(i,j) * x(j) for every matrix format and every vector
// format, exhaustively at small sizes and randomized at larger ones.
// TL_PART 0: formats whose levels each encode one dimension (and the error
// cases); TL_PART 1: derived level maps (ELL, DIA, BCSR, CSB). One TU each.
#include "common.hpp"

#ifndef TL_PART
#define TL_PART 0
#endif

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class FA, class FX>
std::size_t spmv_case(int m, int n, double fa, double fx, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fa, rng);
  auto x = random_operand<FX>(std::array<int, 1>{n}, fx, rng);
  std::vector<double> ref(static_cast<std::size_t>(m), 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) ref[r] += A.d[r * n + c] * x.d[c];
  tensor<double, dense_vector> y({m});
  for (auto& v : y.values()) v = 99;  // '=' overwrites
  y(i) = A.t(i, j) * x.t(j);
  return count_mismatches<double>(y.values(), ref,
                                  "SpMV " + fname<FA>() + " x " + fname<FX>() + " " + std::to_string(m) + "x" +
                                      std::to_string(n));
}

#if TL_PART == 0
TEST(Codegen, SpMVExhaustiveSmall) {
  std::mt19937_64 rng(1);
  std::size_t bad = 0, cases = 0;
  for_each_format<mode_matrix_formats>([&]<class FA>(std::type_identity<FA>) {
    for_each_format<vector_formats>([&]<class FX>(std::type_identity<FX>) {
      for (int m = 0; m <= 4; ++m)
        for (int n = 0; n <= 4; ++n)
          for (double fa : {0.0, 0.3, 0.7, 1.0})
            for (double fx : {0.0, 0.5, 1.0}) bad += spmv_case<FA, FX>(m, n, fa, fx, rng), ++cases;
    });
  });
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(cases, 9u * 3u * 25u * 12u);
}

#else
TEST(Codegen, SpMVDerivedLevelMapsExhaustiveSmall) {
  std::mt19937_64 rng(5);
  std::size_t bad = 0, cases = 0;
  for_each_format<derived_matrix_formats>([&]<class FA>(std::type_identity<FA>) {
    for_each_format<vector_formats>([&]<class FX>(std::type_identity<FX>) {
      for (int m = 0; m <= 5; ++m)
        for (int n = 0; n <= 5; ++n)
          for (double fa : {0.0, 0.3, 0.7, 1.0})
            for (double fx : {0.0, 0.5, 1.0}) bad += spmv_case<FA, FX>(m, n, fa, fx, rng), ++cases;
      bad += spmv_case<FA, FX>(97, 61, 0.05, 0.5, rng);
    });
  });
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(cases, std::tuple_size_v<derived_matrix_formats> * 3u * 36u * 12u);
}

#endif

#if TL_PART == 0
TEST(Codegen, SpMVRandomLarge) {
  std::mt19937_64 rng(2);
  std::size_t bad = 0;
  for_each_format<mode_matrix_formats>([&]<class FA>(std::type_identity<FA>) {
    for_each_format<vector_formats>([&]<class FX>(std::type_identity<FX>) {
      bad += spmv_case<FA, FX>(301, 257, 0.02, 0.3, rng);
    });
  });
  EXPECT_EQ(bad, 0u);
}

TEST(Codegen, SpMVAccumulatesWithPlusEquals) {
  std::mt19937_64 rng(3);
  auto A = random_operand<csr>(std::array<int, 2>{5, 6}, 0.4, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{6}, 1.0, rng);
  tensor<double, dense_vector> y({5});
  for (auto& v : y.values()) v = 1;
  y(i) += A.t(i, j) * x.t(j);
  std::vector<double> ref(5, 1.0);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 6; ++c) ref[r] += A.d[r * 6 + c] * x.d[c];
  EXPECT_EQ(count_mismatches<double>(y.values(), ref, "y += A x"), 0u);
}

TEST(Codegen, DimensionMismatchThrowsNamingTheVariable) {
  std::mt19937_64 rng(4);
  auto A = random_operand<csr>(std::array<int, 2>{5, 6}, 0.4, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{7}, 1.0, rng);
  tensor<double, dense_vector> y({5});
  try {
    y(i) = A.t(i, j) * x.t(j);
    FAIL() << "no exception";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(),
                 "index variable 'j': operand 2 has extent 7 in dimension 0 but operand 1 has extent 6 in "
                 "dimension 1");
  }
  // The output against an operand, and an order-3 operand's last dimension.
  tensor<double, dense_vector> y4({4});
  try {
    y4(i) = A.t(i, j) * x.t(j);
    FAIL() << "no exception";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "index variable 'i': operand 1 has extent 5 in dimension 0 but the output has extent 4 in "
                           "dimension 0");
  }
  tensor<double, dense_vector> x6({6});
  tensor<double, dense_tensor<3>> T({2, 3, 9});
  tensor<double, dense_row_major> C({2, 3});
  try {
    C(i, j) = T(i, j, k) * x6(k);
    FAIL() << "no exception";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "index variable 'k': operand 2 has extent 6 in dimension 0 but operand 1 has extent 9 in "
                           "dimension 2");
  }
}

// The output on the right: in place when each component is read where it
// is written (no reduction); otherwise an error.
TEST(Codegen, OutputOnTheRight) {
  tensor<double, dense_vector> y({3}), z({3});
  for (int c = 0; c < 3; ++c) y.values()[c] = c + 1, z.values()[c] = 10 * c;
  y(i) = y(i) * 2.0 + z(i);
  EXPECT_EQ(std::vector<double>(y.values().begin(), y.values().end()), (std::vector<double>{2, 14, 26}));
  y(i) += -(y(i) * y(i));
  EXPECT_EQ(std::vector<double>(y.values().begin(), y.values().end()), (std::vector<double>{-2, -182, -650}));
  tensor<double, dense_row_major> M({2, 2}), N({2, 2});
  for (int c = 0; c < 4; ++c) M.values()[c] = c, N.values()[c] = 1;
  M(i, j) = N(i, j) - M(i, j);
  EXPECT_EQ(std::vector<double>(M.values().begin(), M.values().end()), (std::vector<double>{1, 0, -1, -2}));
  // Another component, a transposed read, a reduction: refused.
  auto A = pack<csr>(coordinate_list<double>({3, 3}));
  EXPECT_THROW(y(i) = A(i, j) * y(j), tensorlev::error);
  EXPECT_THROW(M(i, j) = M(j, i) * 2.0, tensorlev::error);
  EXPECT_THROW(y(i) = y(i) * A(i, j), tensorlev::error);
  // With a precompute each term adds into the output in turn: a later term would read an earlier one's sum.
  EXPECT_THROW(compute_add(y(i), z(i) + y(i), precompute(i)), tensorlev::error);
  EXPECT_THROW(compute_add(M(i, j), A(i, j) + M(i, j), precompute(j)), tensorlev::error);
  try {
    M(i, j) = M(j, i);
    FAIL() << "no exception";
  } catch (const tensorlev::error& e) {
    EXPECT_NE(std::string(e.what()).find("other than in place"), std::string::npos) << e.what();
  }
}

#endif

}  // namespace
