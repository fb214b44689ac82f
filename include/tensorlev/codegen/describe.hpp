#pragma once
/// @file codegen/describe.hpp
/// Compile-time description of a statement: its operands (accesses), the
/// capabilities and properties of every operand level, the expression tree
/// and the index variables, as plain constexpr arrays. Everything the
/// lowering decides (loop order, lattices, locate or iterate) is computed
/// from this description by constexpr functions (plan.hpp), using only the
/// level concepts, never a concrete level type.

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "../level_concepts.hpp"
#include "../notation.hpp"
#include "../tensor.hpp"

namespace tensorlev {

/// An order-0 tensor holding one value.
template <class V>
class scalar {
 public:
  using value_type = V;
  scalar() = default;
  explicit scalar(V v) : value_(v) {}
  // (Read by generated kernels, on a device too.)
  [[nodiscard]] TENSORLEV_HOST_DEVICE const V& value() const noexcept { return value_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE V& value() noexcept { return value_; }
  operator V() const noexcept { return value_; }  // NOLINT: a scalar reads as its value
  access<scalar> operator()() noexcept { return access<scalar>(this); }
  access<const scalar> operator()() const noexcept { return access<const scalar>(this); }

 private:
  V value_{};
};

namespace detail {
template <class T>
struct is_scalar_t : std::false_type {};
template <class V>
struct is_scalar_t<scalar<V>> : std::true_type {};
template <class T>
constexpr bool is_scalar_v = is_scalar_t<std::remove_const_t<T>>::value;
}  // namespace detail

namespace cg {

inline constexpr std::size_t max_accesses = 16;
inline constexpr std::size_t max_levels = 8;
inline constexpr std::size_t max_nodes = 64;
inline constexpr std::size_t max_vars = 16;

/// What the generator knows about one level of one operand.
struct level_desc {
  char var = 0;  // index variable the level binds
  bool locatable = false, coord_iter = false, pos_iter = false;
  bool full = false, ordered = false, unique = false, branchless = false, compact = false, always_found = false;
  bool insertable = false, appendable = false;
  bool needs_ancestors = true;  // its functions read the coordinates of the levels above
  bool long_ranges = false;     // a hint: long runs of positions per parent (split_sum)
  bool contiguous = false;      // locate(p, a, i).pos == locate(p, a, 0).pos + i (kernel::at_v_next)
  bool remap = false;           // a block_inner level whose blocked coordinate goes through remap() (remapping_level)
  bool lanes_found = false;     // can tell that all its children under a block's lanes are found (lanes_found_level)
  // Level maps other than mode<d> (DIA's diagonal, ELL's slot, blocks) bind
  // a private variable of their own (var < ' '), iterated only by this
  // level. A block_inner level also computes its logical variable:
  // computes = outer * block + inner, where outer is the block_outer
  // level's private variable.
  map_kind map = map_kind::mode;
  std::size_t dim = 0;
  char computes = 0;
  char outer = 0;
  int block = 1;
};

struct access_desc {
  std::size_t nlev = 0;  // 0 for scalars
  level_desc lev[max_levels]{};
  std::size_t order = 0;
  char vars[max_levels]{};  // index variable of each logical dimension
};

// fn: an elementwise function of its child (a); div: a / b. For the
// iteration (lattices, covers, what is nonzero) fn is its child and div a
// product: both see only dense arguments and divisors (check_statement),
// so the quotient is stored where the numerator is and f(arg) everywhere.
enum class node_kind : unsigned char { access, constant, add, sub, mul, neg, fn, div };

struct node {
  node_kind kind = node_kind::constant;
  int a = -1, b = -1;  // children
  int acc = -1;        // access id (access nodes)
  std::string_view fn;  // the function's name (fn nodes)
};

/// The whole statement. Access 0 is the output; 1.. are the right-hand
/// side's accesses in left-to-right order.
struct stmt_desc {
  std::size_t nacc = 0;
  access_desc acc[max_accesses]{};
  std::size_t nnodes = 0;
  node nodes[max_nodes]{};
  int root = -1;
  std::size_t nvars = 0;
  char vars[max_vars]{};  // distinct variables, output's first, then by appearance
  bool accumulate = false;
  std::size_t norder = 0;  // explicit loop order (0: derive one)
  char order[max_vars]{};
  // Logical variables computed from blocks: var = outer * block + inner.
  std::size_t ncomp = 0;
  char comp_var[max_vars]{}, comp_outer[max_vars]{}, comp_inner[max_vars]{};
  int comp_block[max_vars]{};
  int comp_acc[max_vars]{};
  // 1 + the level of access comp_acc whose remap() maps outer * block +
  // inner to the variable (a remapping_level: SELL-C-sigma's lanes), or 0.
  int comp_remap[max_vars]{};
  // More accesses, nodes or loop variables than the descriptor holds: the
  // rest is left unfilled, and run_statement stops with a message.
  bool too_big = false;
};

/// Whether an access other than the output and the blocked operand itself
/// reads computed variable c: inside the block workspace the variable's
/// value then matters; otherwise only the lane does (the output is the
/// workspace), and a remapped row need not be read there (kernel.hpp).
constexpr bool row_read_in_block(const stmt_desc& d, std::size_t c) {
  for (std::size_t a = 1; a < d.nacc; ++a) {
    if (static_cast<int>(a) == d.comp_acc[c]) continue;
    for (std::size_t x = 0; x < d.acc[a].order; ++x)
      if (d.acc[a].vars[x] == d.comp_var[c]) return true;
  }
  return false;
}

/// Whether variable v is private to one level (derived level maps).
constexpr bool is_private_var(char v) { return v > 0 && v < ' '; }

// ---- level descriptions from the concepts --------------------------------

template <class L>
constexpr level_desc describe_level(char var) {
  level_desc d;
  d.var = var;
  d.locatable = locatable_level<L>;
  d.coord_iter = coord_iterable_level<L>;
  d.pos_iter = pos_iterable_level<L>;
  d.full = L::is_full;
  d.ordered = L::is_ordered;
  d.unique = L::is_unique;
  d.branchless = L::is_branchless;
  d.compact = L::is_compact;
  d.always_found = always_found_level<L>;
  d.insertable = insertable_level<L>;
  // A scanned level (compressed) or a coordinate array (singleton) in
  // arrays that cannot grow (device memory) is still assembled by append:
  // the device form counts, scans and fills.
  d.appendable = appendable_level<L> || scanned_level<L> || coordinate_array_level<L>;
  if constexpr (requires { L::needs_ancestors; }) d.needs_ancestors = L::needs_ancestors;
  if constexpr (requires { L::long_ranges; }) d.long_ranges = L::long_ranges;
  if constexpr (requires { L::contiguous; }) d.contiguous = L::contiguous;
  d.remap = remapping_level<L>;
  d.lanes_found = lanes_found_level<L>;
  return d;
}

template <class T>
struct operand_traits;  // T: tensor<...> or scalar<V>, possibly const

// Tensors, and anything shaped like one (tensor_view, view.hpp): a value
// type, an index type and a format.
template <class T>
  requires(!std::is_const_v<T>) && requires {
    typename T::value_type;
    typename T::index_type;
    typename T::format_type;
  }
struct operand_traits<T> {
  using value_type = typename T::value_type;
  using index_type = typename T::index_type;
  using format = typename T::format_type;
  using level_tuple = typename T::level_tuple;
  static constexpr std::size_t order = format::order;
  static constexpr std::size_t nlev = format::num_levels;
};
template <class V>
struct operand_traits<scalar<V>> {
  using value_type = V;
  using index_type = void;
  static constexpr std::size_t order = 0;
  static constexpr std::size_t nlev = 0;
};
template <class T>
struct operand_traits<const T> : operand_traits<T> {};

template <class T, char... Vars>
constexpr access_desc describe_access() {
  access_desc d;
  using OT = operand_traits<T>;
  static_assert(sizeof...(Vars) == OT::order,
                "tensorlev: a tensor must be accessed with exactly one index variable per dimension (wrong number "
                "of index variables for the tensor's order)");
  constexpr char vars[sizeof...(Vars) + 1] = {Vars..., 0};
  d.order = sizeof...(Vars);
  for (std::size_t x = 0; x < sizeof...(Vars); ++x) d.vars[x] = vars[x];
  if constexpr (OT::nlev > 0) {
    using F = typename OT::format;
    d.nlev = OT::nlev;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((d.lev[K] = describe_level<std::tuple_element_t<K, typename OT::level_tuple>>(vars[F::maps[K].dim])), ...);
    }(std::make_index_sequence<OT::nlev>{});
    for (std::size_t k = 0; k < OT::nlev; ++k) {
      d.lev[k].map = F::maps[k].kind;
      d.lev[k].dim = F::maps[k].dim;
      d.lev[k].block = static_cast<int>(F::maps[k].block);
      if (F::maps[k].kind != map_kind::mode) d.lev[k].var = 0;  // private; numbered by describe()
    }
  }
  return d;
}

// ---- the expression tree ---------------------------------------------------

template <class E>
struct expr_info;
template <class T, char... V>
struct expr_info<access<T, V...>> {
  static constexpr std::size_t accesses = 1;
  static constexpr std::size_t nodes = 1;
  using access_types = std::tuple<access<T, V...>>;
};
template <class C>
struct expr_info<const_expr<C>> {
  static constexpr std::size_t accesses = 0;
  static constexpr std::size_t nodes = 1;
  using access_types = std::tuple<>;
};
template <class E>
struct expr_info<neg_expr<E>> {
  static constexpr std::size_t accesses = expr_info<E>::accesses;
  static constexpr std::size_t nodes = 1 + expr_info<E>::nodes;
  using access_types = typename expr_info<E>::access_types;
};
template <template <class, class> class B, class L, class R>
struct binary_info {
  static constexpr std::size_t accesses = expr_info<L>::accesses + expr_info<R>::accesses;
  static constexpr std::size_t nodes = 1 + expr_info<L>::nodes + expr_info<R>::nodes;
  using access_types = decltype(std::tuple_cat(std::declval<typename expr_info<L>::access_types>(),
                                               std::declval<typename expr_info<R>::access_types>()));
};
template <class L, class R>
struct expr_info<add_expr<L, R>> : binary_info<add_expr, L, R> {};
template <class L, class R>
struct expr_info<sub_expr<L, R>> : binary_info<sub_expr, L, R> {};
template <class L, class R>
struct expr_info<mul_expr<L, R>> : binary_info<mul_expr, L, R> {};
template <class L, class R>
struct expr_info<div_expr<L, R>> : binary_info<div_expr, L, R> {};
template <class F, class E>
struct expr_info<fn_expr<F, E>> {
  static constexpr std::size_t accesses = expr_info<E>::accesses;
  static constexpr std::size_t nodes = 1 + expr_info<E>::nodes;
  using access_types = typename expr_info<E>::access_types;
};

template <class E>
struct node_traits;  // kind, and the children's types
template <class T, char... V>
struct node_traits<access<T, V...>> {
  static constexpr node_kind kind = node_kind::access;
};
template <class C>
struct node_traits<const_expr<C>> {
  static constexpr node_kind kind = node_kind::constant;
};
template <class E>
struct node_traits<neg_expr<E>> {
  static constexpr node_kind kind = node_kind::neg;
  using operand = E;
};
template <class L, class R>
struct node_traits<add_expr<L, R>> {
  static constexpr node_kind kind = node_kind::add;
  using left = L;
  using right = R;
};
template <class L, class R>
struct node_traits<sub_expr<L, R>> {
  static constexpr node_kind kind = node_kind::sub;
  using left = L;
  using right = R;
};
template <class L, class R>
struct node_traits<mul_expr<L, R>> {
  static constexpr node_kind kind = node_kind::mul;
  using left = L;
  using right = R;
};
template <class L, class R>
struct node_traits<div_expr<L, R>> {
  static constexpr node_kind kind = node_kind::div;
  using left = L;
  using right = R;
};
template <class F, class E>
struct node_traits<fn_expr<F, E>> {
  static constexpr node_kind kind = node_kind::fn;
  using operand = E;
  using function = F;
};

// Appends E's nodes (pre-order); accesses are numbered from `first`.
// Returns the index of E's root node.
template <class E>
constexpr int add_nodes(stmt_desc& d, int first) {
  using NT = node_traits<E>;
  const int me = static_cast<int>(d.nnodes++);
  d.nodes[me].kind = NT::kind;
  if constexpr (NT::kind == node_kind::access) {
    d.nodes[me].acc = first;
  } else if constexpr (NT::kind == node_kind::neg) {
    d.nodes[me].a = add_nodes<typename NT::operand>(d, first);
  } else if constexpr (NT::kind == node_kind::fn) {
    d.nodes[me].fn = NT::function::name;
    d.nodes[me].a = add_nodes<typename NT::operand>(d, first);
  } else if constexpr (NT::kind != node_kind::constant) {
    d.nodes[me].a = add_nodes<typename NT::left>(d, first);
    d.nodes[me].b = add_nodes<typename NT::right>(d, first + static_cast<int>(expr_info<typename NT::left>::accesses));
  }
  return me;
}

template <class A>
struct access_parts;
template <class T, char... V>
struct access_parts<access<T, V...>> {
  using operand = T;
  static constexpr access_desc desc() { return describe_access<T, V...>(); }
};

constexpr void add_var(stmt_desc& d, char v) {
  for (std::size_t x = 0; x < d.nvars; ++x)
    if (d.vars[x] == v) return;
  if (d.nvars == max_vars) {
    d.too_big = true;
    return;
  }
  d.vars[d.nvars++] = v;
}

/// The description of `Out = E` (or `+=`), with an optional explicit order.
template <class Out, class E, bool Accumulate, char... Order>
constexpr stmt_desc describe() {
  stmt_desc d;
  using accs = decltype(std::tuple_cat(std::declval<std::tuple<Out>>(),
                                       std::declval<typename expr_info<E>::access_types>()));
  if constexpr (std::tuple_size_v<accs> > max_accesses || expr_info<E>::nodes > max_nodes) {
    d.too_big = true;
    return d;
  }
  d.nacc = std::tuple_size_v<accs>;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    ((d.acc[A] = access_parts<std::tuple_element_t<A, accs>>::desc()), ...);
  }(std::make_index_sequence<std::tuple_size_v<accs>>{});
  d.root = add_nodes<E>(d, 1);
  for (std::size_t a = 0; a < d.nacc; ++a)
    for (std::size_t x = 0; x < d.acc[a].order; ++x) add_var(d, d.acc[a].vars[x]);
  // Private variables of derived levels, and the logical variables that
  // block pairs compute. Not for the output: an output with derived levels
  // (ELL, DIA, BCSR, CSB) is streamed as logical coordinates and packed, so
  // its slots, diagonals and blocks are no loops of the statement (as loop
  // variables they were summed over as if they were reductions).
  char next_private = 1;
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
      if (d.acc[a].lev[k].map != map_kind::mode) {
        d.acc[a].lev[k].var = next_private++;
        add_var(d, d.acc[a].lev[k].var);
      }
  if (d.too_big) return d;
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
      level_desc& l = d.acc[a].lev[k];
      if (l.map != map_kind::block_inner) continue;
      for (std::size_t q = 0; q < d.acc[a].nlev; ++q)
        if (d.acc[a].lev[q].map == map_kind::block_outer && d.acc[a].lev[q].dim == l.dim) l.outer = d.acc[a].lev[q].var;
      l.computes = d.acc[a].vars[l.dim];
      d.comp_var[d.ncomp] = l.computes;
      d.comp_outer[d.ncomp] = l.outer;
      d.comp_inner[d.ncomp] = l.var;
      d.comp_block[d.ncomp] = l.block;
      d.comp_acc[d.ncomp] = static_cast<int>(a);
      d.comp_remap[d.ncomp] = l.remap ? static_cast<int>(k) + 1 : 0;
      ++d.ncomp;
    }
  d.accumulate = Accumulate;
  constexpr char order[sizeof...(Order) + 1] = {Order..., 0};
  d.norder = sizeof...(Order);
  for (std::size_t x = 0; x < sizeof...(Order); ++x) d.order[x] = order[x];
  return d;
}

}  // namespace cg
}  // namespace tensorlev
