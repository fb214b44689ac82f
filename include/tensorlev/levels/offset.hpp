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
#include <vector>

#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, order_options O = order_options{}>
class offset_level {
 public:
  using index_type = I;
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
  explicit offset_level(const level_shape<I>& s) : n_(s.extent), own_(s.offsets.begin(), s.offsets.end()) {}
  offset_level(I n, std::vector<I> offsets) : n_(n), own_(std::move(offsets)) {}
  offset_level(const offset_level& o) : n_(o.n_), own_(o.own_), shared_(o.shared_) {}
  offset_level(offset_level&& o) noexcept : n_(o.n_), own_(std::move(o.own_)), shared_(o.shared_) {}
  offset_level& operator=(const offset_level& o) {
    n_ = o.n_, own_ = o.own_, shared_ = o.shared_;
    return *this;
  }
  offset_level& operator=(offset_level&& o) noexcept {
    n_ = o.n_, own_ = std::move(o.own_), shared_ = o.shared_;
    return *this;
  }
  ~offset_level() = default;

  /// Shares the parent level's offsets when it has them (a range level);
  /// the tensor calls this whenever its levels are placed.
  template <class Up>
  void link(Up&& up) {
    auto& parent = up(std::integral_constant<std::size_t, 1>{});
    if constexpr (requires { parent.offsets().data(); }) {
      shared_ = parent.offsets().data();
      std::vector<I>().swap(own_);
    }
  }

  [[nodiscard]] I dimension() const noexcept { return n_; }

  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  /// @pre anc.depth() >= 2 and anc.up(2) indexes the offsets.
  [[nodiscard]] coordinate<I> pos_access(I, ancestors<I> anc) const noexcept {
    return {I(anc.up(1) + data()[anc.up(2)]), true};
  }

  [[nodiscard]] I implicit_size(I parent_size) const noexcept { return parent_size; }

  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(own_); }

 private:
  [[nodiscard]] const I* data() const noexcept { return shared_ ? shared_ : own_.data(); }

  I n_ = 0;
  std::vector<I> own_;         // used when no range level above shares its offsets
  const I* shared_ = nullptr;  // the range level's offsets
};

/// Format tag for an offset level.
template <order_options O = order_options{}>
struct offset {
  template <class I>
  using level = offset_level<I, O>;
  static constexpr std::string_view name = "offset";
};

}  // namespace tensorlev
