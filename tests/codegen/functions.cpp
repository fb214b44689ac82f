// Division and elementwise functions (exp, log, sqrt, erf) in index
// notation: every matrix format as the numerator (or as the operand a
// function's value multiplies or adds to), dense divisors and function
// arguments, outputs dense and sparse, `=` and `+=`, reductions, negation,
// constants on either side, zero and one extents; compared with dense
// references. Divisors are powers of two and function arguments perfect
// squares or values whose function is computed the same way in the
// reference, so results are exact whatever the summation order.
#include <cmath>

#include "common.hpp"
#include "tensorlev/codegen/print.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

// Compares within a relative 1e-14: a statement whose terms run as
// separate kernels (ELL's, DIA's private variables) adds them in another
// order than the reference.
std::size_t count_far(std::span<const double> got, const std::vector<double>& ref, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t x = 0; x < ref.size(); ++x)
    if (!(std::abs(got[x] - ref[x]) <= 1e-14 * (1.0 + std::abs(ref[x])))) {
      if (bad < 3) ADD_FAILURE() << what << ": component " << x << " is " << got[x] << ", expected " << ref[x];
      ++bad;
    }
  return bad + (got.size() != ref.size() ? 1 : 0);
}

// A dense m x n matrix with nonzero power-of-two values (divisors), and its reference.
struct divisor {
  tensor<double, dense_row_major> t;
  std::vector<double> d;
};
divisor make_divisor(int m, int n, std::mt19937_64& rng) {
  static constexpr double pow2[] = {-4, -2, -1, -0.5, 0.5, 1, 2, 4};
  divisor D{tensor<double, dense_row_major>({m, n}), {}};
  for (auto& v : D.t.values()) v = pow2[std::uniform_int_distribution<int>(0, 7)(rng)];
  D.d.assign(D.t.values().begin(), D.t.values().end());
  return D;
}

// Perfect squares (sqrt exact) in a dense m x n matrix.
divisor make_squares(int m, int n, std::mt19937_64& rng) {
  divisor Q{tensor<double, dense_row_major>({m, n}), {}};
  for (auto& v : Q.t.values()) {
    const int r = std::uniform_int_distribution<int>(0, 5)(rng);
    v = r * r;
  }
  Q.d.assign(Q.t.values().begin(), Q.t.values().end());
  return Q;
}

// C = A / D and friends for numerator format FA into output FC.
template <class FC, class FA>
std::size_t div_case(int m, int n, double fill, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fill, rng);
  const divisor D = make_divisor(m, n, rng);
  const divisor Q = make_squares(m, n, rng);
  const std::string what = fname<FA>() + " -> " + fname<FC>() + " " + std::to_string(m) + "x" + std::to_string(n);
  std::size_t bad = 0;
  std::vector<double> ref(A.d.size());
  {
    tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, n}));
    C(i, j) = A.t(i, j) / D.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] / D.d[x];
    bad += mismatches(C, ref, "A / D: " + what);
    // The quotient is stored where the numerator is.
    if constexpr (!all_dense<FC>) {
      const auto pa = stored_pattern(A.t);
      std::size_t pattern = 0;
      for (char c : pa) pattern += c != 0;
      if (components(C) > pattern) ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, at most " << pattern;
    }
  }
  {
    tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, n}));
    C(i, j) = -(A.t(i, j) / 2.0) - A.t(i, j) / (D.t(i, j) * D.t(i, j));
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = -(A.d[x] / 2.0) - A.d[x] / (D.d[x] * D.d[x]);
    bad += mismatches(C, ref, "-(A / 2) - A / (D * D): " + what);
  }
  {
    // sqrt of perfect squares, a constant over the divisor: dense results.
    tensor<double, dense_row_major> C({m, n});
    for (auto& v : C.values()) v = 1;
    C(i, j) += A.t(i, j) * sqrt(Q.t(i, j)) + 1.0 / D.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = 1 + (A.d[x] * std::sqrt(Q.d[x]) + 1.0 / D.d[x]);
    bad += count_mismatches<double>(C.values(), ref, "+= A * sqrt(Q) + 1 / D: " + what);
  }
  {
    // Functions whose values the reference computes the same way, one per component.
    tensor<double, dense_row_major> C({m, n});
    C(i, j) = A.t(i, j) * exp(D.t(i, j)) + erf(-D.t(i, j)) - log(Q.t(i, j) + 1.0);
    for (std::size_t x = 0; x < ref.size(); ++x)
      ref[x] = A.d[x] * std::exp(D.d[x]) + std::erf(-D.d[x]) - std::log(Q.d[x] + 1.0);
    bad += count_far(C.values(), ref, "A * exp(D) + erf(-D) - log(Q + 1): " + what);
  }
  {
    // A reduction over quotients: y(i) = sum_j A(i,j) / D(i,j) * sqrt(Q(i,j)).
    tensor<double, dense_vector> y({m});
    y(i) = A.t(i, j) / D.t(i, j) * sqrt(Q.t(i, j));
    std::vector<double> yr(static_cast<std::size_t>(m), 0.0);
    for (std::size_t x = 0; x < ref.size(); ++x)
      yr[x / static_cast<std::size_t>(n)] += A.d[x] / D.d[x] * std::sqrt(Q.d[x]);
    bad += count_mismatches<double>(y.values(), yr, "y(i) = A / D * sqrt(Q): " + what);
  }
  return bad;
}

