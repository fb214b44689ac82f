#pragma once
/// @file permuted.hpp
/// Permuted dense level: the lanes of a block (a block_inner map), dense
/// like dense_level, whose blocked coordinate goes through a stored
/// permutation of its dimension: the rows of a SELL-C-sigma slice. Where
/// dense lanes of block b give row b * B + l, these give row
/// perm[b * B + l] (rows at or past the permutation's length map to
/// themselves: a last block's padding). `pack` fills the permutation by
/// sorting the rows by their number of entries, longest first, within
/// windows of Sigma rows (stable), so that a slice holds rows of similar
/// length and pads little (docs/design.md, "SELL-C-sigma").
/// Capabilities (Table 1): coordinate value iteration, locate, insert, as
/// dense; and the coordinate remap (`remapping_level`, level_concepts.hpp).
/// Properties: full, ordered, unique, compact (its positions; the rows
/// its blocks hold are in the permutation's order).

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <tuple>
#include <vector>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "dense.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, std::size_t Sigma, storage_policy S = owning<>>
class permuted_dense_level {
  static_assert(Sigma > 0, "tensorlev::permuted_dense: the sorting window Sigma must be at least 1 row");

 public:
  using index_type = I;
  using storage = S;
  using crd_type = typename S::template crd_type<I>;  ///< stored row type
  using crd_array = typename S::template array<crd_type>;
  static constexpr std::string_view name = "permuted dense";
  static constexpr bool is_full = true;
  static constexpr bool is_ordered = true;
  static constexpr bool is_unique = true;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool contiguous = true;
  static constexpr bool needs_ancestors = false;
  /// The blocked coordinate goes through remap() (remapping_level).
  static constexpr bool remaps = true;
  /// pack sorts rows by length within windows of this many rows.
  static constexpr std::size_t window = Sigma;
  /// Loop-nest printer text: a dense level's (the remap is printed where
  /// the generator computes the row, codegen/print.hpp).
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
    return dense_level<I>::template code<Str>(f, l, a, b);
  }

  permuted_dense_level() = default;
  explicit permuted_dense_level(const level_shape<I>& s) : n_(s.extent) {}
  /// Adopts (or, for borrowed storage, views) a permutation of the rows
  /// [0, perm.size()): block lanes of extent n.
  permuted_dense_level(I n, crd_array perm) : n_(n), rows_(static_cast<I>(perm.size())), perm_(std::move(perm)) {
    detail::check_fits<I>(static_cast<long long>(perm_.size()), "permuted dense level: permutation length");
  }
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  permuted_dense_level(const permuted_dense_level<I, Sigma, S2>& o, const To& to)
      : n_(o.dimension()), rows_(o.rows()), perm_(to.template make<crd_array>(o.permutation())) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bounds<I> coord_bounds(ancestors<I>) const noexcept { return {I(0), n_}; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> coord_access(I ppos, ancestors<I>, I i) const noexcept {
    return {ppos * n_ + i, true};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr located<I> locate(I ppos, ancestors<I>, I i) const noexcept {
    return {ppos * n_ + i, true};
  }
  /// @throws overflow_error if parent_size * n does not fit I.
  [[nodiscard]] constexpr I size(I parent_size) const { return detail::checked_mul(parent_size, n_, "permuted dense level size"); }
  constexpr void insert_init(I, I) noexcept {}
  constexpr void insert_coord(I, I) noexcept {}
  constexpr void insert_finalize(I, I) noexcept {}

  /// The row that blocked coordinate r (block * B + lane) stands for.
  [[nodiscard]] TENSORLEV_HOST_DEVICE I remap(I r) const noexcept {
    return r < rows_ ? static_cast<I>(perm_[static_cast<std::size_t>(r)]) : r;
  }
  /// remap(r) for r < rows(), without the check.
  [[nodiscard]] TENSORLEV_HOST_DEVICE I remap_inside(I r) const noexcept {
    return static_cast<I>(perm_[static_cast<std::size_t>(r)]);
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE I rows() const noexcept { return rows_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE const crd_array& permutation() const noexcept { return perm_; }
  /// pack's permutation (growable storage only).
  void set_permutation(std::vector<I> perm)
    requires S::growable
  {
    detail::check_fits<I>(static_cast<long long>(perm.size()), "permuted dense level: permutation length");
    // Every entry is a row below perm.size(): the largest must fit the stored type.
    if (!perm.empty()) detail::check_fits<crd_type>(static_cast<I>(perm.size() - 1), "permuted dense level: row");
    rows_ = static_cast<I>(perm.size());
    perm_.clear();
    perm_.reserve(perm.size());
    for (const I r : perm) perm_.push_back(static_cast<crd_type>(r));
  }

  /// Checks the level for `parent_size` parents (as dense); returns the
  /// number of positions. The permutation is checked by validate_remap.
  [[nodiscard]] I validate(I parent_size) const {
    if (n_ < 0) throw shape_error(detail::message() << "permuted dense level: negative extent " << n_);
    return size(parent_size);
  }
  /// Checks that the permutation is one of the `rows` rows of the
  /// dimension it permutes: that many entries, each in [0, rows), none
  /// twice. @throws shape_error naming the first violation.
  void validate_remap(I rows) const {
    if (perm_.size() != static_cast<std::size_t>(rows))
      throw shape_error(detail::message() << "permuted dense level: the permutation has " << perm_.size()
                                          << " entries, expected one per row (" << rows << ")");
    std::vector<bool> seen(static_cast<std::size_t>(rows), false);
    for (std::size_t r = 0; r < perm_.size(); ++r) {
      const long long v = static_cast<long long>(perm_.data()[r]);
      if (v < 0 || v >= static_cast<long long>(rows))
        throw shape_error(detail::message() << "permuted dense level: permutation entry " << r << " is " << v
                                            << ", outside [0, " << rows << ")");
      if (seen[static_cast<std::size_t>(v)])
        throw shape_error(detail::message() << "permuted dense level: permutation entry " << r << " repeats row " << v);
      seen[static_cast<std::size_t>(v)] = true;
    }
  }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(perm_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(perm_); }

 private:
  I n_ = 0;
  I rows_ = 0;
  crd_array perm_;
};

/// Format tag for a permuted dense level (the lanes of a block_inner map);
/// pack sorts rows by length within windows of Sigma rows.
template <std::size_t Sigma = 256>
struct permuted_dense {
  template <class I, class S = owning<>>
  using level = permuted_dense_level<I, Sigma, S>;
  static constexpr std::string_view name = "permuted dense";
};

}  // namespace tensorlev
