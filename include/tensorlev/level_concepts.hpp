#pragma once
/// @file level_concepts.hpp
/// The level interface of seed 003 (section 3): results of level functions,
/// configurable properties, and one C++20 concept per capability and
/// property. Generic code (pack, iteration, the code generator) may use only
/// what these concepts name, never a concrete level's arrays.
///
/// A level type L (bound to an index type I) provides:
///  - `using index_type = I;` and `I dimension() const` (extent of the
///    coordinates it encodes);
///  - properties `static constexpr bool is_full, is_ordered, is_unique,
///    is_branchless, is_compact`;
///  - at least one iteration capability:
///      coordinate value iteration: `coord_bounds(anc) -> bounds<I>`,
///                                  `coord_access(ppos, anc, i) -> located<I>`
///      coordinate position iteration: `pos_bounds(ppos) -> bounds<I>`,
///                                  `pos_access(p, anc) -> coordinate<I>`
///  - optionally `locate(ppos, anc, i) -> located<I>`;
///  - optionally assembly (Table 3): insert (`size`, `insert_init`,
///    `insert_coord`, `insert_finalize`, needs locate) or append
///    (`append_init`, `append_coord`, `append_edges`, `append_finalize`), or,
///    for levels whose positions follow from their shape alone (range,
///    offset), `implicit_size(parent_size)`;
///  - for `pack`: a constructor from `level_shape<I>`.
/// `anc` is an `ancestors<I>` giving the coordinates of the levels above.

#include <concepts>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "coordinate_list.hpp"

namespace tensorlev {

/// Level functions, named for the loop-nest printer (codegen/print.hpp). A
/// level may define `static std::string code(level_fn f, std::string_view
/// lvl, std::string_view a, std::string_view b)` returning C text for f
/// with its arrays inlined (a: parent position or position, b: coordinate;
/// lvl: the level's name such as "A2"); levels without it print as calls.
/// The library's levels define it as `template <class Str = std::string>
/// static Str code(...)`, text built in Str: their headers then only name
/// std::string (`<iosfwd>`), and `<string>` is needed only where the
/// printer calls `L::code(f, lvl, a, b)`, which finds either form.
enum class level_fn {
  pos_begin,     ///< pos_bounds(a).begin
  pos_end,       ///< pos_bounds(a).end
  pos_access,    ///< pos_access(a).coord
  coord_begin,   ///< coord_bounds().begin
  coord_end,     ///< coord_bounds().end
  coord_access,  ///< coord_access(a, b).pos
  locate         ///< locate(a, b).pos
};

/// Half-open interval [begin, end) of positions or coordinates.
template <class I>
struct bounds {
  I begin;
  I end;
};

/// Result of coord_access and locate: a position, and whether the
/// coordinate exists there.
template <class I>
struct located {
  I pos;
  bool found;
};

/// Result of pos_access: the coordinate at a position, and whether the
/// position holds one (false for unlabeled nodes, e.g. empty hash buckets).
template <class I>
struct coordinate {
  I coord;
  bool found;
};

/// The coordinates of the levels above level k: `up(1)` is the parent's
/// coordinate, `up(2)` the grandparent's. @pre 1 <= n <= depth().
/// The coordinates are stored as ancestor_coord<I>: a 64-bit integer for
/// narrower index types, so that a kernel's store of a coordinate into
/// them cannot alias the level arrays of I that the loop reads (DIA's
/// offsets, blocked DIA's): with I, the compiler reloaded the offset after
/// every store and left the loop scalar (docs/design.md, "Blocked DIA").
template <class I>
using ancestor_coord = std::conditional_t<(sizeof(I) < sizeof(long long)), long long, I>;

template <class I>
class ancestors {
 public:
  constexpr ancestors(const ancestor_coord<I>* coords, std::size_t depth) noexcept : coords_(coords), depth_(depth) {}
  [[nodiscard]] constexpr I up(std::size_t n) const noexcept { return static_cast<I>(coords_[depth_ - n]); }
  [[nodiscard]] constexpr std::size_t depth() const noexcept { return depth_; }

