#pragma once
/// @file notation.hpp
/// Index notation: index variables, tensor accesses and expression
/// templates. Building an expression computes nothing; assigning it to an
/// access (`y(i) = A(i,j) * x(j)`) hands the whole statement to the code
/// generator (codegen.hpp), which lowers it at compile time to loops for the
/// operands' exact formats.
///
///     using namespace tensorlev::indices;          // i, j, k, l, m, n
///     y(i) = A(i, j) * x(j);                       // SpMV
///     C(i, k) += A(i, j) * B(j, k);                // accumulate
///     scalar<double> a;  a() = x(i) * A(i, j) * y(j);
///
/// Index variables that appear on the right but not on the left are summed
/// over (reductions).

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "config.hpp"

// The elementwise functions on float, double and long double call the
// compiler's builtins (GCC and clang), so that this header, which every
// kernel includes, does without <cmath> (a tenth of a small kernel's
// compile time; docs/design.md, "What a translation unit includes"). Device
// compilers and others use <cmath>, as does TENSORLEV_USE_CMATH. The two
// sets live in inline namespaces of their own: translation units built
// either way link into one program. (TENSORLEV_DETAIL_MATH_BUILTINS is
// undefined again at the end of this header.)
#if defined(TENSORLEV_USE_CMATH) || !defined(__GNUC__) || defined(__CUDACC__) || defined(__HIPCC__)
#define TENSORLEV_DETAIL_MATH_BUILTINS 0
#define TENSORLEV_DETAIL_MATH_NS std_math
#include <cmath>
#else
#define TENSORLEV_DETAIL_MATH_BUILTINS 1
#define TENSORLEV_DETAIL_MATH_NS builtin_math
#endif

namespace tensorlev {

/// An index variable, named by one character. Distinct names are distinct
/// types, so the generator knows every variable at compile time.
template <char Name>
struct index_var {
  static constexpr char name = Name;
  friend constexpr bool operator==(index_var, index_var) { return true; }
};

/// Predefined index variables; `using namespace tensorlev::indices;`.
namespace indices {
inline constexpr index_var<'i'> i{};
inline constexpr index_var<'j'> j{};
inline constexpr index_var<'k'> k{};
inline constexpr index_var<'l'> l{};
inline constexpr index_var<'m'> m{};
inline constexpr index_var<'n'> n{};
}  // namespace indices

namespace detail {
template <class T>
struct is_index_var_t : std::false_type {};
template <char C>
struct is_index_var_t<index_var<C>> : std::true_type {};
}  // namespace detail

template <class T>
concept index_variable = detail::is_index_var_t<std::remove_cvref_t<T>>::value;

/// An order-0 tensor: one value. `a()` is its access in index notation.
template <class V>
class scalar;

/// `t(i, j, ...)`: tensor (or scalar) T accessed with index variables. Holds
/// a pointer; the tensor must outlive the statement.
template <class T, char... Vars>
class access;

/// Expression nodes. Operands are held by value (accesses are pointers).
template <class L, class R>
struct add_expr {
  L l;
  R r;
};
template <class L, class R>
struct sub_expr {
  L l;
  R r;
};
template <class L, class R>
struct mul_expr {
  L l;
  R r;
};
template <class E>
struct neg_expr {
  E e;
};
/// A scalar constant in an expression (`2.0 * A(i,j)`).
template <class V>
struct const_expr {
  V v;
};
/// `l / r`: the divisor must be dense (every level full) or a scalar or a
/// constant, so the quotient is stored where l is (checked at compile time).
template <class L, class R>
struct div_expr {
  L l;
  R r;
};
/// An elementwise function of an expression (`exp(x(i))`): F is a tag with
/// `apply(v)` and a `name` (tensorlev::elementwise). Its argument must be dense or
/// scalar: f(0) need not be 0, so the value is needed at every component.
template <class F, class E>
struct fn_expr {
  E e;
};

/// Elementwise functions for fn_expr (`exp`, `log`, `sqrt`, `erf` below):
/// `elementwise::tag<elementwise::id::exp>` and so on. (These names hide
/// ::exp and the others for unqualified calls inside namespace tensorlev:
/// call std::exp there.)
namespace elementwise {
enum class id : unsigned char { exp, log, sqrt, erf };
}  // namespace elementwise
}  // namespace tensorlev

