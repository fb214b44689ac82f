#pragma once
/// @file codegen/kernel.hpp
/// The generated kernel: template recursion over the loop order, following
/// the constexpr plans of plan.hpp. Every decision (which levels to merge,
/// which to locate, lattice cases, deduplication) is made at compile time;
/// the code left is the loop nest for the operands' formats, written with
/// level functions only (pos_bounds/pos_access, coord_bounds/coord_access,
/// locate), which inline to the arrays a careful person would index.
///
/// This header is the loop emitter; how the output is written (located,
/// appended, through a workspace, inserted, assembled, streamed, or summed
/// into a scalar), serially and in parallel, is the output policy's, one
/// header each under codegen/output/.

#include <type_traits>

#include "../config.hpp"
#include "../detail/message.hpp"
#include "output/append.hpp"
#include "output/assemble.hpp"
#include "output/common.hpp"
#include "output/insert.hpp"
#include "output/located.hpp"
#include "output/scalar.hpp"
#include "output/stream.hpp"
#include "output/workspace.hpp"
#include "../view.hpp"

// A loop's plan inside the generated functions: a reference to the class's
// constant on the host; in device code (which may not refer to host
// variables) a static constexpr copy, folded away like the reference.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TENSORLEV_PLAN(name, value) static constexpr loop_plan name = value
#else
#define TENSORLEV_PLAN(name, value) static constexpr const loop_plan& name = value
#endif

namespace tensorlev {

namespace detail {
#if TENSORLEV_LANE_VECTORS
// The block workspace as one vector value (kernel::lane_vector): may_alias,
// since the loops under it address its lanes as V.
template <class T, std::size_t Bytes>
struct lane_vec {
  typedef T type __attribute__((vector_size(Bytes), __may_alias__));
};
#endif
// The run-time errors every statement can raise, out of line and cold: one
// copy of their message building per translation unit, not one per
// statement and operand (most of a small kernel's code was these strings;
// docs/design.md, "What a translation unit includes").
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_extent_mismatch(char var, std::size_t acc, std::size_t dim,
                                                                        long long extent, std::size_t first_acc,
                                                                        std::size_t first_dim, long long first_extent) {
  message m;
  auto name = [&m](std::size_t a) {
    if (a == 0)
      m << "the output";
    else
      m << "operand " << a;
  };
  m << "index variable '" << var << "': ";
  name(acc);
  m << " has extent " << extent << " in dimension " << dim << " but ";
  name(first_acc);
  m << " has extent " << first_extent << " in dimension " << first_dim;
  throw shape_error(m);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_permutation_length(std::size_t acc, std::size_t level,
                                                                           long long rows, long long extent) {
  message m;
  m << "operand " << acc << ", level " << level << " (permuted dense): the permutation has " << rows
    << " entries, but the dimension it permutes has extent " << extent;
  throw shape_error(m);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_output_on_right(std::size_t acc) {
  message m;
  m << "tensorlev: the output of a statement also appears on its right-hand side (operand " << acc
    << ") other than in place (the same component read and written, in a statement without "
       "reductions that adds with += or stores each component once); compute into a "
       "separate tensor";
  throw error(m);
}
}  // namespace detail

namespace cg {

// ---- compile errors with readable messages -----------------------------------

template <plan_error E, int Operand>
constexpr bool check_plan() {
  static_assert(E != plan_error::no_concordant_order,
                "tensorlev: no loop order visits every operand's levels outermost first (no concordant order); "
                "the operand named in this instantiation (Operand, counted from 1 on the right-hand side) is stored "
                "in an order that conflicts with the others: store it transposed (e.g. CSC instead of CSR) or "
                "give a loop_order");
  static_assert(E != plan_error::bad_explicit_order,
                "tensorlev: the loop_order must name every index variable of the statement exactly once");
  static_assert(E != plan_error::order_not_concordant,
                "tensorlev: the given loop_order visits the levels of an operand out of storage order (operand "
                "counted from 1 on the right-hand side); reorder the loops or store the operand transposed");
  static_assert(E != plan_error::unordered_merge,
                "tensorlev: an unordered level (e.g. hashed) would have to be co-iterated with other levels; "
                "convert that operand to an ordered format, or make the other operands locatable (dense)");
  static_assert(E != plan_error::segment_needs_compact,
                "tensorlev: a non-unique level must be deduplicated here, but the level below it does not store "
                "its children contiguously");
  static_assert(E != plan_error::coord_merge_unsupported,
                "tensorlev: a coordinate-iterated level that may not hold every coordinate cannot be co-iterated");
  static_assert(E != plan_error::too_many_points, "tensorlev: the expression's merge lattice is too large");
  static_assert(E != plan_error::computed_needs_locate,
                "tensorlev: a blocked operand (BCSR, CSB) computes this index variable from its blocks, so the "
                "other operands that use it must be locatable (dense or hashed) there; convert them, or convert the "
                "blocked operand to CSR");
  static_assert(E != plan_error::computed_twice,
                "tensorlev: two blocked operands compute the same index variable; convert one to CSR");
  static_assert(E != plan_error::precompute_not_last,
                "tensorlev: precompute(v) must name the variable of the output's last level (j in C(i,j) for CSR "
                "or row-major dense C): the workspace is a dense row over that variable");
  static_assert(E != plan_error::precompute_output,
                "tensorlev: precompute needs an output whose levels above the precomputed variable are dense and "
                "whose last level is dense or appended in order (CSR, sparse vector, dense), with the precomputed "
                "variable's loop after the output's other variables and, for an appended output, no other loop "
                "(e.g. ELL's slot or DIA's diagonal) above them; convert such operands to CSR first");
  static_assert(E != plan_error::repeated_variable,
                "tensorlev: an access uses the same index variable twice (e.g. A(i,i)); this is not supported");
  return true;
}

// access<T, V...> -> access<const T, V...> on another tensor.
template <class A>
struct rebind_access;
template <class T, char... V>
struct rebind_access<access<T, V...>> {
  static access<const std::remove_const_t<T>, V...> make(const std::remove_const_t<T>* t) {
    return access<const std::remove_const_t<T>, V...>(t);
  }
  template <class U>
  static access<U, V...> to(U* t) {
    return access<U, V...>(t);
  }
};

// ---- iterator conversion: scratch copies ------------------------------------
//
// A blocked operand (BCSR, CSB) computes its logical coordinates from its
// blocks, so every other operand must be located at them. An operand that
// is not locatable there (a sparse vector x in BCSR SpMV) is converted once
// into a dense scratch copy before the loops run. An operand whose
// unordered level would have to be merged with others is converted once
// into an ordered copy (compressed levels, same level order).

// Whether access a must be converted: one of its levels binds a computed
// variable without being able to locate.
constexpr bool needs_dense_copy(const stmt_desc& d, std::size_t a) {
  if (a == 0) return false;
  for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
    for (std::size_t c = 0; c < d.ncomp; ++c)
      if (d.acc[a].lev[k].var == d.comp_var[c] && !d.acc[a].lev[k].locatable &&
          d.comp_acc[c] != static_cast<int>(a))
        return true;
  return false;
}

template <class T>
struct dense_copy_of;
template <class V, class F, class I, class S>
struct dense_copy_of<tensor<V, F, I, S>> {
  using type = tensor<std::remove_const_t<V>, dense_tensor<F::order>, I>;
};

// An ordered copy: one ordered, unique compressed level per level of F, in
// F's level order (CSF-like). Used for operands whose unordered levels
// must be merged: the scratch copy is sorted once, then merged.
template <std::size_t N>
struct ordered_levels {
  template <std::size_t... K>
  static auto make(std::index_sequence<K...>) -> levels<std::conditional_t<(K < N), compressed<>, void>...>;
  using type = decltype(make(std::make_index_sequence<N>{}));
};
template <class T>
struct sorted_copy_of;
template <class V, class F, class I, class S>
struct sorted_copy_of<tensor<V, F, I, S>> {
  using type = tensor<std::remove_const_t<V>, format<typename ordered_levels<F::num_levels>::type, typename F::map_type>, I>;
};

// Owns the scratch copies for the duration of one statement.
class scratch_copies {
 public:
  scratch_copies() = default;
  scratch_copies(const scratch_copies&) = delete;
  scratch_copies& operator=(const scratch_copies&) = delete;
  ~scratch_copies() {
    for (auto& [p, del] : items_) del(p);
  }
  template <class T>
  const T* add(T&& t) {
    T* p = new T(std::move(t));
    items_.emplace_back(p, [](const void* q) { delete static_cast<const T*>(q); });
    return p;
  }

 private:
  std::vector<std::pair<const void*, void (*)(const void*)>> items_;
};

// A binary expression node of kind K (add, sub, mul, div) over l and r:
// how expression rewrites rebuild a node over rewritten children.
template <node_kind K, class L, class R>
auto binary_node(const L& l, const R& r) {
  if constexpr (K == node_kind::add)
    return add_expr<L, R>{l, r};
  else if constexpr (K == node_kind::sub)
    return sub_expr<L, R>{l, r};
  else if constexpr (K == node_kind::div)
    return div_expr<L, R>{l, r};
  else
    return mul_expr<L, R>{l, r};
}

// Rebuilds expression x with accesses whose ids are in Dense (Sorted),
// pre-order from `Id`, pointing at dense (ordered) copies kept in `keep`.
template <std::uint64_t Dense, std::uint64_t Sorted, int Id, class X>
auto convert_operands(const X& x, scratch_copies& keep) {
  using NT = node_traits<X>;
  if constexpr (NT::kind == node_kind::access) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x.operand())>>;
    if constexpr (((Dense >> Id) & 1U) != 0) {
      using DT = typename dense_copy_of<T>::type;
      const DT* copy = keep.add(pack<typename DT::format_type>(to_coordinate_list(*x.operand())));
      return rebind_access<X>::template to<const DT>(copy);
    } else if constexpr (((Sorted >> Id) & 1U) != 0) {
      using ST = typename sorted_copy_of<T>::type;
      const ST* copy = keep.add(pack<typename ST::format_type>(to_coordinate_list(*x.operand())));
      return rebind_access<X>::template to<const ST>(copy);
    } else {
      return x;
    }
  } else if constexpr (NT::kind == node_kind::constant) {
    return x;
  } else if constexpr (NT::kind == node_kind::neg) {
    auto e = convert_operands<Dense, Sorted, Id>(x.e, keep);
    return neg_expr<decltype(e)>{e};
  } else if constexpr (NT::kind == node_kind::fn) {
    auto e = convert_operands<Dense, Sorted, Id>(x.e, keep);
    return fn_expr<typename NT::function, decltype(e)>{e};
  } else {
    return binary_node<NT::kind>(
        convert_operands<Dense, Sorted, Id>(x.l, keep),
        convert_operands<Dense, Sorted, Id + static_cast<int>(expr_info<typename NT::left>::accesses)>(x.r, keep));
  }
}

// ---- the loop emitter ---------------------------------------------------------
//
// Template recursion over the loop order (loop, loop_nest, point, body,
// with_found, inner), evaluating the expression at the innermost loop.
// Everything about the output is the output policy's (codegen/output/):
// its state (state::out), what happens once the output's coordinates are
// bound (emit), the hooks around loops, and the run with its serial and
// parallel forms.

// The output policy for the plan's out_kind.
template <class S>
constexpr auto output_policy_of() {
  constexpr out_kind k = S::O.out;
  if constexpr (k == out_kind::scalar)
    return std::type_identity<scalar_output<S>>{};
  else if constexpr (k == out_kind::located)
    return std::type_identity<located_output<S>>{};
  else if constexpr (k == out_kind::append)
    return std::type_identity<append_output<S>>{};
  else if constexpr (k == out_kind::workspace)
    return std::type_identity<workspace_output<S>>{};
  else if constexpr (k == out_kind::insert)
    return std::type_identity<insert_output<S>>{};
  else if constexpr (k == out_kind::assemble)
    return std::type_identity<assemble_output<S>>{};
  else
    return std::type_identity<stream_output<S>>{};
}

template <class Out, class E, bool Accumulate, int Pre, int... Order>
struct device_chunk_fn;

/// What numeric_plan keeps between its trusted runs besides the patterns:
/// the kernel's table of identical innermost segments (kernel::jam_scan),
/// built on the first trusted run over a pattern; cleared when the
/// patterns change.
struct numeric_tables {
  std::vector<std::uint8_t> jam_span;
  bool built = false;
  bool jam = false;  // the jam pays (kernel::build_jam_runs' rule)
  // Each product's slot in its row's pattern (docs/design.md, "Slot
  // tables"), recorded on the first trusted run where the kernel's rows
  // may take it (kernel::slot_rows); the jam is not used while it is.
  slot_table slots;
};

// The output policy's innermost-loop cache (its `leaf`, where it has one).
template <class Output>
constexpr bool output_has_leaf() {
  if constexpr (requires { Output::has_leaf; })
    return Output::has_leaf;
  else
    return false;
}
template <class Output, bool = output_has_leaf<Output>()>
struct output_leaf {
  struct type {};
};
template <class Output>
struct output_leaf<Output, true> {
  using type = typename Output::leaf;
};

// An expression type E whose access a reads its values through access
// Src[a] (kernel numbering: 0 is the output), which is the same object over
// the same variables: only fuse's substitution builds it (copies of one
// access of a substituted temporary's writer, which the types alone cannot
// prove equal), and only as a kernel's type argument, never as an object.
// The kernel then reads each such operand once per position: chain_temp's
// `(a + b) * (2 (a + b) - a)` loads a, b and a, not a, b, a, b and a.
template <class E, int... Src>
struct shared_reads {};
template <class E>
struct unshared {
  using type = E;
};
template <class E, int... Src>
struct unshared<shared_reads<E, Src...>> {
  using type = E;
};
// The access whose values each access reads (shared_reads only).
template <class E, std::size_t NA>
struct read_sources;
template <class E, int... Src, std::size_t NA>
struct read_sources<shared_reads<E, Src...>, NA> {
  static_assert(sizeof...(Src) == NA, "tensorlev: internal: a shared-reads map of another length");
  static constexpr std::array<std::size_t, NA> value{static_cast<std::size_t>(Src)...};
};

// The kernel template in an inline namespace named after the settings that
// change its functions' bodies (TENSORLEV_KERNEL_ABI, config.hpp).
inline namespace TENSORLEV_KERNEL_ABI {
template <class Out, class EW, bool Accumulate, char Pre, char... Order>
struct kernel : stmt<Out, typename unshared<EW>::type, Accumulate, Pre, Order...> {
  using E = typename unshared<EW>::type;
  using base = stmt<Out, E, Accumulate, Pre, Order...>;
  // (Copies rather than using-declarations: GCC does not find those inside
  // the generic lambdas of a class template.)
  static constexpr stmt_desc D = base::D;
  static constexpr order_plan O = base::O;
  static_assert(check_plan<O.error, O.error_acc>());
  using ptrs = typename base::ptrs;
  static constexpr std::size_t NA = base::NA;
  template <std::size_t A>
  using op_t = typename base::template op_t<A>;
  using V = typename base::V;
  using I = typename base::I;
  static constexpr std::size_t ML = base::ML;
  static constexpr std::size_t var_index(char v) { return base::var_index(v); }
  using output = typename decltype(output_policy_of<base>())::type;

  // A sparse output's level: packable, or scanned (compressed) or a
  // branchless coordinate array (singleton) in arrays that cannot grow,
  // which only the device form assembles (count, scan, fill into arrays its
  // launcher allocates).
  template <class L>
  static constexpr bool out_level_ok =
      packable_level<L> || ((scanned_level<L> || coordinate_array_level<L>) &&
                            std::constructible_from<L, const level_shape<typename L::index_type>&>);
  static constexpr bool out_packable() {
    if constexpr (O.out == out_kind::scalar || O.out == out_kind::located) {
      return true;
    } else {
      return []<std::size_t... K>(std::index_sequence<K...>) {
        return (out_level_ok<std::tuple_element_t<K, typename op_t<0>::level_tuple>> && ...);
      }(std::make_index_sequence<D.acc[0].nlev>{});
    }
  }
  static_assert(out_packable(),
                "tensorlev: the output's format cannot be assembled: every level of a sparse output must be "
                "constructible from a level_shape and assembled by append, insert or implicitly (packable)");
  static_assert([]<std::size_t... A>(std::index_sequence<A...>) {
    return ((std::is_void_v<typename operand_traits<op_t<A>>::index_type> ||
             std::is_same_v<typename operand_traits<op_t<A>>::index_type, I>) &&
            ...);
  }(std::make_index_sequence<NA>{}),
                "tensorlev: every tensor in a statement must use the same index type");

  // first_bit, trusted_bit and the hoisted sub-nest's width do not change a
  // loop's plan.
  template <std::size_t Dp, mask_t Abs>
  static constexpr const loop_plan& plan =
      base::template plan<Dp, Abs & ~(first_bit | trusted_bit | jam_bit | slots_bit | record_bit | hoist_width_mask)>;

  // The innermost loop's context where the output keeps its row in locals
  // there (leaf_loop): that row, and the values of the operands bound
  // above the loop, read once (the row's stores may alias them as far as
  // the compiler knows, and it would reload them per entry).
  static constexpr bool out_leaf = output_has_leaf<output>();
  struct leaf_ctx {
    typename output_leaf<output>::type out;
    V inv[NA];
  };
  struct leaf_link {
    leaf_ctx* lf = nullptr;  // set in the innermost loop while it runs with the context
  };
  struct no_leaf_link {};
  struct lane_link {
    I lane;
  };
  struct no_lane_link {};
  // Each operand's position at its deepest bound level, and the end of the
  // segment (pos + 1 unless deduplicated). Passed by value down the loop
  // nest, so that after inlining the positions live in registers. So is
  // the block workspace's lane (kernel::blocked; where the plan has one):
  // in the state's var_val its store per lane would stay in the loop (the
  // state is memory the compiler cannot drop stores to), twice the stores
  // of the sums themselves in SELL's slot loop.
  struct cursor : std::conditional_t<out_leaf, leaf_link, no_leaf_link>,
                  std::conditional_t<(O.block >= 0), lane_link, no_lane_link> {
    I pos[NA];
    I hi[NA];
  };

  // Whether level k's coordinate of access a must be kept for the levels
  // below it (some level below reads its ancestors).
  static constexpr bool keep_crd(std::size_t a, std::size_t k) {
    for (std::size_t q = k + 1; q < D.acc[a].nlev; ++q)
      if (D.acc[a].lev[q].needs_ancestors) return true;
    return false;
  }
  // Whether the value of bound variable v is needed (random-access
  // operands: every variable; outputs written by coordinates: theirs; computed
  // coordinates and the block workspace: the block pairs' variables). A
  // store per iteration otherwise: the state's arrays may alias an
  // operand's index arrays, so it would stay in the loop.
  static constexpr bool keep_var_val(char v) {
    if (O.ra != 0) return true;
    if (emits_coordinates(O.out) || O.out == out_kind::append || O.out == out_kind::workspace) {
      // The output's variables only (a reduction's, as j in Gustavson's
      // C(i,k) = A(i,j) * B(j,k), is read by nothing).
      for (std::size_t d = 0; d < D.acc[0].order; ++d)
        if (D.acc[0].vars[d] == v) return true;
      for (std::size_t k = 0; k < D.acc[0].nlev; ++k)
        if (D.acc[0].lev[k].var == v) return true;
    }
    for (std::size_t c = 0; c < D.ncomp; ++c)
      if (D.comp_outer[c] == v || D.comp_inner[c] == v) return true;
    return false;
  }

  struct state {
    ptrs ops;
    const E* expr;
    ancestor_coord<I> crd[NA][ML + 1];  // coordinates of the levels bound so far (ancestors), where a level reads them
    I extent[max_vars];
    I var_val[max_vars];  // current value of each bound index variable
    // chunked runs: loop 0 covers [chunk_lo, chunk_hi) of its range only
    bool chunked;
    I chunk_lo;
    I chunk_hi;
    typename output::data out;  // the output policy's state
    bool hoist_any;             // hoisted factors: the loops below the hoist reached an entry
    bool fibre_any;             // hoisted factors, buffered output row: some fibre of loop O.hoist - 1 did
    bool pf[NA][ML + 1];        // whether access a's level k + 1 prefetches (choose_prefetch)
  };

  template <std::size_t A, std::size_t K>
  TENSORLEV_HOST_DEVICE static const auto& level_of(const state& st) {
    if constexpr (A == 0 && output::builds_levels)
      return std::get<K>(*st.out.levels);
    else
      return std::get<K>(std::get<A>(st.ops)->levels());
  }

  // ---- expression evaluation (innermost body) --------------------------------

  static constexpr bool hoist_factor(int n, mask_t abs) { return cg::hoist_factor(D, O, n, abs); }

  // Whether an access is a scalar or every level dense, unique and one dimension.
  static constexpr bool all_dense(const access_desc& x) {
    for (std::size_t k = 0; k < x.nlev; ++k)
      if (!dense_level_desc(x.lev[k]) || !x.lev[k].unique || x.lev[k].map != map_kind::mode) return false;
    return true;
  }
  // The access whose values access A reads: A, or under shared_reads the
  // same object over the same variables (so the same positions) earlier.
  template <std::size_t A>
  static constexpr std::size_t read_source() {
    if constexpr (std::is_same_v<EW, E>) {
      return A;
    } else {
      constexpr std::size_t s = read_sources<EW, NA>::value[A];
      static_assert(s == A || (s < A && s != 0 && all_dense(D.acc[A]) && all_dense(D.acc[s]) &&
                               std::is_same_v<op_t<s>, op_t<A>>),
                    "tensorlev: internal: a shared read of another kind of access");
      return s;
    }
  }

  // Access Acc's value at the cursor (the sum of a deduplicated segment).
  template <std::size_t Acc0>
  TENSORLEV_HOST_DEVICE static V access_value(const state& st, const cursor& cs) {
    constexpr std::size_t Acc = read_source<Acc0>();
    using T = op_t<Acc>;
    if constexpr (detail::is_scalar_v<T>) {
      return static_cast<V>(std::get<Acc>(st.ops)->value());
    } else {
      constexpr std::size_t L = T::num_levels;
      const auto vals = std::get<Acc>(st.ops)->values();
      const I p = cs.pos[Acc];
      if constexpr (!D.acc[Acc].lev[L - 1].unique) {
        V sum = static_cast<V>(vals[static_cast<std::size_t>(p)]);
        for (I q = p + 1; q < cs.hi[Acc]; ++q) sum += static_cast<V>(vals[static_cast<std::size_t>(q)]);
        return sum;
      } else {
        return static_cast<V>(vals[static_cast<std::size_t>(p)]);
      }
    }
  }

  // The expression's value at the cursor under Abs. Accesses in Inv are
  // read from the innermost loop's context (leaf_loop), where they were
  // read once before it.
  template <class X, int Node, int Acc, mask_t Abs, mask_t Inv = 0>
  TENSORLEV_HOST_DEVICE static V eval(const X& x, const state& st, const cursor& cs) {
    using NT = node_traits<X>;
    if constexpr (NT::kind == node_kind::access) {
      if constexpr (!hoist_factor(Node, Abs)) {
        return V(1);
      } else if constexpr (((Inv >> Acc) & 1U) != 0) {
        return cs.lf->inv[Acc];
      } else {
        return access_value<static_cast<std::size_t>(Acc)>(st, cs);
      }
    } else if constexpr (NT::kind == node_kind::constant) {
      if constexpr ((Abs & combine_bit) != 0)
        return V(1);
      else
        return static_cast<V>(x.v);
    } else if constexpr (NT::kind == node_kind::neg) {
      if constexpr ((Abs & combine_bit) != 0)
        return eval<typename NT::operand, Node + 1, Acc, Abs, Inv>(x.e, st, cs);
      else
        return -eval<typename NT::operand, Node + 1, Acc, Abs, Inv>(x.e, st, cs);
    } else if constexpr (NT::kind == node_kind::fn) {
      return static_cast<V>(NT::function::apply(eval<typename NT::operand, Node + 1, Acc, Abs, Inv>(x.e, st, cs)));
    } else {
      using L = typename NT::left;
      using R = typename NT::right;
      constexpr int NL = Node + 1;
      constexpr int NR = Node + 1 + static_cast<int>(expr_info<L>::nodes);
      constexpr int AR = Acc + static_cast<int>(expr_info<L>::accesses);
      constexpr bool lz = !nonzero(D, NL, Abs), rz = !nonzero(D, NR, Abs);
      if constexpr (NT::kind == node_kind::div) {
        // Never under a hoisted product (pure_product); the divisor is dense.
        if constexpr (lz)
          return V(0);
        else
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs) / eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
      } else if constexpr (NT::kind == node_kind::mul) {
        // A hoisted product leaves out one side's factors (hoist_factor).
        constexpr bool lh = hoist_factor(NL, Abs), rh = hoist_factor(NR, Abs);
        if constexpr (lh && !rh)
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs);
        else if constexpr (rh && !lh)
          return eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
        else
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs) * eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
      } else if constexpr (NT::kind == node_kind::add) {
        if constexpr (lz)
          return eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
        else if constexpr (rz)
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs);
        else
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs) + eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
      } else {
        if constexpr (lz)
          return -eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
        else if constexpr (rz)
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs);
        else
          return eval<L, NL, Acc, Abs, Inv>(x.l, st, cs) - eval<R, NR, AR, Abs, Inv>(x.r, st, cs);
      }
    }
  }

  template <mask_t Abs, mask_t Inv = 0>
  TENSORLEV_HOST_DEVICE static V eval_root(const state& st, const cursor& cs) {
    return eval<E, 0, 1, Abs, Inv>(*st.expr, st, cs);
  }

  // ---- loops ----------------------------------------------------------------

  // The output's emit, from the host/device loops below. Some outputs' emit
  // is host-only (a sorted stream: a host list; insert: host levels), and
  // those never run on a device (the device form rejects them); nvcc's
  // check that a host/device function calls no host function is turned off
  // for this call alone, so the loops keep it.
  TENSORLEV_HD_ANY_STORAGE
  template <class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void to_output(state& st, const Cs& cs, const V& value) {
    output::emit(st, cs, value);
  }

  // Loop Dp from loop Dp - 1's body: the innermost loop with its context
  // inlined there (nest), the compiler otherwise called it out of line per
  // row of B in SpGEMM or spilled what the context keeps in registers.
  // (Not at the precompute depth: there `loop` runs each term's own loops,
  // which then get the context one by one.)
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void next_loop(state& st, const cursor& cs, V& tgt) {
    if constexpr (leaf_loop<Dp, Abs>() && static_cast<int>(Dp) != O.scatter)
      nest<Dp, Abs>(st, cs, tgt);
    else
      loop<Dp, Abs>(st, cs, tgt);
  }

  // Loop Dp. At the precompute depth, every top-level term runs its own
  // loops (the others marked absent), scattering into the workspace.
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static void loop(state& st, const cursor& cs, V& tgt) {
    if constexpr (static_cast<int>(Dp) == O.scatter) {
      [&]<std::size_t... T>(std::index_sequence<T...>) {
        (loop_nest<Dp, Abs | O.term_others[T]>(st, cs, tgt), ...);
      }(std::make_index_sequence<O.nterms>{});
    } else if constexpr (TENSORLEV_HOIST_SPECIALIZE && static_cast<int>(Dp) + 1 == O.hoist && (Abs & hoist_width_mask) == 0) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
      loop_nest<Dp, Abs>(st, cs, tgt);  // device threads: no per-thread workspace
#else
      fibres<Dp, Abs>(st, cs, tgt);
#endif
    } else if constexpr (static_cast<int>(Dp) == O.hoist && (Abs & hoist_bit) == 0) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
      loop_nest<Dp, Abs>(st, cs, tgt);  // device threads: no per-thread workspace
