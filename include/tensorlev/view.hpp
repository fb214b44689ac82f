#pragma once
/// @file view.hpp
/// Non-owning views of tensors. A `tensor_view<V, F, I>` holds the
/// dimensions, one non-owning view per level and a pointer to the values:
/// a few pointers, trivially copy constructible and destructible (bytewise
/// copies are valid, e.g. into a device kernel's arguments), over arrays
/// that live anywhere (a
/// tensor's vectors, a Kokkos View's `data()` in any memory space, arrays
/// from another library). Generated kernels take views wherever they take
/// tensors, and index through them:
///
///     tensorlev::tensor<double, csr> A = ...;
///     auto Av = tensorlev::view(A);                       // read-only view
///     tensorlev::tensor_view<double, dense_vector> yv({n}, {dense_level<int>(n)}, y_span);
///     yv(i) = Av(i, j) * xv(j);
///
/// A view output must be dense (its components are written in place);
/// sparse results are assembled into tensors. Level views exist for dense,
/// compressed and singleton levels (CSR, CSC, COO, DCSR, ELL, CSF, dense
/// tensors); another level type gets one by specializing `level_view_of`.
/// The views' level functions are `TENSORLEV_HOST_DEVICE` (config.hpp), so
/// they compile for device back ends.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "format.hpp"
#include "level_concepts.hpp"
#include "levels/compressed.hpp"
#include "levels/dense.hpp"
#include "levels/singleton.hpp"
#include "notation.hpp"
#include "tensor.hpp"

namespace tensorlev {

/// A compressed level over borrowed arrays: children of parent position p
/// are positions pos[p] .. pos[p+1], their coordinates crd[...].
template <index_type I, sparse_options O = sparse_options{}>
class compressed_view {
 public:
  using index_type = I;
  static constexpr std::string_view name = "compressed";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;

