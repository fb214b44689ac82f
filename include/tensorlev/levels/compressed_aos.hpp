#pragma once
/// @file compressed_aos.hpp
/// Compressed level whose coordinates are the first lane of an array of
/// R-tuples (array-of-structs COO): tuple p holds the coordinates of
/// position p at this level and at the R-1 `singleton_aos` levels below it,
/// which read and write their lanes through `link`.
/// Capabilities and properties: as `compressed` (position iteration,
/// append; compact; full, ordered, unique configurable).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, std::size_t R, sparse_options O = sparse_options{.unique = false}>
class compressed_aos_level {
  static_assert(R >= 1, "tensorlev::compressed_aos_level: a tuple needs at least one lane");

 public:
  using index_type = I;
  static constexpr std::string_view name = "compressed-aos";
  static constexpr std::size_t lanes = R;
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
    return detail::pos_level_code(f, l, a, false, ".c0");
  }


  compressed_aos_level() = default;
  explicit compressed_aos_level(const level_shape<I>& s) : n_(s.extent) {}

  [[nodiscard]] I dimension() const noexcept { return n_; }

  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {pos_[ppos], pos_[ppos + 1]}; }
  [[nodiscard]] coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {tuples_[static_cast<std::size_t>(p) * R], true};
  }

  void append_init(I parent_size, I size) {
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, I(0));
    tuples_.clear();
    tuples_.reserve(static_cast<std::size_t>(size) * R);
  }
  void append_init_sized(I parent_size, I size) {
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, I(0));
    tuples_.assign(static_cast<std::size_t>(size) * R, I(0));
  }
  void append_coord(I p, I i) {
    const std::size_t at = static_cast<std::size_t>(p) * R;
    if (tuples_.size() < at + R) tuples_.resize(at + R, I(0));
    tuples_[at] = i;
  }
  void append_coord_at(I p, I i) noexcept { tuples_[static_cast<std::size_t>(p) * R] = i; }
  void append_edges(I ppos, I pbegin, I pend) noexcept { pos_[ppos + 1] = pend - pbegin; }
  void append_finalize(I parent_size, I size) {
    detail::counts_to_bounds(pos_, parent_size);
    if (tuples_.size() > static_cast<std::size_t>(size) * R) {  // sized for more (append_init_sized)
      tuples_.resize(static_cast<std::size_t>(size) * R);
      if (tuples_.capacity() / 2 > tuples_.size()) tuples_.shrink_to_fit();
    }
  }

  /// The tuple array (R coordinates per position), shared with the
  /// singleton_aos levels below.
  [[nodiscard]] I* tuple_data() noexcept { return tuples_.data(); }
  [[nodiscard]] const std::vector<I>& tuples() const noexcept { return tuples_; }
  [[nodiscard]] const std::vector<I>& pos() const noexcept { return pos_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(pos_) + detail::vector_bytes(tuples_); }

 private:
  I n_ = 0;
  std::vector<I> pos_;
  std::vector<I> tuples_;
};

/// Format tag: the head of an array-of-structs COO with R coordinates per
/// tuple (non-unique by default).
template <std::size_t R, sparse_options O = sparse_options{.unique = false}>
struct compressed_aos {
  template <class I>
  using level = compressed_aos_level<I, R, O>;
  static constexpr std::string_view name = "compressed-aos";
};

}  // namespace tensorlev
