#pragma once
/// @file codegen/output/common.hpp
/// What the loop emitter (codegen/kernel.hpp) and the output policies
/// (codegen/output/*.hpp) share: the statement's compile-time facts
/// (`stmt`), the policy interface with its defaults (`output_base`), and the
/// scratch pool of parallel runs.
///
/// An output policy is a class template over `stmt`. It owns the state its
/// strategy needs while the loops run (`data`, a member of the kernel's
/// state), what the innermost loop does once the output's coordinates are
/// bound (`emit`), the hooks the loop emitter calls around loops (`mark`,
/// `after_loop`, `before_inner`, `after_inner`), whether and how loop 0 runs in parallel
/// (`par`), and the run itself (`run<K>`, with its serial and parallel
/// forms; K is the kernel, whose loops it calls).

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../detail/algorithm.hpp"
#include "../../config.hpp"
#include "../../detail/atomic.hpp"
#include "../../detail/owned.hpp"
#include "../../error.hpp"
#include "../../execution.hpp"
#include "../../formats.hpp"
#include "../../pack.hpp"
#include "../describe.hpp"
#include "../plan.hpp"

namespace tensorlev {

namespace detail {
// Scratch objects (a workspace, a private copy of the output) reused across
// the chunks of one parallel run: a chunk takes one, uses it and gives it
// back, so no more exist than chunks ran at once. A spin lock guards the
// lists; it is held only for a push or a pop.
template <class T>
class scratch_pool {
 public:
  scratch_pool() = default;
  scratch_pool(const scratch_pool&) = delete;  // chunks hold pointers into it
  scratch_pool& operator=(const scratch_pool&) = delete;
  template <class Make>
  T* acquire(Make make) {
    {
      const spin_guard g(busy_);
      if (!free_.empty()) {
        T* t = free_.back();
        free_.pop_back();
        return t;
      }
    }
    unique_object<T> made(new T(make()));
    const spin_guard g(busy_);
    free_.reserve(all_.size() + 1);  // so that release never allocates
    all_.push_back(std::move(made));
    return all_.back().get();
  }
  void release(T* t) noexcept {
    const spin_guard g(busy_);
    free_.push_back(t);
  }
  [[nodiscard]] const std::vector<unique_object<T>>& all() const noexcept { return all_; }

 private:
  unsigned char busy_ = 0;
  std::vector<unique_object<T>> all_;
  std::vector<T*> free_;
};

/// `*p += v` as one atomic operation, on the host (detail/atomic.hpp) and in
/// CUDA or HIP device code (atomicAdd).
template <class V>
TENSORLEV_HOST_DEVICE inline void atomic_add(V* p, V v) {
  static_assert(std::is_floating_point_v<V> || (std::is_integral_v<V> && (sizeof(V) == 4 || sizeof(V) == 8)),
                "tensorlev: atomic adds (a scatter kernel's output in the device form) need a floating-point or "
                "a 32- or 64-bit integer value type");
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if constexpr (std::is_integral_v<V> && sizeof(V) == 8)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>)
    atomicAdd(reinterpret_cast<int*>(p), static_cast<int>(v));
  else if constexpr (std::is_integral_v<V>)
    atomicAdd(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
  else
    atomicAdd(p, v);
#else
  (void)atomic_fetch_add_relaxed(p, v);
#endif
}

// A tensor a kernel can assemble as its output: its storage owns its arrays
// (growable host arrays, which the host assembles into; a device's, which
// the device form fills by count, scan and fill). A view (borrowed arrays)
// is written in place.
template <class A>
struct borrows_array : std::false_type {};
template <class T>
struct borrows_array<borrowed_array<T>> : std::true_type {};
template <class T>
struct is_tensor : std::false_type {};
template <class V, class F, class I, class S>
struct is_tensor<tensor<V, F, I, S>>
    : std::bool_constant<S::growable || !borrows_array<typename S::template array<int>>::value> {};
template <class T>
inline constexpr bool is_tensor_v = is_tensor<T>::value;

// Whether a tensor's levels leave positions no component holds (a strided
// level's gaps between rows, which belong to someone else): its values span
// may not be zero-filled as a whole.
template <class T>
inline constexpr bool has_gaps_v = [] {
  bool gaps = false;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((gaps = gaps || !std::tuple_element_t<K, typename T::level_tuple>::is_compact), ...);
  }(std::make_index_sequence<T::num_levels>{});
  return gaps;
}();

// Zeroes the components under position p of level K - 1 (p = 0 above the
// root), coordinates [lo, hi) of level K, of a tensor whose levels are all
// full and locatable (a located output), level by level: never the
// positions between them.
template <std::size_t K, class T, class I>
void zero_components(T& t, I p, I lo, I hi) {
  using L = std::tuple_element_t<K, typename T::level_tuple>;
  static_assert(requires { L::needs_ancestors; } && !L::needs_ancestors,
                "tensorlev: zeroing an output with gaps visits its levels without ancestor coordinates: each level "
                "must declare needs_ancestors = false");
  const auto& l = t.template level<K>();
  const ancestors<I> none(nullptr, 0);
  auto* v = t.values().data();
  for (I c = lo; c < hi; ++c) {
    const I q = l.coord_access(p, none, c).pos;
    if constexpr (K + 1 == T::num_levels) {
      v[q] = typename T::value_type{};
    } else {
      const auto b = t.template level<K + 1>().coord_bounds(none);
      zero_components<K + 1>(t, q, b.begin, b.end);
    }
  }
}
}  // namespace detail

