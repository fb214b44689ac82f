#pragma once
/// @file codegen/kernel.hpp
/// The generated kernel: template recursion over the loop order, following
/// the constexpr plans of plan.hpp. Every decision (which levels to merge,
/// which to locate, lattice cases, deduplication) is made at compile time;
/// the code left is the loop nest for the operands' formats, written with
/// level functions only (pos_bounds/pos_access, coord_bounds/coord_access,
/// locate), which inline to the arrays a careful person would index.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../execution.hpp"
#include "../formats.hpp"
#include "../pack.hpp"
#include "describe.hpp"
#include "plan.hpp"

// A loop's plan inside the generated functions: a reference to the class's
// constant on the host; in device code (which may not refer to host
// variables) a static constexpr copy, folded away like the reference.
#if defined(__CUDA_ARCH__)
#define TENSORLEV_PLAN(name, value) static constexpr loop_plan name = value
#else
#define TENSORLEV_PLAN(name, value) static constexpr const loop_plan& name = value
#endif

namespace tensorlev {

namespace detail {
// Scratch objects (a workspace, a private copy of the output) reused across
// the chunks of one parallel run: a chunk takes one, uses it and gives it
// back, so no more exist than chunks ran at once. A spin lock guards the
// lists; it is held only for a push or a pop.
template <class T>
class scratch_pool {
 public:
  template <class Make>
  T* acquire(Make make) {
    {
      const guard g(busy_);
      if (!free_.empty()) {
        T* t = free_.back();
        free_.pop_back();
        return t;
      }
    }
    auto made = std::make_unique<T>(make());
    const guard g(busy_);
    free_.reserve(all_.size() + 1);  // so that release never allocates
    all_.push_back(std::move(made));
    return all_.back().get();
  }
  void release(T* t) noexcept {
    const guard g(busy_);
    free_.push_back(t);
  }
  [[nodiscard]] const std::vector<std::unique_ptr<T>>& all() const noexcept { return all_; }

 private:
  struct guard {
    explicit guard(std::atomic_flag& f) noexcept : flag(f) {
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    }
    ~guard() { flag.clear(std::memory_order_release); }
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
    std::atomic_flag& flag;
  };
  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
};

// A tensor a kernel can assemble as its output (growable storage); a view
// (borrowed storage) is written in place.
template <class T>
struct is_tensor : std::false_type {};
template <class V, class F, class I, class S>
struct is_tensor<tensor<V, F, I, S>> : std::bool_constant<S::growable> {};
template <class T>
inline constexpr bool is_tensor_v = is_tensor<T>::value;
}  // namespace detail

namespace cg {

/// How a kernel's outer loop runs on a parallel executor (kernel::par).
enum class par_kind { none, scalar, rows, scatter, append };

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

template <class T>
using operand_of = typename access_parts<T>::operand;

// Pre-order list of the expression's operand pointers.
template <class E>
auto collect_operands(const E& e) {
  using NT = node_traits<E>;
  if constexpr (NT::kind == node_kind::access)
    return std::make_tuple(e.operand());
  else if constexpr (NT::kind == node_kind::constant)
    return std::tuple<>();
  else if constexpr (NT::kind == node_kind::neg)
    return collect_operands(e.e);
  else
    return std::tuple_cat(collect_operands(e.l), collect_operands(e.r));
}

template <class Tuple>
struct first_index_type;
template <>
struct first_index_type<std::tuple<>> {
  using type = std::int32_t;
};
template <class T, class... R>
struct first_index_type<std::tuple<T, R...>> {
  using O = operand_traits<std::remove_pointer_t<T>>;
  using type = std::conditional_t<std::is_void_v<typename O::index_type>,
                                  typename first_index_type<std::tuple<R...>>::type, typename O::index_type>;
};

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
  } else {
    auto l = convert_operands<Dense, Sorted, Id>(x.l, keep);
    auto r = convert_operands<Dense, Sorted, Id + static_cast<int>(expr_info<typename NT::left>::accesses)>(x.r, keep);
    if constexpr (NT::kind == node_kind::add)
      return add_expr<decltype(l), decltype(r)>{l, r};
    else if constexpr (NT::kind == node_kind::sub)
      return sub_expr<decltype(l), decltype(r)>{l, r};
    else
      return mul_expr<decltype(l), decltype(r)>{l, r};
  }
}

template <class Out, class E, bool Accumulate, char Pre, char... Order>
struct kernel {
  static constexpr stmt_desc D = describe<Out, E, Accumulate, Order...>();
  static constexpr order_plan O = make_order(D, Pre);
  static_assert(check_plan<O.error, O.error_acc>());

  using ptrs = decltype(std::tuple_cat(std::make_tuple(std::declval<Out>().operand()),
                                       collect_operands(std::declval<const E&>())));
  static constexpr std::size_t NA = std::tuple_size_v<ptrs>;
  template <std::size_t A>
  using op_t = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<A, ptrs>>>;
  using V = typename operand_traits<op_t<0>>::value_type;
  static constexpr bool out_packable() {
    if constexpr (O.out == out_kind::scalar || O.out == out_kind::located) {
      return true;
    } else {
      return []<std::size_t... K>(std::index_sequence<K...>) {
        return (packable_level<std::tuple_element_t<K, typename op_t<0>::level_tuple>> && ...);
      }(std::make_index_sequence<D.acc[0].nlev>{});
    }
  }
  static_assert(out_packable(),
                "tensorlev: the output's format cannot be assembled: every level of a sparse output must be "
                "constructible from a level_shape and assembled by append, insert or implicitly (packable)");
  using I = typename first_index_type<ptrs>::type;
  static_assert([]<std::size_t... A>(std::index_sequence<A...>) {
    return ((std::is_void_v<typename operand_traits<op_t<A>>::index_type> ||
             std::is_same_v<typename operand_traits<op_t<A>>::index_type, I>) &&
            ...);
  }(std::make_index_sequence<NA>{}),
                "tensorlev: every tensor in a statement must use the same index type");
  static constexpr std::size_t ML = [] {
    std::size_t m = 1;
    for (std::size_t a = 0; a < D.nacc; ++a) m = D.acc[a].nlev > m ? D.acc[a].nlev : m;
    return m;
  }();

  static constexpr bool appending = O.out == out_kind::append || O.out == out_kind::workspace;
  template <class T>
  struct levels_of {
    using type = int;
  };
  template <class T>
    requires requires { typename T::level_tuple; }
  struct levels_of<T> {
    using type = typename T::level_tuple;
  };
  using out_levels_t = typename levels_of<op_t<0>>::type;

  // Parallel runs of append and workspace outputs: each chunk collects its
  // entries and its parents' segments (parent position, begin, end, counted
  // from the chunk's first entry); they are placed after a scan of the
  // chunks' counts.
  struct chunk_out {
    std::vector<I> crd;
    std::vector<V> vals;
    std::vector<std::array<I, 3>> edges;
  };
  // A Gustavson workspace (see state::ws), one per concurrent chunk.
  struct workspace_buf {
    std::vector<V> ws;
    std::unique_ptr<bool[]> mark;
    std::unique_ptr<I[]> touched;
  };

