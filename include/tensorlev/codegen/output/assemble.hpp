#pragma once
/// @file codegen/output/assemble.hpp
/// Output policy `assemble` (a dense prefix, then ordered appendable
/// levels: DCSR, CSF, COO), when the output's variables are the outermost
/// loops and each is enumerated in order. The entries arrive in
/// lexicographic order, so the first level whose coordinate changed (and
/// every level below; below a non-unique level, every entry) gets a new
/// position. A symbolic pass counts the positions per level (the parents'
/// counts size `pos`, the own count sizes `crd`), then the numeric pass
/// appends. On a parallel executor, when every assembled level has a sized
/// append (parallel_appendable_level) and loop 0 can be cut, the passes run
/// in chunks of loop 0: each chunk counts its positions per level (chunks
/// own disjoint values of the output's first variable, so no position is
/// shared), a scan over the chunks gives each its first position per
/// level, and the numeric pass stores there.

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct assemble_output : level_output<S> {
  using V = typename S::V;
  using I = typename S::I;
  using levels_t = typename S::out_levels_t;
  static constexpr std::size_t L = S::D.acc[0].nlev;
  static constexpr std::size_t prefix = S::out_prefix;

  // Every assembled level stores at a given position (the levels are
  // sized exactly after the symbolic pass, the values too).
  static constexpr bool sized = []<std::size_t... X>(std::index_sequence<X...>) {
    return (parallel_appendable_level<std::tuple_element_t<prefix + X, levels_t>> && ...);
  }(std::make_index_sequence<L - prefix>{});
  static constexpr par_kind par = sized && S::outer_splittable ? par_kind::assemble : par_kind::none;

  // Per level: positions counted so far (the next position), the current
  // coordinate and position, and where the current parent's children begin.
  struct assembly {
    bool counting = true;
    bool any = false;
    I prefix_pos = 0;
    I cnt[S::ML]{};
    I crd[S::ML]{};
    I pos[S::ML]{};
    I parent[S::ML]{};
    I begin[S::ML]{};
    bool open[S::ML]{};  // a parent's children begun at this level
    // A chunk of a parallel run, with no prefix: the first level's one
    // parent (the root) is every chunk's, so its edges are set afterwards.
    bool shared_root = false;
  };

  template <class St>
  TENSORLEV_HOST_DEVICE static bool counting(const St& st) {
    return st.out.as->counting;
  }
  struct data : level_output<S>::data {
    assembly* as = nullptr;
  };

  // An entry equal to the previous one adds to it.
  template <class St, class Cs>
  static void emit(St& st, const Cs&, const V& value) {
    assembly& as = *st.out.as;
    const I p = level_output<S>::template locate_prefix<prefix>(st);
    std::size_t first = L;
    if (!as.any || p != as.prefix_pos) first = prefix;
    for (std::size_t k = prefix; k < L && first == L; ++k)
      if (st.var_val[S::var_index(S::D.acc[0].lev[k].var)] != as.crd[k]) first = k;
    if (first == L) {  // the same coordinates again
      if (!as.counting) {
        if constexpr (sized)
          (*st.out.vals)[static_cast<std::size_t>(as.pos[L - 1])] += value;
        else
          st.out.vals->back() += value;
      }
      return;
    }
    for (std::size_t k = prefix; k < first; ++k)
      if (!S::D.acc[0].lev[k].unique) first = k;
    as.any = true;
    as.prefix_pos = p;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            constexpr std::size_t k = prefix + K;
            if (k < first) return;
            const I c = st.var_val[S::var_index(S::D.acc[0].lev[k].var)];
            const I parent = k == prefix ? p : as.pos[k - 1];
            const I q = as.cnt[k]++;
            as.crd[k] = c;
            as.pos[k] = q;
            if (as.counting) return;
            auto& lvl = std::get<k>(*st.out.levels);
            if constexpr (sized)
              lvl.append_coord_at(q, c);
            else
              lvl.append_coord(q, c);
            if (!as.open[k] || as.parent[k] != parent) as.open[k] = true, as.parent[k] = parent, as.begin[k] = q;
            if (k != prefix || !as.shared_root) lvl.append_edges(parent, as.begin[k], q + 1);
          }(),
          ...);
    }(std::make_index_sequence<L - prefix>{});
    if (!as.counting) {
      if constexpr (sized)
        (*st.out.vals)[static_cast<std::size_t>(as.pos[L - 1])] = value;
      else
        st.out.vals->push_back(value);
    }
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    levels_t lv = level_output<S>::empty_levels(*o);
    const I prefix_size = level_output<S>::template prefix_size<prefix>(lv);
    st.out.levels = &lv;
    if constexpr (par == par_kind::assemble) {
      if (ex.parallel()) {
        std::vector<V> vals;
        st.out.vals = &vals;
        run_chunked<K>(st, cs, ex, lv, prefix_size);
        *o = T(o->dims(), std::move(lv), std::move(vals));
        return;
      }
    }
    // Symbolic pass: positions per level.
    assembly as;
    st.out.as = &as;
    V unused{};
    K::template loop<0, 0>(st, cs, unused);
    const assembly counted = as;
    // Numeric pass: every level sized, then appended in order.
    auto parent_size = [&](std::size_t k) { return k == prefix ? prefix_size : counted.cnt[k - 1]; };
    init_levels(lv, prefix_size, counted.cnt);
    std::vector<V> vals;
    if constexpr (sized)
      vals.assign(static_cast<std::size_t>(counted.cnt[L - 1]), V{});
    else
      vals.reserve(static_cast<std::size_t>(counted.cnt[L - 1]));
    st.out.vals = &vals;
    as = assembly{};
    as.counting = false;
    K::template loop<0, 0>(st, cs, unused);
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (std::get<prefix + X>(lv).append_finalize(parent_size(prefix + X), counted.cnt[prefix + X]), ...);
    }(std::make_index_sequence<L - prefix>{});
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }

  // Every assembled level sized for its count (cnt[k] positions under
  // cnt[k - 1] parents).
  static void init_levels(levels_t& lv, I prefix_size, const I* cnt) {
    auto parent_size = [&](std::size_t k) { return k == prefix ? prefix_size : cnt[k - 1]; };
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      if constexpr (sized)
        (std::get<prefix + X>(lv).append_init_sized(parent_size(prefix + X), cnt[prefix + X]), ...);
      else
        (std::get<prefix + X>(lv).append_init(parent_size(prefix + X), cnt[prefix + X]), ...);
    }(std::make_index_sequence<L - prefix>{});
    // Levels sharing an array (AoS COO's lanes) point into it now: the
    // head reserved its exact count, so appending never moves it.
    detail::link_levels(lv);
  }

  // Both passes in chunks of loop 0. Chunk c's positions at level k begin
  // after every earlier chunk's (a scan of the chunks' counts, checked
  // against the index type).
  template <class K, class St, class Cs>
  static void run_chunked(St& st, const Cs& cs, const executor& ex, levels_t& lv, I prefix_size) {
    const std::vector<I> bounds = K::chunk_bounds(st, cs);
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    std::vector<assembly> chunk(n);
    K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
      local.out.as = &chunk[c];
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
    });
    I total[S::ML]{};
    for (std::size_t c = 0; c < n; ++c) {
      const assembly counted = chunk[c];
      chunk[c] = assembly{};
      chunk[c].counting = false;
      chunk[c].shared_root = prefix == 0;
      for (std::size_t k = prefix; k < L; ++k) {
        const I m = counted.cnt[k];
        chunk[c].cnt[k] = total[k];  // the chunk's first position at level k
        if (m > std::numeric_limits<I>::max() - total[k])
          throw overflow_error("tensorlev: the output's positions at level " + std::to_string(k) + " (more than " +
                               std::to_string(total[k]) + ") do not fit the index type (" +
                               std::to_string(sizeof(I) * 8) + "-bit)");
        total[k] += m;
      }
    }
    init_levels(lv, prefix_size, total);
    st.out.vals->assign(static_cast<std::size_t>(total[L - 1]), V{});
    K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
      local.out.as = &chunk[c];
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
    });
    if constexpr (prefix == 0) std::get<0>(lv).append_edges(I(0), I(0), total[0]);
    auto parent_size = [&](std::size_t k) { return k == prefix ? prefix_size : total[k - 1]; };
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (std::get<prefix + X>(lv).append_finalize(parent_size(prefix + X), total[prefix + X]), ...);
    }(std::make_index_sequence<L - prefix>{});
  }
};

}  // namespace tensorlev::cg
