#pragma once
/// @file dense.hpp
/// Dense level: encodes every coordinate in [0, N) under each parent.
/// Capabilities (Table 1): coordinate value iteration, locate, insert.
/// Properties: full, compact; ordered and unique configurable.

#include <iosfwd>
#include <string_view>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}>
class dense_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "dense";
  /// Its pattern is its extent (numeric_plan).
  static constexpr bool pattern_in_arrays = true;
  static constexpr bool is_full = true;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  /// locate(p, a, i).pos is locate(p, a, 0).pos + i: a kernel steps a
  /// position by one for the next coordinate instead of locating it.
  static constexpr bool contiguous = true;
  /// Its level functions ignore the ancestors' coordinates (the generator
  /// need not keep them for it).
  static constexpr bool needs_ancestors = false;
  /// Loop-nest printer text (level_concepts.hpp, level_fn).
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    const Str L(l), A(a), B(b);
    switch (f) {
      case level_fn::coord_begin: return "0";
      case level_fn::coord_end: return L + "_size";
      case level_fn::coord_access:
      case level_fn::locate: return A == "0" ? B : A + " * " + L + "_size + " + B;
      default: return L + ".?";
    }
  }

  constexpr dense_level() = default;
  constexpr explicit dense_level(I n) noexcept : n_(n) {}
  constexpr explicit dense_level(const level_shape<I>& s) noexcept : n_(s.extent) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  // Coordinate value iteration.
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> coord_bounds(ancestors<I>) const noexcept { return {I(0), n_}; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept {
    return {ppos * n_ + i, true};
  }
  // Locate.
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> locate(I ppos, ancestors<I>, I i) const noexcept { return {ppos * n_ + i, true}; }
  // Insert.
  /// @throws overflow_error if parent_size * N does not fit I.
  [[nodiscard]] constexpr I size(I parent_size) const { return detail::checked_mul(parent_size, n_, "dense level size"); }
  constexpr void insert_init(I, I) noexcept {}
  constexpr void insert_coord(I, I) noexcept {}
  constexpr void insert_finalize(I, I) noexcept {}

  /// Checks the level for `parent_size` parents (it has no arrays: only
  /// that the size fits I); returns the number of positions.
  [[nodiscard]] I validate(I parent_size) const {
    if (n_ < 0) throw shape_error(detail::message() << "dense level: negative extent " << n_);
    return size(parent_size);
  }
  [[nodiscard]] static constexpr std::size_t bytes() noexcept { return 0; }

 private:
  I n_ = 0;
};

/// Format tag for a dense level; `dense<order_options{.ordered = false}>`
/// configures its properties.
template <order_options O = order_options{}>
struct dense {
  /// Dense levels hold no arrays: one type whatever the storage.
  template <class I, class S = void>
  using level = dense_level<I, O>;
  static constexpr std::string_view name = "dense";
};

}  // namespace tensorlev