  // Each operand's position at its deepest bound level, and the end of the
  // segment (pos + 1 unless deduplicated). Passed by value down the loop
  // nest, so that after inlining the positions live in registers.
  struct cursor {
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
  // Whether the values of bound variables are needed (random-access
  // operands, outputs written by coordinates).
  static constexpr bool inserting = O.out == out_kind::insert;
  static constexpr bool assembling = O.out == out_kind::assemble;
  static constexpr bool keep_var_val = O.ra != 0 || emits_coordinates(O.out) || appending || D.ncomp > 0;
  // Assemble outputs: the dense prefix's length.
  static constexpr std::size_t out_prefix = [] {
    std::size_t f = 0;
    while (f < D.acc[0].nlev && dense_level_desc(D.acc[0].lev[f])) ++f;
    return f;
  }();

  // Assemble outputs: per level, positions counted so far, the current
  // coordinate and position, and where the current parent's children begin.
  struct assembly {
    bool counting = true;
    bool any = false;
    I prefix_pos = 0;
    I cnt[ML]{};
    I crd[ML]{};
    I pos[ML]{};
    I parent[ML]{};
    I begin[ML]{};
  };

  // `=` into a dense output where the outermost loops bind exactly the
  // output's variables, each over its full extent with one lattice point and
  // nothing that can miss: every output component is written exactly once,
  // so the kernel stores instead of zero-filling and accumulating.
  static constexpr bool direct_store = [] {
    if (Accumulate || O.out != out_kind::located || O.ra != 0 || O.nterms > 1) return false;
    for (int dp = 0; dp <= O.out_last; ++dp) {
      bool is_out = false;
      for (std::size_t k = 0; k < D.acc[0].order; ++k) is_out = is_out || D.acc[0].vars[k] == O.vars[dp];
      if (!is_out) return false;
      const loop_plan p = plan_loop(D, O, static_cast<std::size_t>(dp), 0);
      if (p.zero || p.np != 1 || p.error != plan_error::none) return false;
      bool full_driver = false;
      for (std::size_t sl = 0; sl < p.nm; ++sl) {
        if (p.merged[sl] < 0) {
          full_driver = true;
          continue;
        }
        const iter_desc& it = p.it[p.merged[sl]];
        const level_desc& lv = D.acc[it.acc].lev[it.lev];
        if (it.coord && lv.full && lv.unique && lv.always_found) full_driver = true;
        if (it.segment) return false;
      }
      if (!full_driver || p.pts[0] != (std::uint32_t{1} << p.nm) - 1) return false;
      for (std::size_t x = 0; x < p.nit; ++x)
        if (p.it[x].located && p.it[x].may_miss) return false;
    }
    return true;
  }();

  struct state {
    ptrs ops;
    const E* expr;
    I crd[NA][ML + 1];  // coordinates of the levels bound so far (ancestors), where a level reads them
    I extent[max_vars];
    I var_val[max_vars];  // current value of each bound index variable
    coordinate_list<V, I>* sink;  // stream outputs
    // append and workspace outputs: the levels and values being built
    out_levels_t* out_levels;
    std::vector<V>* out_vals;
    I out_cnt;
    V* ws;                     // workspace: dense row over the last output variable
    // Which workspace entries hold a coordinate. bool, not unsigned char: a
    // character store may alias anything, and the compiler then reloads
    // every pointer of the state after each one (SpGEMM ran 1.6x slower).
    bool* mark;
    // Those coordinates, in the order first reached: an array as long as the
    // workspace, so that marking one calls nothing (a possible reallocation
    // in the loop would make the compiler reload every pointer it holds).
    I* touched;
    std::size_t ntouched;
    // insert outputs: the symbolic pass counts children per parent position
    // (a marker per coordinate keeps repeats under one parent from counting)
    bool counting;
    I* counts;
    I* seen;
    assembly* as;
    // chunked runs: loop 0 covers [chunk_lo, chunk_hi) of its range only
    bool chunked;
    I chunk_lo;
    I chunk_hi;
    V* out_data;     // located outputs: the values written (the output's, or a chunk's private copy)
    chunk_out* lout;  // append outputs in a chunk: where the chunk's entries go
    I out_cap;        // sized appends: positions available (entries past it are counted only)
  };

  static constexpr std::size_t var_index(char v) {
    for (std::size_t x = 0; x < D.nvars; ++x)
      if (D.vars[x] == v) return x;
    return 0;
  }

  template <std::size_t A, std::size_t K>
  TENSORLEV_HOST_DEVICE static const auto& level_of(const state& st) {
    if constexpr (A == 0 && (appending || inserting || assembling))
      return std::get<K>(*st.out_levels);
    else
      return std::get<K>(std::get<A>(st.ops)->levels());
  }

  static constexpr std::size_t out_last_level = D.acc[0].nlev > 0 ? D.acc[0].nlev - 1 : 0;

  // The last output variable's coordinate gets its value: appended in
  // order, or accumulated into the workspace.
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void emit_appended(state& st, const V& value) {
    const I c = st.var_val[var_index(D.acc[0].lev[out_last_level].var)];
    if constexpr (sized_append) {
      // No call on this path (a possible reallocation would make the
      // compiler reload every pointer the loops hold): stores while there
      // is room; the run is repeated, sized by the count, if there was not.
      if (st.out_cnt < st.out_cap) {
        const auto q = static_cast<std::size_t>(st.out_cnt);
        if (st.lout != nullptr)
          st.lout->crd[q] = c;
        else
          std::get<out_last_level>(*st.out_levels).append_coord_at(st.out_cnt, c);
        (*st.out_vals)[q] = value;
      }
      ++st.out_cnt;
    } else if constexpr (O.out == out_kind::append) {
      append_out_coord(st, c);
      st.out_vals->push_back(value);
      ++st.out_cnt;
    } else {
      const auto x = static_cast<std::size_t>(c);
      if (!st.mark[x]) {
        st.mark[x] = true;
        st.touched[st.ntouched++] = c;
        st.ws[x] = value;
      } else {
        st.ws[x] += value;
      }
    }
  }

  // Appends coordinate c at position st.out_cnt of the output's last level,
  // or to the chunk's entries in a parallel run.
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void append_out_coord(state& st, I c) {
    if constexpr (par == par_kind::append) {
      if (st.lout != nullptr) {
        st.lout->crd.push_back(c);
        return;
      }
    }
    std::get<out_last_level>(*st.out_levels).append_coord(st.out_cnt, c);
  }
  TENSORLEV_HOST_DEVICE static void append_out_edges(state& st, I parent, I begin, I end) {
    if constexpr (par == par_kind::append) {
      if (st.lout != nullptr) {
        st.lout->edges.push_back({parent, begin, end});
        return;
      }
    }
    std::get<out_last_level>(*st.out_levels).append_edges(parent, begin, end);
  }

