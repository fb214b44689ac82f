#pragma once
/// @file codegen/output/assemble.hpp
/// Output policy `assemble` (a dense prefix, then ordered appendable
/// levels: DCSR, CSF, COO), when the output's variables are the outermost
/// loops and each is enumerated in order. The entries arrive in
/// lexicographic order, so the first level whose coordinate changed (and
/// every level below; below a non-unique level, every entry) gets a new
/// position. A symbolic pass counts the positions per level (the parents'
/// counts size `pos`, the own count sizes `crd`), then the numeric pass
/// appends. Serial on every executor.

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct assemble_output : level_output<S> {
  using V = typename S::V;
  using I = typename S::I;
  using levels_t = typename S::out_levels_t;
  static constexpr std::size_t L = S::D.acc[0].nlev;
  static constexpr std::size_t prefix = S::out_prefix;

  // Per level: positions counted so far, the current coordinate and
  // position, and where the current parent's children begin.
  struct assembly {
    bool counting = true;
    bool any = false;
    I prefix_pos = 0;
    I cnt[S::ML]{};
    I crd[S::ML]{};
    I pos[S::ML]{};
    I parent[S::ML]{};
    I begin[S::ML]{};
  };
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
      if (!as.counting) st.out.vals->back() += value;
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
            lvl.append_coord(q, c);
            if (q == 0 || as.parent[k] != parent) as.parent[k] = parent, as.begin[k] = q;
            lvl.append_edges(parent, as.begin[k], q + 1);
          }(),
          ...);
    }(std::make_index_sequence<L - prefix>{});
    if (!as.counting) st.out.vals->push_back(value);
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor&) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    levels_t lv = level_output<S>::empty_levels(*o);
    const I prefix_size = level_output<S>::template prefix_size<prefix>(lv);
    st.out.levels = &lv;
    // Symbolic pass: positions per level.
    assembly as;
    st.out.as = &as;
    V unused{};
    K::template loop<0, 0>(st, cs, unused);
    const assembly counted = as;
    // Numeric pass: every level sized, then appended in order.
    auto parent_size = [&](std::size_t k) { return k == prefix ? prefix_size : counted.cnt[k - 1]; };
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (std::get<prefix + X>(lv).append_init(parent_size(prefix + X), counted.cnt[prefix + X]), ...);
    }(std::make_index_sequence<L - prefix>{});
    // Levels sharing an array (AoS COO's lanes) point into it now: the
    // head reserved its exact count, so appending never moves it.
    detail::link_levels(lv);
    std::vector<V> vals;
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
};

}  // namespace tensorlev::cg