#else
      hoisted<Dp, Abs>(st, cs, tgt);
#endif
    } else if constexpr (O.block >= 0 && static_cast<int>(Dp) == O.block + 1 && (Abs & block_bit) == 0) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
      loop_nest<Dp, Abs>(st, cs, tgt);  // device threads: no per-thread workspace
#else
      blocked<Dp, Abs>(st, cs, tgt);
#endif
    } else {
      loop_nest<Dp, Abs>(st, cs, tgt);
    }
  }

  // ---- block workspace (plan_block) ------------------------------------------

  // The block workspace's inner variable and block (0 without one; not
  // written D.comp_inner[O.block_comp] inline: clang's -Warray-bounds flags
  // the constant index -1 even in branches that never run).
  static constexpr char block_inner_var = [] {
    for (std::size_t c = 0; c < D.ncomp; ++c)
      if (static_cast<int>(c) == O.block_comp) return D.comp_inner[c];
    return char(0);
  }();
  static constexpr int block_size = [] {
    for (std::size_t c = 0; c < D.ncomp; ++c)
      if (static_cast<int>(c) == O.block_comp) return D.comp_block[c];
    return 0;
  }();
  // Whether level k of access a is a full block_inner level binding the
  // block workspace's inner coordinate: its coordinates are 0 .. B-1
  // (validate checks its extent), a constant trip count the compiler
  // unrolls or vectorizes.
  static constexpr bool block_lanes(std::size_t a, std::size_t k) {
    const level_desc& l = D.acc[a].lev[k];
    return O.block >= 0 && l.map == map_kind::block_inner && l.full && l.var == block_inner_var;
  }

  // Whether the block workspace is one vector value (TENSORLEV_LANE_VECTORS;
  // its B floating-point sums fill 16, 32 or 64 bytes): the lanes' loop
  // (lane_vector_slot) adds its B terms to it in one operation, and the
  // value stays in a register across the slot loop. As an array indexed
  // by the lane, GCC 12 kept it in memory there (a store per slot and
  // half of each slot's loads; cage10's SELL-8 SpMV 10% slower).
  static constexpr bool lane_vector = [] {
    if constexpr (!TENSORLEV_LANE_VECTORS || !std::is_floating_point_v<V>) {
      return false;
    } else {
      const std::size_t bytes = sizeof(V) * static_cast<std::size_t>(block_size);
      return O.block >= 0 && (bytes == 16 || bytes == 32 || bytes == 64);
    }
  }();
  // Whether slot S of loop Dp is the block workspace's lanes (block_lanes,
  // inside kernel::blocked) and its terms go to the workspace's vector: the
  // loop's only iterator and lattice point (the branch runs every lane
  // itself; plan_block's loops have no other).
  template <std::size_t Dp, mask_t Abs, std::size_t S>
  static constexpr bool lane_vector_slot() {
    if constexpr (!lane_vector || (Abs & block_bit) == 0 || (Abs & (hoist_bit | combine_bit | first_bit)) != 0) {
      return false;
    } else {
      constexpr const loop_plan& P = plan<Dp, Abs>;
      if constexpr (P.merged[S] < 0 || P.nm != 1 || P.np != 1) {
        return false;
      } else {
        constexpr iter_desc it = P.it[static_cast<std::size_t>(P.merged[S])];
        return it.coord && block_lanes(static_cast<std::size_t>(it.acc), static_cast<std::size_t>(it.lev));
      }
    }
  }

  // Whether loop Dp is the loop right inside a block whose workspace is
  // one vector value (kernel::blocked passes it as the loop's target):
  // point keeps the vector and the loop's position in locals there
  // (TENSORLEV_BLOCK_LOCALS).
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool lane_block_loop() {
    return TENSORLEV_BLOCK_LOCALS && lane_vector && (Abs & block_bit) != 0 &&
           (Abs & (hoist_bit | combine_bit | first_bit)) == 0 && static_cast<int>(Dp) == O.block + 1;
  }

  // The logical coordinate of blocked coordinate r (outer * block + inner)
  // of computed variable c: r itself, or the remapping level's remap(r)
  // (SELL-C-sigma's lanes).
  template <std::size_t C>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static I unblock(const state& st, I r) {
    if constexpr (D.comp_remap[C] > 0)
      return level_of<static_cast<std::size_t>(D.comp_acc[C]), static_cast<std::size_t>(D.comp_remap[C] - 1)>(st)
          .remap(r);
    else
      return r;
  }

  // Loop Dp = O.block + 1, in a block of the output's computed variable
  // (its block coordinate bound by loop O.block): inside the extent, the
  // loops below sum into w (their target is w[0], indexed by the inner
  // coordinate in `inner`), and each of the block's B sums is added into
  // the output once; the last block, if it reaches past the extent, runs
  // the loops as they are.
  template <std::size_t Dp, mask_t Abs>
  static void blocked(state& st, const cursor& cs, V& tgt) {
    constexpr auto c = static_cast<std::size_t>(O.block_comp);
    constexpr I B = static_cast<I>(D.comp_block[c]);
    const I base = static_cast<I>(st.var_val[var_index(D.comp_outer[c])] * B);
    const I extent = st.extent[var_index(D.comp_var[c])];
    const auto slot = [&](I l) {
      cursor at = cs;
      at.pos[0] = level_of<0, 0>(st).locate(I(0), anc<0, 0>(st), unblock<c>(st, static_cast<I>(base + l))).pos;
      return at;
    };
    if (extent - base < B) {
      if constexpr (output::block_store)  // the output was not zero-filled (located_output::block_store)
        for (I l = 0; l < extent - base; ++l) output::store(st, slot(l), V{});
      loop_nest<Dp, Abs>(st, cs, tgt);
      return;
    }
    V w[static_cast<std::size_t>(B)]{};
#if TENSORLEV_LANE_VECTORS
    if constexpr (lane_vector) {
      typename detail::lane_vec<V, sizeof(V) * static_cast<std::size_t>(B)>::type wv{};
      loop_nest<Dp, Abs | block_bit>(st, cs, reinterpret_cast<V&>(wv));
      __builtin_memcpy(w, &wv, sizeof w);
    } else {
      loop_nest<Dp, Abs | block_bit>(st, cs, w[0]);
    }
#else
    loop_nest<Dp, Abs | block_bit>(st, cs, w[0]);
#endif
    if constexpr (D.comp_remap[c] > 0) {
      // Remapped rows (SELL-C-sigma): each lane's sum goes to its row, read
      // from the permutation without the check (base + l < extent). The
      // loop is unrolled: left rolled, it indexes w by a variable, and GCC
      // keeps w in memory across the slot loop.
      const auto& lanes =
          level_of<static_cast<std::size_t>(D.comp_acc[c]), static_cast<std::size_t>(D.comp_remap[c] - 1)>(st);
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)  // (nvcc passes either pragma to g++, which warns)
#pragma GCC unroll 16
#endif
      for (I l = 0; l < B; ++l) {
        cursor at = cs;
        at.pos[0] = level_of<0, 0>(st).locate(I(0), anc<0, 0>(st), lanes.remap_inside(static_cast<I>(base + l))).pos;
        if constexpr (output::block_store)
          output::store(st, at, w[static_cast<std::size_t>(l)]);
        else
          to_output(st, at, w[static_cast<std::size_t>(l)]);
      }
      return;
    }
    for (I l = 0; l < B; ++l) {
      if constexpr (output::block_store)
        output::store(st, slot(l), w[static_cast<std::size_t>(l)]);
      else
        to_output(st, slot(l), w[static_cast<std::size_t>(l)]);
    }
  }

  // The output's rows of blocked coordinates [from, to) set to zero
  // (output::block_store).
  static void zero_rows(state& st, const cursor& cs, I from, I to) {
    constexpr auto c = static_cast<std::size_t>(O.block_comp);
    for (I r = from; r < to; ++r) {
      cursor at = cs;
      at.pos[0] = level_of<0, 0>(st).locate(I(0), anc<0, 0>(st), unblock<c>(st, r)).pos;
      output::store(st, at, V{});
    }
  }

  // block_store: loop 0 visits the blocks [lo, hi) of its operand's block
  // level; the output's rows outside them (that level shorter than the
  // ceil(n / B) blocks the output needs: pack never builds one, a tensor
  // assembled from its levels may) are zeroed, since no block stores them.
  static void zero_unreached_rows(state& st, const cursor& cs) {
    constexpr auto c = static_cast<std::size_t>(O.block_comp);
    constexpr I B = static_cast<I>(D.comp_block[c]);
    const I n = st.extent[var_index(D.comp_var[c])];
    const I nb = static_cast<I>(n / B + (n % B != 0));  // blocks the output needs
    I lo{}, hi{};
    outer_range(st, cs, lo, hi);
    const I first = lo < nb ? (lo > I(0) ? lo : I(0)) : nb, last = hi < nb ? (hi > first ? hi : first) : nb;
    zero_rows(st, cs, I(0), first == nb ? n : static_cast<I>(first * B));  // first * B < n when first < nb
    if (last < nb) zero_rows(st, cs, static_cast<I>(last * B), n);
  }

  // ---- hoisted factors (plan_hoist) -------------------------------------------

  // The workspace t(v) lives on the stack: extents of v above this run the
  // loops unhoisted.
  static constexpr std::size_t hoist_cap = 256;

  // Loop Dp = O.hoist: the loops below sum the factors that are not hoisted
  // into t (their target is t[0], indexed by v in `inner`), then one loop
  // over v adds t(v) times the hoisted factors into the output. Every
  // iteration of loop Dp - 1 hoists, fibres of one entry too: a runtime test
  // of the fibre's length (hoisting only where loop Dp runs twice or more)
  // was slower on FROSTT's FB15k-237, where 65% of the fibres hold one
  // entry, than hoisting always (bench/README). With
  // TENSORLEV_HOIST_SPECIALIZE (config.hpp) t is not zeroed: the first
  // entry loop Dp reaches stores into it (first_bit; loop Dp + 1 is the
  // last loop, over v through dense levels, so that entry writes every
  // t(v)), later ones add. Zeroing it per fibre was a memset call per fibre
  // (GCC turns the loop into one): 8% of CSF MTTKRP on FB15k-237 with GCC;
  // with clang 14 the flag per entry costs more than that. Always inlined:
  // called once per fibre, and out of line GCC kept the buffered row's sums
  // (fibres_fixed's w) in memory.
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_ALWAYS_INLINE static void hoisted(state& st, const cursor& cs, V& tgt) {
    static_assert(Dp + 2 == O.n, "tensorlev: the hoisted sub-nest is loop n-2 over loop n-1 (plan_hoist)");
    constexpr std::size_t VI = var_index(O.vars[O.n - 1]);
    if constexpr (constexpr int N = hoist_width(Abs); N != 0) {
      // v's extent is N (fibres): t and, with the buffered output row, its
      // sums w = tgt fit in registers. Every loop over r here, in
      // fibres_fixed and in leaf_fixed is a rolled loop (config.hpp): GCC
      // then vectorizes it, where unrolled first t became N scalars.
      constexpr mask_t Cb = (Abs & ~hoist_width_mask) | combine_bit;
      V t[N];
      st.hoist_any = false;
      loop_nest<Dp, Abs | hoist_bit>(st, cs, t[0]);
      if (st.hoist_any) {
        if constexpr (buffered) st.fibre_any = true;
        const cursor c0 = at_v<hoisted_accs | 1U>(st, cs, I(0));
        if constexpr (buffered) {
          // The products go into a local array first, then into the row's
          // sums: summed straight into tgt (w, the caller's), every store
          // might alias the factors' values, reloaded per r. The output's
          // position is stepped too, though unused here: without it GCC 12
          // kept the row's sums in memory (FB15k-237, R = 16: 3.4 ms
          // against 1.9; bench/README.md).
          V s[N];
          TENSORLEV_ROLLED_LOOP
          for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r)
            s[r] = t[r] * eval<E, 0, 1, Cb>(*st.expr, st, at_v_next<hoisted_accs | 1U>(st, cs, c0, static_cast<I>(r)));
          TENSORLEV_ROLLED_LOOP
          for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r) (&tgt)[r] += s[r];
        } else {
          TENSORLEV_ROLLED_LOOP
          for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r) {
            const cursor c = at_v_next<hoisted_accs | 1U>(st, cs, c0, static_cast<I>(r));
            to_output(st, c, t[r] * eval<E, 0, 1, Cb>(*st.expr, st, c));
          }
        }
      }
    } else {
      const I n = st.extent[VI];
      if (static_cast<std::size_t>(n) > hoist_cap) {
        loop_nest<Dp, Abs>(st, cs, tgt);
        return;
      }
      V t[hoist_cap];
      if constexpr (!TENSORLEV_HOIST_SPECIALIZE)
        for (I r = 0; r < n; ++r) t[static_cast<std::size_t>(r)] = V{};
      st.hoist_any = false;
      loop_nest<Dp, Abs | hoist_bit>(st, cs, t[0]);
      // A fibre without entries adds nothing: not even 0 * C(k,r), which is
      // NaN where C(k,r) is not finite (the unhoisted loops never read C there).
      if (st.hoist_any) combine<Abs>(st, cs, t, n);
    }
  }

  // Whether access a's last level binds the hoisted loop's variable v.
  static constexpr bool binds_hoist_var(std::size_t a) {
    return D.acc[a].nlev > 0 && D.acc[a].lev[D.acc[a].nlev - 1].var == O.vars[O.n - 1];
  }

  // Whether the output row is summed in registers over loop O.hoist - 1 (its
  // fibres): the output does not depend on that loop's variable, so its
  // position (but v) is bound above it. As SPLATT's root kernel buffers a
  // slice's row.
  static constexpr bool buffer_row = [] {
    if (O.hoist < 1) return false;
    for (std::size_t k = 0; k < D.acc[0].order; ++k)
      if (D.acc[0].vars[k] == O.vars[O.hoist - 1]) return false;
    return true;
  }();
  // The row's sums w[N] are a plain array (hoisting already asks that of V).
  static constexpr bool buffered = buffer_row && std::is_trivially_default_constructible_v<V>;

  // The hoisted factors, and the accesses below the hoist depth (operands
  // that are neither hoisted nor the output).
  static constexpr mask_t hoisted_accs = O.hoist_outer;
  static constexpr mask_t inner_accs = ((mask_t{1} << NA) - 1U) & ~(hoisted_accs | 1U);

  // The cursor at v = r: the last levels of the accesses in Which (bit a:
  // access a) that bind v, located there.
  template <mask_t Which>
  TENSORLEV_ALWAYS_INLINE static cursor at_v(const state& st, const cursor& cs, I r) {
    cursor c = cs;
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (((Which >> A) & 1U) != 0 && binds_hoist_var(A)) {
              constexpr std::size_t K = D.acc[A].nlev - 1;
              const located<I> loc = level_of<A, K>(st).locate(parent_pos<A, K>(cs), anc<A, K>(st), r);
              c.pos[A] = loc.pos;
              c.hi[A] = loc.pos + 1;
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    return c;
  }

  // The cursor at v = r from c0, the cursor at v = 0 (at_v<Which>): a
  // contiguous level's position is c0's plus r (no multiplication per r);
  // other levels locate r.
  template <mask_t Which>
  TENSORLEV_ALWAYS_INLINE static cursor at_v_next(const state& st, const cursor& cs, const cursor& c0, I r) {
    cursor c = c0;
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (((Which >> A) & 1U) != 0 && binds_hoist_var(A)) {
              constexpr std::size_t K = D.acc[A].nlev - 1;
              if constexpr (D.acc[A].lev[K].contiguous)
                c.pos[A] = c0.pos[A] + r;
              else
                c.pos[A] = level_of<A, K>(st).locate(parent_pos<A, K>(cs), anc<A, K>(st), r).pos;
              c.hi[A] = c.pos[A] + 1;
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    return c;
  }

  // Loop Dp = O.hoist - 1 (the fibres' loop): where v's extent is one of
  // hoist_widths, its loops run with that extent as a constant (the
  // workspace, the loop over v and the combine have constant trip counts),
  // and with buffer_row the output row's sums stay in w across the fibres
  // and go into the output once. Other extents run the loops as they are.
  template <std::size_t Dp, mask_t Abs>
  static void fibres(state& st, const cursor& cs, V& tgt) {
    constexpr std::size_t VI = var_index(O.vars[O.n - 1]);
    const I n = st.extent[VI];
    [&]<int... C>(std::integer_sequence<int, C...>) {
      if (!((n == hoist_widths[C] && (fibres_fixed<Dp, Abs | hoist_width_bits(C + 1)>(st, cs, tgt), true)) || ...))
        loop_nest<Dp, Abs>(st, cs, tgt);
    }(std::make_integer_sequence<int, static_cast<int>(std::size(hoist_widths))>{});
  }
  template <std::size_t Dp, mask_t Abs>
  static void fibres_fixed(state& st, const cursor& cs, V& tgt) {
    constexpr int N = hoist_width(Abs);
    if constexpr (buffered) {
      V w[N];
      TENSORLEV_ROLLED_LOOP
      for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r) w[r] = V{};
      st.fibre_any = false;
      loop_nest<Dp, Abs>(st, cs, w[0]);
      // A row no fibre reached gets nothing (as the unbuffered loops).
      if (st.fibre_any)
        TENSORLEV_ROLLED_LOOP
        for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r)
          to_output(st, at_v<1U>(st, cs, static_cast<I>(r)), w[r]);
    } else {
      loop_nest<Dp, Abs>(st, cs, tgt);
    }
  }
  // Loop n-1 under a fixed width: v = 0 .. N-1 with every level binding it
  // located (plan_hoist: full, locatable, always found, unique), into the
  // workspace t.
  template <mask_t Abs>
  TENSORLEV_ALWAYS_INLINE static void leaf_fixed(state& st, const cursor& cs, V& tgt) {
    constexpr int N = hoist_width(Abs);
    constexpr mask_t Ev = Abs & ~(first_bit | hoist_width_mask);
    // As in hoisted: the values into a local array, then into t (through
    // tgt, every store might alias the operands' values).
    const cursor c0 = at_v<inner_accs>(st, cs, I(0));
    V s[N];
    TENSORLEV_ROLLED_LOOP
    for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r)
      s[r] = eval_root<Ev>(st, at_v_next<inner_accs>(st, cs, c0, static_cast<I>(r)));
    TENSORLEV_ROLLED_LOOP
    for (std::size_t r = 0; r < static_cast<std::size_t>(N); ++r) {
      if constexpr ((Abs & first_bit) != 0)
        (&tgt)[r] = s[r];
      else
        (&tgt)[r] += s[r];
    }
  }

  // output(.., v) += t(v) * hoisted factors(.., v), for every v: the output
  // and the hoisted factors that bind v are located at v (dense levels).
  template <mask_t Abs>
  static void combine(state& st, const cursor& cs, const V* t, I n) {
    for (I r = 0; r < n; ++r) {
      const cursor c = at_v<hoisted_accs | 1U>(st, cs, r);
      to_output(st, c, t[static_cast<std::size_t>(r)] * eval<E, 0, 1, Abs | combine_bit>(*st.expr, st, c));
    }
  }

  // ---- the innermost loop's context (leaf_ctx) -------------------------------
  //
  // The innermost loop, where it binds the output's last coordinate and
  // the output keeps a row there (the Gustavson workspace: `leaf`), runs
  // with the row's pointers and count in locals and the values of the
  // operands bound above it read once: through the state, every entry
  // reloaded the row's pointers, stored its coordinate's variable, and
  // reloaded A's value in A(i,j) * B(j,k) (a store into the row may alias
  // any of them as far as the compiler knows). Host code only; the output
  // declines the context in the device form's launches (leaf_open).
  // Whether the output recomputes values into its pattern (compute_numeric:
  // the trusted innermost loop of numeric_plan is instantiated for it).
  static constexpr bool numeric_leaf = [] {
    if constexpr (requires { output::keeps_patterns; })
      return output::keeps_patterns;
    else
      return false;
  }();
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool leaf_loop() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return false;
#else
    if constexpr (!out_leaf || Dp + 1 != O.n) {
      return false;
    } else {
      constexpr const loop_plan& P = plan<Dp, Abs>;
      return P.out_done && P.var == output::leaf_var && (Abs & (hoist_bit | combine_bit | block_bit)) == 0 &&
             O.ra == 0 && D.ncomp == 0;
    }
