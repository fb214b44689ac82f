#pragma once
/// @file offset.hpp
/// Offset level (DIA columns): one child under each parent, with coordinate
/// parent_coordinate + offset[grandparent_coordinate].
/// Capabilities (Table 1): coordinate position iteration. No assembly: its
/// positions equal its parents' (implicit_size).
/// Properties: branchless; ordered and unique configurable; not compact.
/// Like DIA in seed 003 (Figure 3), it shares the offset array of the range
/// level above it when there is one (`link`), so a DIA tensor stores its
/// offsets once.

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <tuple>
#include <vector>

#include "../config.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}, storage_policy S = owning<>>
class offset_level {
 public:
  using index_type = I;
  using storage = S;
  using offsets_array = typename S::template shared<I>;
  static constexpr std::string_view name = "offset";
  static constexpr bool is_full = false;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = true;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = true;
  /// The level 2 above must carry the format's diagonal map (checked by format).
  static constexpr std::size_t diagonal_above = 2;

  offset_level() = default;
  explicit offset_level(const level_shape<I>& s)
    requires S::growable
      : n_(s.extent), offsets_(std::vector<I>(s.offsets.begin(), s.offsets.end())), data_(offsets_.data()) {}
  /// Adopts (or, for borrowed storage, views) the diagonal offsets.
  offset_level(I n, offsets_array offsets) : n_(n), offsets_(std::move(offsets)), data_(offsets_.data()) {}
  /// The same level over other storage (see compressed_level); link
  /// shares the range level's offsets again.
  template <storage_policy S2, class To>
  offset_level(const offset_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), offsets_(to.template make<offsets_array>(o.offsets())), data_(offsets_.data()) {}

  /// Shares the parent level's offsets when it has them (a range level).
  /// Called once the levels are placed (pack, a kernel's assembly, the
  /// tensor's adopting constructor); copies share the array, so need not
  /// call it again.
  template <class Up>
  void link(Up&& up) {
    auto& parent = up(std::integral_constant<std::size_t, 1>{});
    if constexpr (requires { parent.offsets().data(); } &&
                  std::is_same_v<std::remove_cvref_t<decltype(parent.offsets())>, offsets_array>) {
      offsets_ = parent.offsets();
      data_ = offsets_.data();
      shared_ = true;
    }
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  /// @pre anc.depth() >= 2 and anc.up(2) indexes the offsets.
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I, ancestors<I> anc) const noexcept {
    return {I(anc.up(1) + data_[anc.up(2)]), true};
  }

  [[nodiscard]] I implicit_size(I parent_size) const noexcept { return parent_size; }

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const { return parent_size; }

  /// The offsets it reads (the range level's when linked).
  [[nodiscard]] const offsets_array& offsets() const noexcept { return offsets_; }
  /// Bytes it owns: none when it shares the range level's offsets.
  [[nodiscard]] std::size_t bytes() const noexcept { return shared_ ? 0 : detail::array_bytes(offsets_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(offsets_); }

 private:
  I n_ = 0;
  offsets_array offsets_;  // shared with the range level above once linked
  const I* data_ = nullptr;  // offsets_.data(): a copy shares the buffer, so it stays valid
  bool shared_ = false;
};

template <order_options O = order_options{}>
struct offset {
  template <class I, class S = owning<>>
  using level = offset_level<I, O, S>;
  static constexpr std::string_view name = "offset";
};

}  // namespace tensorlev
