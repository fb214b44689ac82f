#pragma once
/// @file hashed.hpp
/// Hashed level: the children of parent position p live in the bucket
/// segment crd[p*W .. (p+1)*W), empty buckets hold -1; linear probing.
/// Capabilities (Table 1): coordinate position iteration, locate, insert.
/// Properties: full and unique configurable; never ordered, not compact.
/// `pack` picks W as the smallest power of two >= 2 * (most children of one
/// parent), at least 1.

#include <algorithm>
#include <bit>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../error.hpp"
#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, hash_options O = hash_options{}>
class hashed_level {
 public:
  using index_type = I;
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
  static std::string code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    const std::string L(l), A(a), B(b);
    switch (f) {
      case level_fn::pos_begin: return A + " * " + L + "_W";
      case level_fn::pos_end: return "(" + A + " + 1) * " + L + "_W";
      case level_fn::pos_access: return L + "_crd[" + A + "]";
      case level_fn::locate: return "hash_probe(" + L + "_crd, " + A + " * " + L + "_W, " + B + ")";
      default: return L + ".?";
    }
  }

  hashed_level() = default;
  explicit hashed_level(const level_shape<I>& s)
      : n_(s.extent),
        w_(checked_index<I>(static_cast<long long>(std::bit_ceil(std::max<std::size_t>(1, 2 * s.max_children))),
                            "hashed level: buckets per parent")) {}
  /// Adopts a bucket array. @throws error unless w is a power of two and
  /// crd.size() a multiple of w.
  hashed_level(I n, I w, std::vector<I> crd) : n_(n), w_(w), crd_(std::move(crd)) {
    if (w_ <= 0 || !std::has_single_bit(static_cast<std::make_unsigned_t<I>>(w_)) ||
        crd_.size() % static_cast<std::size_t>(w_) != 0)
      throw error("hashed level: the bucket count per parent must be a power of two dividing the array size");
  }

  [[nodiscard]] I dimension() const noexcept { return n_; }
  [[nodiscard]] I buckets() const noexcept { return w_; }

  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {ppos * w_, (ppos + 1) * w_}; }
  [[nodiscard]] coordinate<I> pos_access(I p, ancestors<I>) const noexcept { return {crd_[p], crd_[p] != I(-1)}; }

  /// Position of coordinate i under ppos (found), or of the empty bucket
  /// where it would go (not found); if the segment is full and i is absent,
  /// a position whose bucket holds another coordinate (not found).
  [[nodiscard]] located<I> locate(I ppos, ancestors<I>, I i) const noexcept {
    const I base = ppos * w_;
    const I mask = w_ - 1;
    I k = i & mask;
    for (I tries = 0; tries < w_; ++tries) {
      const I c = crd_[base + k];
      if (c == i) return {base + k, true};
      if (c == I(-1)) return {base + k, false};
      k = (k + 1) & mask;
    }
    return {base + k, false};
  }

  [[nodiscard]] I size(I parent_size) const { return detail::checked_mul(parent_size, w_, "hashed level size"); }
  void insert_init(I, I size) { crd_.assign(static_cast<std::size_t>(size), I(-1)); }
  /// @throws error if position p already holds another coordinate (segment full).
  void insert_coord(I p, I i) {
    if (crd_[p] != I(-1) && crd_[p] != i)
      throw error("hashed level: bucket segment full, cannot insert coordinate " + std::to_string(i));
    crd_[p] = i;
  }
  void insert_finalize(I, I) noexcept {}

  [[nodiscard]] const std::vector<I>& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(crd_); }

 private:
  I n_ = 0;
  I w_ = 1;
  std::vector<I> crd_;
};

/// Format tag for a hashed level.
template <hash_options O = hash_options{}>
struct hashed {
  template <class I>
  using level = hashed_level<I, O>;
  static constexpr std::string_view name = "hashed";
};

}  // namespace tensorlev
