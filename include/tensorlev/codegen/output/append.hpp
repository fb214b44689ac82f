#pragma once
/// @file codegen/output/append.hpp
/// Output policy `append` (a dense prefix, then one unique ordered
/// appendable level: CSR, a sparse vector): the last level's coordinates
/// are appended in loop order and each parent's segment is closed when the
/// loop over it ends. No symbolic pass is needed: only the last level has
/// an unknown size, and it grows.
///
/// Without reduction variables the operands' stored entries bound the
/// output (`sized_append`): the arrays are sized first and the loops store
/// without a call; a run that finds more entries (a broadcast operand) runs
/// again sized by its count.
///
/// In parallel (loop 0 binds the dense prefix and the last level models
/// parallel_appendable_level): count, scan, fill. A counting pass runs the
/// loops in chunks and counts each parent's entries (no value is stored),
/// an exclusive scan of the counts gives each parent's first position, the
/// level and the values are sized exactly, and a filling pass runs the
/// loops again in chunks, each parent's entries stored at their positions
/// (distinct positions and parents: the capability's contract). Nothing is
/// buffered or copied; the price is a second pass over the operands'
/// index arrays, which is what the memory-bound statements appended here
/// (sums, element-wise products) can afford. The Gustavson workspace
/// (workspace.hpp), where a second pass would redo the product's work,
/// buffers per chunk instead.
///
/// In the device form (kernel::run_device; the last level a scanned_level,
/// CSR's columns) the same count, scan, fill runs where the launcher does:
/// one launch counts each row's entries into an array the launcher
/// allocates, the launcher scans it in place (exclusive: the level's
/// bounds), the coordinates and values are allocated by the total, and a
/// second launch stores each entry at its position through raw pointers
/// (the scanned_level contract: position q's coordinate is element q). The
/// output tensor then adopts the three arrays; nothing passes through the
/// host but the total.

