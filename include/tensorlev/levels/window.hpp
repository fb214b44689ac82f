#pragma once
/// @file window.hpp
/// Window level: a dense level of extent N that holds the coordinates
/// [first, first + length) only, at positions counted from `first`. The
/// rows a fused kernel's chunk writes into a temporary (fuse.hpp) are a
/// window of it, kept in a per-thread workspace; with first = 0 and
/// length = N it is the dense level.
/// Capabilities (Table 1): coordinate value iteration (over the window),
/// locate, insert.
/// Properties: full and always found *within the window*: a kernel reads
/// a window only where its outer loop runs over the window's coordinates
/// (fuse gives it no other use); compact; ordered and unique configurable.

#include <iosfwd>
#include <string_view>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../level_concepts.hpp"
#include "../error.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}>
class window_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "window";
  static constexpr bool is_full = true;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  /// locate(p, a, i).pos is locate(p, a, 0).pos + i: a kernel steps a
  /// position by one for the next coordinate instead of locating it.
  static constexpr bool contiguous = true;
  static constexpr bool needs_ancestors = false;
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    const Str L(l), A(a), B(b);
    switch (f) {
      case level_fn::coord_begin: return L + "_first";
      case level_fn::coord_end: return L + "_first + " + L + "_length";
      case level_fn::coord_access:
      case level_fn::locate:
        return (A == "0" ? Str() : A + " * " + L + "_length + ") + B + " - " + L + "_first";
      default: return L + ".?";
    }
  }

  constexpr window_level() = default;
  /// The whole extent [0, n).
  constexpr explicit window_level(I n) noexcept : n_(n), length_(n) {}
  constexpr explicit window_level(const level_shape<I>& s) noexcept : window_level(s.extent) {}
  /// Coordinates [first, first + length) of an extent n.
  /// @throws shape_error unless 0 <= first <= first + length <= n.
  window_level(I n, I first, I length) : n_(n), first_(first), length_(length) {
    if (first < 0 || length < 0 || first > n || length > n - first)
      throw shape_error(detail::message() << "window level: coordinates [" << first << ", " << first << " + " << length
                                          << ") are not within the extent " << n);
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I first() const noexcept { return first_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I length() const noexcept { return length_; }

  // Coordinate value iteration (the window).
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> coord_bounds(ancestors<I>) const noexcept {
    return {first_, I(first_ + length_)};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept {
    return {I(ppos * length_ + (i - first_)), true};
  }
  // Locate (a coordinate of the window).
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> locate(I ppos, ancestors<I>, I i) const noexcept {
    return {I(ppos * length_ + (i - first_)), true};
  }
  // Insert.
  /// @throws overflow_error if parent_size * length does not fit I.
  [[nodiscard]] constexpr I size(I parent_size) const {
    return detail::checked_mul(parent_size, length_, "window level size");
  }
  constexpr void insert_init(I, I) noexcept {}
  constexpr void insert_coord(I, I) noexcept {}
  constexpr void insert_finalize(I, I) noexcept {}

  [[nodiscard]] I validate(I parent_size) const {
    if (n_ < 0 || first_ < 0 || length_ < 0 || first_ > n_ || length_ > n_ - first_)
      throw shape_error(detail::message() << "window level: coordinates [" << first_ << ", +" << length_
                                          << ") are not within the extent " << n_);
    return size(parent_size);
  }
  [[nodiscard]] static constexpr std::size_t bytes() noexcept { return 0; }

 private:
  I n_ = 0;
  I first_ = 0;
  I length_ = 0;
};

/// Format tag for a window level (the first level of a fuse temporary).
template <order_options O = order_options{}>
struct window {
  template <class I, class S = void>
  using level = window_level<I, O>;
  static constexpr std::string_view name = "window";
};

}  // namespace tensorlev
