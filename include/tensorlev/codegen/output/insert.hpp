#pragma once
/// @file codegen/output/insert.hpp
/// Output policy `insert` (a dense prefix, then one insertable level: hash
/// rows, a hash vector). A symbolic pass runs the loops once counting each
/// parent's distinct coordinates (a marker per coordinate; past 2^24
/// coordinates repeats are counted, an overestimate) to size each parent's
/// buckets; the numeric pass locates, inserts if new and accumulates. Any
/// loop order. On a parallel executor, when loop 0 binds the output's
/// first (dense) level, chunks of loop 0 own disjoint parents: both passes
/// run in chunks (a marker array per running chunk in the symbolic pass;
/// each parent's buckets are its own in the numeric pass).

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct insert_output : level_output<S> {
  using V = typename S::V;
  using I = typename S::I;
  using levels_t = typename S::out_levels_t;
  static constexpr auto last = S::out_last_level;

  static constexpr par_kind par =
      S::outer_splittable && S::rows_first && last >= 1 ? par_kind::insert : par_kind::none;

  struct data : level_output<S>::data {
    bool counting = false;  // the symbolic pass: count children per parent position
    I* counts = nullptr;
    I* seen = nullptr;  // per coordinate, the parent position + 1 that last counted it
  };

  // The output coordinate is located through the dense prefix; the
  // symbolic pass counts it, the numeric pass inserts it into the last
  // level (if new) and accumulates the value at its position.
  template <class St, class Cs>
  static void emit(St& st, const Cs&, const V& value) {
    const I p = level_output<S>::template locate_prefix<last>(st);
    const I c = st.var_val[S::var_index(S::D.acc[0].lev[last].var)];
    if (st.out.counting) {
      if (st.out.seen == nullptr) {
        ++st.out.counts[static_cast<std::size_t>(p)];  // an upper bound
      } else if (st.out.seen[static_cast<std::size_t>(c)] != p + 1) {
        st.out.seen[static_cast<std::size_t>(c)] = p + 1;
        ++st.out.counts[static_cast<std::size_t>(p)];
      }
      return;
    }
    auto& lvl = std::get<last>(*st.out.levels);
    const located<I> r = lvl.locate(p, ancestors<I>(st.crd[0], last), c);
    if (!r.found) lvl.insert_coord(r.pos, c);
    (*st.out.vals)[static_cast<std::size_t>(r.pos)] += value;
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    using F = typename T::format_type;
    auto shape = [&](std::size_t k, std::size_t max_children, std::span<const I> children) {
      return level_shape<I>{o->dims()[F::maps[k].dim], 0, max_children, {}, children};
    };
    levels_t lv = level_output<S>::empty_levels(*o);
    const I parent_size = level_output<S>::template prefix_size<last>(lv);
    st.out.levels = &lv;
    // Symbolic pass: children per parent position. The marker costs one
    // index per coordinate of the last level; past 2^24 coordinates (a huge
    // hash vector) repeats are counted instead, which only overestimates
    // the buckets needed.
    std::vector<I> counts(static_cast<std::size_t>(parent_size), I(0));
    const auto last_extent = static_cast<std::size_t>(o->dims()[F::maps[last].dim]);
    const bool marked = last_extent <= (std::size_t{1} << 24);
    st.out.counting = true;
    st.out.counts = counts.data();
    [[maybe_unused]] std::vector<I> bounds;
    [[maybe_unused]] const bool chunked = par == par_kind::insert && ex.parallel();
    V unused{};
    if constexpr (par == par_kind::insert) {
      if (chunked) {
        // Markers hold parent + 1, and chunks own disjoint parents: a
        // running chunk reuses the array the previous one left.
        bounds = K::chunk_bounds(st, cs);
        detail::scratch_pool<std::vector<I>> markers;
        K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
          std::vector<I>* m = marked ? markers.acquire([&] { return std::vector<I>(last_extent, I(0)); }) : nullptr;
          local.out.seen = m != nullptr ? m->data() : nullptr;
          V target{};
          K::template loop<0, 0>(local, cs, target);
          if (m != nullptr) markers.release(m);
        });
      }
    }
    if (!chunked) {
      std::vector<I> seen(marked ? last_extent : 0, I(0));
      st.out.seen = marked ? seen.data() : nullptr;
      K::template loop<0, 0>(st, cs, unused);
    }
    const I most = counts.empty() ? I(0) : *std::max_element(counts.begin(), counts.end());
    // Numeric pass: the last level sized by each parent's count (hashed:
    // its own buckets per parent), then every value inserted.
    using LL = std::tuple_element_t<last, levels_t>;
    std::get<last>(lv) = LL(shape(last, static_cast<std::size_t>(most), counts));
    const I size = std::get<last>(lv).size(parent_size);
    std::get<last>(lv).insert_init(parent_size, size);
    std::vector<V> vals(static_cast<std::size_t>(size), V{});
    st.out.vals = &vals;
    st.out.counting = false;
    st.out.seen = nullptr;
    if constexpr (par == par_kind::insert) {
      if (chunked) {
        K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
          V target{};
          K::template loop<0, 0>(local, cs, target);
        });
      }
    }
    if (!chunked) K::template loop<0, 0>(st, cs, unused);
    std::get<last>(lv).insert_finalize(parent_size, size);
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }
};

}  // namespace tensorlev::cg
