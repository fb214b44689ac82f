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
/// each parent's buckets are its own in the numeric pass). A hash vector
/// (no dense prefix: one parent, one table) cannot be shared that way: when
/// loop 0 can be cut, each chunk collects its own (coordinate, value)
/// list, and the lists are counted and inserted in chunk order (the serial
/// order, so the same sums), on the calling thread.

#include "../../detail/algorithm.hpp"
#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct insert_output : level_output<S> {
  using V = typename S::V;
  using I = typename S::I;
  using levels_t = typename S::out_levels_t;
  static constexpr auto last = S::out_last_level;

  static constexpr par_kind par = !S::outer_splittable ? par_kind::none
                                  : last == 0           ? par_kind::collect
                                  : S::rows_first       ? par_kind::insert
                                                        : par_kind::none;

  struct data : level_output<S>::data {
    bool counting = false;  // the symbolic pass: count children per parent position
    I* counts = nullptr;
    I* seen = nullptr;  // per coordinate, the parent position + 1 that last counted it
    std::vector<std::pair<I, V>>* sink = nullptr;  // a chunk's list (par_kind::collect)
  };

  // The output coordinate is located through the dense prefix; the
  // symbolic pass counts it, the numeric pass inserts it into the last
  // level (if new) and accumulates the value at its position.
  template <class St, class Cs>
  static void emit(St& st, const Cs&, const V& value) {
    const I c = st.var_val[S::var_index(S::D.acc[0].lev[last].var)];
    if constexpr (par == par_kind::collect) {
      if (st.out.sink != nullptr) {
        st.out.sink->emplace_back(c, value);
        return;
      }
    }
    const I p = level_output<S>::template locate_prefix<last>(st);
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
    if constexpr (par == par_kind::collect) {
      if (ex.parallel()) return run_collected<K>(st, cs, ex);
    }
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
    [[maybe_unused]] typename K::chunk_list bounds;
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
    I most = 0;
    for (const I c : counts) most = detail::max_of(most, c);
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

  // A hash vector on a parallel executor: the loops run in chunks, each
  // filling its own list; the lists are then counted (distinct
  // coordinates, marked as in the symbolic pass) and inserted in chunk
  // order.
  template <class K, class St, class Cs>
  static void run_collected(St& st, const Cs& cs, const executor& ex)
    requires(last == 0)
  {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    using F = typename T::format_type;
    const auto bounds = K::chunk_bounds(st, cs);
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    std::vector<std::vector<std::pair<I, V>>> lists(n);
    K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
      local.out.sink = &lists[c];
      V target{};
      K::template loop<0, 0>(local, cs, target);
    });
    const auto extent = static_cast<std::size_t>(o->dims()[F::maps[0].dim]);
    std::size_t pairs = 0;
    for (const auto& l : lists) pairs += l.size();
    std::size_t distinct = pairs;  // an overestimate past 2^24 coordinates, as above
    if (extent <= (std::size_t{1} << 24)) {
      std::vector<unsigned char> seen(extent, 0);
      distinct = 0;
      for (const auto& l : lists)
        for (const auto& [c, v] : l)
          if (seen[static_cast<std::size_t>(c)] == 0) seen[static_cast<std::size_t>(c)] = 1, ++distinct;
    }
    if (distinct > static_cast<std::size_t>(std::numeric_limits<I>::max()))
      throw overflow_error(detail::message() << "tensorlev: the hash vector's entries (" << distinct
                                             << ") do not fit the index type (" << sizeof(I) * 8 << "-bit)");
    levels_t lv = level_output<S>::empty_levels(*o);
    using LL = std::tuple_element_t<0, levels_t>;
    const std::array<I, 1> counts{static_cast<I>(distinct)};
    std::get<0>(lv) = LL(level_shape<I>{static_cast<I>(extent), 0, distinct, {}, std::span<const I>(counts)});
    const I size = std::get<0>(lv).size(I(1));
    std::get<0>(lv).insert_init(I(1), size);
    std::vector<V> vals(static_cast<std::size_t>(size), V{});
    auto& lvl = std::get<0>(lv);
    for (auto& l : lists) {
      for (const auto& [c, v] : l) {
        const located<I> r = lvl.locate(I(0), ancestors<I>(nullptr, 0), c);
        if (!r.found) lvl.insert_coord(r.pos, c);
        vals[static_cast<std::size_t>(r.pos)] += v;
      }
      l = {};  // free it now
    }
    lvl.insert_finalize(I(1), size);
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }
};

}  // namespace tensorlev::cg