namespace cg {

/// How a kernel's outer loop runs on a parallel executor (kernel::par).
enum class par_kind { none, scalar, rows, scatter, append, assemble, insert, stream, collect };

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
  else if constexpr (NT::kind == node_kind::neg || NT::kind == node_kind::fn)
    return collect_operands(e.e);
  else
    return std::tuple_cat(collect_operands(e.l), collect_operands(e.r));
}

// Calls f with the data pointer of every array tensor t exposes: its
// values and each level's bounds and coordinates.
template <class T, class F>
void for_each_array(const T& t, F&& f) {
  if constexpr (requires { t.values().data(); }) f(static_cast<const void*>(t.values().data()));
  if constexpr (requires { t.levels(); })
    std::apply(
        [&](const auto&... l) {
          (
              [&] {
                if constexpr (requires { l.pos().data(); }) f(static_cast<const void*>(l.pos().data()));
                if constexpr (requires { l.crd().data(); }) f(static_cast<const void*>(l.crd().data()));
              }(),
              ...);
        },
        t.levels());
}
// Whether an operand among ops (pointers; the first skipped when
// skip_first: a kernel state's output) reads an array of tensor o (a view
// of it, or of its pattern).
template <class T, class Tuple>
bool reads_arrays_of(const T& o, const Tuple& ops, bool skip_first) {
  std::vector<const void*> mine;
  for_each_array(o, [&](const void* p) {
    if (p != nullptr) mine.push_back(p);
  });
  bool shared = false;
  std::size_t index = 0;
  std::apply(
      [&](const auto*... x) {
        (
            [&] {
              if (index++ == 0 && skip_first) return;
              if constexpr (!detail::is_scalar_v<std::remove_cv_t<std::remove_pointer_t<decltype(x)>>>)
                for_each_array(*x, [&](const void* p) {
                  for (const void* q : mine) shared = shared || p == q;
                });
            }(),
            ...);
      },
      ops);
  return shared;
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


// The statement's compile-time facts: its description and plan, operand
// types, value and index types, and the plan of each loop. The loop emitter
// derives from it; output policies are templates over it. In the inline
// namespace of the settings that change its plan (TENSORLEV_KERNEL_ABI,
// config.hpp).
inline namespace TENSORLEV_KERNEL_ABI {
template <class Out, class E, bool Accumulate, char Pre, char... Order>
struct stmt {
  static constexpr stmt_desc D = describe<Out, E, Accumulate, Order...>();
  static constexpr bool accumulate = Accumulate;
  static constexpr char pre = Pre;

  using ptrs = decltype(std::tuple_cat(std::make_tuple(std::declval<Out>().operand()),
                                       collect_operands(std::declval<const E&>())));
  static constexpr std::size_t NA = std::tuple_size_v<ptrs>;
  template <std::size_t A>
  using op_t = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<A, ptrs>>>;
  using V = typename operand_traits<op_t<0>>::value_type;
  using I = typename first_index_type<ptrs>::type;
  // The plan; hoisted factors (plan_hoist) only for value types whose
  // workspace needs no construction (the kernel's t[256] on the stack), and
  // over runs of equal coordinates (COO) only with the specialized hoisted
  // sub-nest: clang 14's general hoisted loops over runs took COO MTTKRP
  // 2.7 -> 6.6 ms on FB15k-237 (bench/README.md, "Rolled loops").
  static constexpr order_plan O = [] {
    order_plan o = make_order(D, Pre);
    if (!std::is_trivially_default_constructible_v<V> || (o.hoist_runs && !TENSORLEV_HOIST_SPECIALIZE))
      o.hoist = -1, o.hoist_outer = 0, o.hoist_runs = false;
    return o;
  }();
  // The most levels of any operand.
  static constexpr std::size_t ML = [] {
    std::size_t m = 1;
    for (std::size_t a = 0; a < D.nacc; ++a) m = D.acc[a].nlev > m ? D.acc[a].nlev : m;
    return m;
  }();

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
  static constexpr std::size_t out_last_level = D.acc[0].nlev > 0 ? D.acc[0].nlev - 1 : 0;
  // The output's dense prefix: its leading dense levels.
  static constexpr std::size_t out_prefix = [] {
    std::size_t f = 0;
    while (f < D.acc[0].nlev && dense_level_desc(D.acc[0].lev[f])) ++f;
    return f;
  }();
  static constexpr bool has_reductions = (vars_under(D, D.root) & ~output_vars(D)) != 0;

  static constexpr std::size_t var_index(char v) {
    for (std::size_t x = 0; x < D.nvars; ++x)
      if (D.vars[x] == v) return x;
    return 0;
  }

  template <std::size_t Dp, mask_t Abs>
  static constexpr loop_plan plan = plan_loop(D, O, Dp, Abs);

  // Whether loop 0 can be cut into chunks at all (with a precompute, only
  // above the loop where the terms split: loop 0 then runs once): it has one iterator and
  // one lattice point (one range to cut) and binds no computed coordinate;
  // a non-unique level (COO's rows) is cut between runs of equal
  // coordinates, which are contiguous only if the level is ordered. Each
  // output policy then decides what keeps the chunks apart (its `par`).
  //
  // A merged loop 0 (several iterators or lattice points: A + B over
  // compressed rows, a sparse vector plus a dense one) is cut by coordinate
  // instead (outer_cut_by_coord): each chunk owns a range of loop 0's
  // variable, and every iterator narrows its range to the positions with
  // coordinates in it by binary search. That needs every merged level
  // ordered and without holes (positions that hold no coordinate), and no
  // merged output level.
  static constexpr bool outer_cut_by_coord = [] {
    if (O.n == 0 || (Pre != 0 && O.scatter <= 0) || O.error != plan_error::none) return false;
    const loop_plan p = plan_loop(D, O, 0, 0);
    if (p.zero || p.error != plan_error::none || (p.nm == 1 && p.np == 1) || p.computed >= 0) return false;
    for (std::size_t s = 0; s < p.nm; ++s) {
      if (p.merged[s] == -2) return false;
      if (p.merged[s] >= 0) {
        const iter_desc& it = p.it[p.merged[s]];
        if (it.acc == 0 || it.may_miss) return false;
        if (!it.coord && !D.acc[it.acc].lev[it.lev].ordered) return false;
      }
    }
    return true;
  }();
  static constexpr bool outer_splittable = [] {
    if (outer_cut_by_coord) return true;
    if (O.n == 0 || (Pre != 0 && O.scatter <= 0) || O.error != plan_error::none) return false;
    const loop_plan p = plan_loop(D, O, 0, 0);
    if (p.zero || p.error != plan_error::none || p.nm != 1 || p.np != 1 || p.merged[0] == -2 || p.computed >= 0)
      return false;
    if (p.merged[0] >= 0) {
      const level_desc& lv = D.acc[p.it[p.merged[0]].acc].lev[p.it[p.merged[0]].lev];
      if (!lv.unique && !lv.ordered) return false;
    }
    return true;
  }();
  // Whether loop 0 binds the output's first level, a dense one: chunks of
  // loop 0 then own disjoint parts of the output.
  static constexpr bool rows_first =
      D.acc[0].nlev > 0 && D.acc[0].lev[0].var == O.vars[0] && dense_level_desc(D.acc[0].lev[0]);
  // Loop 0 binds the block variable b of a block pair that computes the
  // output's first level's variable, a dense one (i = b * B + inner: BCSR,
  // SELL, grouped rows, CSB): chunks of loop 0's blocks then own disjoint
  // ranges of B rows each. B, or 0.
  // (rows_comp: the computed variable whose blocks loop 0 binds, -1 if none)
  static constexpr int rows_comp = [] {
    if (O.n == 0 || D.acc[0].nlev == 0 || !dense_level_desc(D.acc[0].lev[0]) ||
        D.acc[0].lev[0].map != map_kind::mode)
      return -1;
    for (std::size_t c = 0; c < D.ncomp; ++c)
      if (D.comp_var[c] == D.acc[0].lev[0].var && D.comp_outer[c] == O.vars[0]) return static_cast<int>(c);
    return -1;
  }();
  static constexpr int rows_block = [] {
    for (std::size_t c = 0; c < D.ncomp; ++c)  // (a loop: clang's -Warray-bounds flags a constant -1 index)
      if (static_cast<int>(c) == rows_comp && D.comp_remap[c] == 0) return D.comp_block[c];
    return 0;
  }();
  // The same with a remapped block (SELL-C-sigma's lanes): chunks of loop
  // 0's blocks own disjoint rows, but not ranges of rows (fuse, which cuts
  // rows in ranges, sees no rows_block).
  static constexpr bool rows_permuted = [] {
    for (std::size_t c = 0; c < D.ncomp; ++c)
      if (static_cast<int>(c) == rows_comp && D.comp_remap[c] != 0) return true;
    return false;
  }();
};
}  // inline namespace TENSORLEV_KERNEL_ABI

// A device launcher's zero fill of n values (a namespace-scope functor: see
// device_chunk_fn in kernel.hpp for why launched types name no kernel).
template <class V>
struct zero_fill_fn {
  V* values;
  TENSORLEV_HOST_DEVICE V operator()(std::size_t c) const {
    values[c] = V{};
    return V{};
  }
};

// to[c] = from[c], converted (a launch per element).
template <class To, class From>
struct convert_fn {
  To* to;
  const From* from;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t c) const { to[c] = static_cast<To>(from[c]); }
};

