// exp, log, sqrt and erf in index notation: which function each value type
// gets. Built twice, with the compiler's builtins (the default) and with
// TENSORLEV_USE_CMATH (<cmath>'s functions, as device compilers get): float,
// double and long double give exactly what <cmath> gives, complex values
// std::complex's functions, a class type its own function found by
// argument-dependent lookup, or, with none but conversions to and from
// double, the double function; other value types are refused. <cmath> is
// included first on purpose: the global ::exp it declares must not change
// what the builtins set finds.
#include <cmath>
#include <complex>

#include <gtest/gtest.h>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"

#ifdef TENSORLEV_USE_CMATH
#define MATH_SUITE MathDispatchCmath
#else
#define MATH_SUITE MathDispatch
#endif

namespace um {
// A value type with functions of its own: each marks its result.
struct num {
  double v;
  operator double() const { return v; }  // not used: its own exp wins
};
inline num exp(const num& x) { return {x.v + 1000}; }
inline num log(const num& x) { return {x.v + 2000}; }
inline num sqrt(const num& x) { return {x.v + 3000}; }
inline num erf(const num& x) { return {x.v + 4000}; }
// Conversions to and from double, no functions.
struct conv {
  double v;
  conv(double x) : v(x) {}  // NOLINT(google-explicit-constructor)
  operator double() const { return v; }
};
// Neither.
struct opaque {
  double v;
};
}  // namespace um

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;
namespace ew = tensorlev::elementwise;

static_assert(ew::impl::has_function<ew::id::exp, double> && ew::impl::has_function<ew::id::erf, long double>);
static_assert(ew::impl::has_function<ew::id::sqrt, std::complex<float>>);
static_assert(!ew::impl::has_function<ew::id::erf, std::complex<double>>);
static_assert(ew::impl::has_function<ew::id::log, um::num> && ew::impl::has_function<ew::id::erf, um::conv>);
static_assert(!ew::impl::has_function<ew::id::exp, um::opaque>);
static_assert(!ew::impl::has_function<ew::id::exp, int>);
#ifdef __SIZEOF_FLOAT128__
static_assert(!ew::impl::has_function<ew::id::exp, __float128>, "not computed in a narrower type");
#endif

template <class V>
void expect_functions_match_cmath() {
  constexpr int n = 9;
  tensor<V, dense_vector> x({n}), y({n});
  for (int k = 0; k < n; ++k) x.values()[k] = static_cast<V>(0.125 + 0.375 * k);
  auto check = [&](const char* what, auto ref) {
    for (int k = 0; k < n; ++k) EXPECT_EQ(y.values()[k], ref(x.values()[k])) << what << " of " << x.values()[k];
  };
  y(i) = exp(x(i));
  check("exp", [](V v) { return std::exp(v); });
  y(i) = log(x(i));
  check("log", [](V v) { return std::log(v); });
  y(i) = sqrt(x(i));
  check("sqrt", [](V v) { return std::sqrt(v); });
  y(i) = erf(x(i));
  check("erf", [](V v) { return std::erf(v); });
}

TEST(MATH_SUITE, RealTypesGiveWhatCmathGives) {
  expect_functions_match_cmath<float>();
  expect_functions_match_cmath<double>();
  expect_functions_match_cmath<long double>();
}

template <class T>
void expect_complex_functions() {
  using C = std::complex<T>;
  constexpr int n = 7;
  tensor<C, dense_vector> x({n}), y({n});
  for (int k = 0; k < n; ++k) x.values()[k] = C(static_cast<T>(0.5 + k), static_cast<T>(0.25 * k - 0.75));
  y(i) = exp(x(i)) - sqrt(x(i));
  for (int k = 0; k < n; ++k) EXPECT_EQ(y.values()[k], std::exp(x.values()[k]) - std::sqrt(x.values()[k])) << k;
  y(i) = log(x(i));
  for (int k = 0; k < n; ++k) EXPECT_EQ(y.values()[k], std::log(x.values()[k])) << k;
}

TEST(MATH_SUITE, ComplexValuesGetStdComplexFunctions) {
  expect_complex_functions<float>();
  expect_complex_functions<double>();
}

TEST(MATH_SUITE, ClassTypesGetTheirOwnFunctionOrDouble) {
  EXPECT_EQ(ew::tag<ew::id::exp>::apply(um::num{2}).v, 1002.0);
  EXPECT_EQ(ew::tag<ew::id::log>::apply(um::num{2}).v, 2002.0);
  EXPECT_EQ(ew::tag<ew::id::sqrt>::apply(um::num{2}).v, 3002.0);
  EXPECT_EQ(ew::tag<ew::id::erf>::apply(um::num{2}).v, 4002.0);
  EXPECT_EQ(ew::tag<ew::id::exp>::apply(um::conv{1.5}).v, std::exp(1.5));
  EXPECT_EQ(ew::tag<ew::id::log>::apply(um::conv{1.5}).v, std::log(1.5));
  EXPECT_EQ(ew::tag<ew::id::sqrt>::apply(um::conv{1.5}).v, std::sqrt(1.5));
  EXPECT_EQ(ew::tag<ew::id::erf>::apply(um::conv{1.5}).v, std::erf(1.5));
}

}  // namespace
