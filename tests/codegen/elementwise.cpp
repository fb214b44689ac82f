// Element-wise statements on matrices into dense outputs, for every pair of
// mode-mapped formats: C(i,j) = A(i,j) OP B(i,j). The operation is chosen
// at compile time (TL_OP: 0 add, 1 multiply, 2 subtract and negate).
#include "common.hpp"

#ifndef TL_OP
#define TL_OP 0
#endif
// TL_HALF (0, 1 or 2) picks a third of the left operand's formats: one TU
// per third keeps each well under a minute to compile.
#ifndef TL_HALF
#define TL_HALF 0
#endif

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class FA, class FB>
std::size_t ew_case(int m, int n, double fa, double fb, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fa, rng);
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, fb, rng);
  std::vector<double> ref(A.d.size());
  tensor<double, dense_row_major> C({m, n});
  for (auto& v : C.values()) v = 99;
#if TL_OP == 0
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x];
  C(i, j) = A.t(i, j) + B.t(i, j);
  const std::string op = " + ";
#elif TL_OP == 1
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] * B.d[x];
  C(i, j) = A.t(i, j) * B.t(i, j);
  const std::string op = " * ";
#else
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = -(A.d[x] - 2.0 * B.d[x]);
  C(i, j) = -(A.t(i, j) - 2.0 * B.t(i, j));
  const std::string op = " - 2 * ";
#endif
  return count_mismatches<double>(C.values(), ref, fname<FA>() + op + fname<FB>() + " " + std::to_string(m) + "x" +
                                                       std::to_string(n));
}

#define TL_TEST_NAME2(op, half) ElementwiseEveryFormatPair_op##op##_half##half
#define TL_TEST_NAME(op, half) TL_TEST_NAME2(op, half)
TEST(Codegen, TL_TEST_NAME(TL_OP, TL_HALF)) {
  std::mt19937_64 rng(10 + TL_OP);
  std::size_t bad = 0, cases = 0, pairs = 0;
  using left_formats =
      std::conditional_t<TL_HALF == 0, std::tuple<dense_row_major, dense_col_major, coo>,
                         std::conditional_t<TL_HALF == 1, std::tuple<coo_aos, csr, csc>, std::tuple<dcsr, hash_rows, hashed_csr>>>;
  for_each_format<left_formats>([&]<class FA>(std::type_identity<FA>) {
    for_each_format<mode_matrix_formats>([&]<class FB>(std::type_identity<FB>) {
      if constexpr (concordant_pair<FA, FB>) {
      for (int m = 0; m <= 3; ++m)
        for (int n = 0; n <= 4; ++n)
          for (double fa : {0.0, 0.4, 1.0})
            for (double fb : {0.0, 0.4, 1.0}) bad += ew_case<FA, FB>(m, n, fa, fb, rng), ++cases;
      bad += ew_case<FA, FB>(67, 45, 0.05, 0.1, rng);
      ++pairs;
      }
    });
  });
  EXPECT_EQ(bad, 0u);
  // CSC pairs only with column-major or all-dense operands: of the 9 x 9
  // pairs, the 6 x 2 of CSC with a sparse row-major format are skipped.
  EXPECT_EQ(pairs, TL_HALF == 0 ? 3u * 9u - 1u : (TL_HALF == 1 ? 3u * 9u - 8u : 3u * 9u - 3u));
  EXPECT_EQ(cases, pairs * 20u * 9u);
}

}  // namespace
