#pragma once
/// @file tensor.hpp
/// The owning tensor type and generic traversal of its stored components.
///
///     tensor<double, csr> A = pack<csr>(list);     // from coordinates
///     for_each_component(A, [](auto& x, double v) { ... });
///
/// A tensor stores exactly its levels' arrays and one value per position of
/// the last level; nothing else per element. Traversal uses only the level
/// functions named by the level concepts.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "coordinate_list.hpp"
#include "error.hpp"
#include "format.hpp"
#include "level_concepts.hpp"
#include "notation.hpp"

namespace tensorlev {

namespace detail {
template <class Tuple>
struct all_levels;
template <class... L>
struct all_levels<std::tuple<L...>> {
  static constexpr bool value = (level<L> && ...);
};
template <class Tuple>
struct all_full_locatable;
template <class... L>
struct all_full_locatable<std::tuple<L...>> {
  static constexpr bool value =
      ((full_level<L> && insertable_level<L> && always_found_level<L> &&
        std::constructible_from<L, const level_shape<typename L::index_type>&>) &&
       ...);
};

// Levels that share another level's arrays (array-of-structs COO) define
// link(up), where up(integral_constant<n>) is the level n above; it is
// called whenever the levels are placed (a tensor's, or the levels a
// generated kernel assembles).
template <std::size_t K, class... L>
void link_level(std::tuple<L...>& levels) {
  auto& l = std::get<K>(levels);
  auto up = [&levels]<std::size_t U>(std::integral_constant<std::size_t, U>) -> auto& {
    static_assert(U <= K, "tensorlev: a level can link only to levels above it");
    return std::get<K - U>(levels);
  };
  if constexpr (requires { l.link(up); }) l.link(up);
}
template <class... L>
void link_levels(std::tuple<L...>& levels) {
  [&]<std::size_t... K>(std::index_sequence<K...>) { (link_level<K>(levels), ...); }(std::index_sequence_for<L...>{});
}
}  // namespace detail

/// An owning tensor of value type V stored in format F with index type I.
/// Dimensions are run-time values; the format is a compile-time type.
template <class V, format_type F, index_type I = std::int32_t>
class tensor {
 public:
  using value_type = V;
  using format_type = F;
  using index_type = I;
  using level_tuple = typename F::template level_tuple<I>;
  static constexpr std::size_t order = F::order;
  static constexpr std::size_t num_levels = F::num_levels;

  static_assert(detail::all_levels<level_tuple>::value,
                "tensorlev::tensor: every level of the format must satisfy the tensorlev::level concept");

  /// Adopts levels and values built elsewhere (pack, or a user who already
  /// holds the arrays). @pre the levels encode a valid coordinate hierarchy
  /// for `dims` and `values.size()` is the size of the last level.
  tensor(std::array<I, order> dims, level_tuple lv, std::vector<V> values)
      : dims_(dims), levels_(std::move(lv)), values_(std::move(values)) {
    relink();
  }
  /// A tensor of the given dimensions with every component zero, for
  /// formats whose levels are all full and locatable (dense): the output
  /// of a generated kernel, e.g. `tensor<double, dense_vector> y({n});`.
  explicit tensor(std::array<I, order> dims)
    requires(detail::all_full_locatable<level_tuple>::value)
      : dims_(dims), levels_(make_full_levels(dims, std::make_index_sequence<num_levels>{})) {
    I size = 1;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((size = std::get<K>(levels_).size(size)), ...);
    }(std::make_index_sequence<num_levels>{});
    values_.assign(static_cast<std::size_t>(size), V{});
  }
  tensor(const tensor& o) : dims_(o.dims_), levels_(o.levels_), values_(o.values_) { relink(); }
  tensor(tensor&& o) noexcept : dims_(o.dims_), levels_(std::move(o.levels_)), values_(std::move(o.values_)) {
    relink();
  }
  tensor& operator=(const tensor& o) {
    if (this != &o) {
      dims_ = o.dims_;
      levels_ = o.levels_;
      values_ = o.values_;
      relink();
    }
    return *this;
  }
  /// A moved-from tensor may only be assigned to or destroyed.
  tensor& operator=(tensor&& o) noexcept {
    if (this == &o) return *this;
    dims_ = o.dims_;
    levels_ = std::move(o.levels_);
    values_ = std::move(o.values_);
    relink();
    return *this;
  }
  ~tensor() = default;

  /// `t(i, j, ...)`: the tensor in index notation (notation.hpp). The
  /// statement runs when an expression is assigned to such an access.
  template <index_variable... X>
  [[nodiscard]] access<tensor, std::remove_cvref_t<X>::name...> operator()(X...) noexcept {
    static_assert(sizeof...(X) == order,
                  "tensorlev: a tensor must be accessed with exactly one index variable per dimension");
    return access<tensor, std::remove_cvref_t<X>::name...>(this);
  }
  template <index_variable... X>
  [[nodiscard]] access<const tensor, std::remove_cvref_t<X>::name...> operator()(X...) const noexcept {
    static_assert(sizeof...(X) == order,
                  "tensorlev: a tensor must be accessed with exactly one index variable per dimension");
    return access<const tensor, std::remove_cvref_t<X>::name...>(this);
  }

  [[nodiscard]] const std::array<I, order>& dims() const noexcept { return dims_; }
  [[nodiscard]] I dimension(std::size_t d) const noexcept { return dims_[d]; }
  [[nodiscard]] const level_tuple& levels() const noexcept { return levels_; }
  template <std::size_t K>
  [[nodiscard]] const auto& level() const noexcept {
    return std::get<K>(levels_);
  }
  [[nodiscard]] std::span<const V> values() const noexcept { return values_; }
  [[nodiscard]] std::span<V> values() noexcept { return values_; }
  /// Number of value slots (stored components, explicit zeros and padding
  /// included).
  [[nodiscard]] std::size_t stored() const noexcept { return values_.size(); }

