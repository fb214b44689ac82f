#pragma once
/// @file compressed.hpp
/// Compressed level: the children of parent position p are the coordinates
/// crd[pos[p]] .. crd[pos[p+1]-1].
/// Capabilities (Table 1): coordinate position iteration, append.
/// Properties: compact; full, ordered and unique configurable.

#include <iosfwd>
#include <string_view>
#include <tuple>
#include <vector>

#include "../config.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, sparse_options O = sparse_options{}, storage_policy S = owning<>>
class compressed_level {
 public:
  using index_type = I;
  using storage = S;
  using pos_type = typename S::template pos_type<I>;  ///< stored position type
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type
  using pos_array = typename S::template array<pos_type>;
  using crd_array = typename S::template array<crd_type>;
  static constexpr std::string_view name = "compressed";
  /// Its pattern is its extent and its arrays (numeric_plan compares them
  /// between runs).
  static constexpr bool pattern_in_arrays = true;
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  /// sparse_options::long_ranges (a hint to the code generator).
  static constexpr bool long_ranges = O.long_ranges;
  /// Bounds are the scan of the parents' child counts (scanned_level).
  static constexpr bool scanned_bounds = true;
  /// Its level functions ignore the ancestors' coordinates (the generator
  /// need not keep them for it).
  static constexpr bool needs_ancestors = false;
  /// Loop-nest printer text (level_concepts.hpp, level_fn).
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    return detail::pos_level_code<Str>(f, l, a, false, "");
  }

  compressed_level() = default;
  explicit compressed_level(const level_shape<I>& s) : n_(s.extent) {
    detail::check_fits<crd_type>(s.extent, "compressed level: extent");
  }
  /// Adopts (or, for borrowed storage, views) existing arrays.
  /// @pre pos has parent_size+1 non-decreasing entries starting at 0,
  /// pos.back() == crd.size(), 0 <= crd[p] < n (validate checks it).
  compressed_level(I n, pos_array pos, crd_array crd) : n_(n), pos_(std::move(pos)), crd_(std::move(crd)) {}
  /// The same level over other storage, each array made by
  /// `to.make<Array>(array)` (storage.hpp: borrowing, or copying).
  template <storage_policy S2, class To>
  compressed_level(const compressed_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), pos_(to.template make<pos_array>(o.pos())), crd_(to.template make<crd_array>(o.crd())) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  // Coordinate position iteration.
  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept {
    return {static_cast<I>(pos_[ppos]), static_cast<I>(pos_[ppos + 1])};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(crd_[p]), true};
  }

  // Prefetching (optional level functions, host code; level_concepts.hpp,
  // `prefetching_level`): a loop over this level's positions reads the
  // coordinates some way ahead, and another operand's level located by
  // them fetches its children's bounds, then its first children. Always
  // inlined: GCC drops calls to functions whose only effect is a prefetch.
  /// The coordinate at position p, if p is one of this level's positions.
  [[nodiscard]] TENSORLEV_ALWAYS_INLINE bool ahead_coord(std::size_t p, I& c) const noexcept {
    if (p >= crd_.size()) return false;
    c = static_cast<I>(crd_[p]);
    return true;
  }
  /// Children per parent position, on average (0 without parents).
  [[nodiscard]] double mean_children() const noexcept {
    return pos_.size() > 1 ? static_cast<double>(crd_.size()) / static_cast<double>(pos_.size() - 1) : 0.0;
  }
  /// Prefetches the bounds of parent position ppos's children.
  TENSORLEV_ALWAYS_INLINE void prefetch_bounds(I ppos) const noexcept {
    if (ppos >= I(0) && static_cast<std::size_t>(ppos) + 1 < pos_.size()) TENSORLEV_PREFETCH(pos_.data() + ppos);
  }
  /// Prefetches parent position ppos's first children; returns the first
  /// one's position, or -1 if ppos is not a parent position (nothing read).
  TENSORLEV_ALWAYS_INLINE I prefetch_children(I ppos) const noexcept {
    if (ppos < I(0) || static_cast<std::size_t>(ppos) + 1 >= pos_.size()) return I(-1);
    const auto lo = static_cast<std::size_t>(pos_[ppos]);
    if (lo < crd_.size()) TENSORLEV_PREFETCH(crd_.data() + lo);
    return static_cast<I>(lo);
  }

  // Append (growable storage only).
  void append_init(I parent_size, I size)
    requires S::growable
  {
    detail::check_fits<pos_type>(size, "compressed level: number of positions");
    detail::assign_fresh(pos_, static_cast<std::size_t>(parent_size) + 1, pos_type(0));
    detail::clear_reserve(crd_, static_cast<std::size_t>(size));
  }
  void append_init_sized(I parent_size, I size)
    requires S::growable
  {
    detail::check_fits<pos_type>(size, "compressed level: number of positions");
    detail::assign_fresh(pos_, static_cast<std::size_t>(parent_size) + 1, pos_type(0));
    detail::assign_fresh(crd_, static_cast<std::size_t>(size), crd_type(0));
  }
  void append_coord(I p, I i)
    requires S::growable
  {
    detail::put_at(crd_, p, static_cast<crd_type>(i));
  }
  /// append_coord(p + t, c[t]) for t in [0, n), in one resize.
  void append_coords(I p, const I* c, std::size_t n)
    requires S::growable
  {
    const auto up = static_cast<std::size_t>(p);
    if (up != crd_.size()) {
      for (std::size_t t = 0; t < n; ++t) append_coord(p + static_cast<I>(t), c[t]);
      return;
    }
    if constexpr (requires { crd_.insert(crd_.end(), c, c + n); }) {
      // One copy: a resize would first zero what the copy then writes (a
      // memset per row of a product's output).
      crd_.insert(crd_.end(), c, c + n);
    } else {
      crd_.resize(up + n);
      crd_type* out = crd_.data() + up;
      for (std::size_t t = 0; t < n; ++t) out[t] = static_cast<crd_type>(c[t]);
    }
  }
  void append_coord_at(I p, I i) noexcept
    requires S::growable
  {
    crd_[static_cast<std::size_t>(p)] = static_cast<crd_type>(i);
  }
  void append_edges(I ppos, I pbegin, I pend) noexcept
    requires S::growable
  {
    pos_[ppos + 1] = static_cast<pos_type>(pend - pbegin);
  }
  void append_finalize(I parent_size, I size)
    requires S::growable
  {
    detail::check_fits<pos_type>(size, "compressed level: number of positions");
    detail::counts_to_bounds(pos_, parent_size);
    if (crd_.size() > static_cast<std::size_t>(size)) {  // sized for more (append_init_sized)
      crd_.resize(static_cast<std::size_t>(size));
      if (crd_.capacity() / 2 > crd_.size()) crd_.shrink_to_fit();
    }
  }

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    detail::validate_bounds(pos_, parent_size, crd_.size(), "compressed level");
    for (std::size_t p = 0; p < static_cast<std::size_t>(parent_size); ++p)
      detail::validate_segment(crd_, static_cast<std::size_t>(pos_[p]), static_cast<std::size_t>(pos_[p + 1]), n_,
                               O.ordered, O.unique, "compressed level", p);
    return static_cast<I>(crd_.size());
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE const pos_array& pos() const noexcept { return pos_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE const crd_array& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(pos_) + detail::array_bytes(crd_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(pos_, crd_); }

 private:
  I n_ = 0;
  pos_array pos_;
  crd_array crd_;
};

/// Format tag for a compressed level, e.g. `compressed<>` (CSR columns) or
/// `compressed<sparse_options{.unique = false}>` (COO rows).
template <sparse_options O = sparse_options{}>
struct compressed {
  template <class I, class S = owning<>>
  using level = compressed_level<I, O, S>;
  static constexpr std::string_view name = "compressed";
};

}  // namespace tensorlev