// The policy interface, with what a policy that needs nothing does.
template <class S>
struct output_base {
  using V = typename S::V;
  using I = typename S::I;
  struct data {};
  // The kernel builds the output's levels (level_of reads data::levels).
  static constexpr bool builds_levels = false;
  // `=` stores each component once instead of zero-filling and adding.
  static constexpr bool direct_store = false;
  static constexpr bool block_store = false;  // located outputs only (located.hpp)
  static constexpr par_kind par = par_kind::none;
  // Whether a policy that builds levels has a device form (run_device).
  static constexpr bool device_builds = false;
  // Whether a policy that builds no levels has a device form (run_device):
  // all but stream, which collects coordinates into a host list.
  static constexpr bool device_form = true;

  // What loop_nest records before loop Dp runs, and hands to after_loop.
  template <std::size_t Dp, mask_t Abs, class St, class Cs>
  TENSORLEV_HOST_DEVICE static I mark(St&, const Cs&) {
    return I(0);
  }
  // Whether this run only counts entries (their values are not needed).
  template <class St>
  TENSORLEV_HOST_DEVICE static bool counting(const St&) {
    return false;
  }
  // After loop Dp (with the operands absent in Abs) visited every point.
  template <std::size_t Dp, mask_t Abs, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void after_loop(St&, const Cs&, I) {}
  // Before and after the loops below loop Dp run for one value of its
  // variable.
  template <std::size_t Dp, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void before_inner(St&, const Cs&) {}
  template <std::size_t Dp, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void after_inner(St&, const Cs&) {}
  // The device form: chunk c of the loop nest begins (with its own state).
  template <class St>
  TENSORLEV_HOST_DEVICE static void begin_chunk(St&, std::size_t) {}
  // Pointers the device form's state needs, set on the host before the
  // operands move to the launcher's memory (kernel::run_device).
  template <class St>
  static void prepare(St&) {}
};