#endif
  }
  // The operands present under Abs whose every level is bound above loop
  // Dp: their values do not change in it.
  template <std::size_t Dp, mask_t Abs>
  static constexpr mask_t leaf_invariant() {
    mask_t m = 0;
    for (std::size_t a = 1; a < NA; ++a) {
      if (absent(Abs, static_cast<int>(a))) continue;
      bool above = true;
      for (std::size_t k = 0; k < D.acc[a].nlev; ++k)
        if (var_pos(O, D.acc[a].lev[k].var) >= static_cast<int>(Dp)) above = false;
      if (above) m |= mask_t{1} << a;
    }
    return m;
  }
  // (Jammed: the jammed loop's own instantiation, so that the loops every
  // other run takes keep theirs to themselves; see inner.)
  template <mask_t Inv, bool Jammed = false, std::size_t... A>
  static void read_invariant(leaf_ctx& lc, const state& st, const cursor& cs, std::index_sequence<A...>) {
    ((((Inv >> A) & 1U) != 0 ? (void)(lc.inv[A] = access_value<A>(st, cs)) : (void)0), ...);
  }
  // Whether the cursor carries the innermost loop's context.
  TENSORLEV_HOST_DEVICE static bool has_leaf(const cursor& cs) {
    if constexpr (out_leaf)
      return cs.lf != nullptr;
    else
      return (void)cs, false;
  }

  // The iterators of loop Dp (by index) over a block's lanes (a block_inner
  // level) whose access's next level is a lanes_found level
  // (level_concepts.hpp): where each says its children under these lanes
  // are all found, the loops below run with lanes_found_bit, without the
  // found checks (blocked DIA's interior blocks; docs/design.md, "Blocked
  // DIA").
  template <std::size_t Dp, mask_t Abs>
  static constexpr std::uint32_t lanes_found_iters() {
    if constexpr ((Abs & lanes_found_bit) != 0 || Dp >= O.n) {
      return 0;
    } else {
      constexpr const loop_plan& P = plan<Dp, Abs>;
      std::uint32_t m = 0;
      for (std::size_t x = 0; x < P.nit; ++x) {
        const iter_desc& it = P.it[x];
        if (it.chain || P.zero) continue;
        const access_desc& ad = D.acc[static_cast<std::size_t>(it.acc)];
        const auto k = static_cast<std::size_t>(it.lev);
        if (ad.lev[k].map == map_kind::block_inner && k + 1 < ad.nlev && ad.lev[k + 1].lanes_found)
          m |= std::uint32_t{1} << x;
      }
      return m;
    }
  }
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static bool lanes_all_found(const state& st) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    constexpr std::uint32_t M = lanes_found_iters<Dp, Abs>();
    bool found = true;
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (
          [&] {
            if constexpr (((M >> X) & 1U) != 0) {
              constexpr auto A = static_cast<std::size_t>(P.it[X].acc);
              constexpr auto K = static_cast<std::size_t>(P.it[X].lev);  // the lanes; K + 1 tells
              found = found && level_of<A, K + 1>(st).lanes_found(anc<A, K>(st));
            }
          }(),
          ...);
    }(std::make_index_sequence<P.nit>{});
    return found;
  }

  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static void loop_nest(state& st, const cursor& cs, V& tgt) {
    if constexpr (lanes_found_iters<Dp, Abs>() != 0) {
      if (lanes_all_found<Dp, Abs>(st)) {
        nest<Dp, Abs | lanes_found_bit>(st, cs, tgt);
        return;
      }
    }
    nest<Dp, Abs>(st, cs, tgt);
  }
  // loop_nest's body (inlined by next_loop into the innermost loop's parent
  // where that loop has its context).
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void nest(state& st, const cursor& cs, V& tgt) {
    if constexpr (Dp == O.n) {
      if constexpr (nonzero(D, D.root, Abs)) tgt += eval_root<Abs>(st, cs);
    } else {
      TENSORLEV_PLAN(P, (plan<Dp, Abs>));
      static_assert(check_plan<P.error, P.error_acc>());
      if constexpr (!P.zero) {
        constexpr std::size_t NM = P.nm;
        [[maybe_unused]] const I begin = output::template mark<Dp, Abs>(st, cs);
        std::array<I, NM> cur{}, end{};
        [&]<std::size_t... S>(std::index_sequence<S...>) {
          (init_slot<Dp, Abs, S>(st, cs, cur[S], end[S]), ...);
        }(std::make_index_sequence<NM>{});
        if constexpr (Dp == 0 && (Abs & ~hoist_width_mask) == 0 && par != par_kind::none) {
          if (st.chunked) {
            if constexpr (cut_by_coord) {
              [&]<std::size_t... S>(std::index_sequence<S...>) {
                ((cur[S] = first_at_least<S>(st, cur[S], end[S], st.chunk_lo),
                  end[S] = first_at_least<S>(st, cur[S], end[S], st.chunk_hi)),
                 ...);
              }(std::make_index_sequence<NM>{});
            } else {
              cur[0] = st.chunk_lo, end[0] = st.chunk_hi;
            }
          }
        }
        // The loop's lattice points under absent set Ab (a mask constant).
        const auto points = [&](const cursor& c, auto ab) {
          [&]<std::size_t... Pt>(std::index_sequence<Pt...>) {
            (point<Dp, decltype(ab)::value, Pt>(st, c, tgt, cur, end), ...);
          }(std::make_index_sequence<P.np>{});
        };
        using as_is = std::integral_constant<mask_t, Abs>;
        if constexpr (leaf_loop<Dp, Abs>()) {
          leaf_ctx lc;
          cursor c = cs;
          if (output::template leaf_open<leaf_mode(Abs)>(st, lc.out)) {
            read_invariant<leaf_invariant<Dp, Abs>()>(lc, st, cs, std::make_index_sequence<NA>{});
            c.lf = &lc;
            // A row the output trusts (numeric_plan) runs a loop of its
            // own, without the output's per-product check; instantiated
            // only for outputs compute_numeric takes. A row through the
            // slot table (slot_nest chose it: trusted) runs the loop of
            // its own mode.
            if constexpr ((Abs & (slots_bit | record_bit)) != 0) {
              points(c, std::integral_constant<mask_t, Abs | trusted_bit>{});
            } else if constexpr (numeric_leaf) {
              if (output::leaf_trusted(lc.out))
                points(c, std::integral_constant<mask_t, Abs | trusted_bit>{});
              else
                points(c, as_is{});
            } else {
              points(c, as_is{});
            }
            output::template leaf_close<leaf_mode(Abs)>(st, lc.out);
          } else {
            c.lf = nullptr;
            points(c, as_is{});
          }
        } else {
          points(cs, as_is{});
        }
        output::template after_loop<Dp, Abs>(st, cs, begin);
      }
    }
  }

  // The position of access A's level K's parent: the root's (always 0, from
  // root_cursor) for the first level. A constant there lets the compiler
  // fold a dense level's locate (0 * extent + i) where the cursor reaches
  // the loops by reference and its root entries would be loads.
  template <std::size_t A, std::size_t K>
  TENSORLEV_HOST_DEVICE static I parent_pos(const cursor& cs) {
    if constexpr (K == 0)
      return I(0);
    else
      return cs.pos[A];
  }

  template <std::size_t A, std::size_t K>
  TENSORLEV_HOST_DEVICE static ancestors<I> anc(const state& st) {
    return ancestors<I>(st.crd[A], K);
  }

  template <std::size_t Dp, mask_t Abs, std::size_t S>
  TENSORLEV_HOST_DEVICE static void init_slot(const state& st, const cursor& cs, I& cur, I& end) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    if constexpr (P.merged[S] == -2) {
      // blocked coordinate: outer * B + inner, if inside the tensor
      constexpr std::size_t c = static_cast<std::size_t>(P.computed);
      if constexpr ((Abs & block_bit) != 0 && static_cast<int>(c) == O.block_comp) {
        // inside the workspace's block, which lies inside the extent (kernel::blocked); the lane in the cursor
        const I r = st.var_val[var_index(D.comp_outer[c])] * I(D.comp_block[c]) + cs.lane;
        if constexpr (row_read_in_block(D, c))  // (not for y = A x: the unused load kept GCC from holding w in
          cur = unblock<c>(st, r);              // registers, copter2 0.35 -> 0.29 ms)
        else
          cur = r;  // only the workspace's lane stands for the row here (no remap read)
        end = cur + 1;
      } else {
        // (a remap is the identity past the extent: padding stays outside)
        const I v = unblock<c>(st, st.var_val[var_index(D.comp_outer[c])] * I(D.comp_block[c]) +
                                       st.var_val[var_index(D.comp_inner[c])]);
        cur = v;
        end = v < st.extent[var_index(P.var)] ? v + 1 : v;
      }
    } else if constexpr (P.merged[S] < 0) {
      cur = I(0);
      end = st.extent[var_index(P.var)];
    } else {
      constexpr iter_desc it = P.it[P.merged[S]];
      constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
      const auto& lvl = level_of<A, K>(st);
      if constexpr (it.coord && (Abs & block_bit) != 0 && block_lanes(A, K)) {
        cur = I(0), end = static_cast<I>(block_size);  // its extent, the block (validate)
      } else if constexpr (it.coord) {
        const bounds<I> b = lvl.coord_bounds(anc<A, K>(st));
        cur = b.begin, end = b.end;
      } else if constexpr (K > 0 && !D.acc[A].lev[K - 1].unique) {
        // The parent may be a segment of positions with equal coordinates.
        cur = lvl.pos_bounds(cs.pos[A]).begin;
        end = lvl.pos_bounds(cs.hi[A] - 1).end;
      } else {
        const bounds<I> b = lvl.pos_bounds(parent_pos<A, K>(cs));
        cur = b.begin, end = b.end;
      }
    }
  }

  // Coordinate of merged slot S at its current position; false when the
  // position holds no coordinate.
  template <std::size_t Dp, mask_t Abs, std::size_t S>
  TENSORLEV_HOST_DEVICE static bool slot_coord(const state& st, I cur, I& c) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    if constexpr (P.merged[S] < 0) {
      c = cur;
      return true;
    } else {
      constexpr iter_desc it = P.it[P.merged[S]];
      constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
      if constexpr (it.coord) {
        c = cur;
        return true;
      } else {
        const coordinate<I> r = level_of<A, K>(st).pos_access(cur, anc<A, K>(st));
        c = r.coord;
        if constexpr (it.may_miss)
          return r.found;
        else
          return true;
      }
    }
  }

  // ---- prefetching ---------------------------------------------------------------
  //
  // A loop driven by one level's positions (slot S of loop Dp) that locates
  // another operand's level by each coordinate, whose children a later loop
  // reads (Gustavson's SpGEMM: A's columns j locate B's row j), waits on
  // those children's bounds and first entries at every coordinate: rows of
  // a large B lie anywhere in memory and the hardware cannot guess them.
  // Where the driving level reads coordinates ahead (ahead_readable_level)
  // and the located level's child prefetches (prefetching_level), the loop
  // fetches the bounds for the coordinate 2 * prefetch_distance positions
  // ahead and the first children (and values, at the last level) for the
  // one prefetch_distance ahead; positions past the current parent's are
  // the next parents' (the next rows of A), read just the same.
  static constexpr std::size_t prefetch_distance = 8;
  template <std::size_t Dp, mask_t Abs, std::size_t S>
  static constexpr bool prefetches() {
    constexpr loop_plan P = plan<Dp, Abs>;
    if constexpr (P.merged[S] < 0) {
      return false;
    } else {
      constexpr iter_desc d = P.it[P.merged[S]];
      if constexpr (d.coord || d.acc == 0) {
        return false;
      } else {
        using DL = std::remove_cvref_t<decltype(level_of<static_cast<std::size_t>(d.acc), static_cast<std::size_t>(d.lev)>(
            std::declval<const state&>()))>;
        if constexpr (!ahead_readable_level<DL>)
          return false;
        else
          return []<std::size_t... It>(std::index_sequence<It...>) {
            return (prefetch_target<plan<Dp, Abs>.it[It]>() || ...);
          }(std::make_index_sequence<P.nit>{});
      }
    }
  }
  // Whether iterator it is located by coordinate into an operand whose next
  // level prefetches.
  template <iter_desc it>
  static constexpr bool prefetch_target() {
    if constexpr (!it.located || it.may_miss || it.chain || it.acc <= 0) {
      return false;
    } else if constexpr (static_cast<std::size_t>(it.lev) + 1 >= D.acc[it.acc].nlev) {
      return false;
    } else {
      using NL = std::remove_cvref_t<decltype(level_of<static_cast<std::size_t>(it.acc),
                                                       static_cast<std::size_t>(it.lev) + 1>(std::declval<const state&>()))>;
      return prefetching_level<NL>;
    }
  }
  // (Every function on this path is always inlined: GCC takes a function
  // whose only effect is a prefetch for one without side effects, and drops
  // calls to it.)
  template <std::size_t Dp, mask_t Abs, std::size_t S>
  TENSORLEV_ALWAYS_INLINE static void prefetch_ahead(const state& st, const cursor& cs, I at) {
    if constexpr (prefetches<Dp, Abs, S>()) {
      TENSORLEV_PLAN(P, (plan<Dp, Abs>));
      constexpr iter_desc d = P.it[P.merged[S]];
      const auto& drv = level_of<static_cast<std::size_t>(d.acc), static_cast<std::size_t>(d.lev)>(st);
      const auto here = static_cast<std::size_t>(at);
      I far{}, near{};
      const bool has_far = drv.ahead_coord(here + 2 * prefetch_distance, far);
      const bool has_near = drv.ahead_coord(here + prefetch_distance, near);
      prefetch_targets<Dp, Abs>(st, cs, has_far, far, has_near, near, std::make_index_sequence<P.nit>{});
    } else {
      (void)st, (void)cs, (void)at;
    }
  }
  // Which located levels' children are prefetched: those averaging at most
  // prefetch_max_children per parent (rows short against a miss: mdual's 4
  // per row, cond-mat-2005's 9). Longer rows hide the next row's miss
  // behind their own work, and there the prefetch's instructions cost more
  // than it saves (nsjac, 18 per row: 10% slower; cage10, 14: 4-7%).
  static constexpr double prefetch_max_children = 12;
  static void choose_prefetch(state& st) { choose_prefetch_ops(st, std::make_index_sequence<NA>{}); }
  template <std::size_t... A>
  static void choose_prefetch_ops(state& st, std::index_sequence<A...>) {
    (choose_prefetch_levels<A>(st, std::make_index_sequence<(D.acc[A].nlev > 0 ? D.acc[A].nlev - 1 : 0)>{}), ...);
  }
  template <std::size_t A, std::size_t... K>
  static void choose_prefetch_levels(state& st, std::index_sequence<K...>) {
    (choose_prefetch_level<A, K>(st), ...);
  }
  template <std::size_t A, std::size_t K>
  static void choose_prefetch_level(state& st) {
    if constexpr (A > 0 && !detail::is_scalar_v<op_t<A>>) {
      using NL = std::remove_cvref_t<decltype(level_of<A, K + 1>(st))>;
      if constexpr (prefetching_level<NL>) st.pf[A][K] = level_of<A, K + 1>(st).mean_children() <= prefetch_max_children;
    } else {
      (void)st;
    }
  }
  template <std::size_t Dp, mask_t Abs, std::size_t... It>
  TENSORLEV_ALWAYS_INLINE static bool prefetch_enabled(const state& st, std::index_sequence<It...>) {
    return (prefetch_on<plan<Dp, Abs>.it[It]>(st) || ...);
  }
  template <iter_desc it>
  TENSORLEV_ALWAYS_INLINE static bool prefetch_on(const state& st) {
    if constexpr (prefetch_target<it>())
      return st.pf[static_cast<std::size_t>(it.acc)][static_cast<std::size_t>(it.lev)];
    else
      return (void)st, false;
  }
  template <std::size_t Dp, mask_t Abs, std::size_t... It>
  TENSORLEV_ALWAYS_INLINE static void prefetch_targets(const state& st, const cursor& cs, bool has_far, I far,
                                                       bool has_near, I near, std::index_sequence<It...>) {
    (prefetch_target_at<plan<Dp, Abs>.it[It]>(st, cs, has_far, far, has_near, near), ...);
  }
  template <iter_desc it>
  TENSORLEV_ALWAYS_INLINE static void prefetch_target_at(const state& st, const cursor& cs, bool has_far, I far,
                                                         bool has_near, I near) {
    if constexpr (prefetch_target<it>()) {
      constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
      if (!st.pf[A][K]) return;
      const auto& lvl = level_of<A, K>(st);
      const auto& next = level_of<A, K + 1>(st);
      if (has_far) {
        const located<I> r = lvl.locate(parent_pos<A, K>(cs), anc<A, K>(st), far);
        if (r.found) next.prefetch_bounds(r.pos);
      }
      if (has_near) {
        const located<I> r = lvl.locate(parent_pos<A, K>(cs), anc<A, K>(st), near);
        if (r.found) {
          const I lo = next.prefetch_children(r.pos);
          if constexpr (K + 2 == D.acc[A].nlev) {
            const auto vals = std::get<A>(st.ops)->values();
            if (lo >= I(0) && static_cast<std::size_t>(lo) < vals.size()) TENSORLEV_PREFETCH(vals.data() + lo);
          }
        }
      }
    } else {
      (void)st, (void)cs, (void)has_far, (void)far, (void)has_near, (void)near;
    }
  }

  // End of the run of positions holding coordinate i, starting at cur.
  template <std::size_t Dp, mask_t Abs, std::size_t S>
  TENSORLEV_HOST_DEVICE static I segment_end(const state& st, I cur, I end, I i) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    constexpr iter_desc it = P.it[P.merged[S]];
    constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
    const auto& lvl = level_of<A, K>(st);
    I q = cur + 1;
    while (q < end && lvl.pos_access(q, anc<A, K>(st)).coord == i) ++q;
    return q;
  }

  static constexpr bool subset(std::uint32_t q, std::uint32_t p) { return (q & ~p) == 0; }
  // Whether slot s of plan p is a merged iterator over segments (clang's
  // -Warray-bounds flags p.it[p.merged[s]] written inline where merged[s]
  // is the constant -1, even behind `merged[s] >= 0 &&`).
  template <class Plan>
  static constexpr bool merged_segment(const Plan& p, std::size_t s) {
    return p.merged[s] >= 0 && p.it[static_cast<std::size_t>(p.merged[s])].segment;
  }

  // ---- jammed innermost loops (numeric_plan) ---------------------------------
  //
  // In a trusted run (numeric_plan: the patterns equal those of a checked
  // run, and the row's pattern marked), consecutive iterations of the loop
  // right above the innermost one whose innermost segments hold the same
  // coordinates (rows of B in A(i,k) * B(k,j) with identical columns: the
  // degrees of freedom of one node in a finite-element matrix) run the
  // innermost loop once, adding their G products per coordinate with one
  // load and one store of the row's entry instead of G (unroll-and-jam;
  // docs/design.md, "Jammed rows"). Which segments are identical comes from
  // a table built once per pattern (build_jam_runs: per parent position,
  // the length of its run of identical segments from there), so the loop
  // reads one byte per iteration, not the coordinates. Planned where the loop above
  // has one driver and its other iterators locate without missing, and the
  // innermost loop one iterator (the jammed operand's level under one
  // positioned above) besides the output's: the other operands' values are
  // bound above it (read once per iteration, as leaf_invariant).
  static constexpr std::size_t jam_max = 4;
  struct jam_desc {
    bool ok = false;
    int acc = -1;  // the operand and level the innermost loop iterates
    int lev = -1;
  };
  template <std::size_t Dp, mask_t Abs>
  static constexpr jam_desc jam_plan() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return {};
