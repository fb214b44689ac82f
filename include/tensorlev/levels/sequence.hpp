#pragma once
/// @file sequence.hpp
/// Sequence level: the outermost level of a coordinate list held as
/// separate arrays (scipy's and Kokkos Kernels' COO: a row array and a
/// column array). Its one parent, the root, has positions 0 .. size-1, and
/// position p holds coordinate crd[p]. It is a compressed level whose
/// position array would be {0, size}: with no such array it can view a
/// user's row array as it is.
/// Capabilities (Table 1): coordinate position iteration, append (root
/// only). Properties: compact; full, ordered and unique configurable.

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, sparse_options O = sparse_options{.unique = false}, storage_policy S = owning<>>
class sequence_level {
 public:
  using index_type = I;
  using storage = S;
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type
  using crd_array = typename S::template array<crd_type>;
  static constexpr std::string_view name = "sequence";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    const Str L(l), A(a);
    switch (f) {
      case level_fn::pos_begin: return "0";
      case level_fn::pos_end: return L + "_size";
      case level_fn::pos_access: return L + "_crd[" + A + "]";
      default: return L + ".?";
    }
  }

  sequence_level() = default;
  explicit sequence_level(const level_shape<I>& s) : n_(s.extent) {
    detail::check_fits<crd_type>(s.extent, "sequence level: extent");
  }
  /// Adopts (or, for borrowed storage, views) a coordinate array.
  sequence_level(I n, crd_array crd) : n_(n), crd_(std::move(crd)) {}
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  sequence_level(const sequence_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), crd_(to.template make<crd_array>(o.crd())) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  /// @pre ppos == 0 (the level is outermost).
  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I) const noexcept {
    return {I(0), static_cast<I>(crd_.size())};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(crd_[p]), true};
  }

  // Append (growable storage only; the root is its only parent).
  void append_init(I parent_size, I size)
    requires S::growable
  {
    if (parent_size != 1)
      throw shape_error(detail::message() << "sequence level: it must be the outermost level (one parent), not below "
                                          << parent_size << " parent positions");
    crd_.clear();
    crd_.reserve(static_cast<std::size_t>(size));
  }
  void append_coord(I p, I i)
    requires S::growable
  {
    detail::put_at(crd_, p, static_cast<std::remove_const_t<crd_type>>(i));
  }
  void append_edges(I, I, I) noexcept
    requires S::growable
  {}
  void append_finalize(I, I) noexcept
    requires S::growable
  {}

  /// Checks the arrays for `parent_size` parents; returns the number of
  /// positions. @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (parent_size != 1)
      throw shape_error(detail::message() << "sequence level: it must be the outermost level, not below " << parent_size
                                          << " parent positions");
    detail::check_readable<I>(crd_.size(), "sequence level: number of coordinates");
    detail::validate_segment(crd_, 0, crd_.size(), n_, O.ordered, O.unique, "sequence level", 0);
    return static_cast<I>(crd_.size());
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE const crd_array& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(crd_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(crd_); }

 private:
  I n_ = 0;
  crd_array crd_;
};

/// Format tag for a sequence level (non-unique by default, as a COO's rows).
template <sparse_options O = sparse_options{.unique = false}>
struct sequence {
  template <class I, class S = owning<>>
  using level = sequence_level<I, O, S>;
  static constexpr std::string_view name = "sequence";
};

}  // namespace tensorlev