  // Position of the output's first NP (dense) levels at the bound variables.
  template <std::size_t NP>
  TENSORLEV_HOST_DEVICE static I locate_out_prefix(state& st) {
    I p = 0;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            st.crd[0][K] = st.var_val[var_index(D.acc[0].lev[K].var)];
            p = std::get<K>(*st.out_levels).locate(p, ancestors<I>(st.crd[0], K), st.crd[0][K]).pos;
          }(),
          ...);
    }(std::make_index_sequence<NP>{});
    return p;
  }

  // Insert outputs: the output coordinate is located through the dense
  // prefix; the symbolic pass counts it, the numeric pass inserts it into
  // the last level (if new) and accumulates the value at its position.
  static void emit_inserted(state& st, const V& value) {
    const I p = locate_out_prefix<out_last_level>(st);
    const I c = st.var_val[var_index(D.acc[0].lev[out_last_level].var)];
    if (st.counting) {
      if (st.seen == nullptr) {
        ++st.counts[static_cast<std::size_t>(p)];  // an upper bound
      } else if (st.seen[static_cast<std::size_t>(c)] != p + 1) {
        st.seen[static_cast<std::size_t>(c)] = p + 1;
        ++st.counts[static_cast<std::size_t>(p)];
      }
      return;
    }
    auto& lvl = std::get<out_last_level>(*st.out_levels);
    const located<I> r = lvl.locate(p, ancestors<I>(st.crd[0], out_last_level), c);
    if (!r.found) lvl.insert_coord(r.pos, c);
    (*st.out_vals)[static_cast<std::size_t>(r.pos)] += value;
  }

  // Assemble outputs: coordinates arrive in lexicographic order of the
  // output's levels. The first level whose coordinate differs from the
  // previous entry's (or the first appendable level, when the dense prefix
  // moved on) and every level below get a new position; below a non-unique
  // level every entry does. An entry equal to the previous one adds to it.
  static void emit_assembled(state& st, const V& value) {
    assembly& as = *st.as;
    constexpr std::size_t L = D.acc[0].nlev;
    const I p = locate_out_prefix<out_prefix>(st);
    std::size_t first = L;
    if (!as.any || p != as.prefix_pos) first = out_prefix;
    for (std::size_t k = out_prefix; k < L && first == L; ++k)
      if (st.var_val[var_index(D.acc[0].lev[k].var)] != as.crd[k]) first = k;
    if (first == L) {  // the same coordinates again
      if (!as.counting) st.out_vals->back() += value;
      return;
    }
    for (std::size_t k = out_prefix; k < first; ++k)
      if (!D.acc[0].lev[k].unique) first = k;
    as.any = true;
    as.prefix_pos = p;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            constexpr std::size_t k = out_prefix + K;
            if (k < first) return;
            const I c = st.var_val[var_index(D.acc[0].lev[k].var)];
            const I parent = k == out_prefix ? p : as.pos[k - 1];
            const I q = as.cnt[k]++;
            as.crd[k] = c;
            as.pos[k] = q;
            if (as.counting) return;
            auto& lvl = std::get<k>(*st.out_levels);
            lvl.append_coord(q, c);
            if (q == 0 || as.parent[k] != parent) as.parent[k] = parent, as.begin[k] = q;
            lvl.append_edges(parent, as.begin[k], q + 1);
          }(),
          ...);
    }(std::make_index_sequence<L - out_prefix>{});
    if (!as.counting) st.out_vals->push_back(value);
  }

  // Appends the workspace's coordinates in order under the dense prefix's
  // current position, and clears it.
  static void flush_workspace(state& st, I parent) {
    const I begin = st.out_cnt;
    std::sort(st.touched, st.touched + st.ntouched);
    for (std::size_t t = 0; t < st.ntouched; ++t) {
      const I c = st.touched[t];
      const auto x = static_cast<std::size_t>(c);
      append_out_coord(st, c);
      st.out_vals->push_back(st.ws[x]);
      st.ws[x] = V{};
      st.mark[x] = false;
      ++st.out_cnt;
    }
    st.ntouched = 0;
    if (st.out_cnt != begin) append_out_edges(st, parent, begin, st.out_cnt);
  }

  template <std::size_t Dp, mask_t Abs>
  static constexpr bool appends_here() {
    if constexpr (O.out != out_kind::append) {
      return false;
    } else {
      constexpr const loop_plan& P = plan<Dp, Abs>;
      return P.out_iter >= 0 && P.it[P.out_iter].appended;
    }
  }

  // ---- expression evaluation (innermost body) --------------------------------

  template <class X, int Node, int Acc, mask_t Abs>
  TENSORLEV_HOST_DEVICE static V eval(const X& x, const state& st, const cursor& cs) {
    using NT = node_traits<X>;
    if constexpr (NT::kind == node_kind::access) {
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
    } else if constexpr (NT::kind == node_kind::constant) {
      return static_cast<V>(x.v);
    } else if constexpr (NT::kind == node_kind::neg) {
      return -eval<typename NT::operand, Node + 1, Acc, Abs>(x.e, st, cs);
    } else {
      using L = typename NT::left;
      using R = typename NT::right;
      constexpr int NL = Node + 1;
      constexpr int NR = Node + 1 + static_cast<int>(expr_info<L>::nodes);
      constexpr int AR = Acc + static_cast<int>(expr_info<L>::accesses);
      constexpr bool lz = !nonzero(D, NL, Abs), rz = !nonzero(D, NR, Abs);
      if constexpr (NT::kind == node_kind::mul) {
        return eval<L, NL, Acc, Abs>(x.l, st, cs) * eval<R, NR, AR, Abs>(x.r, st, cs);
      } else if constexpr (NT::kind == node_kind::add) {
        if constexpr (lz)
          return eval<R, NR, AR, Abs>(x.r, st, cs);
        else if constexpr (rz)
          return eval<L, NL, Acc, Abs>(x.l, st, cs);
        else
          return eval<L, NL, Acc, Abs>(x.l, st, cs) + eval<R, NR, AR, Abs>(x.r, st, cs);
      } else {
        if constexpr (lz)
          return -eval<R, NR, AR, Abs>(x.r, st, cs);
        else if constexpr (rz)
          return eval<L, NL, Acc, Abs>(x.l, st, cs);
        else
          return eval<L, NL, Acc, Abs>(x.l, st, cs) - eval<R, NR, AR, Abs>(x.r, st, cs);
      }
    }
  }

  template <mask_t Abs>
  TENSORLEV_HOST_DEVICE static V eval_root(const state& st, const cursor& cs) {
    return eval<E, 0, 1, Abs>(*st.expr, st, cs);
  }

  // ---- loops ----------------------------------------------------------------

  template <std::size_t Dp, mask_t Abs>
  static constexpr loop_plan plan = plan_loop(D, O, Dp, Abs);

  // Loop Dp. At the precompute depth, every top-level term runs its own
  // loops (the others marked absent), scattering into the workspace.
  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static void loop(state& st, const cursor& cs, V& tgt) {
    if constexpr (static_cast<int>(Dp) == O.scatter) {
      [&]<std::size_t... T>(std::index_sequence<T...>) {
        (loop_nest<Dp, Abs | O.term_others[T]>(st, cs, tgt), ...);
      }(std::make_index_sequence<O.nterms>{});
    } else {
      loop_nest<Dp, Abs>(st, cs, tgt);
    }
  }

  template <std::size_t Dp, mask_t Abs>
  TENSORLEV_HOST_DEVICE static void loop_nest(state& st, const cursor& cs, V& tgt) {
    if constexpr (Dp == O.n) {
      if constexpr (nonzero(D, D.root, Abs)) tgt += eval_root<Abs>(st, cs);
    } else {
      TENSORLEV_PLAN(P, (plan<Dp, Abs>));
      static_assert(check_plan<P.error, P.error_acc>());
      if constexpr (!P.zero) {
        constexpr std::size_t NM = P.nm;
        [[maybe_unused]] const I begin = st.out_cnt;
        std::array<I, NM> cur{}, end{};
        [&]<std::size_t... S>(std::index_sequence<S...>) {
          (init_slot<Dp, Abs, S>(st, cs, cur[S], end[S]), ...);
        }(std::make_index_sequence<NM>{});
        if constexpr (Dp == 0 && Abs == 0 && par != par_kind::none) {
          if (st.chunked) cur[0] = st.chunk_lo, end[0] = st.chunk_hi;
        }
        [&]<std::size_t... Pt>(std::index_sequence<Pt...>) {
          (point<Dp, Abs, Pt>(st, cs, tgt, cur, end), ...);
        }(std::make_index_sequence<P.np>{});
        if constexpr (appends_here<Dp, Abs>()) {
          if (st.out_cnt != begin) append_out_edges(st, cs.pos[0], begin, st.out_cnt);
        }
      }
    }
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
      const I v = st.var_val[var_index(D.comp_outer[c])] * I(D.comp_block[c]) + st.var_val[var_index(D.comp_inner[c])];
      cur = v;
      end = v < st.extent[var_index(P.var)] ? v + 1 : v;
    } else if constexpr (P.merged[S] < 0) {
      cur = I(0);
      end = st.extent[var_index(P.var)];
    } else {
      constexpr iter_desc it = P.it[P.merged[S]];
      constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
      const auto& lvl = level_of<A, K>(st);
      if constexpr (it.coord) {
        const bounds<I> b = lvl.coord_bounds(anc<A, K>(st));
        cur = b.begin, end = b.end;
      } else if constexpr (K > 0 && !D.acc[A].lev[K - 1].unique) {
        // The parent may be a segment of positions with equal coordinates.
        cur = lvl.pos_bounds(cs.pos[A]).begin;
        end = lvl.pos_bounds(cs.hi[A] - 1).end;
      } else {
        const bounds<I> b = lvl.pos_bounds(cs.pos[A]);
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

  template <std::size_t Dp, mask_t Abs, std::size_t Pt, std::size_t NM>
  TENSORLEV_HOST_DEVICE static void point(state& st, const cursor& cs, V& tgt, std::array<I, NM>& cur, const std::array<I, NM>& end) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    constexpr std::uint32_t Pm = P.pts[Pt];
    constexpr bool single = popcount32(Pm) == 1;
    if constexpr (single) {
      constexpr std::size_t S = static_cast<std::size_t>(std::countr_zero(Pm));
      constexpr bool seg = P.merged[S] >= 0 && P.it[P.merged[S]].segment;
      for (; cur[S] < end[S];) {
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
                if constexpr (((Pm >> S) & 1U) && P.merged[S] >= 0 && P.it[P.merged[S]].segment) {
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
                    if constexpr (P.merged[S] >= 0 && P.it[P.merged[S]].segment)
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
    if constexpr (keep_var_val) st.var_val[var_index(P.var)] = i;
    [&]<std::size_t... It>(std::index_sequence<It...>) {
      (
          [&] {
            if constexpr (!P.it[It].chain && keep_crd(P.it[It].acc, P.it[It].lev))
              st.crd[P.it[It].acc][P.it[It].lev] = i;
          }(),
          ...);
    }(std::make_index_sequence<P.nit>{});
    [&]<std::size_t... S>(std::index_sequence<S...>) {
      (
          [&] {
            if constexpr (((Qm >> S) & 1U) && P.merged[S] >= 0) {
              constexpr iter_desc it = P.it[P.merged[S]];
              constexpr std::size_t A = static_cast<std::size_t>(it.acc), K = static_cast<std::size_t>(it.lev);
              if constexpr (it.coord) {
                const located<I> r = level_of<A, K>(st).coord_access(cs.pos[A], anc<A, K>(st), i);
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
                const located<I> r = level_of<A, K>(st).locate(cs.pos[A], anc<A, K>(st), i);
                cs.pos[A] = r.pos;
                cs.hi[A] = r.pos + 1;
              }
            }
          }(),
          ...);
    }(std::make_index_sequence<P.nit>{});
    with_found<Dp, Abs, Qm, 0, 0>(st, cs, tgt, i);
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
            const located<I> r = level_of<A, K>(st).locate(cs.pos[A], anc<A, K>(st), st.crd[A][K]);
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
      inner<Dp, case_absent(P, Abs, Qm, Found)>(st, cs, tgt);
    } else if constexpr (P.it[It].located && P.it[It].may_miss) {
      constexpr std::size_t A = static_cast<std::size_t>(P.it[It].acc), K = static_cast<std::size_t>(P.it[It].lev);
      bool found;
      if constexpr (P.it[It].chain) {
        found = locate_chain<A>(st, cs);
      } else {
        const located<I> r = level_of<A, K>(st).locate(cs.pos[A], anc<A, K>(st), i);
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
  TENSORLEV_HOST_DEVICE static void inner(state& st, const cursor& cs, V& tgt) {
    TENSORLEV_PLAN(P, (plan<Dp, Abs>));
    if constexpr (nonzero(D, D.root, Abs)) {
      if constexpr (P.out_done && appending) {
        // The last output level's coordinate is bound: sum the remaining
        // (reduction) loops into a local, then append or accumulate it.
        V acc{};
        if constexpr (Dp + 1 == O.n)
          acc = eval_root<Abs>(st, cs);
        else
          loop<Dp + 1, Abs>(st, cs, acc);
        emit_appended(st, acc);
      } else if constexpr (P.out_done && (inserting || assembling)) {
        V acc{};
        if constexpr (Dp + 1 == O.n)
          acc = eval_root<Abs>(st, cs);
        else
          loop<Dp + 1, Abs>(st, cs, acc);
        if constexpr (inserting)
          emit_inserted(st, acc);
        else
          emit_assembled(st, acc);
      } else if constexpr (P.out_done && O.out == out_kind::stream) {
        // Every output variable is bound: sum the remaining (reduction)
        // loops into a local and emit one (coordinates, value) pair.
        V acc{};
        if constexpr (Dp + 1 == O.n)
          acc = eval_root<Abs>(st, cs);
        else
          loop<Dp + 1, Abs>(st, cs, acc);
        std::array<I, D.acc[0].order> x;
        for (std::size_t d = 0; d < D.acc[0].order; ++d) x[d] = st.var_val[var_index(D.acc[0].vars[d])];
        st.sink->push_back(std::span<const I>(x), acc);
      } else if constexpr (P.out_done) {
        // The output's last level is bound: its value slot is known. Sum
        // the remaining (reduction) loops into a local.
        V& slot = st.out_data[static_cast<std::size_t>(cs.pos[0])];
        if constexpr (Dp + 1 == O.n) {
          if constexpr (direct_store)
            slot = eval_root<Abs>(st, cs);
          else
            slot += eval_root<Abs>(st, cs);
        } else {
          V acc{};
          loop<Dp + 1, Abs>(st, cs, acc);
          if constexpr (direct_store)
            slot = acc;
          else
            slot += acc;
        }
      } else {
        loop<Dp + 1, Abs>(st, cs, tgt);
        if constexpr (O.out == out_kind::workspace && static_cast<int>(Dp) == O.ws_open) flush_workspace(st, cs.pos[0]);
      }
    }
  }

  // ---- parallel outer loop ----------------------------------------------------
  //
  // On a parallel executor the outermost loop runs in chunks when it has one
  // iterator and one lattice point, i.e. one range to split (a run of equal
  // coordinates, a COO row, is never split). What keeps chunks from racing
  // depends on the output:
  //  - scalar: each chunk sums into its own partial; the partials are added
  //    in chunk order, so the result does not depend on the thread count;
  //  - rows: a dense (located) output whose first level is bound by the
  //    outer loop: chunks write disjoint rows;
  //  - scatter: any other all-dense located output (CSC SpMV, transposed
  //    access): each running chunk accumulates into a private zeroed copy
  //    of the output, taken from a pool (one per concurrent chunk); the
  //    copies are added into the output afterwards, in parallel over its
  //    components;
  //  - append: a dense prefix bound by the outer loop plus one appended
  //    (or workspace) level that supports parallel_appendable_level: each
  //    chunk collects its entries and segments, an exclusive scan of the
  //    chunks' counts gives their positions, and a parallel fill pass
  //    appends them there (Gustavson workspaces come from a pool).
  // Everything else (merged outer loops, insert and assemble outputs,
  // precompute) runs serially on any executor.
  static constexpr bool out_parallel_appendable = [] {
    if constexpr (appending)
      return parallel_appendable_level<std::tuple_element_t<out_last_level, out_levels_t>>;
    else
      return false;
  }();
  static constexpr par_kind par = [] {
    if (O.n == 0 || Pre != 0 || O.error != plan_error::none) return par_kind::none;
    const loop_plan p = plan_loop(D, O, 0, 0);
    if (p.zero || p.error != plan_error::none || p.nm != 1 || p.np != 1 || p.merged[0] == -2 || p.computed >= 0)
      return par_kind::none;
    // A coordinate may repeat in a non-unique level (COO's rows): chunks are
    // cut between runs, which are contiguous only if the level is ordered.
    if (p.merged[0] >= 0) {
      const level_desc& lv = D.acc[p.it[p.merged[0]].acc].lev[p.it[p.merged[0]].lev];
      if (!lv.unique && !lv.ordered) return par_kind::none;
    }
    if (O.out == out_kind::scalar) return par_kind::scalar;
    if (D.acc[0].nlev == 0) return par_kind::none;
    const bool rows_first = D.acc[0].lev[0].var == O.vars[0] && dense_level_desc(D.acc[0].lev[0]);
    if (O.out == out_kind::located) {
      if (rows_first) return par_kind::rows;
      for (std::size_t k = 0; k < D.acc[0].nlev; ++k)
        if (!dense_level_desc(D.acc[0].lev[k])) return par_kind::none;
      return par_kind::scatter;
    }
    if (appending && rows_first && out_last_level >= 1 && out_parallel_appendable &&
        (O.out == out_kind::append || O.ws_open >= 0))
      return par_kind::append;
    return par_kind::none;
  }();
  static constexpr bool parallel_outer = par != par_kind::none;
  // Appends into a level with sized append when the statement has no
  // reductions: the operands' stored entries bound the output
  // (entries_bound), so the arrays are sized first and the loops store
  // without a call.
  static constexpr bool sized_append =
      O.out == out_kind::append && out_parallel_appendable && (vars_under(D, D.root) & ~output_vars(D)) == 0;
  // Whether chunk boundaries must move to the start of a run of equal
  // coordinates (the outer loop iterates positions of a non-unique level).
  static constexpr bool align_chunks = [] {
    if (!parallel_outer) return false;
    const loop_plan p = plan_loop(D, O, 0, 0);
    if (p.nm == 0 || p.merged[0] < 0) return false;
    return !D.acc[p.it[p.merged[0]].acc].lev[p.it[p.merged[0]].lev].unique;
  }();
  static constexpr std::size_t max_chunks = 1024;

  // Boundaries of loop 0's chunks in its iterator's range (positions or
  // coordinates): n + 1 values, n <= max_chunks; none inside a run of
  // equal coordinates.
  static std::vector<I> chunk_bounds(const state& st, const cursor& cs) {
    I lo{}, hi{};
    init_slot<0, 0, 0>(st, cs, lo, hi);
    if (hi <= lo) return {};
    const auto range = static_cast<std::size_t>(hi - lo);
    const std::size_t n = range < max_chunks ? range : max_chunks;
    std::vector<I> bounds(n + 1);
    for (std::size_t c = 0; c <= n; ++c)
      bounds[c] = lo + static_cast<I>((range / n) * c + (c < range % n ? c : range % n));
    if constexpr (align_chunks) {
      // Move each boundary to the start of a run of equal coordinates.
      for (std::size_t c = 1; c < n; ++c) {
        I b = bounds[c] > bounds[c - 1] ? bounds[c] : bounds[c - 1];
        if (b > lo && b < hi) {
          I prev{}, next{};
          slot_coord<0, 0, 0>(st, b - 1, prev);
          while (b < hi && slot_coord<0, 0, 0>(st, b, next) && next == prev) ++b;
        }
        bounds[c] = b;
      }
    }
    return bounds;
  }

  // What every chunk starts from: the run's state and cursor, and the
  // chunk boundaries; chunk_state(c) is the state restricted to chunk c.
  struct chunk_base {
    const state* st;
    const cursor* cs;
    const I* bounds;
    [[nodiscard]] state chunk_state(std::size_t c) const {
      state local = *st;
      local.chunked = true, local.chunk_lo = bounds[c], local.chunk_hi = bounds[c + 1];
      return local;
    }
  };

  // Runs loop 0 in chunks on ex (scalar, rows and scatter outputs); returns
  // the chunks' targets summed in chunk order.
  static V run_chunked(const state& st, const cursor& cs, const executor& ex) {
    const std::vector<I> bounds = chunk_bounds(st, cs);
    if (bounds.empty()) return V{};
    const std::size_t n = bounds.size() - 1;
    std::vector<V> partial(n, V{});
    detail::scratch_pool<std::vector<V>> copies;
    std::size_t nv = 0;
    if constexpr (par == par_kind::scatter) nv = std::get<0>(st.ops)->values().size();
    struct context : chunk_base {
      V* partial;
      detail::scratch_pool<std::vector<V>>* copies;
      std::size_t nv;
    } ctx{{&st, &cs, bounds.data()}, partial.data(), &copies, nv};
    ex.for_chunks(
        n,
        [](void* p, std::size_t c) {
          const context& x = *static_cast<const context*>(p);
          if (x.bounds[c] >= x.bounds[c + 1]) return;
          state local = x.chunk_state(c);
          std::vector<V>* copy = nullptr;
          if constexpr (par == par_kind::scatter) {
            copy = x.copies->acquire([&] { return std::vector<V>(x.nv, V{}); });
            local.out_data = copy->data();
          }
          V acc{};
          loop<0, 0>(local, *x.cs, acc);
          x.partial[c] = acc;
          if (copy != nullptr) x.copies->release(copy);
        },
        &ctx);
    if constexpr (par == par_kind::scatter) add_copies(copies, st.out_data, nv, ex);
    V sum{};
    for (const V& v : partial) sum += v;
    return sum;
  }

  // ---- device entry ----------------------------------------------------------
  //
  // The pieces a device back end launches: a state prepared on the host
  // (operands and output bound; its pointers, and the operands' arrays, must
  // be accessible where the kernel runs: tensor_views over device memory,
  // copied there), the root cursor, and run_chunk for one chunk of loop 0.
  // Only statements whose chunks write disjoint rows or a scalar partial;
  // the output must be zeroed first unless the kernel stores directly, and
  // chunks of a COO-like outer level come from outer_chunks (cut between
  // rows). tests/device compiles these with nvcc; nothing launches them yet.

  static state prepared_state(const Out& out, const E& e)
    requires(par == par_kind::rows || par == par_kind::scalar)
  {
    state st = make_state(out, e);
    if constexpr (par == par_kind::rows) st.out_data = std::get<0>(st.ops)->values().data();
    return st;
  }
  TENSORLEV_HOST_DEVICE static cursor root_cursor() {
    cursor cs{};
    for (std::size_t a = 0; a < NA; ++a) cs.pos[a] = I(0), cs.hi[a] = I(1);
    return cs;
  }
  /// Loop 0 over [lo, hi) of its range (chunk_bounds' units: positions or
  /// coordinates); returns the chunk's scalar partial (zero for rows).
  TENSORLEV_HOST_DEVICE static V run_chunk(state st, const cursor& cs, I lo, I hi)
    requires(par == par_kind::rows || par == par_kind::scalar)
  {
    st.chunked = true, st.chunk_lo = lo, st.chunk_hi = hi;
    V acc{};
    loop<0, 0>(st, cs, acc);
    return acc;
  }

  // Scatter outputs: out[0, nv) += every private copy, in the pool's order,
  // in chunks of components on ex.
  static void add_copies(const detail::scratch_pool<std::vector<V>>& copies, V* out, std::size_t nv,
                         const executor& ex) {
    if (copies.all().empty() || nv == 0) return;
    const std::size_t n = nv < max_chunks ? nv : max_chunks;
    struct context {
      const detail::scratch_pool<std::vector<V>>* copies;
      V* out;
      std::size_t nv, n;
    } ctx{&copies, out, nv, n};
    ex.for_chunks(
        n,
        [](void* p, std::size_t c) {
          const context& x = *static_cast<const context*>(p);
          const std::size_t lo = x.nv / x.n * c + (c < x.nv % x.n ? c : x.nv % x.n);
          const std::size_t hi = lo + x.nv / x.n + (c < x.nv % x.n ? 1 : 0);
          for (const auto& copy : x.copies->all()) {
            const V* src = copy->data();
            for (std::size_t v = lo; v < hi; ++v) x.out[v] += src[v];
          }
        },
        &ctx);
  }

  // Append outputs of statements without reductions: the operands' stored
  // entries (at most the output's size), an upper bound on the entries
  // appended; 0 (unknown) otherwise.
  static I entries_bound(const state& st) {
    if constexpr ((vars_under(D, D.root) & ~output_vars(D)) != 0) {
      return I(0);
    } else {
      std::size_t b = 0;
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (
            [&] {
              if constexpr (A > 0 && !detail::is_scalar_v<op_t<A>>) b += std::get<A>(st.ops)->stored();
            }(),
            ...);
      }(std::make_index_sequence<NA>{});
      std::size_t cap = 1;
      for (const auto d : std::get<0>(st.ops)->dims())
        cap = d != 0 && cap > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d)
                  ? std::numeric_limits<std::size_t>::max()
                  : cap * static_cast<std::size_t>(d);
      b = std::min({b, cap, static_cast<std::size_t>(std::numeric_limits<I>::max())});
      return static_cast<I>(b);
    }
  }

  // Append outputs: loop 0 in chunks, each collecting its entries; then an
  // exclusive scan of the chunks' counts, and a parallel fill pass that
  // appends every chunk's entries and segments at their positions.
  // Returns the number of entries.
  static I run_appended_chunks(state& st, const cursor& cs, const executor& ex, I parent_size) {
    const std::vector<I> bounds = chunk_bounds(st, cs);
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    std::vector<chunk_out> outs(n);
    detail::scratch_pool<workspace_buf> workspaces;
    std::size_t wn = 0;
    if constexpr (O.out == out_kind::workspace)
      wn = static_cast<std::size_t>(st.extent[var_index(D.acc[0].lev[out_last_level].var)]);
    // Sized appends: a chunk's share of the statement's bound (its share of
    // the outer range, with a margin) sizes its arrays.
    double per_iteration = 0;
    if constexpr (sized_append) {
      if (n > 0)
        per_iteration = 1.25 * static_cast<double>(entries_bound(st)) / static_cast<double>(bounds[n] - bounds[0]);
    }
    struct context : chunk_base {
      chunk_out* outs;
      detail::scratch_pool<workspace_buf>* workspaces;
      std::size_t wn;
      double per_iteration;
    } ctx{{&st, &cs, bounds.data()}, outs.data(), &workspaces, wn, per_iteration};
    ex.for_chunks(
        n,
        [](void* p, std::size_t c) {
          const context& x = *static_cast<const context*>(p);
          if (x.bounds[c] >= x.bounds[c + 1]) return;
          state local = x.chunk_state(c);
          chunk_out& co = x.outs[c];
          local.lout = &co;
          local.out_vals = &co.vals;
          local.out_cnt = I(0);
          if constexpr (sized_append) {
            // Run with the estimated room; again, sized by the count, if it
            // was too small.
            auto cap = static_cast<std::size_t>(x.per_iteration * static_cast<double>(x.bounds[c + 1] - x.bounds[c])) + 64;
            for (;;) {
              co.crd.resize(cap);
              co.vals.resize(cap);
              local.out_cap = static_cast<I>(std::min(cap, static_cast<std::size_t>(std::numeric_limits<I>::max())));
              V unused{};
              loop<0, 0>(local, *x.cs, unused);
              const auto got = static_cast<std::size_t>(local.out_cnt);
              if (got <= cap) {
                co.crd.resize(got);
                co.vals.resize(got);
                return;
              }
              cap = got;
              co.edges.clear();
              local = x.chunk_state(c);
              local.lout = &co, local.out_vals = &co.vals, local.out_cnt = I(0);
            }
          }
          workspace_buf* w = nullptr;
          if constexpr (O.out == out_kind::workspace) {
            w = x.workspaces->acquire([&] {
              return workspace_buf{std::vector<V>(x.wn, V{}), std::make_unique<bool[]>(x.wn),
                                   std::make_unique_for_overwrite<I[]>(x.wn)};
            });
            local.ws = w->ws.data(), local.mark = w->mark.get(), local.touched = w->touched.get(), local.ntouched = 0;
          }
          V unused{};
          loop<0, 0>(local, *x.cs, unused);
          if (w != nullptr) x.workspaces->release(w);
        },
        &ctx);
    // Exclusive scan: where each chunk's entries begin.
    std::vector<I> offset(n + 1, I(0));
    for (std::size_t c = 0; c < n; ++c) {
      const std::size_t k = outs[c].crd.size();
      if (k > static_cast<std::size_t>(std::numeric_limits<I>::max() - offset[c]))
        throw overflow_error("tensorlev: the output's entries (more than " + std::to_string(offset[c]) +
                             ") do not fit the index type (" + std::to_string(sizeof(I) * 8) + "-bit)");
      offset[c + 1] = offset[c] + static_cast<I>(k);
    }
    const I total = offset[n];
    auto& last_level = std::get<out_last_level>(*st.out_levels);
    last_level.append_init_sized(parent_size, total);
    st.out_vals->resize(static_cast<std::size_t>(total));
    struct fill_context {
      chunk_out* outs;
      const I* offset;
      std::remove_reference_t<decltype(last_level)>* last;
      V* vals;
    } fctx{outs.data(), offset.data(), &last_level, st.out_vals->data()};
    ex.for_chunks(
        n,
        [](void* p, std::size_t c) {
          const fill_context& x = *static_cast<const fill_context*>(p);
          chunk_out& co = x.outs[c];
          const I off = x.offset[c];
          for (std::size_t k = 0; k < co.crd.size(); ++k) {
            x.last->append_coord_at(off + static_cast<I>(k), co.crd[k]);
            x.vals[static_cast<std::size_t>(off) + k] = co.vals[k];
          }
          for (const auto& e : co.edges) x.last->append_edges(e[0], off + e[1], off + e[2]);
          co = chunk_out{};  // free it now
        },
        &fctx);
    return total;
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
              for (std::size_t x = 0; x < D.acc[A].order; ++x) {
                const std::size_t v = var_index(D.acc[A].vars[x]);
                if (!seen[v]) {
                  seen[v] = true, extent[v] = dims[x], from_acc[v] = A, from_dim[v] = x;
                } else if (extent[v] != dims[x]) {
                  auto name = [](std::size_t a) {
                    return a == 0 ? std::string("the output") : "operand " + std::to_string(a);
                  };
                  throw shape_error("index variable '" + std::string(1, D.acc[A].vars[x]) + "': " + name(A) +
                                    " has extent " + std::to_string(dims[x]) + " in dimension " + std::to_string(x) +
                                    " but " + name(from_acc[v]) + " has extent " + std::to_string(extent[v]) +
                                    " in dimension " + std::to_string(from_dim[v]));
                }
              }
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
  }

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

  static void run(const Out& out, const E& e, const executor& ex = serial) {
    if constexpr ((dense_copies | sorted_copies) != 0) {
      scratch_copies keep;
      const auto e2 = convert_operands<dense_copies, sorted_copies, 1>(e, keep);
      kernel<Out, std::remove_cvref_t<decltype(e2)>, Accumulate, Pre, Order...>::run(out, e2, ex);
    } else {
      run_converted(out, e, ex);
    }
  }

  // For tests: the chunk boundaries run_chunked would use for out = e.
  static std::vector<I> outer_chunks(const Out& out, const E& e)
    requires parallel_outer
  {
    state st = make_state(out, e);
    cursor cs{};
    for (std::size_t a = 0; a < NA; ++a) cs.pos[a] = I(0), cs.hi[a] = I(1);
    return chunk_bounds(st, cs);
  }

  static state make_state(const Out& out, const E& e) {
    state st{std::tuple_cat(std::make_tuple(out.operand()), collect_operands(e)),
             &e,
             {},
             {},
             {},
             nullptr,
             nullptr,
             nullptr,
             I(0),
             nullptr,
             nullptr,
             nullptr,
             0,
             false,
             nullptr,
             nullptr,
             nullptr,
             false,
             I(0),
             I(0),
             nullptr,
             nullptr,
             I(0)};
    check_dims(st, st.extent);
    return st;
  }

  static void run_converted(const Out& out, const E& e, [[maybe_unused]] const executor& ex) {
    state st = make_state(out, e);
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            if constexpr (A > 0 && std::is_same_v<op_t<A>, op_t<0>>) {
              if (static_cast<const void*>(std::get<A>(st.ops)) == static_cast<const void*>(std::get<0>(st.ops)))
                throw error("tensorlev: the output of a statement also appears on its right-hand side (operand " +
                            std::to_string(A) + "); compute into a separate tensor");
            }
          }(),
          ...);
    }(std::make_index_sequence<NA>{});
    cursor cs{};
    for (std::size_t a = 0; a < NA; ++a) cs.pos[a] = I(0), cs.hi[a] = I(1);
    auto* o = std::get<0>(st.ops);
    if constexpr (detail::is_scalar_v<op_t<0>>) {
      if constexpr (!Accumulate) o->value() = V{};
      V acc{};
      if constexpr (parallel_outer) {
        if (ex.parallel()) acc = run_chunked(st, cs, ex);
        else loop<0, 0>(st, cs, acc);
      } else {
        loop<0, 0>(st, cs, acc);
      }
      o->value() += acc;
    } else if constexpr ((appending || inserting || assembling) && Accumulate) {
      // out += e on a sparse output is out = old + e. When e sums over
      // reduction variables, old must not be summed with it: e is computed
      // into a temporary first, and out = old + temporary.
      using T = op_t<0>;
      const T old = *o;
      using old_access = decltype(rebind_access<Out>::make(&old));
      if constexpr ((vars_under(D, D.root) & ~output_vars(D)) != 0) {
        T tmp = *o;
        const auto tmp_out = rebind_access<Out>::to(&tmp);
        kernel<std::remove_const_t<decltype(tmp_out)>, E, false, Pre, Order...>::run(tmp_out, e, ex);
        using tmp_access = decltype(rebind_access<Out>::make(&tmp));
        kernel<Out, add_expr<old_access, tmp_access>, false, Pre>::run(
            out, add_expr<old_access, tmp_access>{rebind_access<Out>::make(&old), rebind_access<Out>::make(&tmp)},
            ex);
      } else {
        kernel<Out, add_expr<old_access, E>, false, Pre, Order...>::run(
            out, add_expr<old_access, E>{rebind_access<Out>::make(&old), e}, ex);
      }
    } else if constexpr (appending) {
      using T = op_t<0>;
      using F = typename T::format_type;
      out_levels_t lv = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return out_levels_t(std::tuple_element_t<K, out_levels_t>(level_shape<I>{o->dims()[F::maps[K].dim], 0, 0, {}})...);
      }(std::make_index_sequence<T::num_levels>{});
      I parent_size = 1;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((parent_size = std::get<K>(lv).size(parent_size)), ...);
      }(std::make_index_sequence<out_last_level>{});
      std::vector<V> vals;
      st.out_levels = &lv;
      st.out_vals = &vals;
      if constexpr (par == par_kind::append) {
        if (ex.parallel()) {
          const I total = run_appended_chunks(st, cs, ex, parent_size);
          std::get<out_last_level>(lv).append_finalize(parent_size, total);
          *o = T(o->dims(), std::move(lv), std::move(vals));
          return;
        }
      }
      if constexpr (sized_append) {
        // Without reductions every appended entry comes from a stored entry
        // of some operand: their count bounds the output. The arrays are
        // sized by it and the loops store without a call; were the bound
        // exceeded (a broadcast operand), the run repeats sized by the count.
        I cap = std::max(entries_bound(st), I(1));
        for (;;) {
          std::get<out_last_level>(lv).append_init_sized(parent_size, cap);
          vals.assign(static_cast<std::size_t>(cap), V{});
          st.out_cnt = I(0);
          st.out_cap = cap;
          V unused{};
          loop<0, 0>(st, cs, unused);
          if (st.out_cnt <= cap) break;
          cap = st.out_cnt;
        }
        vals.resize(static_cast<std::size_t>(st.out_cnt));
        if (vals.capacity() / 2 > vals.size()) vals.shrink_to_fit();  // a far smaller result (A .* B)
        std::get<out_last_level>(lv).append_finalize(parent_size, st.out_cnt);
        *o = T(o->dims(), std::move(lv), std::move(vals));
        return;
      }
      std::get<out_last_level>(lv).append_init(parent_size, I(0));
      std::vector<V> ws;
      std::unique_ptr<bool[]> mark;
      std::unique_ptr<I[]> touched;
      if constexpr (O.out == out_kind::workspace) {
        const auto n = static_cast<std::size_t>(st.extent[var_index(D.acc[0].lev[out_last_level].var)]);
        ws.resize(n);
        mark = std::make_unique<bool[]>(n);
        st.ws = ws.data();
        st.mark = mark.get();
        touched = std::make_unique_for_overwrite<I[]>(n);
        st.touched = touched.get();
        st.ntouched = 0;
      }
      V unused{};
      loop<0, 0>(st, cs, unused);
      if constexpr (O.out == out_kind::workspace && O.ws_open < 0) flush_workspace(st, I(0));
      std::get<out_last_level>(lv).append_finalize(parent_size, st.out_cnt);
      *o = T(o->dims(), std::move(lv), std::move(vals));
    } else if constexpr (inserting) {
      using T = op_t<0>;
      using F = typename T::format_type;
      auto shape = [&](std::size_t k, std::size_t max_children, std::span<const I> children) {
        return level_shape<I>{o->dims()[F::maps[k].dim], 0, max_children, {}, children};
      };
      out_levels_t lv = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return out_levels_t(std::tuple_element_t<K, out_levels_t>(shape(K, 0, {}))...);
      }(std::make_index_sequence<T::num_levels>{});
      I parent_size = 1;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((parent_size = std::get<K>(lv).size(parent_size)), ...);
      }(std::make_index_sequence<out_last_level>{});
      st.out_levels = &lv;
      // Symbolic pass: children per parent position.
      std::vector<I> counts(static_cast<std::size_t>(parent_size), I(0));
      // The marker costs one index per coordinate of the last level; past
      // 2^24 coordinates (a huge hash vector) repeats are counted instead,
      // which only overestimates the buckets needed.
      const auto last_extent = static_cast<std::size_t>(o->dims()[F::maps[out_last_level].dim]);
      std::vector<I> seen(last_extent <= (std::size_t{1} << 24) ? last_extent : 0, I(0));
      st.counting = true;
      st.counts = counts.data();
      st.seen = seen.size() == last_extent ? seen.data() : nullptr;
      V unused{};
      loop<0, 0>(st, cs, unused);
      const I most = counts.empty() ? I(0) : *std::max_element(counts.begin(), counts.end());
      // Numeric pass: the last level sized by each parent's count (hashed:
      // its own buckets per parent), then every value inserted.
      using LL = std::tuple_element_t<out_last_level, out_levels_t>;
      std::get<out_last_level>(lv) = LL(shape(out_last_level, static_cast<std::size_t>(most), counts));
      const I size = std::get<out_last_level>(lv).size(parent_size);
      std::get<out_last_level>(lv).insert_init(parent_size, size);
      std::vector<V> vals(static_cast<std::size_t>(size), V{});
      st.out_vals = &vals;
      st.counting = false;
      loop<0, 0>(st, cs, unused);
      std::get<out_last_level>(lv).insert_finalize(parent_size, size);
      *o = T(o->dims(), std::move(lv), std::move(vals));
    } else if constexpr (assembling) {
      using T = op_t<0>;
      using F = typename T::format_type;
      constexpr std::size_t L = T::num_levels;
      out_levels_t lv = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return out_levels_t(
            std::tuple_element_t<K, out_levels_t>(level_shape<I>{o->dims()[F::maps[K].dim], 0, 0, {}})...);
      }(std::make_index_sequence<L>{});
      I prefix_size = 1;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((prefix_size = std::get<K>(lv).size(prefix_size)), ...);
      }(std::make_index_sequence<out_prefix>{});
      st.out_levels = &lv;
      // Symbolic pass: positions per level.
      assembly as;
      st.as = &as;
      V unused{};
      loop<0, 0>(st, cs, unused);
      const assembly counted = as;
      // Numeric pass: every level sized, then appended in order.
      auto parent_size = [&](std::size_t k) { return k == out_prefix ? prefix_size : counted.cnt[k - 1]; };
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (std::get<out_prefix + K>(lv).append_init(parent_size(out_prefix + K), counted.cnt[out_prefix + K]), ...);
      }(std::make_index_sequence<L - out_prefix>{});
      // Levels sharing an array (AoS COO's lanes) point into it now: the
      // head reserved its exact count, so appending never moves it.
      detail::link_levels(lv);
      std::vector<V> vals;
      vals.reserve(static_cast<std::size_t>(counted.cnt[L - 1]));
      st.out_vals = &vals;
      as = assembly{};
      as.counting = false;
      loop<0, 0>(st, cs, unused);
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (std::get<out_prefix + K>(lv).append_finalize(parent_size(out_prefix + K), counted.cnt[out_prefix + K]), ...);
      }(std::make_index_sequence<L - out_prefix>{});
      *o = T(o->dims(), std::move(lv), std::move(vals));
    } else if constexpr (O.out == out_kind::stream) {
      using T = op_t<0>;
      coordinate_list<V, I> sink(std::vector<I>(o->dims().begin(), o->dims().end()));
      if constexpr (Accumulate) sink = to_coordinate_list(*o);
      st.sink = &sink;
      V unused{};
      loop<0, 0>(st, cs, unused);
      *o = pack<typename T::format_type, typename T::storage>(sink, duplicates::sum);
    } else {
      if constexpr (!Accumulate && !direct_store)
        for (auto& v : o->values()) v = V{};
      st.out_data = o->values().data();
      V unused{};
      if constexpr (parallel_outer) {
        if (ex.parallel()) {
          (void)run_chunked(st, cs, ex);
          return;
        }
      }
      loop<0, 0>(st, cs, unused);
    }
  }
};

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

