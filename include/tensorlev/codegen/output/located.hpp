#pragma once
/// @file codegen/output/located.hpp
/// Output policy `located` (every level of the output dense: vectors,
/// matrices, dense tensors): each value is added at the position the
/// output's levels locate for the bound variables. `=` zero-fills first,
/// unless every component is written exactly once (`direct_store`).
///
/// In parallel, chunks of loop 0 either write disjoint rows (`rows`: loop 0
/// binds the output's first level, or the blocks of rows it is computed
/// from: SELL, BCSR, CSB, grouped rows) or each add into a private zeroed copy
/// of the output taken from a pool, the copies being added into the output
/// afterwards over its components (`scatter`: CSC SpMV, transposed access).

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct located_output : output_base<S> {
  using V = typename S::V;
  using I = typename S::I;
  static constexpr auto& D = S::D;
  static constexpr auto& O = S::O;

  struct data {
    V* values = nullptr;  // the values written (the output's, or a chunk's private copy)
  };

  // Loop dp runs once over its variable's full extent: one lattice point,
  // a full unique driver, no segment, nothing located that can miss.
  static constexpr bool full_once(int dp) {
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
    return true;
  }

  // `=` into a dense output where the outermost loops bind exactly the
  // output's variables, each over its full extent with one lattice point and
  // nothing that can miss: every output component is written exactly once,
  // so the kernel stores instead of zero-filling and accumulating.
  static constexpr bool direct_store = [] {
    if (S::accumulate || O.out != out_kind::located || O.ra != 0 || O.nterms > 1) return false;
    for (int dp = 0; dp <= O.out_last; ++dp) {
      bool is_out = false;
      for (std::size_t k = 0; k < D.acc[0].order; ++k) is_out = is_out || D.acc[0].vars[k] == O.vars[dp];
      if (!is_out || !full_once(dp)) return false;
    }
    return true;
  }();

  // The output's levels leave gaps (a strided view): `=` zero-fills its
  // components, not its values span, and no chunk adds a private copy over
  // the span (the gaps belong to someone else).
  static constexpr bool gaps = detail::has_gaps_v<std::remove_const_t<typename S::template op_t<0>>>;

  // `=` into a vector computed from blocks (SELL slices, grouped rows, BCSR
  // block rows) summed in the block workspace (kernel::blocked), where loop
  // 0 runs once over its blocks: each full block's sums are stored into
  // the output, the last block (past the extent, plain loops) is zeroed
  // before its loops add, rows no block reaches (a hand-built operand whose
  // block level is shorter than the output needs) are zeroed before the
  // loops, and the output is not zero-filled first. The device form
  // zero-fills as before (on a GPU there is no workspace; on a host space
  // the stores then overwrite). (No precompute: plan_block plans none.)
  static constexpr bool block_store = [] {
    if (S::accumulate || O.out != out_kind::located || O.ra != 0 || O.block != 0 || gaps) return false;
    // (A loop, not D.comp_var[O.block_comp]: clang's -Warray-bounds flags
    // the index -1 of kernels without a block even behind the return.)
    for (std::size_t c = 0; c < std::size(D.comp_var); ++c)
      if (static_cast<int>(c) == O.block_comp)
        return D.acc[0].order == 1 && D.acc[0].vars[0] == D.comp_var[c] && O.vars[0] == D.comp_outer[c] &&
               full_once(0);
    return false;
  }();

  // The output's last level is bound: store value into its slot (block_store).
  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void store(St& st, const Cs& cs, const V& value) {
    st.out.values[static_cast<std::size_t>(cs.pos[0])] = value;
  }

  static constexpr par_kind par = [] {
    if (!S::outer_splittable || D.acc[0].nlev == 0) return par_kind::none;
    if (S::rows_first || S::rows_block > 0 || S::rows_permuted) return par_kind::rows;
    if (gaps) return par_kind::none;
    for (std::size_t k = 0; k < D.acc[0].nlev; ++k)
      if (!dense_level_desc(D.acc[0].lev[k])) return par_kind::none;
    return par_kind::scatter;
  }();

  // Scatter chunks add into an output whose storage says so with atomic
  // adds (the device form), instead of into private copies.
  static constexpr bool atomic = par == par_kind::scatter && detail::atomic_adds_v<typename S::template op_t<0>>;
  static_assert(!block_store || par != par_kind::scatter,
                "tensorlev: stores into a private zeroed copy would be added as if they were sums");

  // The output's last level is bound: its value slot is cs.pos[0].
  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void emit(St& st, const Cs& cs, const V& value) {
    V& slot = st.out.values[static_cast<std::size_t>(cs.pos[0])];
    if constexpr (direct_store)
      slot = value;
    else if constexpr (atomic)
      detail::atomic_add(&slot, value);
    else
      slot += value;
  }

  // The device form (kernel::run_device): zero-fill where the launcher
  // runs, then one launch of the loop nest in chunks of loop 0 (disjoint
  // rows, or atomic adds for scatter chunks), or on one thread where loop 0
  // cannot be cut.
  template <class K, class St, class L>
  static void run_device(const St& host, const St& st, const L& dev) {
    static_assert(par != par_kind::scatter || atomic,
                  "tensorlev: the device form's scatter output must add atomically (atomic_borrowed storage)");
    static_assert(!gaps || S::accumulate || direct_store,
                  "tensorlev: the device form zero-fills an output's values span: not a strided view's (use +=)");
    if constexpr (!S::accumulate && !direct_store) {
      const auto vals = std::get<0>(host.ops)->values();
      if (!vals.empty()) dev.for_each(vals.size(), zero_fill_fn<V>{vals.data()});
    }
    const auto fn = K::device_fn(st);
    dev.for_each(fn.n, fn);
  }

  template <class St>
  static void prepare(St& st) {
    st.out.values = std::get<0>(st.ops)->values().data();
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    if constexpr (!S::accumulate && !direct_store && !block_store) {
      if constexpr (gaps) {
        const auto b = o->template level<0>().coord_bounds(ancestors<I>(nullptr, 0));
        detail::zero_components<0>(*o, I(0), b.begin, b.end);
      } else {
        for (auto& v : o->values()) v = V{};
      }
    }
    st.out.values = o->values().data();
    if constexpr (block_store) K::zero_unreached_rows(st, cs);
    if constexpr (par != par_kind::none) {
      if (ex.parallel()) {
        run_chunked<K>(st, cs, ex);
        return;
      }
    }
    V unused{};
    K::template loop<0, 0>(st, cs, unused);
  }

  template <class K, class St, class Cs>
  static void run_chunked(const St& st, const Cs& cs, const executor& ex) {
    const auto bounds = K::chunk_bounds(st, cs);
    if constexpr (par == par_kind::scatter) {
      // Each chunk adds into a private copy of the output; the copies are
      // summed into it afterwards. Other kinds write disjoint positions.
      detail::scratch_pool<std::vector<V>> copies;
      const std::size_t nv = std::get<0>(st.ops)->values().size();
      K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
        std::vector<V>* copy = copies.acquire([&] { return std::vector<V>(nv, V{}); });
        local.out.values = copy->data();
        V unused{};
        K::template loop<0, 0>(local, cs, unused);
        copies.release(copy);
      });
      add_copies<K>(copies, st.out.values, nv, ex);
    } else {
      K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
        V unused{};
        K::template loop<0, 0>(local, cs, unused);
      });
    }
  }

  // Scatter outputs: out[0, nv) += every private copy, in the pool's order,
  // in chunks of components on ex.
  template <class K>
  static void add_copies(const detail::scratch_pool<std::vector<V>>& copies, V* out, std::size_t nv,
                         const executor& ex) {
    if (copies.all().empty() || nv == 0) return;
    const std::size_t n = nv < K::max_chunks ? nv : K::max_chunks;
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
};

}  // namespace tensorlev::cg
