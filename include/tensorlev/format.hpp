#pragma once
/// @file format.hpp
/// A format composes one level per stored dimension with a level map that
/// says which coordinate of the logical tensor each level encodes.
///
///     using my_csc = format<levels<dense<>, compressed<>>, modes<1, 0>>;
///     to_string<my_csc>()  ->  "(dense d1, compressed d0)"
///
/// Level maps (one per level):
///  - `mode<d>`: the level encodes logical dimension d;
///  - `block_outer<d, B>` / `block_inner<d, B>`: coordinate x_d / B and
///    x_d % B (BCSR, CSB);
///  - `diagonal<r, c>`: the index of the diagonal x_c - x_r among the
///    tensor's sorted distinct diagonals (DIA); found from the data by pack;
///  - `slot<g>`: the rank of an entry among the entries sharing coordinate
///    x_g (ELL); its extent is the longest such group.
/// Derived maps (diagonal, slot) add a stored dimension that is not a
/// logical one; every logical dimension must be encoded by one `mode` or by
/// one `block_outer`/`block_inner` pair.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>  // std::string, for to_string's declaration (print.hpp defines it)
#include <string_view>
#include <tuple>
#include <type_traits>

#include "level_concepts.hpp"
#include "storage.hpp"
#include "levels/compressed.hpp"
#include "levels/dense.hpp"
#include "levels/hashed.hpp"
#include "levels/offset.hpp"
#include "levels/permuted.hpp"
#include "levels/range.hpp"
#include "levels/singleton.hpp"
#include "levels/strided.hpp"

