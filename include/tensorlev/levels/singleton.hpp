#pragma once
/// @file singleton.hpp
/// Singleton level: exactly one child, crd[p], under each parent position p.
/// Capabilities (Table 1): coordinate position iteration, append.
/// Properties: branchless, compact; full, ordered and unique configurable.
/// When a parent position has no entry (ELL padding), pack appends
/// coordinate 0 with a zero value there.

#include <string>
#include <string_view>
#include <vector>

#include "../level_concepts.hpp"
#include "detail_storage.hpp"

namespace tensorlev {

template <index_type I, sparse_options O = sparse_options{}>
class singleton_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "singleton";
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
    return detail::pos_level_code(f, l, a, true, "");
  }


  singleton_level() = default;
  explicit singleton_level(const level_shape<I>& s) : n_(s.extent) {}
  singleton_level(I n, std::vector<I> crd) : n_(n), crd_(std::move(crd)) {}

  [[nodiscard]] I dimension() const noexcept { return n_; }

  [[nodiscard]] bounds<I> pos_bounds(I ppos) const noexcept { return {ppos, I(ppos + 1)}; }
  [[nodiscard]] coordinate<I> pos_access(I p, ancestors<I>) const noexcept { return {crd_[p], true}; }

  void append_init(I, I size) {
    crd_.clear();
    crd_.reserve(static_cast<std::size_t>(size));
  }
  void append_coord(I p, I i) { detail::put_at(crd_, p, i); }
  void append_edges(I, I, I) noexcept {}
  void append_finalize(I, I) noexcept {}

  [[nodiscard]] const std::vector<I>& crd() const noexcept { return crd_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return detail::vector_bytes(crd_); }

 private:
  I n_ = 0;
  std::vector<I> crd_;
};

/// Format tag for a singleton level.
template <sparse_options O = sparse_options{}>
struct singleton {
  template <class I>
  using level = singleton_level<I, O>;
  static constexpr std::string_view name = "singleton";
};

}  // namespace tensorlev