// Policies that build the output's levels (append, workspace, insert,
// assemble): the levels and values being built.
template <class S>
struct level_output : output_base<S> {
  using V = typename S::V;
  using I = typename S::I;
  static constexpr bool builds_levels = true;
  struct data {
    typename S::out_levels_t* levels = nullptr;
    std::vector<V>* vals = nullptr;
  };

  // The output's arrays being assembled: its levels and values.
  using arrays_t = std::pair<typename S::out_levels_t, std::vector<V>>;
  // Whether run can take the output's own arrays to assemble into (owning
  // storage): a statement recomputed into the same tensor then reuses their
  // memory instead of faulting in fresh pages each time (a 26.5e6-entry
  // A + A^T spent most of its time in the kernel's page clearing).
  static constexpr bool can_recycle = requires(typename S::template op_t<0>& t) {
    { t.release_arrays() } -> std::same_as<arrays_t>;
  };
  // Whether it takes them: no operand reads an array of the output (a view
  // of its pattern or values: the loops would read what they overwrite).
  template <class St>
  static bool recycles(const St& st) {
    if constexpr (!can_recycle)
      return false;
    else
      return !reads_arrays_of(*std::get<0>(st.ops), st.ops, true);
  }
  // The arrays to assemble into: the output's own (values cleared) when
  // reuse, else new empty ones.
  template <class T>
  static arrays_t take_arrays(T& o, bool reuse) {
    if constexpr (can_recycle) {
      if (reuse) {
        arrays_t a = o.release_arrays();
        a.second.clear();
        return a;
      }
    }
    return {empty_levels(o), std::vector<V>{}};
  }
  // Should the loops throw (an index type's overflow, memory), an output
  // whose arrays were taken is left empty, never half-written: the taken
  // arrays are freed first, then an empty result is built (if even that
  // fails, the output stays moved-from: assign to it). Disarmed once the
  // result is in place.
  template <class T>
  struct restore {
    T* o;
    arrays_t* arrays;
    bool armed;
    I parent_size;
    ~restore() {
      if (!armed) return;
      try {
        *arrays = {empty_levels(*o), std::vector<V>{}};
        typename S::out_levels_t e = empty_levels(*o);
        std::get<S::out_last_level>(e).append_init(parent_size, I(0));
        std::get<S::out_last_level>(e).append_finalize(parent_size, I(0));
        *o = T(o->dims(), std::move(e), std::vector<V>{});
      } catch (...) {
      }
    }
  };