namespace tensorlev {

/// The list of level tags of a format, outermost first.
template <class... L>
struct levels {};

/// Level maps. See the file comment.
template <std::size_t D>
struct mode {};
template <std::size_t D, std::size_t B>
struct block_outer {};
template <std::size_t D, std::size_t B>
struct block_inner {};
template <std::size_t Row, std::size_t Col>
struct diagonal {};
template <std::size_t Group>
struct slot {};

/// The level map of a format: one map per level.
template <class... M>
struct level_map {};

/// Shorthand for a mode ordering: `modes<1, 0>` is
/// `level_map<mode<1>, mode<0>>`.
template <std::size_t... D>
using modes = level_map<mode<D>...>;

enum class map_kind { mode, block_outer, block_inner, diagonal, slot };

/// What generic code may ask of a level map.
template <class M>
struct map_traits {
  static_assert(sizeof(M) == 0,
                "tensorlev: a level map must be mode<d>, block_outer<d,B>, block_inner<d,B>, diagonal<r,c> or slot<g>");
};
template <std::size_t D>
struct map_traits<mode<D>> {
  static constexpr map_kind kind = map_kind::mode;
  static constexpr std::size_t dim = D, dim2 = D, block = 1;
};
template <std::size_t D, std::size_t B>
struct map_traits<block_outer<D, B>> {
  static_assert(B > 0, "tensorlev: block size must be positive");
  static constexpr map_kind kind = map_kind::block_outer;
  static constexpr std::size_t dim = D, dim2 = D, block = B;
};
template <std::size_t D, std::size_t B>
struct map_traits<block_inner<D, B>> {
  static_assert(B > 0, "tensorlev: block size must be positive");
  static constexpr map_kind kind = map_kind::block_inner;
  static constexpr std::size_t dim = D, dim2 = D, block = B;
};
template <std::size_t R, std::size_t C>
struct map_traits<diagonal<R, C>> {
  static constexpr map_kind kind = map_kind::diagonal;
  static constexpr std::size_t dim = R, dim2 = C, block = 1;
};
template <std::size_t G>
struct map_traits<slot<G>> {
  static constexpr map_kind kind = map_kind::slot;
  static constexpr std::size_t dim = G, dim2 = G, block = 1;
};

/// Static description of one level of a format.
struct level_map_info {
  map_kind kind;
  std::size_t dim;    ///< logical dimension (row dimension for diagonal, group for slot)
  std::size_t dim2;   ///< column dimension for diagonal, else dim
  std::size_t block;  ///< block size for block maps, else 1
};

namespace detail {
template <std::size_t N>
struct identity_map_impl {
  template <std::size_t... D>
  static auto make(std::index_sequence<D...>) -> level_map<mode<D>...>;
  using type = decltype(make(std::make_index_sequence<N>{}));
};

template <class... M>
constexpr auto map_infos(level_map<M...>) {
  return std::array<level_map_info, sizeof...(M)>{
      level_map_info{map_traits<M>::kind, map_traits<M>::dim, map_traits<M>::dim2, map_traits<M>::block}...};
}

// Order of the logical tensor: one past the largest dimension a map names.
template <std::size_t N>
constexpr std::size_t logical_order(const std::array<level_map_info, N>& infos) {
  std::size_t order = 0;
  for (const auto& m : infos) {
    if (m.dim + 1 > order) order = m.dim + 1;
    if (m.dim2 + 1 > order) order = m.dim2 + 1;
  }
  return order;
}

// 0: valid; otherwise 1 + the first logical dimension that is not encoded
// exactly once (mode, or a block_outer/block_inner pair of the same size).
template <std::size_t N>
constexpr std::size_t first_bad_dimension(const std::array<level_map_info, N>& infos) {
  const std::size_t order = logical_order(infos);
  for (std::size_t d = 0; d < order; ++d) {
    std::size_t modes_seen = 0, outer = 0, inner = 0, outer_b = 0, inner_b = 0;
    for (const auto& m : infos) {
      if (m.dim != d) continue;
      if (m.kind == map_kind::mode) ++modes_seen;
      if (m.kind == map_kind::block_outer) ++outer, outer_b = m.block;
      if (m.kind == map_kind::block_inner) ++inner, inner_b = m.block;
    }
    const bool ok = (modes_seen == 1 && outer == 0 && inner == 0) ||
                    (modes_seen == 0 && outer == 1 && inner == 1 && outer_b == inner_b);
    if (!ok) return d + 1;
  }
  return 0;
}
// Levels whose coordinates depend on a diagonal offset table (range,
// offset) declare `diagonal_above = d`: the level d above them must carry
// the format's diagonal<r,c> map.
template <class Lvl>
constexpr std::size_t diagonal_above() {
  if constexpr (requires { Lvl::diagonal_above; })
    return Lvl::diagonal_above;
  else
    return 0;
}

// A level may constrain the maps of the levels around it: it declares
// `template <class Maps> static constexpr bool fits_maps(const Maps& m,
// std::size_t k)`, true when, at level k, the format's map infos m suit it
// (block_offset: block_outer, diagonal and block_inner right above it).
template <class Lvl, std::size_t K, std::size_t N>
constexpr bool level_fits_maps(const std::array<level_map_info, N>& infos) {
  if constexpr (requires { Lvl::fits_maps(infos, K); })
    return Lvl::fits_maps(infos, K);
  else
    return true;
}
template <class LT, std::size_t N, std::size_t... K>
constexpr bool levels_fit_maps(const std::array<level_map_info, N>& infos, std::index_sequence<K...>) {
  return (level_fits_maps<std::tuple_element_t<K, LT>, K>(infos) && ...);
}

template <std::size_t N>
constexpr bool diagonal_requirements_met(const std::array<level_map_info, N>& infos,
                                         const std::array<std::size_t, N>& above) {
  std::size_t diagonals = 0;
  for (const auto& m : infos) diagonals += m.kind == map_kind::diagonal;
  if (diagonals > 1) return false;
  for (std::size_t k = 0; k < N; ++k)
    if (above[k] > 0 && (k < above[k] || infos[k - above[k]].kind != map_kind::diagonal)) return false;
  return true;
}
}  // namespace detail

/// The identity level map for N levels: level k encodes dimension k.
template <std::size_t N>
using identity_map = typename detail::identity_map_impl<N>::type;

namespace detail {
// The level type of tag T for index type I and storage S: T::level<I, S>;
// a tag of one's own that takes only I (`template <class I> using level`)
// serves owning storage.
template <class T, class I, class S>
struct level_of_impl {
  static_assert(std::is_same_v<S, owning<>>,
                "tensorlev::format: this level tag's `level` takes only an index type, so it has owning storage "
                "only; give it a storage parameter (template <class I, class S = tensorlev::owning<>> using level "
                "= my_level<I, S>) to use it with other storage");
  using type = typename T::template level<I>;
};
template <class T, class I, class S>
  requires requires { typename T::template level<I, S>; }
struct level_of_impl<T, I, S> {
  using type = typename T::template level<I, S>;
};
template <class T, class I, class S>
using level_of = typename level_of_impl<T, I, S>::type;
// Whether a level type declares that it remaps its blocked coordinate
// (permuted_dense; the full check is remapping_level).
template <class Lvl>
constexpr bool declares_remap() {
  if constexpr (requires { Lvl::remaps; })
    return Lvl::remaps;
  else
    return false;
}
// Whether the remapping levels (permuted_dense) are at most one and carry
// a block_inner map.
template <std::size_t N>
constexpr bool remaps_on_block_inner(const std::array<level_map_info, N>& infos, const std::array<bool, N>& remaps) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < N; ++k) {
    if (remaps[k] && infos[k].kind != map_kind::block_inner) return false;
    n += remaps[k] ? 1 : 0;
  }
  return n <= 1;
}
}  // namespace detail