#else
    if constexpr (!numeric_leaf || Dp + 2 != O.n || Dp == 0) {
      return {};  // (loop 0 has no loop above it to choose the jammed instantiation)
    } else if constexpr (!leaf_loop<Dp + 1, Abs>()) {
      return {};
    } else {
      constexpr const loop_plan& Pk = plan<Dp, Abs>;
      constexpr const loop_plan& Pj = plan<Dp + 1, Abs>;
      jam_desc d;
      if (Pk.zero || Pj.zero || Pk.np != 1 || Pj.np != 1 || popcount32(Pk.pts[0]) != 1 || popcount32(Pj.pts[0]) != 1)
        return d;
      if ((Abs & (hoist_bit | combine_bit | block_bit | lanes_found_bit | first_bit | trusted_bit | slots_bit |
                  record_bit)) != 0 ||
          O.hoist >= 0 || O.block >= 0 || O.scatter >= 0 || static_cast<int>(Dp) == O.ws_open ||
          static_cast<int>(Dp + 1) == O.ws_open || keep_var_val(Pk.var))
        return d;
      const int dk = Pk.merged[std::countr_zero(Pk.pts[0])];
      if (dk < 0) return d;
      for (std::size_t x = 0; x < Pk.nit; ++x) {
        const iter_desc& it = Pk.it[x];
        if (it.chain || it.coord || it.segment || it.may_miss || it.appended ||
            keep_crd(static_cast<std::size_t>(it.acc), static_cast<std::size_t>(it.lev)))
          return d;
        if (static_cast<int>(x) != dk && !it.located) return d;
      }
      // The innermost loop: its driver, and the output's appended level.
      const int dj = Pj.merged[std::countr_zero(Pj.pts[0])];
      if (dj < 0) return d;
      for (std::size_t x = 0; x < Pj.nit; ++x)
        if (static_cast<int>(x) != dj && !(Pj.it[x].appended && Pj.it[x].acc == 0)) return d;
      const iter_desc& j = Pj.it[dj];
      if (j.coord || j.chain || j.located || j.segment || j.may_miss || j.appended || j.lev < 1 ||
          !D.acc[static_cast<std::size_t>(j.acc)].lev[static_cast<std::size_t>(j.lev - 1)].unique)
        return d;
      bool parent_here = false;
      for (std::size_t x = 0; x < Pk.nit; ++x)
        parent_here = parent_here || (Pk.it[x].acc == j.acc && Pk.it[x].lev + 1 == j.lev);
      if (!parent_here) return d;
      d.ok = true;
      d.acc = j.acc;
      d.lev = j.lev;
      return d;
    }
#endif
  }
  // The level the table describes: the innermost loop's under no absent
  // operand (jam_loop holds a case to it), where that level keeps its
  // segments' bounds in an array (`pos()`: the parent positions' count).
  static constexpr jam_desc jam_target = [] {
    if constexpr (O.n >= 2) {
      constexpr jam_desc d = jam_plan<O.n - 2, 0>();
      if constexpr (d.ok) {
        using L = std::remove_cvref_t<decltype(level_of<static_cast<std::size_t>(d.acc), static_cast<std::size_t>(d.lev)>(
            std::declval<const state&>()))>;
        if constexpr (requires(const L& l) {
                        l.pos().size();
                        l.pos_bounds(I(0));
                      })
          return d;
        else
          return jam_desc{};
      } else {
        return d;
      }
    } else {
      return jam_desc{};
    }
  }();
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool jam_loop() {
    if constexpr (!jam_target.ok) {
      return false;
    } else {
      constexpr jam_desc d = jam_plan<Dp, Abs>();
      return d.ok && d.acc == jam_target.acc && d.lev == jam_target.lev;
    }
  }
  // The table for a pattern: for every parent position q of the jammed
  // level, how many parent positions from q on (q included, at most 255)
  // hold segments with the same coordinates as q's: q' lies in q's run
  // where q <= q' < q + span[q]. One byte a parent, so that the loop above
  // reads one byte per iteration (mdual: 2 MB of 64-bit run starts read
  // at random made its trusted run 2x slower). Returns whether the jam
  // pays: the segments that repeat the one before them hold at least an
  // eighth of the level's entries (bcsstk16 and nsjac two thirds,
  // NotreDame_www's repeated rows; none on cage10, mdual or copter2, whose
  // trusted runs then take the loop without the table).
  static bool build_jam_runs(const state& st, std::vector<std::uint8_t>& span) {
    if constexpr (jam_target.ok) {
      constexpr auto A = static_cast<std::size_t>(jam_target.acc), K = static_cast<std::size_t>(jam_target.lev);
      const auto& lvl = level_of<A, K>(st);
      const std::size_t n = lvl.pos().size() == 0 ? 0 : lvl.pos().size() - 1;
      span.assign(n, std::uint8_t{1});
      const ancestors<I> a = anc<A, K>(st);
      std::size_t repeated = 0, entries = 0;
      for (std::size_t q = n; q-- > 0;) {
        const bounds<I> b1 = lvl.pos_bounds(static_cast<I>(q));
        entries += static_cast<std::size_t>(b1.end - b1.begin);
        if (q == 0) break;
        const bounds<I> b0 = lvl.pos_bounds(static_cast<I>(q - 1));
        if (b0.end - b0.begin != b1.end - b1.begin) continue;
        bool same = true;
        for (I p = 0; same && p < b1.end - b1.begin; ++p) {
          const coordinate<I> c0 = lvl.pos_access(static_cast<I>(b0.begin + p), a);
          const coordinate<I> c1 = lvl.pos_access(static_cast<I>(b1.begin + p), a);
          same = c0.found == c1.found && (!c0.found || c0.coord == c1.coord);
        }
        if (!same) continue;
        repeated += static_cast<std::size_t>(b1.end - b1.begin);
        if (span[q] < 255) span[q - 1] = static_cast<std::uint8_t>(span[q] + 1);
      }
      return repeated != 0 && repeated * 8 >= entries;
    } else {
      (void)st;
      span.clear();
      return false;
    }
  }
  // The innermost loop's output mode under Abs (output::leaf_emit): 0
  // checked, 1 trusted, 2 through the slot table, 3 recording it.
  static constexpr int leaf_mode(mask_t abs) {
    if ((abs & record_bit) != 0) return 3;
    if ((abs & slots_bit) != 0) return 2;
    return (abs & trusted_bit) != 0 ? 1 : 0;
  }
  // Whether loop Dp opens the output's workspace row, and a numeric_plan's
  // trusted row may take the slot table there (docs/design.md, "Slot
  // tables"): the output adds each product through its leaf (the loop
  // right below the row's loops is the innermost leaf loop: no hoisted,
  // blocked or scattered products, which reach the row another way), on
  // the host.
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool slot_rows() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return false;
#else
    if constexpr (!numeric_leaf || !out_leaf) {
      return false;
    } else {
      return static_cast<int>(Dp) == O.ws_open && Dp + 1 < O.n &&
             (Abs & (hoist_bit | combine_bit | block_bit | first_bit | trusted_bit | jam_bit | slots_bit |
                     record_bit)) == 0 &&
             O.hoist < 0 && O.block < 0 && O.scatter < 0 && O.ra == 0 && D.ncomp == 0;
    }
