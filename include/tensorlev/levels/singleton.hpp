#pragma once
/// @file singleton.hpp
/// Singleton level: exactly one child, crd[p], under each parent position p.
/// Capabilities (Table 1): coordinate position iteration, append.
/// Properties: branchless, compact; full, ordered and unique configurable.
/// When a parent position has no entry (ELL padding), pack appends
/// coordinate 0 with a zero value there.

#include <iosfwd>
#include <string_view>
#include <tuple>
#include <vector>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, sparse_options O = sparse_options{}, storage_policy S = owning<>>
class singleton_level {
 public:
  using index_type = I;
  using storage = S;
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type
  using crd_array = typename S::template array<crd_type>;
  static constexpr std::string_view name = "singleton";
  /// Its pattern is its extent and its arrays (numeric_plan).
  static constexpr bool pattern_in_arrays = true;
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = true;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  /// Its level functions ignore the ancestors' coordinates (the generator
  /// need not keep them for it).
  static constexpr bool needs_ancestors = false;
  /// Loop-nest printer text (level_concepts.hpp, level_fn).
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    return detail::pos_level_code<Str>(f, l, a, true, "");
  }


  singleton_level() = default;
  explicit singleton_level(const level_shape<I>& s) : n_(s.extent) {
    detail::check_fits<crd_type>(s.extent, "singleton level: extent");
  }
  /// Adopts (or, for borrowed storage, views) a coordinate array.
  singleton_level(I n, crd_array crd) : n_(n), crd_(std::move(crd)) {}
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  singleton_level(const singleton_level<I, O, S2>& o, const To& to)
      : n_(o.dimension()), crd_(to.template make<crd_array>(o.crd())) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(crd_[p]), true};
  }

  // Append (growable storage only).
  void append_init(I, I size)
    requires S::growable
  {
    crd_.clear();
    crd_.reserve(static_cast<std::size_t>(size));
  }
  void append_init_sized(I, I size)
    requires S::growable
  {
    crd_.assign(static_cast<std::size_t>(size), crd_type(0));
  }
  void append_coord(I p, I i)
    requires S::growable
  {
    detail::put_at(crd_, p, static_cast<crd_type>(i));
  }
  void append_coord_at(I p, I i) noexcept
    requires S::growable
  {
    crd_[static_cast<std::size_t>(p)] = static_cast<crd_type>(i);
  }
  void append_edges(I, I, I) noexcept
    requires S::growable
  {}
  void append_finalize(I, I size)
    requires S::growable
  {
    if (crd_.size() > static_cast<std::size_t>(size)) crd_.resize(static_cast<std::size_t>(size));
  }

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (crd_.size() != static_cast<std::size_t>(parent_size))
      throw shape_error(detail::message() << "singleton level: the coordinate array has " << crd_.size()
                                          << " entries, expected one per parent position (" << parent_size << ")");
    for (std::size_t p = 0; p < crd_.size(); ++p) detail::validate_segment(crd_, p, p + 1, n_, false, false, "singleton level", p);
    return parent_size;
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE const crd_array& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(crd_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(crd_); }

 private:
  I n_ = 0;
  crd_array crd_;
};

/// Format tag for a singleton level.
template <sparse_options O = sparse_options{}>
struct singleton {
  template <class I, class S = owning<>>
  using level = singleton_level<I, O, S>;
  static constexpr std::string_view name = "singleton";
};

}  // namespace tensorlev