// Outside namespace tensorlev, whose exp, log, sqrt and erf (the
// expression builders) would hide the value functions found by
// argument-dependent lookup (std::complex's, a user type's).
namespace tensorlev_math_adl {
inline namespace TENSORLEV_DETAIL_MATH_NS {
#if TENSORLEV_DETAIL_MATH_BUILTINS
// Declarations that hide ::exp and the others (present when <math.h> or
// <cmath> was included before): only argument-dependent lookup finds a
// function, whatever was included first.
void exp() = delete;
void log() = delete;
void sqrt() = delete;
void erf() = delete;
#else
using std::erf, std::exp, std::log, std::sqrt;
#endif
template <class V>
TENSORLEV_HOST_DEVICE auto exp_of(const V& v) -> decltype(exp(v)) {
  return exp(v);
}
template <class V>
TENSORLEV_HOST_DEVICE auto log_of(const V& v) -> decltype(log(v)) {
  return log(v);
}
template <class V>
TENSORLEV_HOST_DEVICE auto sqrt_of(const V& v) -> decltype(sqrt(v)) {
  return sqrt(v);
}
template <class V>
TENSORLEV_HOST_DEVICE auto erf_of(const V& v) -> decltype(erf(v)) {
  return erf(v);
}
template <tensorlev::elementwise::id F, class V>
TENSORLEV_HOST_DEVICE auto call(const V& v) {
  using tensorlev::elementwise::id;
  if constexpr (F == id::exp)
    return exp_of(v);
  else if constexpr (F == id::log)
    return log_of(v);
  else if constexpr (F == id::sqrt)
    return sqrt_of(v);
  else
    return erf_of(v);
}
template <tensorlev::elementwise::id F, class V>
concept callable = requires(const V& v) {
  requires F != tensorlev::elementwise::id::exp || requires { exp_of(v); };
  requires F != tensorlev::elementwise::id::log || requires { log_of(v); };
  requires F != tensorlev::elementwise::id::sqrt || requires { sqrt_of(v); };
  requires F != tensorlev::elementwise::id::erf || requires { erf_of(v); };
};
}  // namespace TENSORLEV_DETAIL_MATH_NS
}  // namespace tensorlev_math_adl