  /// Bytes held by the level arrays and the values.
  [[nodiscard]] std::size_t storage_bytes() const noexcept {
    auto bytes = [](const auto& l) -> std::size_t {
      if constexpr (requires { l.bytes(); })
        return l.bytes();
      else
        return 0;
    };
    return std::apply([&](const auto&... l) { return (std::size_t{0} + ... + bytes(l)); }, levels_) +
           values_.capacity() * sizeof(V);
  }

 private:
  // Shared arrays (array-of-structs COO): see detail::link_levels.
  void relink() { detail::link_levels(levels_); }

  template <std::size_t... K>
  static level_tuple make_full_levels(const std::array<I, order>& dims, std::index_sequence<K...>) {
    return level_tuple(std::tuple_element_t<K, level_tuple>(level_shape<I>{dims[F::maps[K].dim], 0, 0, {}})...);
  }

  std::array<I, order> dims_;
  level_tuple levels_;
  std::vector<V> values_;
};

namespace detail {

// Visits every position of the last level reachable through the level
// functions, calling f(level_coords, position). level_coords[k] is the
// coordinate of level k.
template <std::size_t K, class Levels, class I, class Fn>
void visit_levels(const Levels& lv, I ppos, I* coords, Fn& f) {
  using L = std::tuple_element_t<K, Levels>;
  constexpr std::size_t nlev = std::tuple_size_v<Levels>;
  const L& l = std::get<K>(lv);
  const ancestors<I> anc(coords, K);
  auto next = [&](I p) {
    if constexpr (K + 1 == nlev) {
      f(static_cast<const I*>(coords), p);
    } else {
      visit_levels<K + 1>(lv, p, coords, f);
    }
  };
  if constexpr (pos_iterable_level<L>) {
    const bounds<I> b = l.pos_bounds(ppos);
    for (I p = b.begin; p < b.end; ++p) {
      const coordinate<I> r = l.pos_access(p, anc);
      if (!r.found) continue;
      coords[K] = r.coord;
      next(p);
    }
  } else {
    const bounds<I> b = l.coord_bounds(anc);
    for (I i = b.begin; i < b.end; ++i) {
      const located<I> r = l.coord_access(ppos, anc, i);
      if (!r.found) continue;
      coords[K] = i;
      next(r.pos);
    }
  }
}

// Logical coordinates from level coordinates; false when a blocked
// dimension's padding lies outside the tensor.
template <class F, class I, std::size_t N>
bool logical_coords(const I* lc, const std::array<I, N>& dims, std::array<I, N>& x) {
  x.fill(I(0));
  for (std::size_t k = 0; k < F::num_levels; ++k) {
    const auto& m = F::maps[k];
    switch (m.kind) {
      case map_kind::mode: x[m.dim] = lc[k]; break;
      case map_kind::block_outer: x[m.dim] += lc[k] * static_cast<I>(m.block); break;
      case map_kind::block_inner: x[m.dim] += lc[k]; break;
      default: break;  // derived levels carry no logical coordinate
    }
  }
  for (std::size_t d = 0; d < N; ++d)
    if (x[d] >= dims[d]) return false;
  return true;
}

}  // namespace detail

/// Calls f(x, v) for every stored component, where x is a
/// `std::array<I, order>` of logical coordinates and v its value. Padding
/// outside the tensor (blocked formats) is skipped; explicit zeros and ELL
/// padding inside it are visited. Order is the format's storage order.
template <class V, class F, class I, class Fn>
void for_each_component(const tensor<V, F, I>& t, Fn&& f) {
  constexpr std::size_t nlev = F::num_levels;
  I coords[nlev] = {};
  std::array<I, F::order> x{};
  const auto values = t.values();
  auto leaf = [&](const I* lc, I p) {
    if (detail::logical_coords<F>(lc, t.dims(), x)) f(std::as_const(x), values[static_cast<std::size_t>(p)]);
  };
  detail::visit_levels<0>(t.levels(), I(0), coords, leaf);
}

/// The stored components as an (unsorted) coordinate list.
template <class V, class F, class I>
[[nodiscard]] coordinate_list<V, I> to_coordinate_list(const tensor<V, F, I>& t) {
  coordinate_list<V, I> out(std::vector<I>(t.dims().begin(), t.dims().end()));
  out.reserve(t.stored());
  for_each_component(t, [&](const auto& x, const V& v) { out.push_back(std::span<const I>(x), v); });
  return out;
}

/// Number of dense components (product of dimensions), or overflow_error.
template <class I, std::size_t N>
[[nodiscard]] std::size_t dense_size(const std::array<I, N>& dims) {
  std::size_t n = 1;
  for (std::size_t d = 0; d < N; ++d)
    if (__builtin_mul_overflow(n, static_cast<std::size_t>(dims[d]), &n))
      throw overflow_error("dense size: the product of the dimensions does not fit std::size_t");
  return n;
}

/// The tensor as a dense row-major array (last dimension fastest); stored
/// duplicates (ELL padding) add up.
template <class V, class F, class I>
[[nodiscard]] std::vector<V> to_dense(const tensor<V, F, I>& t) {
  std::vector<V> out(dense_size(t.dims()), V{});
  for_each_component(t, [&](const auto& x, const V& v) {
    std::size_t idx = 0;
    for (std::size_t d = 0; d < F::order; ++d) idx = idx * static_cast<std::size_t>(t.dims()[d]) + static_cast<std::size_t>(x[d]);
    out[idx] += v;
  });
  return out;
}

}  // namespace tensorlev
