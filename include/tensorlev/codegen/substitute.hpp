#pragma once
/// @file codegen/substitute.hpp
/// Rewriting index-notation expressions by their types (fuse.hpp uses it
/// to substitute a pointwise temporary's expression into the statements
/// that read it): renaming index variables, replacing chosen accesses,
/// and the facts about an access's tensor type that decide whether two
/// accesses can share memory.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../notation.hpp"
#include "../storage.hpp"
#include "describe.hpp"
#include "plan.hpp"

namespace tensorlev::cg {

// ---- renaming index variables -----------------------------------------------

// v renamed by from -> to (v itself when it is not in from).
template <std::size_t N>
constexpr char renamed_var(char v, const std::array<char, N>& from, const std::array<char, N>& to) {
  for (std::size_t x = 0; x < N; ++x)
    if (from[x] == v) return to[x];
  return v;
}

template <class E>
struct rebuild;  // a node of E's kind over new children
template <class L, class R>
struct rebuild<add_expr<L, R>> {
  template <class L2, class R2>
  static add_expr<L2, R2> make(L2 l, R2 r) {
    return {l, r};
  }
};
template <class L, class R>
struct rebuild<sub_expr<L, R>> {
  template <class L2, class R2>
  static sub_expr<L2, R2> make(L2 l, R2 r) {
    return {l, r};
  }
};
template <class L, class R>
struct rebuild<mul_expr<L, R>> {
  template <class L2, class R2>
  static mul_expr<L2, R2> make(L2 l, R2 r) {
    return {l, r};
  }
};
template <class L, class R>
struct rebuild<div_expr<L, R>> {
  template <class L2, class R2>
  static div_expr<L2, R2> make(L2 l, R2 r) {
    return {l, r};
  }
};
template <class E>
struct rebuild<neg_expr<E>> {
  template <class E2>
  static neg_expr<E2> make(E2 e) {
    return {e};
  }
};
template <class F, class E>
struct rebuild<fn_expr<F, E>> {
  template <class E2>
  static fn_expr<F, E2> make(E2 e) {
    return {e};
  }
};

template <auto From, auto To>
struct renamer {
  template <class T, char... X>
  static access<T, renamed_var(X, From, To)...> of(const access<T, X...>& a) {
    return access<T, renamed_var(X, From, To)...>(a.operand());
  }
  template <class E>
  static auto of(const E& e) {
    using NT = node_traits<E>;
    if constexpr (NT::kind == node_kind::constant)
      return e;
    else if constexpr (NT::kind == node_kind::neg || NT::kind == node_kind::fn)
      return rebuild<E>::make(of(e.e));
    else
      return rebuild<E>::make(of(e.l), of(e.r));
  }
};

/// e with every index variable from[x] renamed to[x] (the others kept).
template <auto From, auto To, class E>
auto rename_vars(const E& e) {
  return renamer<From, To>::of(e);
}

// ---- facts about accesses ------------------------------------------------------

template <class A>
struct access_tensor;
template <class T, char... V>
struct access_tensor<access<T, V...>> {
  using type = std::remove_const_t<T>;
  static constexpr std::array<char, sizeof...(V)> vars{V...};
};
/// The tensor type an access reads or writes (const removed).
template <class A>
using access_tensor_t = typename access_tensor<A>::type;

/// The number of E's accesses of tensor type T.
template <class T, class E>
constexpr std::size_t reads_of() {
  using accs = typename expr_info<E>::access_types;
  return [&]<std::size_t... A>(std::index_sequence<A...>) {
    return (std::size_t{0} + ... + std::size_t{std::is_same_v<access_tensor_t<std::tuple_element_t<A, accs>>, T>});
  }(std::make_index_sequence<std::tuple_size_v<accs>>{});
}

template <class S>
struct is_owning_storage : std::false_type {};
template <class P, class C>
struct is_owning_storage<owning<P, C>> : std::true_type {};

/// Whether two accesses of *different* tensor types of this kind never
/// share memory: a scalar (one object), a tensor over owning storage (its
/// arrays are its own vectors), a fuse temporary (fuse alone gives it
/// values). Views, borrowed and device arrays may alias anything.
template <class T>
constexpr bool exclusive_memory() {
  if constexpr (detail::is_scalar_v<T> || detail::is_temporary_v<T>)
    return true;
  else if constexpr (requires { typename T::storage; })
    return is_owning_storage<typename T::storage>::value;
  else
    return false;
}

/// Whether an operand's every level is dense, stores one dimension and is
/// unique (or it is a scalar): its components are all there, in
/// coordinate order, whatever expression reads them.
constexpr bool dense_operand(const access_desc& a) {
  for (std::size_t k = 0; k < a.nlev; ++k) {
    const level_desc& l = a.lev[k];
    if (!dense_level_desc(l) || !l.unique || l.map != map_kind::mode) return false;
  }
  return true;
}

// The variables of the subtree at node n, as a mask over d.vars.
constexpr std::uint32_t node_vars(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  switch (x.kind) {
    case node_kind::access: {
      std::uint32_t m = 0;
      for (std::size_t k = 0; k < d.acc[x.acc].order; ++k)
        for (std::size_t v = 0; v < d.nvars; ++v)
          if (d.vars[v] == d.acc[x.acc].vars[k]) m |= std::uint32_t{1} << v;
      return m;
    }
    case node_kind::constant: return 0;
    case node_kind::neg:
    case node_kind::fn: return node_vars(d, x.a);
    default: return node_vars(d, x.a) | node_vars(d, x.b);
  }
}

/// Whether both sides of every + and - hold the same variables. Each
/// top-level term of a statement sums over its own reduction variables
/// (design.md, "Reductions (Einstein)"), so an expression spliced under a
/// sum keeps its meaning only when no term lacks a variable (`a(i) + 1.0`
/// summed over i is sum(a) + 1, not sum(a + 1)).
constexpr bool additively_uniform(const stmt_desc& d) {
  for (std::size_t n = 0; n < d.nnodes; ++n) {
    const node& x = d.nodes[n];
    if ((x.kind == node_kind::add || x.kind == node_kind::sub) &&
        node_vars(d, x.a) != node_vars(d, x.b))
      return false;
  }
  return true;
}

/// Whether the statement sums over no variable (every variable is the
/// output's).
constexpr bool without_reductions(const stmt_desc& d) {
  for (std::size_t v = 0; v < d.nvars; ++v) {
    bool out = false;
    for (std::size_t k = 0; k < d.acc[0].order; ++k) out = out || d.acc[0].vars[k] == d.vars[v];
    if (!out) return false;
  }
  return true;
}

/// Whether the expression has a function or a quotient (work a
/// substitution repeats for each read).
constexpr bool has_fn_or_div(const stmt_desc& d) {
  for (std::size_t n = 0; n < d.nnodes; ++n)
    if (d.nodes[n].kind == node_kind::fn || d.nodes[n].kind == node_kind::div) return true;
  return false;
}

}  // namespace tensorlev::cg