/// A tensor format: level tags (outermost first) and a level map.
/// @tparam Levels `levels<L...>` of level tags (dense<>, compressed<>, ...)
/// @tparam Map    `level_map<M...>` or `modes<...>`; identity by default
template <class Levels, class Map = void>
struct format;

template <class... L, class Map>
struct format<levels<L...>, Map> {
  static_assert(sizeof...(L) > 0, "tensorlev::format: a format needs at least one level");
  using map_type = std::conditional_t<std::is_void_v<Map>, identity_map<sizeof...(L)>, Map>;
  using level_tags = std::tuple<L...>;

  static constexpr std::size_t num_levels = sizeof...(L);
  static constexpr auto maps = detail::map_infos(map_type{});
  static_assert(maps.size() == sizeof...(L),
                "tensorlev::format: the level map must have one entry per level (wrong number of levels)");
  static constexpr std::size_t order = detail::logical_order(maps);
  static_assert(detail::first_bad_dimension(maps) == 0,
                "tensorlev::format: every logical dimension must be encoded by exactly one mode<d> level, or by "
                "one block_outer<d,B> and one block_inner<d,B> level");

  static_assert(detail::diagonal_requirements_met(
                    maps, std::array<std::size_t, sizeof...(L)>{
                              detail::diagonal_above<typename L::template level<std::int32_t>>()...}),
                "tensorlev::format: a format has at most one diagonal<r,c> map, and a range (offset) level needs the "
                "level 1 (2) above it to carry it, as in DIA = format<levels<dense<>, range<>, offset<>>, "
                "level_map<diagonal<0,1>, mode<0>, mode<1>>>");

  static_assert(detail::levels_fit_maps<std::tuple<typename L::template level<std::int32_t>...>>(
                    maps, std::index_sequence_for<L...>{}),
                "tensorlev::format: a level's own requirement on the level map (its fits_maps) is not met; "
                "see the level's documentation for the maps it needs around it (for example block_offset<B> "
                "computes the column and needs block_outer<0,B>, diagonal<0,1> and block_inner<0,B> above it, "
                "as in blocked_dia<B>)");

  static_assert(detail::remaps_on_block_inner(maps, std::array<bool, sizeof...(L)>{
                                                         detail::declares_remap<typename L::template level<std::int32_t>>()...}),
                "tensorlev::format: a permuted level (permuted_dense) must carry a block_inner<d,B> map, and a format "
                "has at most one: it permutes the rows that a block's lanes stand for, as in SELL-C-sigma = "
                "format<levels<dense<>, compressed<>, permuted_dense<>, singleton<>>, level_map<block_outer<0,C>, "
                "slot<0>, block_inner<0,C>, mode<1>>>");

  /// The level types bound to index type I and storage policy S
  /// (storage.hpp), outermost first.
  template <class I, class S = owning<>>
  using level_tuple = std::tuple<detail::level_of<L, I, S>...>;
  template <std::size_t K, class I, class S = owning<>>
  using level_type = std::tuple_element_t<K, level_tuple<I, S>>;

  static constexpr std::array<std::string_view, sizeof...(L)> level_names{L::name...};
};

/// Whether T is a format (possibly a named one deriving from format<...>).
template <class T>
concept format_type = requires {
  typename T::level_tags;
  typename T::map_type;
  T::num_levels;
  T::order;
};

/// Readable description of a format: level names, their properties where
/// they differ from the defaults, and the logical dimension each encodes.
///   to_string<csr>()  ->  "CSR = (dense d0, compressed d1)"
template <format_type F>
std::string to_string();

}  // namespace tensorlev
