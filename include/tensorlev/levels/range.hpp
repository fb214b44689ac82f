#pragma once
/// @file range.hpp
/// Range level (DIA rows): under parent coordinate d (a diagonal) it encodes
/// the coordinates [max(0, -offset[d]), min(N, M - offset[d])), at positions
/// ppos * N + i.
/// Capabilities (Table 1): coordinate value iteration. No assembly: its
/// positions follow from N, M and the offsets (implicit_size).
/// Properties: ordered and unique configurable; not full, not compact.

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "../error.hpp"
#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}>
class range_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "range";
  static constexpr bool is_full = false;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = true;
  /// The level 1 above must carry the format's diagonal map (checked by format).
  static constexpr std::size_t diagonal_above = 1;

  range_level() = default;
  /// @pre s.offsets holds the diagonal offsets (a `diagonal` level map above).
  explicit range_level(const level_shape<I>& s)
      : n_(s.extent), m_(s.sibling_extent), offsets_(s.offsets.begin(), s.offsets.end()) {}
  range_level(I n, I m, std::vector<I> offsets) : n_(n), m_(m), offsets_(std::move(offsets)) {}

  [[nodiscard]] I dimension() const noexcept { return n_; }

  /// @pre anc.depth() >= 1 and anc.up(1) indexes the offsets.
  [[nodiscard]] bounds<I> coord_bounds(ancestors<I> anc) const noexcept {
    const I off = offsets_[anc.up(1)];
    return {std::max<I>(0, -off), std::min<I>(n_, m_ - off)};
  }
  [[nodiscard]] located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept { return {ppos * n_ + i, true}; }

  [[nodiscard]] I implicit_size(I parent_size) const { return detail::checked_mul(parent_size, n_, "range level size"); }

  [[nodiscard]] const std::vector<I>& offsets() const noexcept { return offsets_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(offsets_); }

 private:
  I n_ = 0;
  I m_ = 0;
  std::vector<I> offsets_;
};

/// Format tag for a range level.
template <order_options O = order_options{}>
struct range {
  template <class I>
  using level = range_level<I, O>;
  static constexpr std::string_view name = "range";
};

}  // namespace tensorlev