template <class Groups, std::size_t G, class Out, bool Accumulate, char Pre, char... Order, class Terms>
void run_group(const Out& out, const Terms& ts, const executor& ex) {
  const auto group = [&]<std::size_t... M>(std::index_sequence<M...>) {
    return sum_terms<Terms, Groups::template members<G>[M]...>(ts);
  }(std::make_index_sequence<Groups::template count<G>>{});
  kernel<Out, std::remove_cvref_t<decltype(group)>, Accumulate, Pre, Order...>::run(out, group, ex);
}

// Whether the tensor of an access keeps its arrays where the host reads
// them (every executor today runs on the host).
template <class A>
struct host_readable_access : std::true_type {};
template <class T, char... V>
  requires requires { std::remove_const_t<T>::host_readable; }
struct host_readable_access<access<T, V...>> : std::bool_constant<std::remove_const_t<T>::host_readable> {};
template <class Tuple>
struct all_host_readable;
template <class... A>
struct all_host_readable<std::tuple<A...>> : std::bool_constant<(host_readable_access<A>::value && ...)> {};

template <class Out, bool Accumulate, char Pre, char... Order, class E>
void run_statement(const Out& out, const E& e, const executor& ex = serial) {
  static_assert(all_host_readable<decltype(std::tuple_cat(std::declval<std::tuple<Out>>(),
                                                          std::declval<typename expr_info<E>::access_types>()))>::value,
                "tensorlev: a tensor of this statement keeps its arrays in memory the host cannot read (a device "
                "memory space), and every executor runs on the host: copy it to host memory first");
  static constexpr stmt_desc d = describe<Out, E, Accumulate, Order...>();
  static_assert(!d.too_big,
                "tensorlev: the statement is too big for one kernel: at most 16 accesses, 64 expression nodes and "
                "16 loop variables (the index variables, plus one private variable for each operand level that "
                "encodes no dimension directly: ELL's slot, DIA's diagonal, every block level of BCSR and CSB); "
                "split it into smaller statements");
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
    kernel<Out, E, Accumulate, Pre, Order...>::run(out, e, ex);
  } else {
    const terms_t ts = top_terms(e);
    [&]<std::size_t... G>(std::index_sequence<G...>) {
      (run_group<groups, G, Out, Accumulate || G != 0, Pre, Order...>(out, ts, ex), ...);
    }(std::make_index_sequence<groups::ngroups>{});
  }
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

/// Whether `out = e` splits its outermost loop into chunks on a parallel
/// executor: `splits_outer_loop_v<decltype(y(i)), decltype(A(i, j) * x(j))>`.
template <class Out, class E, class Order = loop_order<>>
constexpr bool splits_outer_loop_v = []<char... O>(loop_order<O...>) {
  return cg::kernel<Out, E, false, 0, O...>::converted::parallel_outer;
}(Order{});

}  // namespace tensorlev