  // The output's levels, one per level of its format, sized for no entries.
  template <class T>
  static typename S::out_levels_t empty_levels(const T& o) {
    using F = typename T::format_type;
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return typename S::out_levels_t(std::tuple_element_t<K, typename S::out_levels_t>(
          level_shape<I>{o.dims()[F::maps[K].dim], 0, 0, {}})...);
    }(std::make_index_sequence<T::num_levels>{});
  }
  // The device form's start (append, workspace, assemble): the output's
  // levels sized for no entries, and st reading them (the dense prefix,
  // which the loops locate) from the launcher's copy.
  template <class St, class Ln>
  static typename S::out_levels_t device_levels(const St& host, St& st, const Ln& dev) {
    typename S::out_levels_t lv = empty_levels(*std::get<0>(host.ops));
    st.out.levels = const_cast<typename S::out_levels_t*>(dev.upload(lv));
    return lv;
  }
  // Positions under the output's first N levels (dense: sized already).
  template <std::size_t N>
  static I prefix_size(const typename S::out_levels_t& lv) {
    I n = 1;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((n = std::get<K>(lv).size(n)), ...);
    }(std::make_index_sequence<N>{});
    return n;
  }
  // Position of the output's first N (dense) levels at the bound variables.
  template <std::size_t N, class St>
  TENSORLEV_HOST_DEVICE static I locate_prefix(St& st) {
    I p = 0;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            st.crd[0][K] = st.var_val[S::var_index(S::D.acc[0].lev[K].var)];
            p = std::get<K>(*st.out.levels).locate(p, ancestors<I>(st.crd[0], K), static_cast<I>(st.crd[0][K])).pos;
          }(),
          ...);
    }(std::make_index_sequence<N>{});
    return p;
  }
};

}  // namespace cg
}  // namespace tensorlev
