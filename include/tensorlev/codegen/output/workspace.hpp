#pragma once
/// @file codegen/output/workspace.hpp
/// Output policy `workspace` (Gustavson): as append, but reductions sit
/// between the dense prefix and the last output variable (SpGEMM's i, k,
/// j; taco's precompute). Values accumulate in a dense row over the last
/// variable with a list of the coordinates touched; when the loop that
/// opened the row ends, the list is sorted and appended, and the row
/// cleared.
///
/// In parallel each concurrent chunk takes its own row from a pool and
/// collects its entries and its parents' segments; an exclusive scan of the
/// chunks' counts gives each chunk's first position, the level is sized
/// exactly, and a parallel pass copies every chunk's entries into place.
/// Unlike append (count, scan, fill), the product is computed once: a
/// counting pass would redo SpGEMM's index work, which costs about as much
/// as the numeric pass.

#include "append.hpp"

namespace tensorlev::cg {

template <class S>
struct workspace_output : append_output<S> {
  using base = append_output<S>;
  using V = typename S::V;
  using I = typename S::I;
  static constexpr auto last = S::out_last_level;

  // In a parallel run: one chunk's entries and its parents' segments
  // (parent position, begin, end, counted from the chunk's first entry).
  struct chunk_out {
    std::vector<I> crd;
    std::vector<V> vals;
    std::vector<std::array<I, 3>> edges;
  };
  struct data : base::data {
    chunk_out* lout = nullptr;  // in a chunk: where the chunk's entries go
    V* ws = nullptr;  // dense row over the last output variable
    // Which row entries hold a coordinate. bool, not unsigned char: a
    // character store may alias anything, and the compiler then reloads
    // every pointer of the state after each one (SpGEMM ran 1.6x slower).
    bool* mark = nullptr;
    // Those coordinates, in the order first reached: an array as long as
    // the row, so that marking one calls nothing (a possible reallocation
    // in the loop would make the compiler reload every pointer it holds).
    I* touched = nullptr;
    std::size_t ntouched = 0;
  };
  // A row, one per concurrent chunk.
  struct row {
    std::vector<V> ws;
    std::unique_ptr<bool[]> mark;
    std::unique_ptr<I[]> touched;
  };
  template <class St>
  static std::size_t row_length(const St& st) {
    return static_cast<std::size_t>(st.extent[S::var_index(S::D.acc[0].lev[last].var)]);
  }
  static row make_row(std::size_t n) {
    return row{std::vector<V>(n, V{}), std::make_unique<bool[]>(n), std::make_unique_for_overwrite<I[]>(n)};
  }
  template <class St>
  static void use_row(St& st, row& r) {
    st.out.ws = r.ws.data(), st.out.mark = r.mark.get(), st.out.touched = r.touched.get(), st.out.ntouched = 0;
  }

  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void emit(St& st, const Cs&, const V& value) {
    const I c = st.var_val[S::var_index(S::D.acc[0].lev[last].var)];
    const auto x = static_cast<std::size_t>(c);
    if (!st.out.mark[x]) {
      st.out.mark[x] = true;
      st.out.touched[st.out.ntouched++] = c;
      st.out.ws[x] = value;
    } else {
      st.out.ws[x] += value;
    }
  }

  // Appends the row's coordinates in order under the dense prefix's
  // current position (to the chunk's entries in a parallel run), and
  // clears it.
  template <class St>
  static void flush(St& st, I parent) {
    const I begin = st.out.cnt;
    std::sort(st.out.touched, st.out.touched + st.out.ntouched);
    for (std::size_t t = 0; t < st.out.ntouched; ++t) {
      const I c = st.out.touched[t];
      const auto x = static_cast<std::size_t>(c);
      if (st.out.lout != nullptr)
        st.out.lout->crd.push_back(c);
      else
        std::get<last>(*st.out.levels).append_coord(st.out.cnt, c);
      st.out.vals->push_back(st.out.ws[x]);
      st.out.ws[x] = V{};
      st.out.mark[x] = false;
      ++st.out.cnt;
    }
    st.out.ntouched = 0;
    if (st.out.cnt == begin) return;
    if (st.out.lout != nullptr)
      st.out.lout->edges.push_back({parent, begin, st.out.cnt});
    else
      std::get<last>(*st.out.levels).append_edges(parent, begin, st.out.cnt);
  }
  template <std::size_t Dp, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void after_inner(St& st, const Cs& cs) {
    if constexpr (static_cast<int>(Dp) == S::O.ws_open) flush(st, cs.pos[0]);
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    typename S::out_levels_t lv = level_output<S>::empty_levels(*o);
    const I parent_size = level_output<S>::template prefix_size<last>(lv);
    std::vector<V> vals;
    st.out.levels = &lv;
    st.out.vals = &vals;
    const I total = [&] {
      if constexpr (base::par == par_kind::append) {
        if (ex.parallel()) return run_chunked<K>(st, cs, ex, parent_size);
      }
      std::get<last>(lv).append_init(parent_size, I(0));
      row r = make_row(row_length(st));
      use_row(st, r);
      V unused{};
      K::template loop<0, 0>(st, cs, unused);
      if constexpr (S::O.ws_open < 0) flush(st, I(0));
      return st.out.cnt;
    }();
    std::get<last>(lv).append_finalize(parent_size, total);
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }

  // Loop 0 in chunks, each with its own row, collecting its entries; then
  // an exclusive scan of the chunks' counts, and a parallel pass that
  // places every chunk's entries and segments at their positions. Returns
  // the number of entries.
  template <class K, class St, class Cs>
  static I run_chunked(St& st, const Cs& cs, const executor& ex, I parent_size) {
    const std::vector<I> bounds = K::chunk_bounds(st, cs);
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    std::vector<chunk_out> outs(n);
    detail::scratch_pool<row> rows;
    const std::size_t len = row_length(st);
    K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
      chunk_out& co = outs[c];
      local.out.lout = &co;
      local.out.vals = &co.vals;
      local.out.cnt = I(0);
      row* r = rows.acquire([&] { return make_row(len); });
      use_row(local, *r);
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
      rows.release(r);
    });
    // Exclusive scan: where each chunk's entries begin.
    std::vector<I> offset(n + 1, I(0));
    for (std::size_t c = 0; c < n; ++c) {
      if (outs[c].crd.size() > static_cast<std::size_t>(std::numeric_limits<I>::max()))
        throw overflow_error("tensorlev: the output's entries (more than " + std::to_string(outs[c].crd.size()) +
                             ") do not fit the index type (" + std::to_string(sizeof(I) * 8) + "-bit)");
      offset[c + 1] = static_cast<I>(outs[c].crd.size());
    }
    const I total = base::scan_counts(offset);
    auto& last_level = std::get<last>(*st.out.levels);
    last_level.append_init_sized(parent_size, total);
    st.out.vals->resize(static_cast<std::size_t>(total));
    struct fill_context {
      chunk_out* outs;
      const I* offset;
      std::remove_reference_t<decltype(last_level)>* last;
      V* vals;
    } fctx{outs.data(), offset.data(), &last_level, st.out.vals->data()};
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
};

}  // namespace tensorlev::cg
