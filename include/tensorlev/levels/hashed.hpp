#pragma once
/// @file hashed.hpp
/// Hashed level: the children of parent position p live in the bucket
/// segment crd[seg[p] .. seg[p+1]), empty buckets hold -1; linear probing
/// within the segment, starting at a mixed hash of the coordinate.
/// Capabilities (Table 1): coordinate position iteration, locate, insert.
/// Properties: full and unique configurable; never ordered, not compact.
/// Each parent has its own width: the smallest power of two >= 2 * (its
/// children), 0 for a parent without children. So the level holds fewer
/// than 4 buckets per child plus parent_size + 1 offsets, however skewed
/// the rows (one global width, set by the longest row, made a matrix with
/// one long row take hundreds of times its CSR size); every segment is at
/// most half full, so locate probes O(1) buckets expected.

#include <bit>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string_view>
#include <type_traits>
#include <tuple>
#include <vector>

#include "../detail/algorithm.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../config.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, hash_options O = hash_options{}, storage_policy S = owning<>>
class hashed_level {
 public:
  using index_type = I;
  using storage = S;
  using pos_type = typename S::template pos_type<I>;  ///< stored segment offset type
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type (an empty bucket holds -1)
  using pos_array = typename S::template array<pos_type>;
  using crd_array = typename S::template array<crd_type>;
  static constexpr std::string_view name = "hashed";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = false;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = false;
  /// Its level functions ignore the ancestors' coordinates (the generator
  /// need not keep them for it).
  static constexpr bool needs_ancestors = false;
  /// Loop-nest printer text (level_concepts.hpp, level_fn).
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    const Str L(l), A(a), B(b);
    switch (f) {
      case level_fn::pos_begin: return L + "_seg[" + A + "]";
      case level_fn::pos_end: return L + "_seg[" + A + " + 1]";
      case level_fn::pos_access: return L + "_crd[" + A + "]";
      case level_fn::locate:
        return "hash_probe(" + L + "_crd, " + L + "_seg[" + A + "], " + L + "_seg[" + A + " + 1], " + B + ")";
      default: return L + ".?";
    }
  }

  hashed_level() = default;
  /// Sized by `s.children` (children per parent position) when given;
  /// otherwise every parent gets the width for `s.max_children` children.
  explicit hashed_level(const level_shape<I>& s)
    requires S::growable
      : n_(s.extent), uniform_(s.max_children == 0 ? I(1) : width_for(s.max_children)) {
    static_assert(std::is_signed_v<C>, "tensorlev::hashed_level: the stored coordinate type must be signed (an "
                                       "empty bucket holds -1)");
    detail::check_fits<C>(s.extent, "hashed level: extent");
    if (s.children.empty()) return;
    seg_.reserve(s.children.size() + 1);
    seg_.push_back(P(0));
    for (const I c : s.children) push_segment(width_for(static_cast<std::size_t>(detail::max_of(c, I(0)))));
  }
  /// Adopts segment offsets and a bucket array. @throws error unless seg
  /// starts at 0, ends at crd.size() and every width seg[p+1] - seg[p] is
  /// 0 or a power of two.
  hashed_level(I n, pos_array seg, crd_array crd) : n_(n), seg_(std::move(seg)), crd_(std::move(crd)) {
    static_assert(std::is_signed_v<C>, "tensorlev::hashed_level: the stored coordinate type must be signed (an "
                                       "empty bucket holds -1)");
    bool ok = !seg_.empty() && seg_[0] == 0 && static_cast<std::size_t>(seg_[seg_.size() - 1]) == crd_.size();
    for (std::size_t p = 1; p < seg_.size() && ok; ++p) {
      ok = seg_[p] >= seg_[p - 1];
      const auto w = static_cast<std::make_unsigned_t<P>>(seg_[p] - seg_[p - 1]);
      ok = ok && (w == 0 || std::has_single_bit(w));
    }
    if (ok && !seg_.empty()) detail::check_readable<I>(seg_[seg_.size() - 1], "hashed level: bucket count");
    if (!ok)
      throw error(
          "hashed level: segment offsets must start at 0, end at the bucket count and grow by 0 or a power of two");
  }
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  hashed_level(const hashed_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), seg_(to.template make<pos_array>(o.seg())), crd_(to.template make<crd_array>(o.crd())) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }
  /// Buckets of parent position ppos.
  [[nodiscard]] TENSORLEV_HOST_DEVICE I buckets(I ppos) const noexcept {
    return static_cast<I>(seg_[ppos + 1] - seg_[ppos]);
  }
  /// Segment offsets: parent p owns buckets seg[p] .. seg[p+1].
  [[nodiscard]] TENSORLEV_HOST_DEVICE const pos_array& seg() const noexcept { return seg_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept {
    return {static_cast<I>(seg_[ppos]), static_cast<I>(seg_[ppos + 1])};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(crd_[p]), crd_[p] != C(-1)};
  }

  /// Position of coordinate i under ppos (found), or of the empty bucket
  /// where it would go (not found); if the segment is full and i is absent,
  /// a position whose bucket holds another coordinate (not found); if the
  /// parent has no buckets, -1 (not found). insert_coord rejects the last two.
  [[nodiscard]] TENSORLEV_HOST_DEVICE located<I> locate(I ppos, ancestors<I>, I i) const noexcept {
    const I base = static_cast<I>(seg_[ppos]);
    const I w = static_cast<I>(seg_[ppos + 1]) - base;
    if (w == 0) return {I(-1), false};
    const I mask = w - 1;
    I k = hash(i) & mask;
    for (I tries = 0; tries < w; ++tries) {
      const I c = static_cast<I>(crd_[base + k]);
      if (c == i) return {base + k, true};
      if (c == I(-1)) return {base + k, false};
      k = (k + 1) & mask;
    }
    return {base + k, false};
  }

  /// @throws error if the level was sized for another number of parents.
  [[nodiscard]] I size(I parent_size) const
    requires S::growable
  {
    if (seg_.empty()) return detail::checked_mul(parent_size, uniform_, "hashed level size");
    if (static_cast<std::size_t>(parent_size) + 1 != seg_.size())
      throw error(detail::message() << "hashed level: sized for " << seg_.size() - 1 << " parent positions, not "
                                    << parent_size);
    return static_cast<I>(seg_.back());
  }
  void insert_init(I parent_size, I size)
    requires S::growable
  {
    if (seg_.empty()) {  // one width for every parent
      seg_.reserve(static_cast<std::size_t>(parent_size) + 1);
      seg_.push_back(P(0));
      for (I p = 0; p < parent_size; ++p) push_segment(uniform_);
    }
    crd_.assign(static_cast<std::size_t>(size), C(-1));
  }
  /// @throws error if position p holds another coordinate (segment full)
  /// or is no bucket (a parent sized for no children).
  void insert_coord(I p, I i)
    requires S::growable
  {
    if (p < 0 || static_cast<std::size_t>(p) >= crd_.size() || (crd_[p] != C(-1) && crd_[p] != static_cast<C>(i)))
      throw error(detail::message() << "hashed level: no free bucket under the parent for coordinate " << i
                                    << " (the level was sized for fewer children)");
    crd_[p] = static_cast<C>(i);
  }
  void insert_finalize(I, I) noexcept
    requires S::growable
  {}

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    detail::validate_bounds(seg_, parent_size, crd_.size(), "hashed level");
    for (std::size_t p = 0; p < static_cast<std::size_t>(parent_size); ++p) {
      const auto w = static_cast<std::size_t>(seg_[p + 1] - seg_[p]);
      if (w != 0 && (w & (w - 1)) != 0)
        throw shape_error(detail::message() << "hashed level: parent position " << p << " has " << w
                                            << " buckets, not 0 or a power of two");
      for (auto q = static_cast<std::size_t>(seg_[p]); q < static_cast<std::size_t>(seg_[p + 1]); ++q) {
        if (crd_[q] == C(-1)) continue;
        detail::validate_segment(crd_, q, q + 1, n_, false, false, "hashed level", p);
        const located<I> at = locate(static_cast<I>(p), ancestors<I>(nullptr, 0), static_cast<I>(crd_[q]));
        if (!at.found || static_cast<std::size_t>(at.pos) != q)
          throw shape_error(detail::message() << "hashed level: coordinate " << crd_[q] << " at position " << q
                                              << " (parent position " << p
                                              << (at.found ? ") repeats one locate finds first"
                                                           : ") is not where locate probes for it"));
      }
    }
    return static_cast<I>(crd_.size());
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE const crd_array& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(seg_) + detail::array_bytes(crd_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(seg_, crd_); }

 private:
  using P = std::remove_const_t<pos_type>;
  using C = std::remove_const_t<crd_type>;
  // Fibonacci hashing with the high half folded in: strided coordinates
  // (every 8th column) still spread over a small segment.
  [[nodiscard]] TENSORLEV_HOST_DEVICE static I hash(I i) noexcept {
    const std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    return static_cast<I>((h ^ (h >> 32)) & static_cast<std::uint64_t>(std::numeric_limits<I>::max()));
  }
  // Buckets for c children: bit_ceil(2c), 0 for none.
  [[nodiscard]] static I width_for(std::size_t c) {
    if (c == 0) return I(0);
    const auto most = static_cast<std::size_t>(std::numeric_limits<I>::max());
    if (c > most / 2 || std::bit_ceil(2 * c) > most)
      throw overflow_error(detail::message()
                           << "hashed level: " << c
                           << " children of one parent need more buckets than the index type can count");
    return static_cast<I>(std::bit_ceil(2 * c));
  }
  void push_segment(I w) {
    I end{};
    if (__builtin_add_overflow(static_cast<I>(seg_.back()), w, &end))
      throw overflow_error(detail::message() << "hashed level: the bucket count does not fit the index type ("
                                             << sizeof(I) * 8 << "-bit)");
    seg_.push_back(detail::to_stored<P>(end, "hashed level: bucket count"));
  }

  I n_ = 0;
  I uniform_ = 1;
  pos_array seg_;  // empty until sized: then parent_size + 1 offsets
  crd_array crd_;
};

/// Format tag for a hashed level.
template <hash_options O = hash_options{}>
struct hashed {
  template <class I, class S = owning<>>
  using level = hashed_level<I, O, S>;
  static constexpr std::string_view name = "hashed";
};

}  // namespace tensorlev