  constexpr compressed_view() = default;
  TENSORLEV_HOST_DEVICE constexpr compressed_view(I n, const I* pos, const I* crd) noexcept
      : n_(n), pos_(pos), crd_(crd) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> pos_bounds(I ppos) const noexcept {
    return {pos_[ppos], pos_[ppos + 1]};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {crd_[p], true};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const I* pos() const noexcept { return pos_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const I* crd() const noexcept { return crd_; }

 private:
  I n_ = 0;
  const I* pos_ = nullptr;
  const I* crd_ = nullptr;
};

/// A singleton level over a borrowed coordinate array: one child, crd[p],
/// under each parent position p.
template <index_type I, sparse_options O = sparse_options{}>
class singleton_view {
 public:
  using index_type = I;
  static constexpr std::string_view name = "singleton";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = true;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;

  constexpr singleton_view() = default;
  TENSORLEV_HOST_DEVICE constexpr singleton_view(I n, const I* crd) noexcept : n_(n), crd_(crd) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> pos_bounds(I ppos) const noexcept {
    return {ppos, I(ppos + 1)};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {crd_[p], true};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const I* crd() const noexcept { return crd_; }

 private:
  I n_ = 0;
  const I* crd_ = nullptr;
};

/// How to view a level type: `type` (the view, a level in its own right)
/// and `make(level)`. Dense levels hold no arrays and are their own view.
/// Specialize it for a level type of your own.
template <class L>
struct level_view_of;

template <index_type I, order_options O>
struct level_view_of<dense_level<I, O>> {
  using type = dense_level<I, O>;
  static constexpr type make(const dense_level<I, O>& l) noexcept { return l; }
};
template <index_type I, sparse_options O>
struct level_view_of<compressed_level<I, O>> {
  using type = compressed_view<I, O>;
  static type make(const compressed_level<I, O>& l) noexcept { return type(l.dimension(), l.pos().data(), l.crd().data()); }
};
template <index_type I, sparse_options O>
struct level_view_of<singleton_level<I, O>> {
  using type = singleton_view<I, O>;
  static type make(const singleton_level<I, O>& l) noexcept { return type(l.dimension(), l.crd().data()); }
};

/// Whether level type L has a view.
template <class L>
concept viewable_level = requires { typename level_view_of<L>::type; };

namespace detail {
template <class Tuple>
struct level_views;
template <class... L>
struct level_views<std::tuple<L...>> {
  static constexpr bool all = (viewable_level<L> && ...);
  template <class X>
  struct view_or_self {
    using type = X;
  };
  template <class X>
    requires viewable_level<X>
  struct view_or_self<X> {
    using type = typename level_view_of<X>::type;
  };
  using type = std::tuple<typename view_or_self<L>::type...>;
};
}  // namespace detail

/// A non-owning view of a tensor of value type V (const V: read-only) in
/// format F with index type I.
template <class V, format_type F, index_type I = std::int32_t>
class tensor_view {
  using owner_levels = typename F::template level_tuple<I>;
  static_assert(detail::level_views<owner_levels>::all,
                "tensorlev::tensor_view: a level of this format has no non-owning view yet (views exist for dense, "
                "compressed and singleton levels); specialize tensorlev::level_view_of for it, or use the tensor");

 public:
  using value_type = std::remove_const_t<V>;
  using format_type = F;
  using index_type = I;
  using level_tuple = typename detail::level_views<owner_levels>::type;
  static constexpr std::size_t order = F::order;
  static constexpr std::size_t num_levels = F::num_levels;

  /// Over borrowed arrays: the levels' views and the values (one per
  /// position of the last level). @pre they encode a valid tensor of `dims`.
  constexpr tensor_view(std::array<I, order> dims, level_tuple levels, std::span<V> values) noexcept
      : dims_(dims), levels_(levels), values_(values) {}
  /// Over a tensor's arrays (which must outlive the view and not be
  /// reallocated while it is used).
  template <class T>
    requires std::is_same_v<std::remove_const_t<T>, tensor<value_type, F, I>> &&
             (std::is_const_v<V> || !std::is_const_v<T>)
  explicit tensor_view(T& t) noexcept
      : dims_(t.dims()),
        levels_(make_levels(t.levels(), std::make_index_sequence<num_levels>{})),
        values_(t.values()) {}

  /// `v(i, j, ...)`: the view in index notation, as for a tensor.
  template <index_variable... X>
  [[nodiscard]] access<const tensor_view, std::remove_cvref_t<X>::name...> operator()(X...) const noexcept {
    static_assert(sizeof...(X) == order,
                  "tensorlev: a tensor must be accessed with exactly one index variable per dimension");
    return access<const tensor_view, std::remove_cvref_t<X>::name...>(this);
  }
  template <index_variable... X>
  [[nodiscard]] access<tensor_view, std::remove_cvref_t<X>::name...> operator()(X...) noexcept {
    static_assert(sizeof...(X) == order,
                  "tensorlev: a tensor must be accessed with exactly one index variable per dimension");
    return access<tensor_view, std::remove_cvref_t<X>::name...>(this);
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const std::array<I, order>& dims() const noexcept { return dims_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension(std::size_t d) const noexcept { return dims_[d]; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const level_tuple& levels() const noexcept { return levels_; }
  template <std::size_t K>
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const auto& level() const noexcept {
    return std::get<K>(levels_);
  }
  /// The values (shallow: a const view still writes through a non-const V).
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr std::span<V> values() const noexcept { return values_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr std::size_t stored() const noexcept { return values_.size(); }

 private:
  template <class Levels, std::size_t... K>
  static level_tuple make_levels(const Levels& lv, std::index_sequence<K...>) noexcept {
    return level_tuple(level_view_of<std::tuple_element_t<K, Levels>>::make(std::get<K>(lv))...);
  }

  std::array<I, order> dims_;
  level_tuple levels_;
  std::span<V> values_;
};

/// A read-only view of t.
template <class V, format_type F, index_type I>
[[nodiscard]] tensor_view<const V, F, I> view(const tensor<V, F, I>& t) noexcept {
  return tensor_view<const V, F, I>(t);
}
/// A view of t that kernels may write (t's format must be dense to be an output).
template <class V, format_type F, index_type I>
[[nodiscard]] tensor_view<V, F, I> mutable_view(tensor<V, F, I>& t) noexcept {
  return tensor_view<V, F, I>(t);
}

}  // namespace tensorlev
