#pragma once
/// @file strided.hpp
/// Strided level: a dense level of extent n whose parents' positions are
/// `stride` apart (stride >= n): coordinate i under parent position p is at
/// position p * stride + i. The last level of a view of a submatrix of a
/// larger row-major array (BLAS's leading dimension: rows of n values, ld
/// apart), or of a stencil's shifted interior. With stride = n it is the
/// dense level. The positions between rows (the gaps) belong to someone
/// else: kernels never read or write them (an `=` zero-fills component by
/// component where a level is not compact).
/// Capabilities (Table 1): coordinate value iteration, locate, insert.
/// Properties: full, always found, not compact (the gaps); ordered and
/// unique configurable; contiguous (consecutive coordinates of one parent
/// are consecutive positions).

#include <iosfwd>
#include <string_view>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}>
class strided_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "strided";
  static constexpr bool is_full = true;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = true;
  static constexpr bool contiguous = true;
  static constexpr bool needs_ancestors = false;
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    const Str L(l), A(a), B(b);
    switch (f) {
      case level_fn::coord_begin: return "0";
      case level_fn::coord_end: return L + "_size";
      case level_fn::coord_access:
      case level_fn::locate: return A == "0" ? B : A + " * " + L + "_stride + " + B;
      default: return L + ".?";
    }
  }

  constexpr strided_level() = default;
  /// Extent n, rows n apart (the dense level).
  constexpr explicit strided_level(I n) noexcept : n_(n), stride_(n) {}
  constexpr explicit strided_level(const level_shape<I>& s) noexcept : strided_level(s.extent) {}
  /// Extent n, parents' positions `stride` apart.
  /// @throws shape_error unless 0 <= n <= stride.
  strided_level(I n, I stride) : n_(n), stride_(stride) {
    if (n < 0 || stride < n)
      throw shape_error(detail::message() << "strided level: extent " << n << " and stride " << stride
                                          << " (needs 0 <= extent <= stride)");
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I stride() const noexcept { return stride_; }

  // Coordinate value iteration.
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> coord_bounds(ancestors<I>) const noexcept { return {I(0), n_}; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept {
    return {ppos * stride_ + i, true};
  }
  // Locate.
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> locate(I ppos, ancestors<I>, I i) const noexcept {
    return {ppos * stride_ + i, true};
  }
  // Insert: the positions of parent_size parents, the last one's row
  // ending the span (no gap after it).
  /// @throws overflow_error if the size does not fit I.
  [[nodiscard]] constexpr I size(I parent_size) const {
    if (parent_size <= 0 || n_ == 0) return I(0);  // no component: an empty span
    return detail::checked_add(detail::checked_mul(I(parent_size - 1), stride_, "strided level size"), n_,
                               "strided level size");
  }
  constexpr void insert_init(I, I) noexcept {}
  constexpr void insert_coord(I, I) noexcept {}
  constexpr void insert_finalize(I, I) noexcept {}

  /// Checks the level for `parent_size` parents; returns the number of positions.
  [[nodiscard]] I validate(I parent_size) const {
    if (n_ < 0 || stride_ < n_)
      throw shape_error(detail::message() << "strided level: extent " << n_ << " and stride " << stride_
                                          << " (needs 0 <= extent <= stride)");
    return size(parent_size);
  }
  [[nodiscard]] static constexpr std::size_t bytes() noexcept { return 0; }

 private:
  I n_ = 0;
  I stride_ = 0;
};

/// Format tag for a strided level.
template <order_options O = order_options{}>
struct strided {
  /// Strided levels hold no arrays: one type whatever the storage.
  template <class I, class S = void>
  using level = strided_level<I, O>;
  static constexpr std::string_view name = "strided";
};

}  // namespace tensorlev