#endif
  }
  // Whether the rows that open the output's workspace may take the slot
  // table (slot_rows at the loop that opens them).
  static constexpr bool slot_planned() {
    if constexpr (O.ws_open >= 0)
      return slot_rows<static_cast<std::size_t>(O.ws_open), 0>();
    else
      return false;
  }
  // Whether loop Dp under Abs, where it opens the output's rows, chooses
  // the slot table's loops whenever the kernel plans them: the output opens
  // a row for the table (open_numeric: no marks) on the plan's word alone,
  // and the ordinary loops below such a row would add into an unmarked row.
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool slot_rows_everywhere() {
    if constexpr (static_cast<int>(Dp) == O.ws_open && slot_planned())
      return slot_rows<Dp, Abs>();
    else
      return true;
  }
  // The loops below a slot row in their own instantiation (inner chose it).
  template <std::size_t Dp, mask_t Abs>
  [[gnu::noinline]] static void slot_nest(state& st, const cursor& cs, V& tgt) {
    next_loop<Dp, Abs>(st, cs, tgt);
  }
  // Loop Dp in its jammed instantiation (inner chose it for a trusted row
  // with a table).
  template <std::size_t Dp, mask_t Abs>
  [[gnu::noinline]] static void jam_nest(state& st, const cursor& cs, V& tgt) {
    nest<Dp, Abs | trusted_bit>(st, cs, tgt);
  }
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  // Loop Dp's positions q .. e - 1 (its one driver, slot S) in runs of up to
  // jam_max iterations with identical innermost segments (a run of one
  // through the same jammed loop, with one term).
  template <std::size_t Dp, mask_t Abs, std::size_t S, std::size_t NM>
  static void jam_scan(state& st, const cursor& cs, std::array<I, NM>& cur, const std::array<I, NM>& end,
                       const std::uint8_t* span) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    constexpr std::uint32_t Pm = P.pts[0];
    constexpr auto AJ = static_cast<std::size_t>(jam_target.acc);
    const I e = end[S];
    cursor c[jam_max];
    const std::array<I, NM> se{};
    while (cur[S] < e) {
      // The first iteration; its run of identical segments is
      // [q, q + span[q]) (its level never misses: jam_plan).
      I i;
      (void)slot_coord<Dp, Abs | trusted_bit | jam_bit, S>(st, cur[S], i);
      c[0] = cs;
      position<Dp, Abs | trusted_bit | jam_bit, Pm>(st, c[0], i, cur, se);
      const I q = c[0].pos[AJ];
      const I run = static_cast<I>(span[static_cast<std::size_t>(q)]);
      std::size_t g = 1;
      if (run > I(1)) {
        for (; g < jam_max && cur[S] + static_cast<I>(g) < e; ++g) {
          std::array<I, NM> at = cur;
          at[S] = static_cast<I>(cur[S] + static_cast<I>(g));
          I ig;
          (void)slot_coord<Dp, Abs | trusted_bit | jam_bit, S>(st, at[S], ig);
          c[g] = cs;
          position<Dp, Abs | trusted_bit | jam_bit, Pm>(st, c[g], ig, at, se);
          const I qg = c[g].pos[AJ];
          if (qg < q || qg - q >= run) break;
        }
      }
      switch (g) {
        // (A run of one through the same jammed loop, not the loop's own
        // body: the functions the other loops call gain no caller here.)
        case 1: jam_leaf<Dp + 1, Abs, 1>(st, c); break;
        case 2: jam_leaf<Dp + 1, Abs, 2>(st, c); break;
        case 3: jam_leaf<Dp + 1, Abs, 3>(st, c); break;
        default: jam_leaf<Dp + 1, Abs, jam_max>(st, c); break;
      }
      cur[S] = static_cast<I>(cur[S] + static_cast<I>(g));
    }
  }
  // The innermost loop (Dj) once for G iterations of the loop above (their
  // cursors c): each coordinate of the first one's segment adds the G
  // products at the same offset in each segment.
  template <std::size_t Dj, mask_t Abs, std::size_t G>
  static void jam_leaf(state& st, const cursor* c) {
    static_assert(jam_max == 4, "jam_scan names the run lengths 2, 3 and jam_max");
    constexpr mask_t At = Abs | trusted_bit | jam_bit;
    TENSORLEV_PLAN(P, (plan<Dj, At>));
    constexpr auto S = static_cast<std::size_t>(std::countr_zero(P.pts[0]));
    constexpr auto AJ = static_cast<std::size_t>(jam_target.acc);
    constexpr mask_t Inv = leaf_invariant<Dj, Abs>();
    constexpr mask_t Ab = case_absent(P, At, P.pts[0], 0);
    leaf_ctx lc[G];
    cursor x[G];
    I begin[G];
    I e = I(0);
    if (!output::leaf_open(st, lc[0].out)) return;  // (never: a host run)
    for (std::size_t g = 0; g < G; ++g) {
      x[g] = c[g];
      I eg;
      init_slot<Dj, At, S>(st, c[g], begin[g], eg);
      if (g == 0) e = eg;
      read_invariant<Inv, true>(lc[g], st, c[g], std::make_index_sequence<NA>{});
      x[g].lf = &lc[g];
    }
    for (I p = begin[0]; p < e; ++p) {
      I col;
      (void)slot_coord<Dj, At, S>(st, p, col);
      V v = [&]<std::size_t... Gs>(std::index_sequence<Gs...>) {
        const auto term = [&](std::size_t g) {
          cursor y = x[g];
          y.pos[AJ] = static_cast<I>(p - begin[0] + begin[g]);
          y.hi[AJ] = static_cast<I>(y.pos[AJ] + 1);
          return eval_root<Ab, Inv>(st, y);
        };
        return (term(Gs) + ...);
      }(std::make_index_sequence<G>{});
      output::template leaf_emit<true>(lc[0].out, col, v);
    }
    output::leaf_close(st, lc[0].out);
  }