 private:
  const ancestor_coord<I>* coords_;
  std::size_t depth_;
};

/// What `pack` tells a level about the data before assembling it.
template <class I>
struct level_shape {
  I extent = 0;                    ///< size of the coordinate range this level encodes
  I sibling_extent = 0;            ///< extent of the next level (range needs it as M)
  std::size_t max_children = 0;    ///< most children of one parent position in the data
  std::span<const I> offsets = {}; ///< diagonal offsets when the format has a `diagonal` map
  /// children of each parent position in the data (parent_size entries;
  /// given to insertable levels, hashed sizes each parent's buckets by it)
  std::span<const I> children = {};
};

/// Options for levels whose ordered/unique properties are configurable
/// (dense, range, offset).
struct order_options {
  bool ordered = true;
  bool unique = true;
};
/// Options for compressed and singleton levels (Table 1: full, ordered and
/// unique configurable).
struct sparse_options {
  bool full = false;
  bool ordered = true;
  bool unique = true;
  /// A hint about the data, not a property (compressed levels): the
  /// positions under one parent come in long runs (tens or more). An
  /// innermost reduction this level drives is summed with several partial
  /// sums where a range holds 8 or more (docs/design.md, "Split sums"); on rows
  /// of mixed short lengths that test costs more than it saves.
  bool long_ranges = false;
};
/// Options for hashed levels (full and unique configurable; never ordered).
struct hash_options {
  bool full = false;
  bool unique = true;
};

namespace detail {
template <bool B>
struct bool_constant_check {};
}  // namespace detail

/// L declares the five properties as constant expressions.
template <class L>
concept has_level_properties = requires {
  typename detail::bool_constant_check<L::is_full>;
  typename detail::bool_constant_check<L::is_ordered>;
  typename detail::bool_constant_check<L::is_unique>;
  typename detail::bool_constant_check<L::is_branchless>;
  typename detail::bool_constant_check<L::is_compact>;
};

/// Coordinate value iteration (Table 2: coord_bounds, coord_access).
template <class L>
concept coord_iterable_level = requires(const L& l, typename L::index_type i, ancestors<typename L::index_type> a) {
  { l.coord_bounds(a) } -> std::same_as<bounds<typename L::index_type>>;
  { l.coord_access(i, a, i) } -> std::same_as<located<typename L::index_type>>;
};

/// Coordinate position iteration (Table 2: pos_bounds, pos_access).
template <class L>
concept pos_iterable_level = requires(const L& l, typename L::index_type p, ancestors<typename L::index_type> a) {
  { l.pos_bounds(p) } -> std::same_as<bounds<typename L::index_type>>;
  { l.pos_access(p, a) } -> std::same_as<coordinate<typename L::index_type>>;
};

/// A level: an index type, a name, the properties, a dimension, and at
/// least one iteration capability. (`bytes()`, the memory a level holds, is
/// optional; tensor::storage_bytes counts it where present.)
template <class L>
concept level = requires { typename L::index_type; } && index_type<typename L::index_type> &&
                has_level_properties<L> && requires(const L& l) {
                  { l.dimension() } -> std::same_as<typename L::index_type>;
                  { L::name } -> std::convertible_to<std::string_view>;
                } && (coord_iterable_level<L> || pos_iterable_level<L>);

/// Random access to a coordinate among a parent's children (Table 2: locate).
template <class L>
concept locatable_level = level<L> && requires(const L& l, typename L::index_type i, ancestors<typename L::index_type> a) {
  { l.locate(i, a, i) } -> std::same_as<located<typename L::index_type>>;
};

/// The insert capability (Table 3); insertion positions come from locate.
template <class L>
concept insertable_level = locatable_level<L> && requires(L& l, const L& cl, typename L::index_type i) {
  { cl.size(i) } -> std::same_as<typename L::index_type>;
  l.insert_init(i, i);
  l.insert_coord(i, i);
  l.insert_finalize(i, i);
};

/// The append capability (Table 3).
template <class L>
concept appendable_level = level<L> && requires(L& l, typename L::index_type i) {
  l.append_init(i, i);
  l.append_coord(i, i);
  l.append_edges(i, i, i);
  l.append_finalize(i, i);
};

/// Sized append, an optional part of the append capability:
/// `append_init_sized(parent_size, size)` is append_init for `size`
/// positions, after which `append_coord_at(p, i)` (p < size; it never grows
/// the level, so the call is a store) and `append_edges(ppos, begin, end)`
/// may be called in any order, and from concurrent threads for distinct p
/// and distinct ppos; `append_finalize(parent_size, n)` then keeps the
/// first n positions. Generated kernels use it to append without a
/// possible reallocation in their loops, and to assemble an output from
/// chunks that ran in parallel after a scan of their counts
/// (docs/design.md, "Parallel execution").
template <class L>
concept parallel_appendable_level = appendable_level<L> && requires(L& l, typename L::index_type i) {
  l.append_init_sized(i, i);
  l.append_coord_at(i, i);
};

/// A level assembled from a scan (optional; the device form's sparse
/// outputs): `L::scanned_bounds` says that after an append its parent p's
/// children are positions [bounds[p], bounds[p+1]) of one coordinate array,
/// bounds being the exclusive scan of the parents' child counts, and that
/// position q's coordinate is that array's element q. Such a level is made
/// from the two arrays, `L(extent, bounds, coordinates)`, so that a kernel
/// can count each parent's children, scan the counts, and store each
/// coordinate at its position, where it runs, without a call into the level
/// (compressed levels: CSR's columns).
template <class L>
concept scanned_level =
    level<L> && requires { typename detail::bool_constant_check<L::scanned_bounds>; } && L::scanned_bounds &&
    requires { typename L::pos_array; typename L::crd_array; typename L::pos_type; typename L::crd_type; } &&
    std::constructible_from<L, typename L::index_type, typename L::pos_array, typename L::crd_array>;

/// A branchless level whose coordinates are one array, position q's
/// coordinate its element q (singleton levels: COO's columns). Made from
/// that array alone, `L(extent, coordinates)`, so that a kernel can store
/// each coordinate at its position where it runs (the device form's sparse
/// outputs, beside scanned levels).
template <class L>
concept coordinate_array_level =
    level<L> && L::is_branchless && requires { typename L::crd_array; typename L::crd_type; } &&
    std::constructible_from<L, typename L::index_type, typename L::crd_array>;

/// A level whose positions follow from its shape (range, offset): assembling
/// it needs only its size for a given parent size.
template <class L>
concept implicit_level = level<L> && requires(const L& l, typename L::index_type i) {
  { l.implicit_size(i) } -> std::same_as<typename L::index_type>;
};

/// Optional prefetching (host code), for loops that read one level's
/// coordinates and locate another operand by them (Gustavson's SpGEMM: A's
/// columns locate B's rows). A level whose positions a loop iterates reads
/// a coordinate some positions ahead, `ahead_coord(p, c)` (false past its
/// positions); a level whose children follow a located position fetches
/// their bounds, `prefetch_bounds(ppos)`, and later its first children,
/// `prefetch_children(ppos)` (their first position, or -1), and says how
/// many children a parent has on average, `mean_children()` (the generator
/// prefetches only for short ones). The generator prefetches where both
/// sides are such levels (kernel.hpp, prefetch_ahead); nothing changes for
/// levels without them.
template <class L>
concept ahead_readable_level = level<L> && requires(const L& l, std::size_t p, typename L::index_type& c) {
  { l.ahead_coord(p, c) } -> std::same_as<bool>;
};
template <class L>
concept prefetching_level = level<L> && requires(const L& l, typename L::index_type p) {
  { l.mean_children() } -> std::convertible_to<double>;
  l.prefetch_bounds(p);
  { l.prefetch_children(p) } -> std::same_as<typename L::index_type>;
};

/// A level whose blocked coordinate goes through a stored map (optional;
/// permuted_dense, the lanes of SELL-C-sigma): at a block_inner level map,
/// the logical coordinate of block b's lane l is `remap(b * B + l)`, not
/// b * B + l. `remap` is a bijection of [0, n) for the dimension's extent
/// n and the identity past it (a last block's padding), `remap_inside(i)`
/// the same for i < n without the check, `rows()` the n it was made for
/// (a kernel checks it against the operand's extent); `validate_remap(n)`
/// checks the entries. pack fills a remapping level that also has
/// `window` (rows sorted by length within windows of that many) and
/// `set_permutation(std::vector<I>)`. The generator applies it wherever it
/// computes a blocked coordinate (describe.hpp, comp_remap).
template <class L>
concept remapping_level = level<L> && requires { typename detail::bool_constant_check<L::remaps>; } && L::remaps &&
                          requires(const L& l, typename L::index_type i) {
                            { l.remap(i) } -> std::same_as<typename L::index_type>;
                            { l.remap_inside(i) } -> std::same_as<typename L::index_type>;
                            { l.rows() } -> std::same_as<typename L::index_type>;
                            l.validate_remap(i);
                          };

/// A level `pack` can build: constructible from a level_shape and assembled
/// by append, insert, or implicitly.
template <class L>
concept packable_level = level<L> && std::constructible_from<L, const level_shape<typename L::index_type>&> &&
                         (appendable_level<L> || insertable_level<L> || implicit_level<L>);

template <class L> concept full_level = level<L> && L::is_full;
template <class L> concept ordered_level = level<L> && L::is_ordered;
template <class L> concept unique_level = level<L> && L::is_unique;
template <class L> concept branchless_level = level<L> && L::is_branchless;
template <class L> concept compact_level = level<L> && L::is_compact;

namespace detail {
template <class L>
struct require_locate {
  static_assert(locatable_level<L>,
                "tensorlev::locate: this level type has no locate capability (seed 003, Table 1: of the six, only "
                "dense and hashed levels locate); iterate the level instead, or convert the tensor to a format whose "
                "level at this position is dense or hashed");
  static constexpr bool value = true;
};
}  // namespace detail

/// Locates coordinate i among the children of parent position ppos.
/// Fails to compile, with a message naming the fix, for levels without the
/// locate capability.
template <level L>
[[nodiscard]] constexpr located<typename L::index_type> locate(const L& l, typename L::index_type ppos,
                                                               ancestors<typename L::index_type> anc,
                                                               typename L::index_type i) {
  static_assert(detail::require_locate<L>::value);
  if constexpr (locatable_level<L>) {
    return l.locate(ppos, anc, i);
  } else {
    return {ppos, false};
  }
}

/// Every position of the level encodes a coordinate (pos_access/coord_access
/// always report found): the generated loop needs no `if (found)`.
template <class L>
concept always_found_level = level<L> && requires { typename detail::bool_constant_check<L::always_found>; } &&
                             L::always_found;

/// A level that is not always found but can tell, for a block's lanes, that
/// every child of the lanes is found: under a block_inner level (the lanes
/// of a block), `lanes_found(anc)`, with anc the coordinates of the levels
/// above the lanes (up(1) the lanes level's parent), is true only when each
/// child under every lane of the block is found (block_offset: the block's
/// columns on that diagonal all inside the extent). The generated loops
/// under those lanes then run without the per-child found checks, which
/// keep a compiler from vectorizing across the lanes (docs/design.md,
/// "Blocked DIA").
template <class L>
concept lanes_found_level = level<L> && requires(const L& l, ancestors<typename L::index_type> a) {
  { l.lanes_found(a) } -> std::convertible_to<bool>;
};

}  // namespace tensorlev