#include "../../detail/algorithm.hpp"
#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct append_output : level_output<S> {
  using V = typename S::V;
  using I = typename S::I;
  using levels_t = typename S::out_levels_t;
  static constexpr auto last = S::out_last_level;

  // What a run of the loops does with an entry: append it (one pass), or
  // in a parallel run count it, or store it at its parent's position.
  enum class phase : unsigned char { single, count, fill };
  using last_level_t = std::tuple_element_t<last, levels_t>;
  // The coordinate type the device form stores (scanned levels).
  template <class L, bool = scanned_level<L>>
  struct crd_of {
    using type = I;
  };
  template <class L>
  struct crd_of<L, true> {
    using type = std::remove_const_t<typename L::crd_type>;
  };
  using crd_t = typename crd_of<last_level_t>::type;

  struct data : level_output<S>::data {
    I cnt = I(0);  // entries appended so far (count, fill: the current parent's next position)
    I cap = I(0);  // sized appends: positions available (entries past it are counted only)
    phase ph = phase::single;
    I* counts = nullptr;         // count: entries per parent
    const I* offsets = nullptr;  // fill: each parent's first position
    crd_t* crd_at = nullptr;     // device fill: the coordinates, by position (scanned levels)
    V* val_at = nullptr;         // device fill: the values, by position
  };

  // Whether the host assembles into the output's arrays (growable storage;
  // device memory is not).
  static constexpr bool host_assembled = growable_storage<typename S::template op_t<0>::storage>;
  static constexpr bool parallel_appendable = [] {
    if constexpr (S::O.out == out_kind::append || S::O.out == out_kind::workspace)
      return parallel_appendable_level<last_level_t>;
    else
      return false;
  }();
  static constexpr bool sized_append = S::O.out == out_kind::append && parallel_appendable && !S::has_reductions;
  static constexpr bool splits_rows = S::outer_splittable && S::rows_first && last >= 1;
  // The device form: count, scan and fill over a scanned last level, in
  // chunks of rows (a sparse vector: one chunk).
  static constexpr bool device_appends =
      S::O.out == out_kind::append && scanned_level<last_level_t> && (splits_rows || last == 0) && !S::accumulate;
  static constexpr par_kind par = splits_rows && (parallel_appendable || device_appends) &&
                                          (S::O.out == out_kind::append || S::O.ws_open >= 0)
                                      ? par_kind::append
                                      : par_kind::none;
  static constexpr bool device_builds = device_appends;

  // The last output variable's coordinate is bound: append it with value.
  TENSORLEV_HD_ANY_STORAGE
  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void emit(St& st, const Cs&, const V& value) {
    const I c = st.var_val[S::var_index(S::D.acc[0].lev[last].var)];
    if constexpr (par == par_kind::append || device_appends) {
      if (st.out.ph != phase::single) {
        if (st.out.ph == phase::fill) store_at(st, c, value);
        ++st.out.cnt;
        return;
      }
    }
    if constexpr (!host_assembled) {
      // (only the device form's count and fill run)
    } else if constexpr (sized_append) {
      // No call on this path (a possible reallocation would make the
      // compiler reload every pointer the loops hold): stores while there
      // is room; the run is repeated, sized by the count, if there was not.
      if (st.out.cnt < st.out.cap) store_at(st, c, value);
      ++st.out.cnt;
    } else {
      std::get<last>(*st.out.levels).append_coord(st.out.cnt, c);
      st.out.vals->push_back(value);
      ++st.out.cnt;
    }
  }
  // Coordinate c and its value at position cnt, in arrays sized already.
  TENSORLEV_HD_ANY_STORAGE
  template <class St>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void store_at(St& st, I c, const V& value) {
    if constexpr (device_appends) {
      if (st.out.val_at != nullptr) {
        st.out.crd_at[static_cast<std::size_t>(st.out.cnt)] = static_cast<crd_t>(c);
        st.out.val_at[static_cast<std::size_t>(st.out.cnt)] = value;
        return;
      }
    }
    if constexpr (host_assembled && parallel_appendable) {
      std::get<last>(*st.out.levels).append_coord_at(st.out.cnt, c);
      (*st.out.vals)[static_cast<std::size_t>(st.out.cnt)] = value;
    }
  }

  // Before loop Dp runs: where its entries begin (a filling pass moves to
  // the parent's first position when the loop appends).
  // (A counting pass starts each parent at 0: a parent's count is at most
  // the last level's extent, so it fits the index type.)
  template <std::size_t Dp, mask_t Abs, class St, class Cs>
  TENSORLEV_HOST_DEVICE static I mark(St& st, const Cs& cs) {
    if constexpr ((par == par_kind::append || device_appends) && appends_here<Dp, Abs>()) {
      if (st.out.ph == phase::fill)
        st.out.cnt = st.out.offsets[static_cast<std::size_t>(cs.pos[0])];
      else if (st.out.ph == phase::count)
        st.out.cnt = I(0);
    }
    return st.out.cnt;
  }
  // Whether values are not needed (the counting pass): the emitter then
  // skips the reduction loops below the appended coordinate.
  template <class St>
  TENSORLEV_HOST_DEVICE static bool counting(const St& st) {
    if constexpr (par == par_kind::append || device_appends)
      return st.out.ph == phase::count;
    else
      return false;
  }
  // Whether loop Dp iterates the appended level: its end closes the
  // parent's segment.
  template <std::size_t Dp, mask_t Abs>
  static constexpr bool appends_here() {
    if constexpr (S::O.out != out_kind::append) {
      return false;
    } else {
      constexpr const loop_plan& P = S::template plan<Dp, Abs>;
      return P.out_iter >= 0 && P.it[P.out_iter].appended;
    }
  }
  TENSORLEV_HD_ANY_STORAGE
  template <std::size_t Dp, mask_t Abs, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void after_loop(St& st, const Cs& cs, I begin) {
    if constexpr (appends_here<Dp, Abs>()) {
      if constexpr (par == par_kind::append || device_appends) {
        if (st.out.ph == phase::count) {
          st.out.counts[static_cast<std::size_t>(cs.pos[0])] += st.out.cnt - begin;
          return;
        }
      }
      if constexpr (device_appends) {
        if (st.out.val_at != nullptr) return;  // the bounds are the scan already
      }
      if constexpr (host_assembled) {
        if (st.out.cnt != begin) std::get<last>(*st.out.levels).append_edges(cs.pos[0], begin, st.out.cnt);
      }
    }
  }

  // Append outputs of statements without reductions: the operands' stored
  // entries (at most the output's size), an upper bound on the entries
  // appended; 0 (unknown) otherwise.
  template <class St>
  static I entries_bound(const St& st) {
    if constexpr (S::has_reductions) {
      return I(0);
    } else {
      std::size_t b = 0;
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (
            [&] {
              if constexpr (A > 0 && !detail::is_scalar_v<typename S::template op_t<A>>)
                b += std::get<A>(st.ops)->stored();
            }(),
            ...);
      }(std::make_index_sequence<S::NA>{});
      std::size_t cap = 1;
      for (const auto d : std::get<0>(st.ops)->dims())
        cap = d != 0 && cap > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d)
                  ? std::numeric_limits<std::size_t>::max()
                  : cap * static_cast<std::size_t>(d);
      b = detail::min_of(detail::min_of(b, cap), static_cast<std::size_t>(std::numeric_limits<I>::max()));
      return static_cast<I>(b);
    }
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    // The output's own arrays when no operand reads them (recycles): a sum
    // recomputed into the same tensor reuses their memory.
    const bool reuse = level_output<S>::recycles(st);
    const I parent_size = level_output<S>::template prefix_size<last>(o->levels());
    auto arrays = level_output<S>::take_arrays(*o, reuse);
    levels_t& lv = arrays.first;
    std::vector<V>& vals = arrays.second;
    st.out.levels = &lv;
    st.out.vals = &vals;
    typename level_output<S>::template restore<T> guard{o, &arrays, reuse, parent_size};
    if constexpr (par == par_kind::append) {
      if (ex.parallel()) {
        const I total = run_chunked<K>(st, cs, ex, parent_size);
        std::get<last>(lv).append_finalize(parent_size, total);
        guard.armed = false;
        *o = T(o->dims(), std::move(lv), std::move(vals));
        return;
      }
    }
    if constexpr (sized_append) {
      // Without reductions every appended entry comes from a stored entry
      // of some operand: their count bounds the output. The arrays are
      // sized by it and the loops store without a call; were the bound
      // exceeded (a broadcast operand), the run repeats sized by the count.
      I cap = detail::max_of(entries_bound(st), I(1));
      // The bound may pass what the last level's positions can count
      // (A + B sharing a pattern): the run then sizes for that many and
      // repeats only if the result itself needs more (and then throws).
      if constexpr (requires { typename last_level_t::pos_type; }) {
        using P = typename last_level_t::pos_type;
        if (static_cast<std::uintmax_t>(cap) > static_cast<std::uintmax_t>(std::numeric_limits<P>::max()))
          cap = static_cast<I>(std::numeric_limits<P>::max());
      }
      for (;;) {
        std::get<last>(lv).append_init_sized(parent_size, cap);
        tensorlev::detail::assign_fresh(vals, static_cast<std::size_t>(cap), V{});
        st.out.cnt = I(0);
        st.out.cap = cap;
        V unused{};
        K::template loop<0, 0>(st, cs, unused);
        if (st.out.cnt <= cap) break;
        cap = st.out.cnt;
      }
      vals.resize(static_cast<std::size_t>(st.out.cnt));
      if (vals.capacity() / 2 > vals.size()) vals.shrink_to_fit();  // a far smaller result (A .* B)
    } else {
      std::get<last>(lv).append_init(parent_size, I(0));
      V unused{};
      K::template loop<0, 0>(st, cs, unused);
    }
    std::get<last>(lv).append_finalize(parent_size, st.out.cnt);
    guard.armed = false;
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }

  // Count, scan, fill: loop 0 in chunks counting each parent's entries; an
  // exclusive scan of the counts; the level and values sized exactly; loop
  // 0 in chunks again, storing each parent's entries at its positions.
  // Returns the number of entries.
  template <class K, class St, class Cs>
  static I run_chunked(St& st, const Cs& cs, const executor& ex, I parent_size) {
    const auto bounds = K::chunk_bounds(st, cs);
    std::vector<I> offsets(static_cast<std::size_t>(parent_size) + 1, I(0));
    st.out.counts = offsets.data() + 1;
    st.out.ph = phase::count;
    K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
    });
    const I total = scan_counts(offsets);
    auto& last_level = std::get<last>(*st.out.levels);
    last_level.append_init_sized(parent_size, total);
    tensorlev::detail::resize_fresh(*st.out.vals, static_cast<std::size_t>(total));
    st.out.offsets = offsets.data();
    st.out.ph = phase::fill;
    K::for_chunks(st, bounds, ex, [&](std::size_t, St& local) {
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
    });
    return total;
  }

  // The device form (see the file's comment). host: the state on the host
  // (the output tensor); st: the state whose operand pointers are the
  // launcher's copies.
  template <class K, class St, class L>
  static void run_device(const St& host, St st, const L& dev)
    requires device_appends
  {
    using T = typename S::template op_t<0>;
    T* o = std::get<0>(host.ops);
    levels_t lv = level_output<S>::device_levels(host, st, dev);
    const auto n = static_cast<std::size_t>(level_output<S>::template prefix_size<last>(lv));
    // count: parent p's entries into offsets[p]; offsets[n] stays 0
    auto offsets = dev.template alloc<I>(n + 1, true);
    st.out.counts = offsets.data();
    st.out.ph = phase::count;
    const auto count = K::device_fn(st);
    dev.for_each(count.n, count);
    const std::uint64_t total = dev.exclusive_scan(offsets.data(), n + 1);
    check_device_total(total);
    const auto nnz = static_cast<std::size_t>(total);
    auto crd = dev.template alloc<crd_t>(nnz, false);
    auto vals = dev.template alloc<V>(nnz, false);
    st.out.offsets = offsets.data();
    st.out.crd_at = crd.data();
    st.out.val_at = vals.data();
    st.out.ph = phase::fill;
    const auto fill = K::device_fn(st);
    dev.for_each(fill.n, fill);
    adopt_device(dev, o, std::move(lv), n, std::move(offsets), std::move(crd), std::move(vals));
  }

  // The device form's number of entries fits the index and position types.
  static void check_device_total(std::uint64_t total) {
    using P = std::remove_const_t<typename last_level_t::pos_type>;
    const auto most = detail::min_of(detail::min_of(static_cast<std::uint64_t>(std::numeric_limits<I>::max()),
                                                    static_cast<std::uint64_t>(std::numeric_limits<P>::max())),
                                     static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max()));
    if (total > most)
      throw overflow_error(detail::message() << "tensorlev: the output's entries (" << total
                                             << ") do not fit its index or position type (at most " << most << ")");
  }
  // The output adopts the arrays the device form filled: the last level's
  // bounds (offsets, n + 1 of them; converted where the position type is
  // not I), its coordinates and the values.
  template <class L, class T, class Offsets, class Crd, class Vals>
  static void adopt_device(const L& dev, T* o, levels_t lv, std::size_t n, Offsets offsets, Crd crd, Vals vals) {
    using P = std::remove_const_t<typename last_level_t::pos_type>;
    using pos_array = typename last_level_t::pos_array;
    using crd_array = typename last_level_t::crd_array;
    const I extent = std::get<last>(lv).dimension();
    if constexpr (std::is_same_v<P, I>) {
      std::get<last>(lv) = last_level_t(extent, pos_array(std::move(offsets)), crd_array(std::move(crd)));
    } else {
      auto bounds = dev.template alloc<P>(n + 1, false);
      dev.for_each(n + 1, convert_fn<P, I>{bounds.data(), offsets.data()});
      std::get<last>(lv) = last_level_t(extent, pos_array(std::move(bounds)), crd_array(std::move(crd)));
    }
    *o = T(o->dims(), std::move(lv), typename T::values_array(std::move(vals)));
  }

  // offsets[1, n] holds counts; makes offsets an exclusive scan (offsets[p]
  // is parent p's first position) and returns the total, checking that it
  // fits the index type.
  static I scan_counts(std::vector<I>& offsets) {
    I sum = 0;
    for (std::size_t p = 1; p < offsets.size(); ++p) {
      if (offsets[p] > std::numeric_limits<I>::max() - sum)
        throw overflow_error(detail::message() << "tensorlev: the output's entries (more than " << sum
                                               << ") do not fit the index type (" << sizeof(I) * 8 << "-bit)");
      sum += offsets[p];
      offsets[p] = sum;
    }
    return sum;
  }
};

}  // namespace tensorlev::cg
