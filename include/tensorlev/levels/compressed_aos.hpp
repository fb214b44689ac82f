#pragma once
/// @file compressed_aos.hpp
/// Compressed level whose coordinates are the first lane of an array of
/// R-tuples (array-of-structs COO): tuple p holds the coordinates of
/// position p at this level and at the R-1 `singleton_aos` levels below it,
/// which read and write their lanes through `link` (the array is shared, so
/// copies need no relinking).
/// Capabilities and properties: as `compressed` (position iteration,
/// append; compact; full, ordered, unique configurable).

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, std::size_t R, sparse_options O = sparse_options{.unique = false},
          storage_policy S = owning<>>
class compressed_aos_level {
  static_assert(R >= 1, "tensorlev::compressed_aos_level: a tuple needs at least one lane");

 public:
  using index_type = I;
  using storage = S;
  using pos_type = typename S::template pos_type<I>;  ///< stored position type
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type
  using pos_array = typename S::template array<pos_type>;
  /// The tuples, shared with the singleton_aos levels below (copies share
  /// them too; a new assembly starts a new array).
  using tuple_array = typename S::template shared<std::remove_const_t<crd_type>>;
  static constexpr std::string_view name = "compressed-aos";
  static constexpr std::size_t lanes = R;
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    return detail::pos_level_code<Str>(f, l, a, false, ".c0");
  }

  compressed_aos_level() = default;
  explicit compressed_aos_level(const level_shape<I>& s) : n_(s.extent) {
    detail::check_fits<crd_type>(s.extent, "compressed-aos level: extent");
  }
  /// Adopts (or, for borrowed storage, views) the segment bounds and the
  /// tuple array (R coordinates per position).
  compressed_aos_level(I n, pos_array pos, tuple_array tuples)
      : n_(n), pos_(std::move(pos)), tuples_(std::move(tuples)), t_(tuples_.data()) {}
  /// The same level over other storage (see compressed_level).
  template <storage_policy S2, class To>
  compressed_aos_level(const compressed_aos_level<I, R, O, S2>& o, const To& to)
      : n_(o.dimension()),
        pos_(to.template make<pos_array>(o.pos())),
        tuples_(to.template make<tuple_array>(o.tuples())),
        t_(tuples_.data()) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept {
    return {static_cast<I>(pos_[ppos]), static_cast<I>(pos_[ppos + 1])};
  }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(t_[static_cast<std::size_t>(p) * R]), true};
  }

  // Append (growable storage only). Each assembly writes a fresh tuple
  // array, so copies made before keep theirs.
  void append_init(I parent_size, I size)
    requires S::growable
  {
    detail::check_fits<pos_type>(size, "compressed-aos level: number of positions");
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, P(0));
    tuples_.fresh();
    tuples_.vec().reserve(static_cast<std::size_t>(size) * R);
    t_ = tuples_.data();
  }
  void append_init_sized(I parent_size, I size)
    requires S::growable
  {
    detail::check_fits<pos_type>(size, "compressed-aos level: number of positions");
    pos_.assign(static_cast<std::size_t>(parent_size) + 1, P(0));
    tuples_.fresh();
    tuples_.vec().assign(static_cast<std::size_t>(size) * R, C(0));
    t_ = tuples_.data();
  }
  void append_coord(I p, I i)
    requires S::growable
  {
    const std::size_t at = static_cast<std::size_t>(p) * R;
    auto& v = tuples_.vec();
    if (v.size() < at + R) {
      v.resize(at + R, C(0));
      t_ = tuples_.data();
    }
    t_[at] = static_cast<C>(i);
  }
  void append_coord_at(I p, I i) noexcept
    requires S::growable
  {
    t_[static_cast<std::size_t>(p) * R] = static_cast<C>(i);
  }
  void append_edges(I ppos, I pbegin, I pend) noexcept
    requires S::growable
  {
    pos_[ppos + 1] = static_cast<P>(pend - pbegin);
  }
  void append_finalize(I parent_size, I size)
    requires S::growable
  {
    detail::counts_to_bounds(pos_, parent_size);
    auto& v = tuples_.vec();
    if (v.size() > static_cast<std::size_t>(size) * R) {  // sized for more (append_init_sized)
      v.resize(static_cast<std::size_t>(size) * R);
      if (v.capacity() / 2 > v.size()) v.shrink_to_fit();
      t_ = tuples_.data();
    }
  }

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (tuples_.size() % R != 0)
      throw shape_error(detail::message() << "compressed-aos level: the tuple array's " << tuples_.size()
                                          << " entries are not a multiple of " << R << " lanes");
    detail::validate_bounds(pos_, parent_size, tuples_.size() / R, "compressed-aos level");
    const detail::strided<decltype(t_)> lane0{t_, R, 0};
    for (std::size_t p = 0; p < static_cast<std::size_t>(parent_size); ++p)
      detail::validate_segment(lane0, static_cast<std::size_t>(pos_[p]), static_cast<std::size_t>(pos_[p + 1]), n_,
                               O.ordered, O.unique, "compressed-aos level", p);
    return static_cast<I>(tuples_.size() / R);
  }

  /// The tuple array (R coordinates per position), shared with the
  /// singleton_aos levels below.
  [[nodiscard]] TENSORLEV_HOST_DEVICE const tuple_array& tuples() const noexcept { return tuples_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE const pos_array& pos() const noexcept { return pos_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::array_bytes(pos_) + detail::array_bytes(tuples_); }
  /// The arrays, for a copy into another storage (convert_storage).
  [[nodiscard]] auto arrays() const noexcept { return std::tie(pos_, tuples_); }

 private:
  using P = std::remove_const_t<pos_type>;
  using C = std::remove_const_t<crd_type>;
  using tuple_ptr = decltype(std::declval<tuple_array&>().data());

  I n_ = 0;
  pos_array pos_;
  tuple_array tuples_;
  tuple_ptr t_ = nullptr;  // tuples_.data(): copies share the buffer, so it stays valid
};

/// Format tag: the head of an array-of-structs COO with R coordinates per
/// tuple (non-unique by default).
template <std::size_t R, sparse_options O = sparse_options{.unique = false}>
struct compressed_aos {
  template <class I, class S = owning<>>
  using level = compressed_aos_level<I, R, O, S>;
  static constexpr std::string_view name = "compressed-aos";
};

}  // namespace tensorlev
