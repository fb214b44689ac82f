#pragma once
/// @file singleton_aos.hpp
/// Singleton level stored as lane `Lane` of the tuple array owned by the
/// `compressed_aos` level `Lane` levels above it (array-of-structs COO).
/// It owns no array: `link` gives it the head's (shared) tuples once the
/// levels are built; copies share them, so no relinking after a copy.
/// Capabilities and properties: as `singleton` (position iteration, append;
/// branchless, compact; full, ordered, unique configurable).

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

namespace detail {
/// H owns an array of R-tuples that singleton_aos levels below it share.
template <class H, std::size_t R>
concept aos_head_of = requires(H& h) {
  h.tuples().data();
  H::lanes;
} && (H::lanes == R);
}  // namespace detail

template <index_type I, std::size_t R, std::size_t Lane, sparse_options O = sparse_options{},
          storage_policy S = owning<>>
class singleton_aos_level {
  static_assert(Lane >= 1 && Lane < R, "tensorlev::singleton_aos_level: Lane must be in [1, R)");

 public:
  using index_type = I;
  using storage = S;
  using crd_type = typename S::template crd_type<I>;  ///< stored coordinate type
  using tuple_array = typename S::template shared<std::remove_const_t<crd_type>>;
  static constexpr std::string_view name = "singleton-aos";
  static constexpr bool is_full = O.full;
  static constexpr bool is_ordered = O.ordered;
  static constexpr bool is_unique = O.unique;
  static constexpr bool is_branchless = true;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;
  template <class Str = std::string>
  static Str code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    detail::message lane;  // ".c<Lane>", the lane's field
    lane << ".c" << Lane;
    return detail::pos_level_code<Str>(f, l, a, true, std::string_view(lane.data(), lane.size()));
  }

  singleton_aos_level() = default;
  explicit singleton_aos_level(const level_shape<I>& s) : n_(s.extent) {
    detail::check_fits<crd_type>(s.extent, "singleton-aos level: extent");
  }
  /// Over the head's tuple array (as `link` would set it).
  singleton_aos_level(I n, tuple_array tuples) : n_(n), tuples_(std::move(tuples)), t_(tuples_.data()) {}
  /// The same level over other storage; link then shares the new head's
  /// tuples.
  template <storage_policy S2, class To>
  singleton_aos_level(const singleton_aos_level<I, R, Lane, O, S2>& o, const To&) : n_(o.dimension()) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr I dimension() const noexcept { return n_; }

  /// Shares the tuple array of the compressed_aos level Lane levels above.
  /// Called once the levels are placed (pack, a kernel's assembly, the
  /// tensor's adopting constructor); copies share the array, so need not
  /// call it again.
  template <class Up>
  void link(Up&& up) {
    auto& head = up(std::integral_constant<std::size_t, Lane>{});
    using H = std::remove_cvref_t<decltype(head)>;
    static_assert(detail::aos_head_of<H, R>,
                  "tensorlev::singleton_aos_level: the level Lane levels above must be a compressed_aos level "
                  "with R lanes");
    if constexpr (detail::aos_head_of<H, R>) {
      tuples_ = head.tuples();
      t_ = tuples_.data();
    }
  }

  [[nodiscard]] TENSORLEV_HOST_DEVICE bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {static_cast<I>(t_[static_cast<std::size_t>(p) * R + Lane]), true};
  }

  // Append (growable storage only): writes the lane of the head's tuples.
  void append_init(I, I) noexcept
    requires S::growable
  {}
  void append_coord(I p, I i) noexcept
    requires S::growable
  {
    t_[static_cast<std::size_t>(p) * R + Lane] = static_cast<std::remove_const_t<crd_type>>(i);
  }
  // Sized append: the head sizes the tuples (and is linked again after).
  void append_init_sized(I, I) noexcept
    requires S::growable
  {}
  void append_coord_at(I p, I i) noexcept
    requires S::growable
  {
    t_[static_cast<std::size_t>(p) * R + Lane] = static_cast<std::remove_const_t<crd_type>>(i);
  }
  void append_edges(I, I, I) noexcept
    requires S::growable
  {}
  void append_finalize(I, I) noexcept
    requires S::growable
  {}

  /// Checks the arrays for `parent_size` parent positions (validate(t),
  /// interop views); returns the number of positions.
  /// @throws shape_error naming the first violation.
  [[nodiscard]] I validate(I parent_size) const {
    if (tuples_.size() != static_cast<std::size_t>(parent_size) * R)
      throw shape_error(detail::message() << "singleton-aos level: the tuple array has " << tuples_.size()
                                          << " entries, expected " << R << " per parent position (" << parent_size
                                          << ")");
    const detail::strided<decltype(t_)> lane{t_, R, Lane};
    for (std::size_t p = 0; p < static_cast<std::size_t>(parent_size); ++p)
      detail::validate_segment(lane, p, p + 1, n_, false, false, "singleton-aos level", p);
    return parent_size;
  }

  /// Owns nothing: the head's tuples are counted there.
  [[nodiscard]] static constexpr std::size_t bytes() noexcept { return 0; }

 private:
  using tuple_ptr = decltype(std::declval<tuple_array&>().data());

  I n_ = 0;
  tuple_array tuples_;
  tuple_ptr t_ = nullptr;
};

template <std::size_t R, std::size_t Lane, sparse_options O = sparse_options{}>
struct singleton_aos {
  template <class I, class S = owning<>>
  using level = singleton_aos_level<I, R, Lane, O, S>;
  static constexpr std::string_view name = "singleton-aos";
};

}  // namespace tensorlev
