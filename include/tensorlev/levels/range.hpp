#pragma once
/// @file range.hpp
/// Range level (DIA rows): under parent coordinate d (a diagonal) it encodes
/// the coordinates [max(0, -offset[d]), min(N, M - offset[d])), at positions
/// ppos * N + i.
/// Capabilities (Table 1): coordinate value iteration. No assembly: its
/// positions follow from N, M and the offsets (implicit_size).
/// Properties: ordered and unique configurable; not full, not compact.

#include <cstddef>
#include <string_view>
#include <tuple>
#include <vector>

#include "../detail/message.hpp"
#include "../error.hpp"
#include "../config.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}, storage_policy S = owning<>>
class range_level {
 public:
  using index_type = I;
  using storage = S;
  /// The diagonal offsets (signed, in the index type), shared with the
  /// offset level below.
  using offsets_array = typename S::template shared<I>;
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
    requires S::growable
      : n_(s.extent), m_(s.sibling_extent), offsets_(std::vector<I>(s.offsets.begin(), s.offsets.end())) {}
  /// Adopts (or, for borrowed storage, views) the diagonal offsets.
  range_level(I n, I m, offsets_array offsets) : n_(n), m_(m), offsets_(std::move(offsets)) {}
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  range_level(const range_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), m_(o.sibling_extent()), offsets_(to.template make<offsets_array>(o.offsets())) {}
  /// The extent of the level below (the diagonals' column range).
  [[nodiscard]] constexpr I sibling_extent() const noexcept { return m_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  /// @pre anc.depth() >= 1 and anc.up(1) indexes the offsets.
  TENSORLEV_HD_ANY_STORAGE
  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> coord_bounds(ancestors<I> anc) const noexcept {
    const I off = offsets_[static_cast<std::size_t>(anc.up(1))];
    const I lo = off < 0 ? I(-off) : I(0);
    const I hi = m_ - off < n_ ? I(m_ - off) : n_;
    return {lo, hi};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept { return {ppos * n_ + i, true}; }

  [[nodiscard]] I implicit_size(I parent_size) const { return detail::checked_mul(parent_size, n_, "range level size"); }

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (offsets_.size() != static_cast<std::size_t>(parent_size))
      throw shape_error(detail::message() << "range level: " << offsets_.size() << " diagonal offsets for "
                                          << parent_size << " diagonals");
    return implicit_size(parent_size);
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE const offsets_array& offsets() const noexcept { return offsets_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(offsets_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(offsets_); }

 private:
  I n_ = 0;
  I m_ = 0;
  offsets_array offsets_;
};

/// Format tag for a range level.
template <order_options O = order_options{}>
struct range {
  template <class I, class S = owning<>>
  using level = range_level<I, O, S>;
  static constexpr std::string_view name = "range";
};

}  // namespace tensorlev
