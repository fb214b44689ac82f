#pragma once
/// @file singleton_aos.hpp
/// Singleton level stored as lane `Lane` of the tuple array owned by the
/// `compressed_aos` level `Lane` levels above it (array-of-structs COO).
/// It owns no array: `link` points it at the head's tuples, and the tensor
/// calls `link` whenever its levels are built, copied or moved.
/// Capabilities and properties: as `singleton` (position iteration, append;
/// branchless, compact; full, ordered, unique configurable).

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

namespace detail {
/// H owns an array of R-tuples that singleton_aos levels below it share.
template <class H, std::size_t R>
concept aos_head_of = requires(H& h) {
  h.tuple_data();
  H::lanes;
} && (H::lanes == R);
}  // namespace detail

template <index_type I, std::size_t R, std::size_t Lane, sparse_options O = sparse_options{}>
class singleton_aos_level {
  static_assert(Lane >= 1 && Lane < R, "tensorlev::singleton_aos_level: Lane must be in [1, R)");

 public:
  using index_type = I;
  static constexpr std::string_view name = "singleton-aos";
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
  static std::string code(level_fn f, std::string_view l, std::string_view a, std::string_view) {
    return detail::pos_level_code(f, l, a, true, ".c" + std::to_string(Lane));
  }


  singleton_aos_level() = default;
  explicit singleton_aos_level(const level_shape<I>& s) : n_(s.extent) {}

  [[nodiscard]] I dimension() const noexcept { return n_; }

  /// Points this level at the tuple array of the level `Lane` levels above.
  /// `up(std::integral_constant<std::size_t, n>{})` returns that level.
  template <class Up>
  void link(Up&& up) {
    auto& head = up(std::integral_constant<std::size_t, Lane>{});
    using H = std::remove_cvref_t<decltype(head)>;
    static_assert(detail::aos_head_of<H, R>,
                  "tensorlev::singleton_aos_level: the level Lane levels above must be a compressed_aos level "
                  "with R lanes");
    if constexpr (detail::aos_head_of<H, R>) tuples_ = head.tuple_data();
  }

  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  [[nodiscard]] coordinate<I> pos_access(I p, ancestors<I>) const noexcept {
    return {tuples_[static_cast<std::size_t>(p) * R + Lane], true};
  }

  /// @pre linked, and the head already holds a tuple at position p.
  void append_init(I, I) noexcept {}
  void append_coord(I p, I i) noexcept { tuples_[static_cast<std::size_t>(p) * R + Lane] = i; }
  void append_edges(I, I, I) noexcept {}
  void append_finalize(I, I) noexcept {}

  [[nodiscard]] static constexpr std::size_t bytes() noexcept { return 0; }

 private:
  I n_ = 0;
  I* tuples_ = nullptr;
};

/// Format tag for lane `Lane` of an R-tuple array-of-structs COO.
template <std::size_t R, std::size_t Lane, sparse_options O = sparse_options{}>
struct singleton_aos {
  template <class I>
  using level = singleton_aos_level<I, R, Lane, O>;
  static constexpr std::string_view name = "singleton-aos";
};

}  // namespace tensorlev
