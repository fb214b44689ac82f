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
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "coordinate_list.hpp"
#include "config.hpp"
#include "detail/message.hpp"
#include "error.hpp"
#include "format.hpp"
#include "level_concepts.hpp"
#include "storage.hpp"
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

// Levels that share another level's arrays (array-of-structs COO, DIA's
// offsets) define link(up), where up(integral_constant<n>) is the level n
// above; it is called once the levels are built (a tensor's adopting
// constructor, the levels a generated kernel assembles). The shared arrays
// are reference counted, so copies need no second call.
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

/// A tensor of value type V stored in format F with index type I, its
/// arrays held as storage policy S says (storage.hpp): owned vectors by
/// default; `borrowed<>` views arrays someone else owns (then V may be
/// const: a read-only operand). Dimensions are run-time values; the format
/// is a compile-time type. Copies copy what the arrays copy (vectors deep,
/// borrowed arrays shallow); array-of-structs tuples and DIA offsets,
/// which several levels read, are shared by copies (they are never written
/// after assembly), so a copy needs no fix-up.
template <class V, format_type F, index_type I = std::int32_t, storage_policy S = owning<>>
class tensor {
  static_assert(!std::is_const_v<V> || !S::growable,
                "tensorlev::tensor: a const value type needs borrowed storage (a read-only view of values someone "
                "else owns); an owning tensor's values are V");

 public:
  using value_type = std::remove_const_t<V>;
  using element_type = V;
  using format_type = F;
  using index_type = I;
  using storage = S;
  /// Whether the host can read the tensor's arrays (every executor runs on
  /// the host today; kernels refuse tensors that say no).
  static constexpr bool host_readable = S::host_accessible;
  using level_tuple = typename F::template level_tuple<I, S>;
  using values_array = typename S::template array<V>;
  static constexpr std::size_t order = F::order;
  static constexpr std::size_t num_levels = F::num_levels;

  static_assert(detail::all_levels<level_tuple>::value,
                "tensorlev::tensor: every level of the format must satisfy the tensorlev::level concept");

