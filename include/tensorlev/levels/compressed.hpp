#pragma once
/// @file compressed.hpp
/// Compressed level: the children of parent position p are the coordinates
/// crd[pos[p]] .. crd[pos[p+1]-1].
/// Capabilities (Table 1): coordinate position iteration, append.
/// Properties: compact; full, ordered and unique configurable.

#include <string>
#include <string_view>
#include <vector>

#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, sparse_options O = sparse_options{}>
class compressed_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "compressed";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  /// Its level functions ignore the ancestors' coordinates (the generator
  /// need not keep them for it).
  static constexpr bool needs_ancestors = false;
  /// Loop-nest printer text (level_concepts.hpp, level_fn).
  static std::string code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    return detail::pos_level_code(f, l, a, false, "");
  }


  compressed_level() = default;
  explicit compressed_level(const level_shape<I>& s) : n_(s.extent) {}
  /// Adopts existing arrays. @pre pos has parent_size+1 non-decreasing
  /// entries starting at 0, pos.back() == crd.size(), 0 <= crd[p] < n.
  compressed_level(I n, std::vector<I> pos, std::vector<I> crd) : n_(n), pos_(std::move(pos)), crd_(std::move(crd)) {}

  [[nodiscard]] I dimension() const noexcept { return n_; }

  // Coordinate position iteration.
  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {pos_[ppos], pos_[ppos + 1]}; }
  [[nodiscard]] coordinate<I> pos_access(I p, ancestors<I>) const noexcept { return {crd_[p], true}; }

  // Append.
  void append_init(I parent_size, I size) {
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, I(0));
    crd_.clear();
    crd_.reserve(static_cast<std::size_t>(size));
  }
  void append_init_sized(I parent_size, I size) {
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, I(0));
    crd_.assign(static_cast<std::size_t>(size), I(0));
  }
  void append_coord(I p, I i) { detail::put_at(crd_, p, i); }
  void append_coord_at(I p, I i) noexcept { crd_[static_cast<std::size_t>(p)] = i; }
  void append_edges(I ppos, I pbegin, I pend) noexcept { pos_[ppos + 1] = pend - pbegin; }
  void append_finalize(I parent_size, I size) {
    detail::counts_to_bounds(pos_, parent_size);
    if (crd_.size() > static_cast<std::size_t>(size)) {  // sized for more (append_init_sized)
      crd_.resize(static_cast<std::size_t>(size));
      if (crd_.capacity() / 2 > crd_.size()) crd_.shrink_to_fit();
    }
  }

  [[nodiscard]] const std::vector<I>& pos() const noexcept { return pos_; }
  [[nodiscard]] const std::vector<I>& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(pos_) + detail::vector_bytes(crd_); }

 private:
  I n_ = 0;
  std::vector<I> pos_;
  std::vector<I> crd_;
};

/// Format tag for a compressed level, e.g. `compressed<>` (CSR columns) or
/// `compressed<sparse_options{.unique = false}>` (COO rows).
template <sparse_options O = sparse_options{}>
struct compressed {
  template <class I>
  using level = compressed_level<I, O>;
  static constexpr std::string_view name = "compressed";
};

}  // namespace tensorlev