namespace tensorlev {
namespace elementwise {
inline namespace TENSORLEV_DETAIL_MATH_NS {
namespace impl {
template <class V>
inline constexpr bool standard_floating =
    std::is_same_v<V, float> || std::is_same_v<V, double> || std::is_same_v<V, long double>;
// One function per elementwise function and standard floating type: the
// compiler's builtins, or <cmath>'s (integer value types are refused
// before: check_statement).
template <id F, class R>
TENSORLEV_HOST_DEVICE R builtin(R x) {
  static_assert(standard_floating<R>);
#if TENSORLEV_DETAIL_MATH_BUILTINS
  if constexpr (std::is_same_v<R, float>) {
    if constexpr (F == id::exp) return __builtin_expf(x);
    else if constexpr (F == id::log) return __builtin_logf(x);
    else if constexpr (F == id::sqrt) return __builtin_sqrtf(x);
    else return __builtin_erff(x);
  } else if constexpr (std::is_same_v<R, double>) {
    if constexpr (F == id::exp) return __builtin_exp(x);
    else if constexpr (F == id::log) return __builtin_log(x);
    else if constexpr (F == id::sqrt) return __builtin_sqrt(x);
    else return __builtin_erf(x);
  } else {
    if constexpr (F == id::exp) return __builtin_expl(x);
    else if constexpr (F == id::log) return __builtin_logl(x);
    else if constexpr (F == id::sqrt) return __builtin_sqrtl(x);
    else return __builtin_erfl(x);
  }
#else
  if constexpr (F == id::exp) return std::exp(x);
  else if constexpr (F == id::log) return std::log(x);
  else if constexpr (F == id::sqrt) return std::sqrt(x);
  else return std::erf(x);
#endif
}
// A class type with no function of its own found by argument-dependent
// lookup but conversions to and from double is computed in double, as
// <cmath>'s double overloads do for it. Value types that are neither
// float, double, long double nor a class (__float128, _Float16, C++23's
// extended floating types) are refused in both sets rather than computed
// in another type.
template <class V>
inline constexpr bool via_double =
    std::is_class_v<V> && std::is_convertible_v<const V&, double> && std::is_convertible_v<double, V>;
template <id F, class V>
inline constexpr bool has_function =
    standard_floating<V> || (std::is_class_v<V> && (tensorlev_math_adl::callable<F, V> || via_double<V>));
}  // namespace impl

template <id F>
struct tag {
  static constexpr std::string_view name = F == id::exp ? "exp" : F == id::log ? "log" : F == id::sqrt ? "sqrt" : "erf";
  template <class V>
  TENSORLEV_HOST_DEVICE static V apply(const V& v) {
    if constexpr (!impl::has_function<F, V>) {
      static_assert(F != id::erf,
                    "tensorlev::erf: no erf for this value type (the standard library has none for complex numbers)");
      static_assert(F == id::erf,
                    "tensorlev: no exp, log or sqrt for this value type (none found by argument-dependent lookup)");
      return v;
    }
    else if constexpr (impl::standard_floating<V>)
      return impl::builtin<F>(v);
    else if constexpr (tensorlev_math_adl::callable<F, V>)
      return tensorlev_math_adl::call<F>(v);
    else
      return impl::builtin<F>(static_cast<double>(v));
  }
};
}  // namespace TENSORLEV_DETAIL_MATH_NS
}  // namespace elementwise

namespace detail {
template <class T>
struct is_expr_t : std::false_type {};
template <class T, char... V>
struct is_expr_t<access<T, V...>> : std::true_type {};
template <class L, class R>
struct is_expr_t<add_expr<L, R>> : std::true_type {};
template <class L, class R>
struct is_expr_t<sub_expr<L, R>> : std::true_type {};
template <class L, class R>
struct is_expr_t<mul_expr<L, R>> : std::true_type {};
template <class E>
struct is_expr_t<neg_expr<E>> : std::true_type {};
template <class V>
struct is_expr_t<const_expr<V>> : std::true_type {};
template <class L, class R>
struct is_expr_t<div_expr<L, R>> : std::true_type {};
template <class F, class E>
struct is_expr_t<fn_expr<F, E>> : std::true_type {};
}  // namespace detail

/// An index-notation expression.
template <class T>
concept expression = detail::is_expr_t<std::remove_cvref_t<T>>::value;

namespace detail {
template <class T>
concept arithmetic_constant = std::is_arithmetic_v<std::remove_cvref_t<T>> || requires(const T& t) {
  t.real();
  t.imag();
};
template <class T>
constexpr auto as_expr(const T& t) {
  if constexpr (expression<T>)
    return t;
  else
    return const_expr<T>{t};
}
}  // namespace detail

template <expression L, expression R>
constexpr add_expr<L, R> operator+(const L& l, const R& r) {
  return {l, r};
}
template <expression L, expression R>
constexpr sub_expr<L, R> operator-(const L& l, const R& r) {
  return {l, r};
}
template <expression L, expression R>
constexpr mul_expr<L, R> operator*(const L& l, const R& r) {
  return {l, r};
}
template <expression E>
constexpr neg_expr<E> operator-(const E& e) {
  return {e};
}
// Mixed with constants.
template <expression L, detail::arithmetic_constant C>
constexpr auto operator*(const L& l, const C& c) {
  return mul_expr<L, const_expr<C>>{l, {c}};
}
template <detail::arithmetic_constant C, expression R>
constexpr auto operator*(const C& c, const R& r) {
  return mul_expr<const_expr<C>, R>{{c}, r};
}
template <expression L, detail::arithmetic_constant C>
constexpr auto operator+(const L& l, const C& c) {
  return add_expr<L, const_expr<C>>{l, {c}};
}
template <detail::arithmetic_constant C, expression R>
constexpr auto operator+(const C& c, const R& r) {
  return add_expr<const_expr<C>, R>{{c}, r};
}
template <expression L, detail::arithmetic_constant C>
constexpr auto operator-(const L& l, const C& c) {
  return sub_expr<L, const_expr<C>>{l, {c}};
}
template <detail::arithmetic_constant C, expression R>
constexpr auto operator-(const C& c, const R& r) {
  return sub_expr<const_expr<C>, R>{{c}, r};
}
template <expression L, expression R>
constexpr div_expr<L, R> operator/(const L& l, const R& r) {
  return {l, r};
}
template <expression L, detail::arithmetic_constant C>
constexpr auto operator/(const L& l, const C& c) {
  return div_expr<L, const_expr<C>>{l, {c}};
}
template <detail::arithmetic_constant C, expression R>
constexpr auto operator/(const C& c, const R& r) {
  return div_expr<const_expr<C>, R>{{c}, r};
}
/// Elementwise functions of dense expressions: `exp(x(i))`, `log`, `sqrt`,
/// `erf` (the argument dense or scalar; see fn_expr).
template <expression E>
constexpr fn_expr<elementwise::tag<elementwise::id::exp>, E> exp(const E& e) {
  return {e};
}
template <expression E>
constexpr fn_expr<elementwise::tag<elementwise::id::log>, E> log(const E& e) {
  return {e};
}
template <expression E>
constexpr fn_expr<elementwise::tag<elementwise::id::sqrt>, E> sqrt(const E& e) {
  return {e};
}
template <expression E>
constexpr fn_expr<elementwise::tag<elementwise::id::erf>, E> erf(const E& e) {
  return {e};
}

/// An explicit loop order for a statement: `loop_order<'i', 'k', 'j'>`, or
/// from variables, `loop_order_of<i, k, j>`.
template <char... Vars>
struct loop_order {};
template <auto... Vars>
  requires(index_variable<decltype(Vars)> && ...)
using loop_order_of = loop_order<decltype(Vars)::name...>;

/// A schedule directive: precompute the expression over index variable V
/// into a dense workspace (see compute() in codegen/kernel.hpp).
template <char V>
struct precompute_t {
  static constexpr char var = V;
};
template <char V>
constexpr precompute_t<V> precompute(index_var<V>) noexcept {
  return {};
}

}  // namespace tensorlev

#undef TENSORLEV_DETAIL_MATH_BUILTINS
#undef TENSORLEV_DETAIL_MATH_NS