#endif

  template <std::size_t Dp, mask_t Abs, std::size_t Pt, std::size_t NM>
  TENSORLEV_HOST_DEVICE static void point(state& st, const cursor& cs, V& tgt, std::array<I, NM>& cur, const std::array<I, NM>& end) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    constexpr std::uint32_t Pm = P.pts[Pt];
    constexpr bool single = popcount32(Pm) == 1;
    if constexpr (single) {
      constexpr std::size_t S = static_cast<std::size_t>(std::countr_zero(Pm));
      constexpr bool seg = merged_segment(P, S);
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
      // The jammed instantiation (inner chose it through jam_nest: a trusted
      // row, a table).
      // (The rest in the else branch: not instantiated here, so that the
      // loop above does not look larger to GCC's inliner than it is.)
      if constexpr ((Abs & trusted_bit) != 0 && jam_loop<Dp, Abs & ~trusted_bit>()) {
        jam_scan<Dp, Abs & ~trusted_bit, S>(st, cs, cur, end, output::jam_span(st));
      } else
#endif
      {
#if TENSORLEV_LANE_VECTORS
      if constexpr (lane_vector_slot<Dp, Abs, S>()) {
        // The block workspace's lanes 0 .. B-1: each lane's terms into
        // part (its lane's entry: the loops below index their target by
        // the lane), then part added to the workspace's vector at once.
        // part starts at -0.0, which the compiler folds away (-0.0 + t is
        // t for every t; +0.0 + t is not, for t = -0.0): with +0.0 GCC
        // built part in two halves through memory and the vector add read
        // it whole, a stalled store forwarding per slot.
        using vec = typename detail::lane_vec<V, sizeof(V) * static_cast<std::size_t>(block_size)>::type;
        V part[static_cast<std::size_t>(block_size)];
        for (I l = 0; l < static_cast<I>(block_size); ++l) {
          part[static_cast<std::size_t>(l)] = V(-0.0);
          std::array<I, NM> at = cur;
          at[S] = l;
          body<Dp, Abs, Pm>(st, cs, part[0], l, at, std::array<I, NM>{});
        }
        // (Built in place: a lambda returning the vector by value draws
        // GCC's -Wpsabi note on AVX-512 vectors.)
        vec sum;
        [&]<std::size_t... L>(std::index_sequence<L...>) {
          sum = vec{part[L]...};
        }(std::make_index_sequence<static_cast<std::size_t>(block_size)>{});
        *reinterpret_cast<vec*>(&tgt) += sum;
        cur[S] = end[S];
        return;
      }
#endif
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
      if constexpr (std::is_floating_point_v<V> && split_sum(D, O, P, Dp, Abs)) {
        // Partial sums: one dependent add per group of positions instead
        // of one per entry (the add's latency bounds a single sum over rows
        // in cache), position q + k of each group into sum k. A range of
        // split_sum_long or more positions takes W = split_sum_ways sums in
        // one local array, the form compilers vectorize (the array becomes
        // a vector register of sums, lane k summing position q + k: the
        // same additions in the same order as the scalar loop), then one
        // half group into the first half. A shorter one takes W / 2 sums
        // in named scalars: on rows of 16-31 the eight sums' entry and
        // combine cost more than they save, and four sums in an array (the
        // eight's loop) made dense rows of 6 and 12 0.83-0.95x as fast
        // (bench/README.md, "Split sums with a length rule"). The first
        // sum starts from tgt, a reference the compiler
        // cannot keep in a register (it may alias the operands). The loop
        // below takes the remainder (fewer than W / 2 positions) into tgt.
        constexpr int W = split_sum_ways;
        // Positions from, ..., from + N - 1 into part[0], ..., part[N - 1].
        const auto group = [&st, &cs]<int N, int G>(V(&part)[G], I from, std::integral_constant<int, N>) {
          for (int k = 0; k < N; ++k) {
            const I at = static_cast<I>(from + k);
            I i;
            if (!slot_coord<Dp, Abs, S>(st, at, i)) continue;
            std::array<I, NM> pos{};
            pos[S] = at;
            body<Dp, Abs, Pm>(st, cs, part[k], i, pos, std::array<I, NM>{});
          }
        };
        const I e = end[S];
        const I len = static_cast<I>(e - cur[S]);
        if (len >= static_cast<I>(split_sum_long)) {
          V part[W]{};
          part[0] = tgt;
          I q = cur[S];
          for (; e - q >= static_cast<I>(W); q = static_cast<I>(q + W)) group(part, q, std::integral_constant<int, W>{});
          if (e - q >= static_cast<I>(W / 2)) {
            group(part, q, std::integral_constant<int, W / 2>{});
            q = static_cast<I>(q + W / 2);
          }
          cur[S] = q;
          tgt = split_sum_combine(part);
        } else if (len >= static_cast<I>(split_sum_min(D, P))) {
          static_assert(W / 2 == 4, "the short path names four sums");
          V t0 = tgt, t1{}, t2{}, t3{};
          const auto step = [&st, &cs](I at, V& t) {
            I i;
            if (!slot_coord<Dp, Abs, S>(st, at, i)) return;
            std::array<I, NM> pos{};
            pos[S] = at;
            body<Dp, Abs, Pm>(st, cs, t, i, pos, std::array<I, NM>{});
          };
          I q = cur[S];
          for (; e - q >= static_cast<I>(4); q = static_cast<I>(q + 4)) {
            step(q, t0);
            step(static_cast<I>(q + 1), t1);
            step(static_cast<I>(q + 2), t2);
            step(static_cast<I>(q + 3), t3);
          }
          cur[S] = q;
          tgt = (t0 + t1) + (t2 + t3);
        }
      }
#endif
#if TENSORLEV_LANE_VECTORS
      if constexpr (lane_block_loop<Dp, Abs>()) {
        // The loop right inside a block whose workspace is one vector
        // (kernel::blocked; TENSORLEV_BLOCK_LOCALS): the sums and the
        // position in locals for the loop's length, stored back once.
        // (The loop below as scan's, on the locals; scan itself is left as
        // it is, since GCC's inlining of the slots' loop into the block
        // changed with one more lambda around it.)
        using vec = typename detail::lane_vec<V, sizeof(V) * static_cast<std::size_t>(block_size)>::type;
        vec acc = *reinterpret_cast<const vec*>(&tgt);
        std::array<I, NM> c = cur;
        const auto scan_locals = [&]<bool Pf>(std::bool_constant<Pf>) TENSORLEV_LAMBDA_ALWAYS_INLINE {
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
          for (; c[S] < end[S];) {
            if constexpr (Pf) prefetch_ahead<Dp, Abs, S>(st, cs, c[S]);
            I i;
            if (!slot_coord<Dp, Abs, S>(st, c[S], i)) {
              ++c[S];
              continue;
            }
            std::array<I, NM> se{};
            if constexpr (seg) se[S] = segment_end<Dp, Abs, S>(st, c[S], end[S], i);
            body<Dp, Abs, Pm>(st, cs, reinterpret_cast<V&>(acc), i, c, se);
            if constexpr (seg)
              c[S] = se[S];
            else
              ++c[S];
          }
        };
        if constexpr (prefetches<Dp, Abs, S>()) {
          if (prefetch_enabled<Dp, Abs>(st, std::make_index_sequence<P.nit>{}))
            scan_locals(std::true_type{});
          else
            scan_locals(std::false_type{});
        } else {
          scan_locals(std::false_type{});
        }
        *reinterpret_cast<vec*>(&tgt) = acc;
        cur = c;
        return;
      }
#endif
      // Where this loop may prefetch, it has two versions, chosen once:
      // with the prefetch, and without it where the statement's operands do
      // not call for it (a test per entry cost nsjac's unsorted product 13%,
      // for the code it keeps around the product loop).
      const auto scan = [&]<bool Pf>(std::bool_constant<Pf>) TENSORLEV_LAMBDA_ALWAYS_INLINE {
        for (; cur[S] < end[S];) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
          if constexpr (Pf) prefetch_ahead<Dp, Abs, S>(st, cs, cur[S]);
#endif
          I i;
          if (!slot_coord<Dp, Abs, S>(st, cur[S], i)) {
            ++cur[S];
            continue;
          }
          std::array<I, NM> se{};
          if constexpr (seg) se[S] = segment_end<Dp, Abs, S>(st, cur[S], end[S], i);
          body<Dp, Abs, Pm>(st, cs, tgt, i, cur, se);
          if constexpr (seg)
            cur[S] = se[S];
          else
            ++cur[S];
        }
      };
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
      if constexpr (prefetches<Dp, Abs, S>()) {
        if (prefetch_enabled<Dp, Abs>(st, std::make_index_sequence<P.nit>{}))
          scan(std::true_type{});
        else
          scan(std::false_type{});
      } else {
        scan(std::false_type{});
      }
#else
      scan(std::false_type{});
#endif
      }
    } else {
      while ([&]<std::size_t... S>(std::index_sequence<S...>) {
        return ((!((Pm >> S) & 1U) || cur[S] < end[S]) && ...);
      }(std::make_index_sequence<NM>{})) {
        std::array<I, NM> c{};
        // Positions that hold no coordinate (holes) are skipped.
        const bool hole = [&]<std::size_t... S>(std::index_sequence<S...>) {
          bool h = false;
          (
              [&] {
                if constexpr ((Pm >> S) & 1U) {
                  if (h) return;
                  if (!slot_coord<Dp, Abs, S>(st, cur[S], c[S])) h = true, ++cur[S];
                }
              }(),
              ...);
          return h;
        }(std::make_index_sequence<NM>{});
        if (hole) continue;
        I i = c[static_cast<std::size_t>(std::countr_zero(Pm))];
        [&]<std::size_t... S>(std::index_sequence<S...>) {
          ((((Pm >> S) & 1U) && c[S] < i ? (void)(i = c[S]) : (void)0), ...);
        }(std::make_index_sequence<NM>{});
        std::array<I, NM> se{};
        [&]<std::size_t... S>(std::index_sequence<S...>) {
          (
              [&] {
                if constexpr (((Pm >> S) & 1U) && merged_segment(P, S)) {
                  if (c[S] == i) se[S] = segment_end<Dp, Abs, S>(st, cur[S], end[S], i);
                }
              }(),
              ...);
        }(std::make_index_sequence<NM>{});
        // The first lattice point below Pm whose iterators all sit at i.
        [&]<std::size_t... Q>(std::index_sequence<Q...>) {
          bool done = false;
          (
              [&] {
                constexpr std::uint32_t Qm = P.pts[Q];
                if constexpr (subset(Qm, Pm)) {
                  if (done) return;
                  const bool match = [&]<std::size_t... S>(std::index_sequence<S...>) {
                    return ((!((Qm >> S) & 1U) || c[S] == i) && ...);
                  }(std::make_index_sequence<NM>{});
                  if (match) {
                    done = true;
                    body<Dp, Abs, Qm>(st, cs, tgt, i, cur, se);
                  }
                }
              }(),
              ...);
        }(std::make_index_sequence<P.np>{});
        [&]<std::size_t... S>(std::index_sequence<S...>) {
          (
              [&] {
                if constexpr ((Pm >> S) & 1U) {
                  if (c[S] == i) {
                    if constexpr (merged_segment(P, S))
                      cur[S] = se[S];
                    else
                      ++cur[S];
                  }
                }
              }(),
              ...);
        }(std::make_index_sequence<NM>{});
      }
    }
  }

  // The body of one lattice case: bind the variable, position every
  // iterator, then recurse into the next loop.
  template <std::size_t Dp, mask_t Abs, std::uint32_t Qm, std::size_t NM>
  TENSORLEV_HOST_DEVICE static void body(state& st, const cursor& parent, V& tgt, I i, const std::array<I, NM>& cur,
                   const std::array<I, NM>& se) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    cursor cs = parent;
    // (With the innermost loop's context the output takes i from inner.
    // body sees nest's Abs and inner the lattice case's, which adds access
    // bits only; leaf_loop does not depend on those.)
    constexpr bool lane = (Abs & block_bit) != 0 && P.var == block_inner_var;
    if constexpr (lane) {
      cs.lane = i;  // the block workspace's lane: read below from the cursor only
    } else if constexpr (keep_var_val(P.var)) {
      if (!leaf_loop<Dp, Abs>() || !has_leaf(parent)) st.var_val[var_index(P.var)] = i;
    }
    [&]<std::size_t... It>(std::index_sequence<It...>) {
      (
          [&] {
            if constexpr (!P.it[It].chain && keep_crd(P.it[It].acc, P.it[It].lev))
              st.crd[P.it[It].acc][P.it[It].lev] = i;
          }(),
          ...);
    }(std::make_index_sequence<P.nit>{});
    position<Dp, Abs, Qm>(st, cs, i, cur, se);
    with_found<Dp, Abs, Qm, 0, 0>(st, cs, tgt, i);
  }

  // Body's positions for lattice case Qm at coordinate i: every merged
  // iterator of the case at its slot (or its coordinate), then the located
  // levels that never miss (kernel::jam_scan positions its iterations with
  // it too).
  template <std::size_t Dp, mask_t Abs, std::uint32_t Qm, std::size_t NM>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void position(state& st, cursor& cs, I i,
                                                                     const std::array<I, NM>& cur,
                                                                     const std::array<I, NM>& se) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    [&]<std::size_t... S>(std::index_sequence<S...>) {
      (
          [&] {
            if constexpr (((Qm >> S) & 1U) && P.merged[S] >= 0) {
              constexpr iter_desc it = P.it[P.merged[S]];
              constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
              if constexpr (it.coord) {
                const located<I> r = level_of<A, K>(st).coord_access(parent_pos<A, K>(cs), anc<A, K>(st), i);
                cs.pos[A] = r.pos;
                cs.hi[A] = r.pos + 1;
              } else {
                cs.pos[A] = cur[S];
                cs.hi[A] = it.segment ? se[S] : cur[S] + 1;
              }
            }
          }(),
          ...);
    }(std::make_index_sequence<NM>{});
    // Locate into levels that never miss; then branch on the others.
    [&]<std::size_t... It>(std::index_sequence<It...>) {
      (
          [&] {
            constexpr iter_desc it = P.it[It];
            if constexpr (it.located && !it.may_miss) {
              constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
              if constexpr (it.chain) {
                (void)locate_chain<A>(st, cs);
              } else {
                const located<I> r = level_of<A, K>(st).locate(parent_pos<A, K>(cs), anc<A, K>(st), i);
                cs.pos[A] = r.pos;
                cs.hi[A] = r.pos + 1;
              }
            }
          }(),
          ...);
    }(std::make_index_sequence<P.nit>{});
  }

  // Positions a random-access operand by locating through all its levels
  // with the current values of their variables; false if any is missing.
  template <std::size_t A>
  TENSORLEV_HOST_DEVICE static bool locate_chain(state& st, cursor& cs) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      bool found = true;
      (
          [&] {
            if (!found) return;
            st.crd[A][K] = st.var_val[var_index(D.acc[A].lev[K].var)];
            const located<I> r =
                level_of<A, K>(st).locate(parent_pos<A, K>(cs), anc<A, K>(st), static_cast<I>(st.crd[A][K]));
            cs.pos[A] = r.pos;
            cs.hi[A] = r.pos + 1;
            found = r.found;
          }(),
          ...);
      return found;
    }(std::make_index_sequence<D.acc[A].nlev>{});
  }

  template <std::size_t Dp, mask_t Abs, std::uint32_t Qm, std::size_t It, std::uint32_t Found>
  TENSORLEV_HOST_DEVICE static void with_found(state& st, cursor& cs, V& tgt, I i) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    if constexpr (It == P.nit) {
      inner<Dp, case_absent(P, Abs, Qm, Found)>(st, cs, tgt, i);
    } else if constexpr (P.it[It].located && P.it[It].may_miss) {
      constexpr std::size_t A = static_cast<std::size_t>(P.it[It].acc), K = static_cast<std::size_t>(P.it[It].lev);
      bool found;
      if constexpr (P.it[It].chain) {
        found = locate_chain<A>(st, cs);
      } else {
        const located<I> r = level_of<A, K>(st).locate(parent_pos<A, K>(cs), anc<A, K>(st), i);
        cs.pos[A] = r.pos;
        cs.hi[A] = r.pos + 1;
        found = r.found;
      }
      if (found) {
        with_found<Dp, Abs, Qm, It + 1, Found | (std::uint32_t{1} << It)>(st, cs, tgt, i);
      } else {
        with_found<Dp, Abs, Qm, It + 1, Found>(st, cs, tgt, i);
      }
    } else {
      with_found<Dp, Abs, Qm, It + 1, Found>(st, cs, tgt, i);
    }
  }

  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static void inner(state& st, const cursor& cs, V& tgt, [[maybe_unused]] I i) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    if constexpr (nonzero(D, D.root, Abs)) {
      if constexpr ((Abs & hoist_bit) != 0 && P.out_done) {
        // Below the hoist depth: the target is the workspace t (plan_hoist
        // puts the output's last variable innermost, so i is its coordinate).
        static_assert(Dp + 1 == O.n);
        if constexpr ((Abs & first_bit) != 0)
          (&tgt)[static_cast<std::size_t>(i)] = eval_root<Abs & ~first_bit>(st, cs);
        else
          (&tgt)[static_cast<std::size_t>(i)] += eval_root<Abs>(st, cs);
      } else if constexpr (P.out_done) {
        // The output's coordinates are bound: sum the remaining
        // (reduction) loops into a local and hand it to the output (a
        // counting pass needs no value: the reduction loops are skipped).
        V acc{};
        if constexpr (leaf_loop<Dp, Abs>()) {
          if (has_leaf(cs))
            return output::template leaf_emit<leaf_mode(Abs)>(cs.lf->out, i,
                                                               eval_root<Abs, leaf_invariant<Dp, Abs>()>(st, cs));
        }
        // A product that reached the row another way than the innermost
        // loop's leaf: the slot table being recorded would miss it, so the
        // plan drops the table (slot_rows rules these out at compile time;
        // this keeps a case it did not foresee from a wrong result).
        if constexpr ((Abs & record_bit) != 0) output::record_miss(st);
        if constexpr (Dp + 1 == O.n) {
          acc = eval_root<Abs>(st, cs);
        } else {
          if (!output::counting(st)) next_loop<Dp + 1, Abs>(st, cs, acc);
        }
        if constexpr ((Abs & block_bit) != 0 && P.var == block_inner_var)  // the target is the block workspace w[0] (kernel::blocked), i its lane
          (&tgt)[static_cast<std::size_t>(i)] += acc;
        else if constexpr ((Abs & block_bit) != 0)
          (&tgt)[static_cast<std::size_t>(cs.lane)] += acc;
        else
          to_output(st, cs, acc);
      } else {
        output::template before_inner<Dp>(st, cs);
        static_assert(slot_rows_everywhere<Dp, Abs>(),
                      "tensorlev internal: a loop that opens the output's rows does not take the slot table's "
                      "branch although the kernel plans slot rows (kernel::slot_rows)");
        if constexpr ((Abs & hoist_bit) != 0 && static_cast<int>(Dp) == O.hoist) {
          // The fibre's first entry stores into the workspace t (hoisted).
          if constexpr (hoist_width(Abs) != 0) {
          // Width bits are set by fibres, host code only: in device code
          // loop runs the fibres' loop as loop_nest, so no width reaches here.
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
            if (st.hoist_any) {
              leaf_fixed<Abs>(st, cs, tgt);
            } else {
              st.hoist_any = true;
              leaf_fixed<Abs | first_bit>(st, cs, tgt);
            }
#endif
          } else if constexpr (!TENSORLEV_HOIST_SPECIALIZE) {
            st.hoist_any = true;  // t is zeroed (hoisted)
            next_loop<Dp + 1, Abs>(st, cs, tgt);
          } else if (st.hoist_any) {
            next_loop<Dp + 1, Abs>(st, cs, tgt);
          } else {
            st.hoist_any = true;
            next_loop<Dp + 1, Abs | first_bit>(st, cs, tgt);
          }
        } else if constexpr (slot_rows<Dp, Abs>()) {
          // (The output opened the row for the table where the kernel plans
          // slot rows at all, before_inner above: every loop that opens rows
          // must then take this branch; slot_rows_everywhere.)
          // A trusted row with the plan's slot table (or recording it) runs
          // the loops below in an instantiation of their own, out of line
          // (slot_nest), chosen here per row like the jammed loop below.
          switch (output::slot_mode(st)) {
            case 1:
              slot_nest<Dp + 1, Abs | slots_bit>(st, cs, tgt);
              break;
            case 2:
              slot_nest<Dp + 1, Abs | record_bit>(st, cs, tgt);
              break;
            default:
              if constexpr (jam_loop<Dp + 1, Abs>()) {  // as below
                if (output::jam_span(st) != nullptr) {
                  jam_nest<Dp + 1, Abs>(st, cs, tgt);
                  break;
                }
              }
              next_loop<Dp + 1, Abs>(st, cs, tgt);
          }
        } else if constexpr (jam_loop<Dp + 1, Abs>()) {
          // A trusted row with a table of identical innermost segments
          // (numeric_plan) runs the next loop's jammed instantiation, out of
          // line (jam_nest): chosen here, per row, so that the loops every
          // other run takes are compiled as they were (chosen inside the
          // loop, or beside it in the same function, GCC inlined less into
          // them, and the full product on bcsstk16 ran 6-10% slower).
          if (output::jam_span(st) != nullptr)
            jam_nest<Dp + 1, Abs>(st, cs, tgt);
          else
            next_loop<Dp + 1, Abs>(st, cs, tgt);
        } else {
          next_loop<Dp + 1, Abs>(st, cs, tgt);
        }
        output::template after_inner<Dp>(st, cs);
      }
    }
  }

  // ---- parallel outer loop ----------------------------------------------------
  //
  // On a parallel executor loop 0 runs in chunks when it has one iterator
  // and one lattice point, i.e. one range to split (stmt::outer_splittable;
  // a run of equal coordinates, a COO row, is never split), and the output
  // policy can keep the chunks apart (its `par`: scalar partials, disjoint
  // rows, private copies, or count, scan and fill of appended entries).
  // Each chunk copies the state and runs the ordinary loop nest over its
  // sub-range.
  static constexpr par_kind par = output::par;
  static constexpr bool parallel_outer = par != par_kind::none;
  static constexpr bool direct_store = output::direct_store;
  static constexpr bool block_store = output::block_store;
  // Whether chunks are ranges of loop 0's variable rather than of its one
  // iterator's positions (a merged outer loop: stmt::outer_cut_by_coord).
  static constexpr bool cut_by_coord = parallel_outer && base::outer_cut_by_coord;
  // Whether chunk boundaries must move to the start of a run of equal
  // coordinates (the outer loop iterates positions of a non-unique level).
  static constexpr bool align_chunks = [] {
    if (!parallel_outer || cut_by_coord) return false;
    const loop_plan p = plan_loop(D, O, 0, 0);
    if (p.nm == 0 || p.merged[0] < 0) return false;
    return !D.acc[p.it[p.merged[0]].acc].lev[p.it[p.merged[0]].lev].unique;
  }();
  static constexpr std::size_t max_chunks = 1024;

  // Boundaries of loop 0's chunks in its iterator's range (positions or
  // coordinates): n + 1 values, n <= max_chunks; none inside a run of
  // equal coordinates. In a fixed array, not a std::vector: every
  // statement's parallel path instantiated vector<I> for this alone (3% of
  // one SpMV's compile).
  struct chunk_list {
    std::size_t n = 0;  // boundaries: 0, or chunks + 1
    I b[max_chunks + 1];
    [[nodiscard]] std::size_t size() const noexcept { return n; }
    [[nodiscard]] bool empty() const noexcept { return n == 0; }
    [[nodiscard]] const I* data() const noexcept { return b; }
    [[nodiscard]] I& operator[](std::size_t k) noexcept { return b[k]; }
    [[nodiscard]] const I& operator[](std::size_t k) const noexcept { return b[k]; }
  };
  static chunk_list chunk_bounds(const state& st, const cursor& cs) {
    chunk_list bounds;
    I lo{}, hi{};
    outer_range(st, cs, lo, hi);
    if (hi <= lo) return bounds;
    const auto range = static_cast<std::size_t>(hi - lo);
    const std::size_t n = range < max_chunks ? range : max_chunks;
    bounds.n = n + 1;
    for (std::size_t c = 0; c <= n; ++c)
      bounds[c] = lo + static_cast<I>((range / n) * c + (c < range % n ? c : range % n));
    if constexpr (align_chunks) {
      for (std::size_t c = 1; c < n; ++c)
        bounds[c] = align_bound(st, bounds[c] > bounds[c - 1] ? bounds[c] : bounds[c - 1], lo, hi);
    }
    return bounds;
  }

  // The range chunks cut: loop 0's iterator's positions, or the values of
  // its variable when loop 0 is merged (cut_by_coord).
  TENSORLEV_HOST_DEVICE static void outer_range(const state& st, const cursor& cs, I& lo, I& hi) {
    if constexpr (cut_by_coord) {
      lo = I(0), hi = st.extent[var_index(plan<0, 0>.var)];
    } else {
      init_slot<0, 0, 0>(st, cs, lo, hi);
    }
  }

  // The first position in [lo, hi) of loop 0's merged slot S whose
  // coordinate is at least c (hi if none): coordinates are ordered along
  // positions (stmt::outer_cut_by_coord), so a binary search.
  template <std::size_t S>
  TENSORLEV_HOST_DEVICE static I first_at_least(const state& st, I lo, I hi, I c) {
    while (lo < hi) {
      const I mid = lo + (hi - lo) / 2;
      I at{};
      slot_coord<0, 0, S>(st, mid, at);
      if (at < c)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  // Boundary b of loop 0's range [lo, hi) moved forward to the start of a
  // run of equal coordinates (monotone in b, so chunks cut by it stay
  // ordered and cover the range).
  TENSORLEV_HOST_DEVICE static I align_bound(const state& st, I b, I lo, I hi) {
    if (b > lo && b < hi) {
      I prev{}, next{};
      slot_coord<0, 0, 0>(st, b - 1, prev);
      while (b < hi && slot_coord<0, 0, 0>(st, b, next) && next == prev) ++b;
    }
    return b;
  }

  // The state restricted to loop 0's range [lo, hi).
  TENSORLEV_HOST_DEVICE static state chunk_state(const state& st, I lo, I hi) {
    state local = st;
    local.chunked = true, local.chunk_lo = lo, local.chunk_hi = hi;
    return local;
  }

  // Runs fn(c, chunk_state(c)) on ex for every non-empty chunk c between
  // bounds; fn is called concurrently.
  // bounds: a chunk_list, or any contiguous array of I (size(), data()).
  template <class B, class Fn>
  static void for_chunks(const state& st, const B& bounds, const executor& ex, const Fn& fn) {
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    struct context {
      const state* st;
      const I* bounds;
      const Fn* fn;
    } ctx{&st, bounds.data(), &fn};
    ex.for_chunks(
        n,
        [](void* p, std::size_t c) {
          const context& x = *static_cast<const context*>(p);
          if (x.bounds[c] >= x.bounds[c + 1]) return;
          state local = chunk_state(*x.st, x.bounds[c], x.bounds[c + 1]);
          (*x.fn)(c, local);
        },
        &ctx);
  }

  // ---- device form --------------------------------------------------------------
  //
  // What a device launcher (device_launcher; kokkos.hpp makes one from a
  // Kokkos execution space) runs: the same loop nest, as functors launched
  // over n chunks of loop 0. Each chunk finds its own part of loop 0's range
  // where it runs (cut_range: the range read there, split arithmetically,
  // moved to the start of a run of equal coordinates like chunk_bounds), so
  // the host reads nothing of the operands. The state is prepared on the
  // host with its operand pointers into memory the launcher wrote (the
  // operands' views and the expression, copied there once per statement).

  // The number of device chunks: one per value of loop 0's variable, which
  // on a GPU is one thread per row (at least 1).
  static std::size_t device_chunks(const state& st) {
    if constexpr (O.n == 0) {
      return 1;
    } else {
      const auto n = static_cast<std::size_t>(st.extent[var_index(plan<0, 0>.var)]);
      return n > 0 ? n : 1;
    }
  }
  // Chunk c of n of loop 0's range: [a, b); false when empty.
  TENSORLEV_HOST_DEVICE static bool cut_range(const state& st, const cursor& cs, std::size_t c, std::size_t n, I& a,
                                              I& b) {
    I lo{}, hi{};
    outer_range(st, cs, lo, hi);
    if (hi <= lo) return false;
    const auto range = static_cast<std::uint64_t>(hi - lo);
    if (range == n) {
      // One value of loop 0 a chunk (the device form's rows): what the
      // division below gives, without a 64-bit division per GPU thread.
      a = lo + static_cast<I>(c);
      b = a + I(1);
    } else {
      const std::uint64_t q = range / n, r = range % n, c1 = c + 1;
      a = lo + static_cast<I>(q * c + (c < r ? c : r));
      b = lo + static_cast<I>(q * c1 + (c1 < r ? c1 : r));
    }
    if constexpr (align_chunks) {
      a = align_bound(st, a, lo, hi);
      b = align_bound(st, b, lo, hi);
    }
    return a < b;
  }
  TENSORLEV_HOST_DEVICE static cursor root_cursor() {
    cursor cs{};
    for (std::size_t a = 0; a < NA; ++a) cs.pos[a] = I(0), cs.hi[a] = I(1);
    return cs;
  }
  /// Chunk c of n (par rows, scatter or scalar): its scalar partial (zero
  /// for rows and scatter).
  TENSORLEV_HOST_DEVICE static V device_chunk(const state& st, std::size_t c, std::size_t n)
    requires parallel_outer
  {
    const cursor cs = root_cursor();
    I a{}, b{};
    V acc{};
    if (!cut_range(st, cs, c, n, a, b)) return acc;
    state local = chunk_state(st, a, b);
    output::begin_chunk(local, c);
    loop<0, 0>(local, cs, acc);
    return acc;
  }
  /// The whole loop nest on one thread (outer loops that cannot be cut).
  TENSORLEV_HOST_DEVICE static V device_whole(const state& st) {
    state local = st;
    output::begin_chunk(local, 0);
    V acc{};
    loop<0, 0>(local, root_cursor(), acc);
    return acc;
  }
  // What a launcher runs for chunk c of n: device_chunk (n chunks) or
  // device_whole (n = 1).
  TENSORLEV_HOST_DEVICE static V device_call(const state& st, std::size_t c, std::size_t n) {
    if constexpr (parallel_outer)
      return device_chunk(st, c, n);
    else
      return (void)c, (void)n, device_whole(st);
  }
  using chunk_fn = device_chunk_fn<Out, E, Accumulate, int{Pre}, int{Order}...>;
  [[nodiscard]] static chunk_fn device_fn(const state& st) {
    if constexpr (parallel_outer)
      return chunk_fn{st, device_chunks(st)};
    else
      return chunk_fn{st, 1};
  }

  // The operands' objects and the expression, as copied to the launcher's
  // memory (bytewise: views over borrowed arrays, scalars, expression nodes).
  // (An output whose levels are built is not read there: a placeholder.)
  template <class Ptrs>
  struct params_of;
  template <class P0, class... P>
  struct params_of<std::tuple<P0, P...>> {
    using first = std::conditional_t<output::builds_levels, unsigned char, std::remove_cvref_t<std::remove_pointer_t<P0>>>;
    using type = std::tuple<first, std::remove_cvref_t<std::remove_pointer_t<P>>...>;
  };
  struct params {
    typename params_of<ptrs>::type ops;
    E expr;
  };
  template <class T>
  static auto first_param(const T* o) {
    if constexpr (output::builds_levels)
      return (void)o, static_cast<unsigned char>(0);
    else
      return *o;
  }

  // Whether the output policy has a device form: one that builds levels
  // says so (device_builds), the others unless they stream (device_form).
  static constexpr bool device_output_ok = output::builds_levels ? output::device_builds : output::device_form;
  template <class L>
  static void run_device(const Out& out, const E& e, const L& dev) {
    static_assert((dense_copies | sorted_copies) == 0,
                  "tensorlev: on a device this statement would need a converted copy of an operand (a dense copy "
                  "beside a blocked operand, an ordered copy of a hashed level); convert that operand first");
    static_assert(device_output_ok,
                  "tensorlev: the device form assembles sparse outputs whose levels are dense, then compressed "
                  "or singleton levels (CSR, DCSR, CSF, COO, a sparse vector); this output (hashed, blocked, "
                  "streamed, or assembled out of order) is not assembled on a device yet: compute into one of "
                  "those or a dense tensor, or run the statement on a host executor");
    // (Asked only of an output the device form can write: a streamed one
    // is the output tensor itself, refused above.)
    static_assert(!device_output_ok ||
                      (std::is_trivially_copy_constructible_v<params> && std::is_trivially_destructible_v<params>),
                  "tensorlev: the device form copies the operands' views bytewise: every operand must be a view "
                  "over borrowed arrays or a scalar");
    state host = make_state(out, e);
    output::prepare(host);
    const params p = std::apply(
        [&](auto* o0, auto*... o) { return params{typename params_of<ptrs>::type(first_param(o0), *o...), e}; },
        host.ops);
    const params* on_dev = dev.upload(p);
    // The same members at the same offsets in the launcher's copy.
    const auto* base = reinterpret_cast<const char*>(&p);
    const auto* dbase = reinterpret_cast<const char*>(on_dev);
    auto moved = [&](const auto* member) {
      using M = std::remove_cvref_t<decltype(*member)>;
      return reinterpret_cast<const M*>(dbase + (reinterpret_cast<const char*>(member) - base));
    };
    state st = host;
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (A == 0 && output::builds_levels)
              std::get<A>(st.ops) = nullptr;
            else
              std::get<A>(st.ops) = const_cast<std::tuple_element_t<A, ptrs>>(moved(&std::get<A>(p.ops)));
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    st.expr = moved(&p.expr);
    detail::count_kernel();
    if constexpr (device_output_ok) output::template run_device<kernel>(host, st, dev);
  }

  // ---- entry ------------------------------------------------------------------

  static void check_dims(const state& st, I* extent) {
    bool seen[max_vars]{};
    std::size_t from_acc[max_vars]{}, from_dim[max_vars]{};
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (!detail::is_scalar_v<op_t<A>>) {
              const auto& dims = std::get<A>(st.ops)->dims();
              // Each dimension's variable from a table of this operand's
              // own (a loop indexing D at run time would emit all of D).
              constexpr const dim_vars_t& dv = dim_vars<A>;
              for (std::size_t x = 0; x < dv.order; ++x) {
                const std::size_t v = dv.index[x];
                if (!seen[v]) {
                  seen[v] = true, extent[v] = dims[x], from_acc[v] = A, from_dim[v] = x;
                } else if (extent[v] != dims[x]) {
                  detail::throw_extent_mismatch(dv.name[x], A, x, static_cast<long long>(dims[x]), from_acc[v],
                                                from_dim[v], static_cast<long long>(extent[v]));
                }
              }
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    // A remapping level's permutation (SELL-C-sigma's lanes) covers its
    // dimension: the workspace's stores read it unchecked for every row
    // of a full block (a shorter one, assembled by hand, would be read past
    // its end; validate checks the entries themselves).
    [&]<std::size_t... C>(std::index_sequence<C...>) {
      (
          [&] {
            if constexpr (D.comp_remap[C] > 0) {
              constexpr auto A = static_cast<std::size_t>(D.comp_acc[C]);
              constexpr auto K = static_cast<std::size_t>(D.comp_remap[C] - 1);
              const auto& lv = level_of<A, K>(st);
              const I n = std::get<A>(st.ops)->dims()[D.acc[A].lev[K].dim];
              if (lv.rows() != n) detail::throw_permutation_length(A, K, static_cast<long long>(lv.rows()), n);
            }
          }(),
          ...);
    }(std::make_index_sequence<D.ncomp>{});
    // A block_outer level's private variable runs over the blocks of its
    // dimension, ceil(extent / B) (the device form's chunks of a loop over
    // blocks: one a block, not one in all).
    for (std::size_t b = 0; b < block_vars.n; ++b) {
      const I n = extent[block_vars.of[b]];
      const I B = static_cast<I>(block_vars.block[b]);
      extent[block_vars.var[b]] = static_cast<I>(n / B + (n % B != 0 ? 1 : 0));
    }
  }

  // Operand A's dimensions' variables: names and indices.
  struct dim_vars_t {
    std::size_t order = 0;
    char name[max_levels]{};
    std::size_t index[max_levels]{};
  };
  template <std::size_t A>
  static constexpr dim_vars_t dim_vars = [] {
    dim_vars_t t;
    t.order = D.acc[A].order;
    for (std::size_t x = 0; x < t.order; ++x) t.name[x] = D.acc[A].vars[x], t.index[x] = var_index(D.acc[A].vars[x]);
    return t;
  }();

  // The block_outer levels' private variables and the variables they block,
  // a table of its own (check_dims reads it at run time; D stays constant).
  struct block_var_table {
    std::size_t n = 0;
    std::size_t var[max_vars]{}, of[max_vars]{};
    long long block[max_vars]{};
  };
  static constexpr block_var_table block_vars = [] {
    block_var_table t;
    for (std::size_t a = 1; a < D.nacc; ++a)
      for (std::size_t k = 0; k < D.acc[a].nlev; ++k) {
        const level_desc& l = D.acc[a].lev[k];
        if (l.map != map_kind::block_outer || l.block < 1 || l.dim >= D.acc[a].order) continue;
        t.var[t.n] = var_index(l.var), t.of[t.n] = var_index(D.acc[a].vars[l.dim]), t.block[t.n] = l.block;
        ++t.n;
      }
    return t;
  }();

  static constexpr std::uint64_t dense_copies = [] {
    std::uint64_t m = 0;
    for (std::size_t a = 1; a < D.nacc; ++a)
      if (needs_dense_copy(D, a)) m |= std::uint64_t{1} << a;
    return m;
  }();

  static constexpr std::uint64_t sorted_copies = unordered_merges(D, O) & ~dense_copies;

  // The kernel that runs after operand conversion (this one if none).
  template <bool Convert = ((dense_copies | sorted_copies) != 0)>
  struct converted_t {
    using type = kernel;
  };
  template <bool Convert>
    requires Convert
  struct converted_t<Convert> {
    using E2 = std::remove_cvref_t<decltype(convert_operands<dense_copies, sorted_copies, 1>(
        std::declval<const E&>(), std::declval<scratch_copies&>()))>;
    using type = kernel<Out, E2, Accumulate, Pre, Order...>;
  };
  using converted = typename converted_t<>::type;

  template <class Ex = executor>
  static void run(const Out& out, const E& e, const Ex& ex = Ex{}) {
    if constexpr (O.error != plan_error::none) {
      // Reported by the static_assert above; instantiating the run would add
      // errors that name no cause (the output policy of a failed plan).
      return;
    } else if constexpr (device_launcher<Ex> && output::builds_levels && Accumulate) {
      run_accumulated(out, e, ex);
    } else if constexpr (device_launcher<Ex>) {
      run_device(out, e, ex);
    } else if constexpr ((dense_copies | sorted_copies) != 0) {
      scratch_copies keep;
      const auto e2 = convert_operands<dense_copies, sorted_copies, 1>(e, keep);
      kernel<Out, std::remove_cvref_t<decltype(e2)>, Accumulate, Pre, Order...>::run(out, e2, ex);
    } else {
      run_converted(out, e, ex);
    }
  }

  // compute_numeric: out = e into out's present pattern (the output
  // policy's run_numeric), after the operand conversions run would make;
  // trusted: every product is known to lie in out's pattern (numeric_plan).
  // tables: numeric_plan's tables for the current patterns (built here on
  // the first trusted run that needs them; not for operands converted into
  // scratch copies, whose arrays are new each run).
  static void run_numeric(const Out& out, const E& e, const executor& ex, bool trusted = false,
                          numeric_tables* tables = nullptr) {
    if constexpr (O.error != plan_error::none) {
      return;  // reported by the static_assert above
    } else if constexpr ((dense_copies | sorted_copies) != 0) {
      (void)tables;
      scratch_copies keep;
      const auto e2 = convert_operands<dense_copies, sorted_copies, 1>(e, keep);
      kernel<Out, std::remove_cvref_t<decltype(e2)>, false, Pre, Order...>::run_numeric(out, e2, ex, trusted);
    } else {
      constexpr bool keeps = [] {
        if constexpr (requires { output::keeps_patterns; })
          return output::keeps_patterns;
        else
          return false;
      }();
      static_assert(keeps,
                    "tensorlev: compute_numeric recomputes the values of a product assembled through a workspace "
                    "(Gustavson: reductions between the output's dense prefix and its compressed last level, as "
                    "SpGEMM into CSR, CSC, CSR with unsorted rows or a sparse vector, into a tensor that owns its "
                    "arrays); this statement's output is assembled another way: use = or compute");
      if constexpr (keeps) {
        state st = make_state(out, e);
        detail::count_kernel();
        const std::uint8_t* span = nullptr;
        slot_table* slots = nullptr;
        if constexpr (slot_planned()) {
          if (trusted && tables != nullptr && tables->slots.state != 2) slots = &tables->slots;
        }
        if constexpr (jam_target.ok) {
          if (trusted && tables != nullptr && slots == nullptr) {
            if (!tables->built) {
              tables->jam = build_jam_runs(st, tables->jam_span);
              tables->built = true;
            }
            if (tables->jam) span = tables->jam_span.data();
          }
        } else {
          (void)tables;
        }
        output::template run_numeric<kernel>(st, root_cursor(), ex, trusted, span, slots);
      }
    }
  }

  // For tests: the chunk boundaries run_chunked would use for out = e.
  static std::vector<I> outer_chunks(const Out& out, const E& e)
    requires parallel_outer
  {
    const state st = make_state(out, e);
    const chunk_list bounds = chunk_bounds(st, root_cursor());
    return std::vector<I>(bounds.data(), bounds.data() + bounds.size());
  }

  static state make_state(const Out& out, const E& e) {
    state st{std::tuple_cat(std::make_tuple(out.operand()), collect_operands(e)), &e, {}, {}, {}, false, I(0), I(0), {}, false, false, {}};
    check_dims(st, st.extent);
    choose_prefetch(st);
    return st;
  }

  // Whether access a (of the output's type) may be the output itself: it
  // reads the output's variables in the output's order, in a dense output
  // written once per component where it is read (no reduction; += or a
  // direct store; no precompute, whose terms each add into the output in
  // turn, so a later term would read what an earlier one added), so each
  // component is read before it is written, in the same iteration
  // (`p(i) = r(i) + b * p(i)`; also chunked on threads).
  // Whether access a reads the output's variables in the output's order,
  // through the same levels' dimensions and maps (fuse.hpp asks it too).
  static constexpr bool reads_output_pointwise(std::size_t a) {
    const access_desc& x = D.acc[a];
    const access_desc& o = D.acc[0];
    if (a == 0 || x.order != o.order || x.nlev != o.nlev) return false;
    for (std::size_t v = 0; v < o.order; ++v)
      if (x.vars[v] != o.vars[v]) return false;
    for (std::size_t k = 0; k < o.nlev; ++k)
      if (x.lev[k].dim != o.lev[k].dim || x.lev[k].map != o.lev[k].map) return false;
    return true;
  }
  // Whether the kernel writes each output component once, where it reads it.
  static constexpr bool writes_in_place =
      O.out == out_kind::located && !base::has_reductions && (Accumulate || direct_store) && Pre == 0;
  static constexpr bool reads_output_in_place(std::size_t a) { return writes_in_place && reads_output_pointwise(a); }

  static void run_converted(const Out& out, const E& e, [[maybe_unused]] const executor& ex) {
    static_assert([] {
      if constexpr (output::builds_levels && requires { typename op_t<0>::storage; })
        return growable_storage<typename op_t<0>::storage>;
      else
        return true;
    }(),
                  "tensorlev: this sparse output's arrays cannot grow (device memory, or borrowed): the host does not "
                  "assemble into them; run the statement where they live (kokkos_executor of their space), or "
                  "compute into a tensor with owning storage");
    state st = make_state(out, e);
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (A > 0 && std::is_same_v<op_t<A>, op_t<0>> && !reads_output_in_place(A)) {
              if (static_cast<const void*>(std::get<A>(st.ops)) == static_cast<const void*>(std::get<0>(st.ops)))
                detail::throw_output_on_right(A);
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    const cursor cs = root_cursor();
    if constexpr (output::builds_levels && Accumulate) {
      run_accumulated(out, e, ex);
    } else {
      detail::count_kernel();
      output::template run<kernel>(st, cs, ex);
    }
  }

  // out += e on a sparse output is out = old + e. When e sums over
  // reduction variables, old must not be summed with it: e is computed into
  // a temporary first, and out = old + temporary. (old shares the output's
  // arrays until the output adopts new ones.)
  // On a device launcher old and the temporary are read through views of
  // their arrays, like every operand of the device form.
  template <class Ex>
  static void run_accumulated(const Out& out, const E& e, const Ex& ex) {
    using T = op_t<0>;
    const auto operand = [](const T& t) -> decltype(auto) {
      if constexpr (device_launcher<Ex>)
        return detail::borrow<const typename T::value_type>(t, t.values().data());
      else
        return (t);
    };
    const T old = *out.operand();
    const auto& old_op = operand(old);
    using old_access = decltype(rebind_access<Out>::to(&old_op));
    if constexpr (base::has_reductions) {
      T tmp = old;
      const auto tmp_out = rebind_access<Out>::to(&tmp);
      kernel<std::remove_const_t<decltype(tmp_out)>, E, false, Pre, Order...>::run(tmp_out, e, ex);
      const auto& tmp_op = operand(tmp);
      using tmp_access = decltype(rebind_access<Out>::to(&tmp_op));
      kernel<Out, add_expr<old_access, tmp_access>, false, Pre>::run(
          out, add_expr<old_access, tmp_access>{rebind_access<Out>::to(&old_op), rebind_access<Out>::to(&tmp_op)},
          ex);
    } else {
      kernel<Out, add_expr<old_access, E>, false, Pre, Order...>::run(
          out, add_expr<old_access, E>{rebind_access<Out>::to(&old_op), e}, ex);
    }
  }
};
}  // inline namespace TENSORLEV_KERNEL_ABI

// ---- statements: split top-level terms whose reductions differ ---------------
//
// Einstein summation: a reduction variable is summed over the terms that
// use it. `A(i,j) = B(i,j) + C(i,k) * D(k,j)` sums k over C*D only, so the
// runner splits top-level terms into groups with equal reduction variables
// and runs one fused loop nest per group (the first assigns, the others
// accumulate). Statements whose terms agree run as one loop nest.

// A negation distributes over the terms below it: `-(B(i,j)*c(j) + d(i))`
// is the terms -B*c and -d, so d is not summed over j.
template <class Terms>
auto negate_terms(const Terms& ts) {
  return std::apply([](const auto&... t) { return std::make_tuple(neg_expr<std::remove_cvref_t<decltype(t)>>{t}...); },
                    ts);
}

template <class E>
auto top_terms(const E& e) {
  using NT = node_traits<E>;
  if constexpr (NT::kind == node_kind::add) {
    return std::tuple_cat(top_terms(e.l), top_terms(e.r));
  } else if constexpr (NT::kind == node_kind::sub) {
    return std::tuple_cat(top_terms(e.l), negate_terms(top_terms(e.r)));
  } else if constexpr (NT::kind == node_kind::neg) {
    if constexpr (std::tuple_size_v<decltype(top_terms(e.e))> == 1)
      return std::make_tuple(e);
    else
      return negate_terms(top_terms(e.e));
  } else {
    return std::make_tuple(e);
  }
}

// Which terms may share one loop nest: those with the same reduction
// variables. A term whose operands iterate private variables (ELL's slot,
// DIA's diagonal, block coordinates) runs alone: another term in its nest
// would be visited once per value of them.
struct term_key {
  std::uint64_t lo = 0, hi = 0;  // reduction variables, by character
  std::size_t alone = 0;         // 1 + the term's index when it must run alone
  constexpr bool operator==(const term_key&) const = default;
};

template <class Out, class T>
constexpr term_key reduction_key(std::size_t index) {
  constexpr stmt_desc d = describe<Out, T, false>();
  term_key key;
  const std::uint32_t red = vars_under(d, d.root) & ~output_vars(d);
  for (std::size_t v = 0; v < d.nvars; ++v) {
    if (((red >> v) & 1U) == 0) continue;
    const auto c = static_cast<unsigned char>(d.vars[v]);
    if (is_private_var(d.vars[v]))
      key.alone = index + 1;
    else if (c < 64)
      key.lo |= std::uint64_t{1} << c;
    else
      key.hi |= std::uint64_t{1} << ((c - 64) % 64);
  }
  return key;
}

template <class Terms, std::size_t... X>
auto sum_terms(const Terms& ts) {
  auto fold = [&](auto self, auto first, auto... rest) {
    if constexpr (sizeof...(rest) == 0)
      return first;
    else
      return add_expr<decltype(first), decltype(self(self, rest...))>{first, self(self, rest...)};
  };
  return fold(fold, std::get<X>(ts)...);
}

// Top-level terms grouped by their reduction variables, in order of first
// appearance.
template <class Out, class Terms>
struct term_groups {
  static constexpr std::size_t NT = std::tuple_size_v<Terms>;
  static constexpr auto keys = []<std::size_t... X>(std::index_sequence<X...>) {
    return std::array<term_key, NT>{reduction_key<Out, std::tuple_element_t<X, Terms>>(X)...};
  }(std::make_index_sequence<NT>{});
  static constexpr bool uniform = [] {
    for (auto k : keys)
      if (k != keys[0]) return false;
    return true;
  }();
  static constexpr std::array<term_key, NT> distinct_keys = [] {
    std::array<term_key, NT> out{};
    std::size_t n = 0;
    for (std::size_t t = 0; t < NT; ++t) {
      bool seen = false;
      for (std::size_t u = 0; u < n; ++u) seen = seen || out[u] == keys[t];
      if (!seen) out[n++] = keys[t];
    }
    return out;
  }();
  static constexpr std::size_t ngroups = [] {
    std::size_t n = 0;
    for (std::size_t t = 0; t < NT; ++t) {
      bool seen = false;
      for (std::size_t u = 0; u < t; ++u) seen = seen || keys[u] == keys[t];
      n += !seen;
    }
    return n;
  }();
  template <std::size_t G>
  static constexpr std::size_t count = [] {
    std::size_t c = 0;
    for (std::size_t t = 0; t < NT; ++t) c += keys[t] == distinct_keys[G];
    return c;
  }();
  template <std::size_t G>
  static constexpr std::array<std::size_t, count<G>> members = [] {
    std::array<std::size_t, count<G>> m{};
    std::size_t c = 0;
    for (std::size_t t = 0; t < NT; ++t)
      if (keys[t] == distinct_keys[G]) m[c++] = t;
    return m;
  }();
};

template <class Groups, std::size_t G, class Out, bool Accumulate, char Pre, char... Order, class Terms, class Ex>
void run_group(const Out& out, const Terms& ts, const Ex& ex) {
  const auto group = [&]<std::size_t... M>(std::index_sequence<M...>) {
    return sum_terms<Terms, Groups::template members<G>[M]...>(ts);
  }(std::make_index_sequence<Groups::template count<G>>{});
  kernel<Out, std::remove_cvref_t<decltype(group)>, Accumulate, Pre, Order...>::run(out, group, ex);
}

// Whether the tensor of an access keeps its arrays where the host reads
// them (host executors need it; a device launcher checks its own space).
template <class A>
struct host_readable_access : std::true_type {};
template <class T, char... V>
  requires requires { std::remove_const_t<T>::host_readable; }
struct host_readable_access<access<T, V...>> : std::bool_constant<std::remove_const_t<T>::host_readable> {};
template <class Tuple>
struct all_host_readable;
template <class... A>
struct all_host_readable<std::tuple<A...>> : std::bool_constant<(host_readable_access<A>::value && ...)> {};

// Whether an expression (or access) mentions a fuse temporary (fuse.hpp);
// children may be const-qualified (the device form's rewritten sums).
template <class E>
struct mentions_temporary;  // every expression node below: a new node type must say
template <class C>
struct mentions_temporary<const_expr<C>> : std::false_type {};
template <class T, char... V>
struct mentions_temporary<access<T, V...>> : std::bool_constant<detail::is_temporary_v<T>> {};
template <class E>
struct mentions_temporary<neg_expr<E>> : mentions_temporary<std::remove_cv_t<E>> {};
template <class F, class E>
struct mentions_temporary<fn_expr<F, E>> : mentions_temporary<std::remove_cv_t<E>> {};
template <class L, class R>
struct mentions_temporary_2
    : std::bool_constant<mentions_temporary<std::remove_cv_t<L>>::value || mentions_temporary<std::remove_cv_t<R>>::value> {};
template <class L, class R>
struct mentions_temporary<add_expr<L, R>> : mentions_temporary_2<L, R> {};
template <class L, class R>
struct mentions_temporary<sub_expr<L, R>> : mentions_temporary_2<L, R> {};
template <class L, class R>
struct mentions_temporary<mul_expr<L, R>> : mentions_temporary_2<L, R> {};
template <class L, class R>
struct mentions_temporary<div_expr<L, R>> : mentions_temporary_2<L, R> {};

// The statement's compile-time checks (run_statement, compute_numeric).
template <class Out, class E, class Ex, bool Accumulate, char... Order>
void check_statement() {
  static_assert(device_launcher<Ex> ||
                    all_host_readable<decltype(std::tuple_cat(std::declval<std::tuple<Out>>(),
                                                              std::declval<typename expr_info<E>::access_types>()))>::value,
                "tensorlev: a tensor of this statement keeps its arrays in memory the host cannot read (a device "
                "memory space), and this executor runs on the host: run it on a kokkos_executor of that device's "
                "execution space, or copy it to host memory first (to_space<Kokkos::HostSpace>)");
  static constexpr stmt_desc d = describe<Out, E, Accumulate, Order...>();
  static_assert(!d.too_big,
                "tensorlev: the statement is too big for one kernel: at most 16 accesses, 64 expression nodes and "
                "16 loop variables (the index variables, plus one private variable for each operand level that "
                "encodes no dimension directly: ELL's slot, DIA's diagonal, every block level of BCSR and CSB); "
                "split it into smaller statements");
  static_assert(d.root < 0 || functions_dense(d, d.root),
                "tensorlev: the argument of exp, log, sqrt or erf, and the divisor of /, must be dense (every level "
                "full: a dense tensor, a dense view or a temporary) or a scalar: f(0) need not be 0, and a divisor "
                "cannot be skipped where it is not stored; convert the operand to a dense format first");
  static_assert(!has_functions(d) || mode_maps_only(d),
                "tensorlev: a statement with / or exp, log, sqrt, erf takes operands whose levels each store one "
                "dimension (not ELL, SELL, DIA, BCSR or CSB: their padding and block fill are stored zeros, and "
                "0 / 0 or 0 * log(0) would give NaN where another format gives 0); convert them to CSR first");
  static_assert(!has_functions(d) ||
                    !std::is_integral_v<typename operand_traits<std::remove_const_t<std::remove_pointer_t<
                        decltype(std::declval<Out>().operand())>>>::value_type>,
                "tensorlev: / and exp, log, sqrt, erf are evaluated in the output's value type, which must be "
                "floating point or complex (integer division by a value cast to 0 would trap)");
  static_assert(reductions_uniform(d, d.root, true),
                "tensorlev: a reduction variable is used on only one side of a + or - that is nested inside a "
                "product; sum it separately (split the statement) or distribute the product");
  if constexpr (sizeof...(Order) > 0) {
    constexpr bool same_vars = [] {
      constexpr char order[] = {Order...};
      if (sizeof...(Order) != d.nvars) return false;
      for (std::size_t v = 0; v < d.nvars; ++v) {
        bool found = false;
        for (char c : order) found = found || c == d.vars[v];
        if (!found) return false;
      }
      return true;
    }();
    static_assert(same_vars, "tensorlev: the loop_order must name every index variable of the statement exactly once");
  }
}

// Statements outside fuse (every entry point but fuse's own runs: `=`,
// compute, compute_numeric, the device form) refuse temporaries.
template <class Out, class E>
constexpr void check_no_temporaries() {
  static_assert(!mentions_temporary<std::remove_cvref_t<Out>>::value && !mentions_temporary<std::remove_cvref_t<E>>::value,
                "tensorlev: a temporary (tensorlev::temporary) holds values only inside fuse(...): write and read "
                "it in deferred statements given to fuse, or use a tensor");
}

// Runs out = e (out += e): the statement's kernels (several when its terms
// sum over different reductions). Temporaries allowed: fuse gives them
// values first; everything else calls run_statement, which refuses them.
// (Defined before run_statement, not declared ahead: nvcc's front end
// takes a declaration's default arguments for a redefinition.)
// KE: the kernel's expression type, E or shared_reads over E (fuse).
template <class Out, bool Accumulate, class KE, char Pre, char... Order, class E, class Ex = executor>
void run_statement_as(const Out& out, const E& e, const Ex& ex = Ex{}) {
  static_assert(std::is_same_v<typename unshared<KE>::type, E>, "tensorlev: internal: a kernel of another expression");
  check_statement<Out, E, Ex, Accumulate, Order...>();
  static constexpr stmt_desc d = describe<Out, E, Accumulate, Order...>();
  using OT = std::remove_const_t<std::remove_pointer_t<decltype(out.operand())>>;
  if constexpr (!detail::is_scalar_v<OT> && !detail::is_tensor_v<OT>) {
    // An output written in place (a tensor_view): it cannot be reassembled.
    constexpr bool dense_out = [] {
      for (std::size_t k = 0; k < d.acc[0].nlev; ++k)
        if (!dense_level_desc(d.acc[0].lev[k])) return false;
      return true;
    }();
    static_assert(dense_out,
                  "tensorlev: a tensor_view output must be dense (only dense levels): its components are written in "
                  "place; assemble a sparse result into a tensor");
    static_assert(!std::is_const_v<std::remove_pointer_t<decltype(out.operand()->values().data())>>,
                  "tensorlev: cannot write through a read-only tensor_view (tensor_view<const V, ...>)");
    if constexpr (!dense_out) return;
  }
  using terms_t = decltype(top_terms(e));
  using groups = term_groups<Out, terms_t>;
  if constexpr (groups::uniform) {
    kernel<Out, KE, Accumulate, Pre, Order...>::run(out, e, ex);
  } else {
    // Several kernels: the first replaces the output's arrays, so an
    // operand viewing them would read what it replaced.
    if constexpr (!detail::is_scalar_v<OT>) {
      if (reads_arrays_of(*out.operand(), collect_operands(e), false))
        throw error(
            "tensorlev: an operand of this statement views the output's arrays, and the statement runs as several "
            "kernels (its terms sum over different reduction variables): the first kernel replaces what the others "
            "would read; compute into a separate tensor");
    }
    const terms_t ts = top_terms(e);
    [&]<std::size_t... G>(std::index_sequence<G...>) {
      (run_group<groups, G, Out, Accumulate || G != 0, Pre, Order...>(out, ts, ex), ...);
    }(std::make_index_sequence<groups::ngroups>{});
  }
}

template <class Out, bool Accumulate, char Pre, char... Order, class E, class Ex = executor>
void run_statement_any(const Out& out, const E& e, const Ex& ex = Ex{}) {
  run_statement_as<Out, Accumulate, E, Pre, Order...>(out, e, ex);
}

// Runs out = e (out += e) outside fuse: no temporaries.
template <class Out, bool Accumulate, char Pre, char... Order, class E, class Ex = executor>
void run_statement(const Out& out, const E& e, const Ex& ex = Ex{}) {
  check_no_temporaries<Out, E>();
  run_statement_any<Out, Accumulate, Pre, Order...>(out, e, ex);
}

// The schedule arguments of compute(executor, ...): at most one loop_order
// and one precompute, in that order.
template <class... S>
struct schedule_args {
  static_assert(sizeof...(S) == 0, "tensorlev: compute's schedule is [loop_order<...>{}] [, precompute(v)]");
};
template <class... S>
using order_of = typename schedule_args<S...>::order;
template <class... S>
using precompute_of = typename schedule_args<S...>::pre;
template <>
struct schedule_args<> {
  using order = loop_order<>;
  using pre = precompute_t<0>;
};
template <char... O>
struct schedule_args<loop_order<O...>> {
  using order = loop_order<O...>;
  using pre = precompute_t<0>;
};
template <char P>
struct schedule_args<precompute_t<P>> {
  using order = loop_order<>;
  using pre = precompute_t<P>;
};
template <char... O, char P>
struct schedule_args<loop_order<O...>, precompute_t<P>> {
  using order = loop_order<O...>;
  using pre = precompute_t<P>;
};

// The functor a device launcher runs for chunk c of a kernel's loop nest.
// It names its kernel with int template arguments: as a char, "no
// precompute" (0) is a NUL byte in nvcc's __PRETTY_FUNCTION__, which cuts
// Kokkos 4's compile-time parse of a functor's type name short (a
// static_assert in Kokkos::Impl::type_name). Types the launcher sees must
// therefore not carry a kernel's char arguments.
template <class Out, class E, bool Accumulate, int Pre, int... Order>
struct device_chunk_fn {
  using K = kernel<Out, E, Accumulate, static_cast<char>(Pre), static_cast<char>(Order)...>;
  typename K::state st;
  std::size_t n;
  TENSORLEV_HOST_DEVICE typename K::V operator()(std::size_t c) const { return K::device_call(st, c, n); }
};

}  // namespace cg

/// An access `t(i, j, ...)`: an operand in an expression, or the left-hand
/// side of a statement. Assigning an expression runs the generated kernel.
template <class T, char... Vars>
class access {
 public:
  explicit access(T* t) noexcept : t_(t) {}
  access(const access&) = default;
  [[nodiscard]] T* operand() const noexcept { return t_; }

  /// `out(i..) = e`: out is overwritten with e.
  template <expression E>
  access& operator=(const E& e) {
    static_assert(!std::is_const_v<T>, "tensorlev: cannot assign to a const tensor");
    cg::run_statement<access, false, 0>(*this, e);
    return *this;
  }
  access& operator=(const access& e) { return this->operator= <access>(e); }
  /// `out(i..) += e`: e is added to out.
  template <expression E>
  access& operator+=(const E& e) {
    static_assert(!std::is_const_v<T>, "tensorlev: cannot assign to a const tensor");
    cg::run_statement<access, true, 0>(*this, e);
    return *this;
  }
  template <detail::arithmetic_constant C>
  access& operator=(const C& c) {
    return *this = const_expr<C>{c};
  }

 private:
  T* t_;
};

/// Runs `out = e` (or `out += e` when Accumulate) with an explicit loop
/// order: `compute(y(i), A(i,j) * x(j), loop_order<'j', 'i'>{})`.
template <class Out, expression E, char... Order>
void compute(const Out& out, const E& e, loop_order<Order...>) {
  cg::run_statement<Out, false, 0, Order...>(out, e);
}
template <class Out, expression E, char... Order>
void compute_add(const Out& out, const E& e, loop_order<Order...>) {
  cg::run_statement<Out, true, 0, Order...>(out, e);
}

/// Runs `out = e` with the expression precomputed over `v` into a dense
/// workspace (taco's workspaces): below the loops that bind the output's
/// other variables, each top-level term is scattered into a dense row over
/// v by its own loops, and the row is then appended to the output in
/// order. `compute(C(i,j), A(i,j) + B(i,j), precompute(j))` is a row-wise
/// sparse add (no merging of A's and B's rows); with `A(i,k) * B(k,j)` it
/// is Gustavson's SpGEMM. v must be the output's last level's variable.
template <class Out, expression E, char... Order, char P>
void compute(const Out& out, const E& e, loop_order<Order...>, precompute_t<P>) {
  cg::run_statement<Out, false, P, Order...>(out, e);
}
template <class Out, expression E, char P>
void compute(const Out& out, const E& e, precompute_t<P>) {
  cg::run_statement<Out, false, P>(out, e);
}
template <class Out, expression E, char... Order, char P>
void compute_add(const Out& out, const E& e, loop_order<Order...>, precompute_t<P>) {
  cg::run_statement<Out, true, P, Order...>(out, e);
}
template <class Out, expression E, char P>
void compute_add(const Out& out, const E& e, precompute_t<P>) {
  cg::run_statement<Out, true, P>(out, e);
}

/// Runs `out = e` on an executor (`serial`, or `kokkos_executor<Space>` from
/// tensorlev/kokkos.hpp): `compute(exec, y(i), A(i, j) * x(j))`. The result
/// is the serial one; where the outer loop cannot be split without races
/// (see `splits_outer_loop_v`) the kernel runs serially.
template <class Out, expression E, class... Schedule>
void compute(const executor& ex, const Out& out, const E& e, Schedule...) {
  [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
    cg::run_statement<Out, false, P, Order...>(out, e, ex);
  }(cg::order_of<Schedule...>{}, cg::precompute_of<Schedule...>{});
}
/// `out += e` on an executor.
template <class Out, expression E, class... Schedule>
void compute_add(const executor& ex, const Out& out, const E& e, Schedule...) {
  [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
    cg::run_statement<Out, true, P, Order...>(out, e, ex);
  }(cg::order_of<Schedule...>{}, cg::precompute_of<Schedule...>{});
}

/// The numeric phase of a symbolic/numeric split (Kokkos Kernels'
/// spgemm_numeric, MKL's sp2m finalize, cuSPARSE's SpGEMMreuse): `out = e`
/// recomputed into out's present pattern, for operands whose values
/// changed since out was assembled by the same statement with `=`:
/// `C(i, j) = A(i, k) * B(k, j);` once, then
/// `compute_numeric(exec, C(i, j), A(i, k) * B(k, j));` after each change
/// of A's and B's values. Nothing is allocated for the result and no row
/// is sorted or appended. Every coordinate the product reaches must be in
/// the pattern; a pattern entry no product reaches gets zero (so the
/// operands may have lost entries since). A product outside the pattern
/// (or a pattern row naming a column twice or out of range) throws
/// tensorlev::error naming the first such row, and out's values are then
/// unspecified.
/// For outputs assembled through a workspace (SpGEMM into CSR, CSC, CSR
/// with unsorted rows or a sparse vector); other statements do not compile.
/// Repeated over the same patterns, `numeric_plan` (numeric_plan.hpp)
/// checks each product once per pattern rather than once per run.
template <class Out, expression E, class... Schedule>
void compute_numeric(const executor& ex, const Out& out, const E& e, Schedule...) {
  using terms_t = decltype(cg::top_terms(e));
  static_assert(cg::term_groups<Out, terms_t>::uniform,
                "tensorlev: compute_numeric takes one product (its terms must sum over the same reduction "
                "variables)");
  [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
    cg::check_no_temporaries<Out, E>();
    cg::check_statement<Out, E, executor, false, Order...>();
    cg::kernel<Out, E, false, P, Order...>::run_numeric(out, e, ex);
  }(cg::order_of<Schedule...>{}, cg::precompute_of<Schedule...>{});
}
/// compute_numeric on the calling thread.
template <class Out, expression E>
void compute_numeric(const Out& out, const E& e) {
  compute_numeric(serial, out, e);
}

/// Whether `out = e` splits its outermost loop into chunks on a parallel
/// executor: `splits_outer_loop_v<decltype(y(i)), decltype(A(i, j) * x(j))>`.
template <class Out, class E, class Order = loop_order<>>
constexpr bool splits_outer_loop_v = []<char... O>(loop_order<O...>) {
  return cg::kernel<Out, E, false, 0, O...>::converted::parallel_outer;
}(Order{});

}  // namespace tensorlev
