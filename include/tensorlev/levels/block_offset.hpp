#pragma once
/// @file block_offset.hpp
/// Block offset level (the columns of a row-blocked DIA): under block b,
/// diagonal d and row-in-block r (the three levels above it: block_outer,
/// diagonal, block_inner maps) it has one child, column b * B + r +
/// offset[d], found when that lies in [0, N). It stores nothing but the
/// diagonal offsets; the column of a value is computed, not read.
/// Capabilities (Table 1): coordinate position iteration. No assembly: its
/// positions equal its parents' (implicit_size).
/// Properties: branchless, ordered, unique; not compact (columns outside
/// [0, N) are padding), not always found.
/// With a compressed level of diagonals under each block of B rows, each
/// block stores only the diagonals it touches, and a kernel runs block ->
/// diagonal -> row, so the block's B outputs stay in registers or cache
/// while every diagonal passes (docs/design.md, "Blocked DIA").

#include <cstddef>
#include <iosfwd>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, std::size_t B, storage_policy S = owning<>>
class block_offset_level {
  static_assert(B > 0, "tensorlev::block_offset: the block must hold at least one row");

 public:
  using index_type = I;
  using storage = S;
  using offsets_array = typename S::template shared<I>;
  static constexpr std::string_view name = "block offset";
  static constexpr bool is_full = false;
  static constexpr bool is_ordered = true;
  static constexpr bool is_unique = true;
  static constexpr bool is_branchless = true;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = false;
  /// The level 2 above must carry the format's diagonal map (checked by format).
  static constexpr std::size_t diagonal_above = 2;
  /// The format's checks (format.hpp, `fits_maps`): this level, at level k,
  /// encodes the column (mode<1>) under block_outer<0,B>, diagonal<0,1> and
  /// block_inner<0,B>, the three levels right above it.
  template <class Maps>
  static constexpr bool fits_maps(const Maps& m, std::size_t k) {
    return k >= 3 && m[k].kind == map_kind::mode && m[k].dim == 1 && m[k - 3].kind == map_kind::block_outer &&
           m[k - 3].dim == 0 && m[k - 3].block == B && m[k - 2].kind == map_kind::diagonal && m[k - 2].dim == 0 &&
           m[k - 2].dim2 == 1 && m[k - 1].kind == map_kind::block_inner && m[k - 1].dim == 0 && m[k - 1].block == B;
  }
  block_offset_level() = default;
  explicit block_offset_level(const level_shape<I>& s)
    requires S::growable
      : n_(s.extent), offsets_(std::vector<I>(s.offsets.begin(), s.offsets.end())), data_(offsets_.data()) {}
  /// Adopts (or, for borrowed storage, views) the diagonal offsets: n
  /// columns, offsets[d] = column - row of diagonal d, increasing.
  block_offset_level(I n, offsets_array offsets) : n_(n), offsets_(std::move(offsets)), data_(offsets_.data()) {}
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  block_offset_level(const block_offset_level<I, B, S2>& o, const To& to)
      : n_(o.dimension()), offsets_(to.template make<offsets_array>(o.offsets())), data_(offsets_.data()) {}

  /// Checks the offsets against the levels above, once they are placed (a
  /// tensor's adopting constructor, pack, a kernel's output): one per
  /// diagonal of the level 2 above (a kernel reads them unchecked), and
  /// every column a kernel forms (block * B + row in block + offset, for
  /// every block of the level 3 above) inside I.
  /// @throws shape_error for a wrong count, overflow_error for columns past I.
  template <class Up>
  void link(Up&& up) {
    const auto& diagonals = up(std::integral_constant<std::size_t, 2>{});
    if constexpr (requires { diagonals.dimension(); }) {
      diagonals_ = diagonals.dimension();
      // A kernel reads offset[d] for every diagonal d the level above holds.
      if (offsets_.size() != static_cast<std::size_t>(diagonals_))
        throw shape_error(detail::message() << "block offset level: " << offsets_.size() << " diagonal offsets for "
                                            << diagonals_ << " diagonals");
    }
    const auto& blocks = up(std::integral_constant<std::size_t, 3>{});
    if constexpr (S::host_accessible && requires { blocks.dimension(); }) {
      long long top = 0;
      for (std::size_t d = 0; d < offsets_.size(); ++d)
        top = offsets_[d] > top ? static_cast<long long>(offsets_[d]) : top;
      top += static_cast<long long>(blocks.dimension()) * static_cast<long long>(B);
      if (top > static_cast<long long>(std::numeric_limits<I>::max()))
        throw overflow_error(detail::message() << "block offset level: " << blocks.dimension() << " blocks of " << B
                                               << " rows and diagonal offsets up to " << top - static_cast<long long>(
                                                      blocks.dimension()) * static_cast<long long>(B)
                                               << " form columns past the index type's largest value "
                                               << std::numeric_limits<I>::max());
    }
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  /// anc.up(1) is the row in the block, up(2) the diagonal, up(3) the block.
  /// The sum stays inside I: `link` rejects offsets that would form a
  /// column past I's largest value (a last block's rows may pass the row
  /// count).
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I, ancestors<I> anc) const noexcept {
    const I c = I(anc.up(3) * I(B) + anc.up(1) + data_[anc.up(2)]);
    return {c, c >= 0 && c < n_};
  }

  /// Whether the children under every lane of the block are found: with
  /// anc the lanes level's ancestors (up(1) the diagonal, up(2) the block),
  /// the block's columns on the diagonal, b * B + offset .. + B - 1, lie
  /// inside [0, N) (lanes_found_level).
  [[nodiscard]] TENSORLEV_HOST_DEVICE bool lanes_found(ancestors<I> anc) const noexcept {
    const long long c = static_cast<long long>(anc.up(2)) * static_cast<long long>(B) +
                        static_cast<long long>(data_[anc.up(1)]);
    return c >= 0 && c + static_cast<long long>(B) <= static_cast<long long>(n_);
  }

  [[nodiscard]] I implicit_size(I parent_size) const noexcept { return parent_size; }

  /// Checks the offsets for `parent_size` parent positions (validate(t),
  /// interop views): one per diagonal of the level 2 above, increasing;
  /// returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (diagonals_ >= 0 && offsets_.size() != static_cast<std::size_t>(diagonals_))
      throw shape_error(detail::message() << "block offset level: " << offsets_.size() << " diagonal offsets for "
                                          << diagonals_ << " diagonals");
    for (std::size_t d = 1; d < offsets_.size(); ++d)
      if (!(offsets_[d - 1] < offsets_[d]))
        throw shape_error(detail::message() << "block offset level: the diagonal offsets do not increase at entry " << d
                                            << " (" << offsets_[d - 1] << " then " << offsets_[d] << ")");
    return parent_size;
  }

  /// The diagonal offsets, one per diagonal (column - row).
  [[nodiscard]] TENSORLEV_HOST_DEVICE const offsets_array& offsets() const noexcept { return offsets_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(offsets_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(offsets_); }

 private:
  I n_ = 0;
  offsets_array offsets_;
  const I* data_ = nullptr;  // offsets_.data(): a copy shares the buffer, so it stays valid
  I diagonals_ = -1;         // the diagonals above, once linked (-1: not known)
};

/// Format tag for a block offset level of blocks of B rows.
template <std::size_t B>
struct block_offset {
  template <class I, class S = owning<>>
  using level = block_offset_level<I, B, S>;
  static constexpr std::string_view name = "block offset";
};

}  // namespace tensorlev