template <class FC>
std::size_t div_sweep(std::mt19937_64& rng, std::size_t& cases) {
  std::size_t bad = 0;
  // Formats with padding or block fill (ELL, DIA, BCSR, ...) do not compile
  // here (tests/fail/codegen_division_of_padded.cpp).
  for_each_format<mode_matrix_formats>([&]<class FA>(std::type_identity<FA>) {
    if constexpr (concordant_pair<FA, FC>) {
      for (int m = 0; m <= 2; ++m)
        for (int n = 0; n <= 3; ++n)
          for (double fill : {0.0, 0.5, 1.0}) bad += div_case<FC, FA>(m, n, fill, rng), ++cases;
      bad += div_case<FC, FA>(37, 29, 0.1, rng), ++cases;
    }
  });
  return bad;
}

TEST(CodegenFunctions, DivisionAndFunctionsEveryNumeratorFormat) {
  std::mt19937_64 rng(77);
  std::size_t bad = 0, cases = 0;
  bad += div_sweep<dense_row_major>(rng, cases);
  bad += div_sweep<csr>(rng, cases);
  bad += div_sweep<coo>(rng, cases);
  bad += div_sweep<dcsr>(rng, cases);
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(cases, 4u * 6u * 25u);
}

// A scalar divisor, function values into sparse outputs (where the
// numerator stores), += into a sparse output, zero numerators over zero
// divisors (0 / 0 only where a zero is stored).
TEST(CodegenFunctions, ScalarDivisorsAndSparseOutputs) {
  std::mt19937_64 rng(79);
  for (int n : {0, 1, 6, 40}) {
    auto A = random_operand<csr>(std::array<int, 2>{n, n}, 0.3, rng);
    const divisor D = make_divisor(n, n, rng);
    scalar<double> s;
    s.value() = -0.25;
    std::vector<double> ref(A.d.size());
    tensor<double, coo> C = pack<coo>(coordinate_list<double, int>({n, n}));
    C(i, j) = A.t(i, j) * exp(D.t(i, j)) / s();
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] * std::exp(D.d[x]) / -0.25;
    EXPECT_EQ(mismatches(C, ref, "A * exp(D) / s into COO"), 0u) << n;
    tensor<double, csr> E = A.t;
    E(i, j) += A.t(i, j) / D.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + A.d[x] / D.d[x];
    EXPECT_EQ(mismatches(E, ref, "A += A / D into CSR"), 0u) << n;
    // Unstored numerators give 0 whatever the divisor, 0 included.
    tensor<double, dense_row_major> Z({n, n}), Q({n, n});
    Q(i, j) = A.t(i, j) / Z(i, j);
    const auto pa = stored_pattern(A.t);
    for (std::size_t x = 0; x < ref.size(); ++x) {
      if (pa[x] == 0) {
        EXPECT_EQ(Q.values()[x], 0.0) << x;
      } else {
        EXPECT_TRUE(!std::isfinite(Q.values()[x])) << x;  // a stored value over 0
      }
    }
  }
}

// Functions of vectors and scalars, on executors that cut the loop into chunks.
TEST(CodegenFunctions, VectorsScalarsAndChunks) {
  std::mt19937_64 rng(78);
  for (int n : {0, 1, 5, 1000}) {
    tensor<double, dense_vector> x({n}), y({n});
    std::vector<double> xr(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) xr[static_cast<std::size_t>(k)] = x.values()[k] = 0.25 * (k % 9) + 0.5;
    scalar<double> s, t;
    s.value() = 0.75;
    for (std::size_t chunks : {std::size_t{0}, std::size_t{3}}) {
      run_in_chunks(chunks, false, y(i), exp(s()) * log(x(i)) / sqrt(x(i)) - 3.0 / x(i));
      for (int k = 0; k < n; ++k) {
        const double v = xr[static_cast<std::size_t>(k)];
        ASSERT_EQ(y.values()[k], std::exp(0.75) * std::log(v) / std::sqrt(v) - 3.0 / v) << n << " " << k;
      }
      // A scalar reduction of quotients by powers of two: exact.
      t() = x(i) / (2.0 * x(i));
      EXPECT_EQ(t.value(), 0.5 * n);
    }
  }
}

// The loop nest prints the functions and quotients it evaluates.
TEST(CodegenFunctions, LoopNestPrintsThem) {
  tensor<double, dense_vector> x({3}), y({3});
  const std::string text = loop_nest(y(i), exp(x(i)) / (2.0 * x(i)));
  EXPECT_NE(text.find("exp("), std::string::npos) << text;
  EXPECT_NE(text.find(" / "), std::string::npos) << text;
}

}  // namespace