  tensor() = default;
  /// Adopts levels and values built elsewhere (pack, or a user who already
  /// holds the arrays; for borrowed storage, views them). Levels that share
  /// another level's arrays are linked here.
  /// @pre the levels encode a valid coordinate hierarchy for `dims` and
  /// `values.size()` is the size of the last level.
  tensor(std::array<I, order> dims, level_tuple lv, values_array values)
      : dims_(dims), levels_(std::move(lv)), values_(std::move(values)) {
    detail::link_levels(levels_);
  }
  /// Growable storage whose values array is not a std::vector (Kokkos
  /// Views): the values copied in.
  tensor(std::array<I, order> dims, level_tuple lv, const std::vector<value_type>& values)
    requires(S::growable && !std::is_same_v<values_array, std::vector<value_type>>)
      : tensor(dims, std::move(lv), values_array(values)) {}
  /// Borrowed storage: the values as a span.
  tensor(std::array<I, order> dims, level_tuple lv, std::span<V> values)
    requires(!S::growable)
      : tensor(dims, std::move(lv), values_array(values.data(), values.size())) {}
  /// A tensor of the given dimensions with every component zero, for
  /// formats whose levels are all full and locatable (dense): the output
  /// of a generated kernel, e.g. `tensor<double, dense_vector> y({n});`.
  explicit tensor(std::array<I, order> dims)
    requires(S::growable && detail::all_full_locatable<level_tuple>::value)
      : dims_(dims), levels_(make_full_levels(dims, std::make_index_sequence<num_levels>{})) {
    I size = 1;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((size = std::get<K>(levels_).size(size)), ...);
    }(std::make_index_sequence<num_levels>{});
    values_.assign(static_cast<std::size_t>(size), value_type{});
  }
  tensor(const tensor&) = default;
  tensor(tensor&&) noexcept = default;
  tensor& operator=(const tensor&) = default;
  /// A moved-from tensor may only be assigned to or destroyed; moving a
  /// tensor into itself leaves it as it was.
  tensor& operator=(tensor&& o) noexcept {
    if (this != &o) {
      dims_ = o.dims_;
      levels_ = std::move(o.levels_);
      values_ = std::move(o.values_);
    }
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

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const std::array<I, order>& dims() const noexcept { return dims_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension(std::size_t d) const noexcept { return dims_[d]; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const level_tuple& levels() const noexcept { return levels_; }
  template <std::size_t K>
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const auto& level() const noexcept {
    return std::get<K>(levels_);
  }
  /// The values. Borrowed storage is shallow, like a pointer: a const
  /// tensor over borrowed non-const values still writes through.
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr auto values() const noexcept {
    if constexpr (S::growable || std::is_const_v<std::remove_pointer_t<decltype(values_.data())>>)
      return std::span<const V>(values_.data(), values_.size());
    else
      return std::span<V>(values_.data(), values_.size());
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr std::span<V> values() noexcept {
    return std::span<V>(values_.data(), values_.size());
  }
  /// Moves the level arrays and the values out, their capacity with them,
  /// and leaves the tensor moved-from (assign to it before any other use):
  /// a kernel that reassembles this tensor starts from its old arrays, so
  /// a product recomputed into the same tensor writes memory it already
  /// holds instead of fresh pages.
  [[nodiscard]] std::pair<level_tuple, values_array> release_arrays() noexcept
    requires S::growable
  {
    return {std::move(levels_), std::move(values_)};
  }
  /// The values array itself (a std::vector for owning storage).
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr const values_array& value_array() const noexcept { return values_; }
  /// Number of value slots (stored components, explicit zeros and padding
  /// included).
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr std::size_t stored() const noexcept { return values_.size(); }

  /// Bytes held by the level arrays and the values (0 for borrowed ones).
  [[nodiscard]] std::size_t storage_bytes() const noexcept {
    auto bytes = [](const auto& l) -> std::size_t {
      if constexpr (requires { l.bytes(); })
        return l.bytes();
      else
        return 0;
    };
    return std::apply([&](const auto&... l) { return (std::size_t{0} + ... + bytes(l)); }, levels_) +
           detail::array_bytes(values_);
  }

 private:
  template <std::size_t... K>
  static level_tuple make_full_levels(const std::array<I, order>& dims, std::index_sequence<K...>) {
    return level_tuple(std::tuple_element_t<K, level_tuple>(level_shape<I>{dims[F::maps[K].dim], 0, 0, {}})...);
  }

  std::array<I, order> dims_{};
  level_tuple levels_;
  values_array values_;
};

/// A tensor over arrays someone else owns (V const: read-only): trivially
/// copyable, so it may be copied bytewise into a device kernel's arguments.
template <class V, format_type F, index_type I = std::int32_t>
using tensor_view = tensor<V, F, I, borrowed<>>;

namespace detail {

// Visits every position of the last level reachable through the level
// functions, calling f(level_coords, position). level_coords[k] is the
// coordinate of level k.
// (acoords: the same coordinates as the levels' ancestors read them.)
template <std::size_t K, class Levels, class I, class Fn>
void visit_levels(const Levels& lv, I ppos, I* coords, ancestor_coord<I>* acoords, Fn& f) {
  using L = std::tuple_element_t<K, Levels>;
  constexpr std::size_t nlev = std::tuple_size_v<Levels>;
  const L& l = std::get<K>(lv);
  const ancestors<I> anc(acoords, K);
  auto next = [&](I p) {
    if constexpr (K + 1 == nlev) {
      f(static_cast<const I*>(coords), p);
    } else {
      visit_levels<K + 1>(lv, p, coords, acoords, f);
    }
  };
  if constexpr (pos_iterable_level<L>) {
    const bounds<I> b = l.pos_bounds(ppos);
    for (I p = b.begin; p < b.end; ++p) {
      const coordinate<I> r = l.pos_access(p, anc);
      if (!r.found) continue;
      coords[K] = r.coord;
      acoords[K] = r.coord;
      next(p);
    }
  } else {
    const bounds<I> b = l.coord_bounds(anc);
    for (I i = b.begin; i < b.end; ++i) {
      const located<I> r = l.coord_access(ppos, anc, i);
      if (!r.found) continue;
      coords[K] = i;
      acoords[K] = i;
      next(r.pos);
    }
  }
}

// Logical coordinates from level coordinates; false when a blocked
// dimension's padding lies outside the tensor.
// A block_inner level that remaps (permuted_dense: SELL-C-sigma) maps the
// blocked coordinate to its row; past the extent the remap is the identity.
template <class F, class I, std::size_t N, class Levels>
bool logical_coords(const I* lc, const std::array<I, N>& dims, std::array<I, N>& x, const Levels& levels) {
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
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ([&] {
      if constexpr (remapping_level<std::tuple_element_t<K, Levels>>) {
        const std::size_t d = F::maps[K].dim;
        x[d] = std::get<K>(levels).remap(x[d]);
      }
    }(), ...);
  }(std::make_index_sequence<F::num_levels>{});
  return true;
}

}  // namespace detail

/// Calls f(x, v) for every stored component, where x is a
/// `std::array<I, order>` of logical coordinates and v its value. Padding
/// outside the tensor (blocked formats) is skipped; explicit zeros and ELL
/// padding inside it are visited. Order is the format's storage order.
template <class V, class F, class I, class S, class Fn>
void for_each_component(const tensor<V, F, I, S>& t, Fn&& f) {
  constexpr std::size_t nlev = F::num_levels;
  I coords[nlev] = {};
  ancestor_coord<I> acoords[nlev] = {};
  std::array<I, F::order> x{};
  const auto values = t.values();
  auto leaf = [&](const I* lc, I p) {
    if (detail::logical_coords<F>(lc, t.dims(), x, t.levels())) f(std::as_const(x), values[static_cast<std::size_t>(p)]);
  };
  detail::visit_levels<0>(t.levels(), I(0), coords, acoords, leaf);
}

/// The stored components as an (unsorted) coordinate list.
template <class V, class F, class I, class S>
[[nodiscard]] coordinate_list<std::remove_const_t<V>, I> to_coordinate_list(const tensor<V, F, I, S>& t) {
  coordinate_list<std::remove_const_t<V>, I> out(std::vector<I>(t.dims().begin(), t.dims().end()));
  out.reserve(t.stored());
  for_each_component(t, [&](const auto& x, const auto& v) { out.push_back(std::span<const I>(x), v); });
  return out;
}

namespace detail {
/// Appends "level k (name)": how validate's and pack's messages name a level.
inline message& append_level(message& m, std::size_t k, std::string_view name) {
  return m << "level " << k << " (" << name << ")";
}

template <std::size_t K, class T>
typename T::index_type validate_level(const T& t, typename T::index_type parent_size) {
  using F = typename T::format_type;
  const auto& l = t.template level<K>();
  using L = std::remove_cvref_t<decltype(l)>;
  static_assert(requires { l.validate(parent_size); },
                "tensorlev::validate: a level of this format has no validate(parent_size) member, so its arrays "
                "cannot be checked");
  // Every message starts "validate: level K (name)".
  auto where = [](message&& m) -> message& { return append_level(m << "validate: ", K, L::name); };
  if (F::maps[K].kind == map_kind::mode && l.dimension() != t.dims()[F::maps[K].dim])
    throw shape_error(where(message()) << " has extent " << l.dimension() << ", but dimension " << F::maps[K].dim
                                       << " is " << t.dims()[F::maps[K].dim]);
  if (F::maps[K].kind == map_kind::block_inner && l.dimension() != static_cast<typename T::index_type>(F::maps[K].block))
    throw shape_error(where(message()) << " has extent " << l.dimension() << ", but its blocks are " << F::maps[K].block
                                       << " wide");
  try {
    if constexpr (remapping_level<L>) l.validate_remap(t.dims()[F::maps[K].dim]);
    return l.validate(parent_size);
  } catch (const error& e) {
    throw shape_error(where(message()) << ": " << e.what());
  }
}
}  // namespace detail

/// Checks that t's arrays encode a valid tensor of its dimensions: each
/// level's arrays (segment bounds, coordinates inside the extent, the
/// order and uniqueness its properties promise, hashed buckets where
/// locate finds them) and one value per position of the last level. For
/// arrays from elsewhere (views, interop) before a kernel reads them: a
/// kernel trusts its operands. The arrays must be host accessible.
/// @throws shape_error naming the level and the first violation.
template <class V, class F, class I, class S>
void validate(const tensor<V, F, I, S>& t) {
  static_assert(S::host_accessible, "tensorlev::validate: the arrays must be readable on the host");
  for (std::size_t d = 0; d < F::order; ++d)
    if (t.dims()[d] < 0)
      throw shape_error(detail::message() << "validate: dimension " << d << " is negative (" << t.dims()[d] << ")");
  I size = 1;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((size = detail::validate_level<K>(t, size)), ...);
  }(std::make_index_sequence<F::num_levels>{});
  if (t.stored() != static_cast<std::size_t>(size))
    throw shape_error(detail::message() << "validate: " << t.stored() << " values, but the last level has " << size
                                        << " positions");
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
template <class V, class F, class I, class S>
[[nodiscard]] std::vector<std::remove_const_t<V>> to_dense(const tensor<V, F, I, S>& t) {
  std::vector<std::remove_const_t<V>> out(dense_size(t.dims()), std::remove_const_t<V>{});
  for_each_component(t, [&](const auto& x, const auto& v) {
    std::size_t idx = 0;
    for (std::size_t d = 0; d < F::order; ++d) idx = idx * static_cast<std::size_t>(t.dims()[d]) + static_cast<std::size_t>(x[d]);
    out[idx] += v;
  });
  return out;
}

}  // namespace tensorlev
