#pragma once
/// @file codegen/output/workspace.hpp
/// Output policy `workspace` (Gustavson): as append, but reductions sit
/// between the dense prefix and the last output variable (SpGEMM's i, k,
/// j; taco's precompute). Values accumulate in a dense row over the last
/// variable with a list of the coordinates touched; when the loop that
/// opened the row ends, the list is sorted (unless the last level is
/// unordered: csr_unsorted) and appended, and the row cleared.
///
/// On one thread the level and the values grow as rows are appended, from
/// a capacity estimated by sampling: every 32nd of loop 0's chunks (1/32
/// of the rows, spread over the range) runs first counting its rows'
/// coordinates (nothing stored, no sort), and the total scaled to the whole
/// range, plus a quarter, is reserved. Growing from nothing costs a copy
/// and fresh pages at every doubling (on this project's VMs a page fault
/// is expensive); counting every row first (a symbolic pass) repeats the
/// product's index work, which costs more than that on products whose
/// result fits in cache. Measured on cond-mat-2005 and bcsstk16 in
/// bench/README.md.
///
/// In parallel each concurrent chunk takes its own row from a pool and
/// collects its entries and its parents' segments; an exclusive scan of the
/// chunks' counts gives each chunk's first position, the level is sized
/// exactly, and a parallel pass copies every chunk's entries into place.
/// Unlike append (count, scan, fill), the product is computed once: a
/// counting pass would redo SpGEMM's index work, which costs about as much
/// as the numeric pass.
///
/// In the device form (a scanned last level: CSR's columns; one row per
/// device chunk) there is no pool of dense rows to hand out: a GPU runs
/// far more rows at once than it could give a row of the full length
/// each. Each row gets an accumulator sized by its work instead, all of
/// them in one arena the launcher allocates:
///  1. a bounding launch runs the loops without values and counts each
///     row's products (the coordinates it emits, repeats included);
///  2. each row's slots follow from its count b: a hash table of the
///     smallest power of two at least 2b (linear probing, at most half
///     full), or, where that would not be smaller than the row's length,
///     a dense row (coordinate c in slot c); an exclusive scan of the
///     slots places every row's accumulator in the arena;
///  3. an accumulating launch runs the loops again, adding each product
///     into its row's accumulator and counting the row's distinct
///     coordinates;
///  4. an exclusive scan of those counts gives the level's bounds, and a
///     gathering launch copies each row's entries to its positions: a
///     dense row in coordinate order, a hashed one then sorted (heap
///     sort, in place) unless the last level is unordered.
/// The arena holds at most min(length, 4b) slots per row, so memory
/// follows the product's work (as in ESC and hash SpGEMM on GPUs); rows are
/// not yet processed in batches to cap it.

#include "../../detail/algorithm.hpp"
#include "append.hpp"

namespace tensorlev::detail {
// A Gustavson workspace row (workspace_output): the dense row and its
// marks (sorted rows) or position marks and the row's values (unsorted
// rows, Positions), the touched coordinates, the radix sort's buffer.
template <class I, class V, class M, bool Positions>
struct ws_row {
  std::size_t len = 0;
  unique_array<I> touched;
  std::vector<V> ws;
  unique_array<bool> mark;
  unique_array<I> spare;
  unique_array<std::uint64_t> bits;  // zeros: the bitmap ordering's words
  unique_array<M> where;  // zeros: below the first base
  M base = 1;
  unique_array<V> rv;
};
// The row a thread keeps between one-thread runs, per row type: at most
// kept_row_max coordinates long (16 MiB for position marks over doubles
// and 32-bit indices; the bytes grow with the value type), freed when the
// thread ends. (A product run from a static object's destructor after
// the main thread's thread_local objects are gone would touch a destroyed
// slot: not supported.)
inline constexpr std::size_t kept_row_max = std::size_t{1} << 20;
template <class Row>
Row& kept_ws_row() {
  thread_local Row r;
  return r;
}
}  // namespace tensorlev::detail

namespace tensorlev::cg {

/// numeric_plan's slot table (docs/design.md, "Slot tables"): for every
/// product of a trusted run, in the order the loops reach them, its slot in
/// its row's pattern; each row's first product at first[row]. state: 0 not
/// recorded yet, 1 recorded, 2 not used for these patterns.
struct slot_table {
  std::vector<std::uint16_t> slots;
  std::vector<std::uint64_t> first;
  int state = 0;
};

// Device form, step 2: a row's slots from its products a[r] (see the
// file's comment), in place.
struct ws_slots_fn {
  std::uint64_t* a;
  std::uint64_t len;  // the row's length
  TENSORLEV_HOST_DEVICE void operator()(std::size_t r) const {
    const std::uint64_t b = a[r];
    std::uint64_t cap = 0;
    if (b != 0) {
      cap = 1;
      while (cap < len && cap / 2 < b) cap <<= 1;
      if (cap >= len) cap = len;
    }
    a[r] = cap;
  }
};

// Sorts k[0, n) ascending, v along (heap sort: in place, no recursion, n
// log n; device code has no std::sort).
template <class C, class V>
TENSORLEV_HOST_DEVICE void sort_by_key(C* k, V* v, std::size_t n) {
  if (n < 2) return;
  auto swap_at = [&](std::size_t a, std::size_t b) {
    const C tk = k[a];
    k[a] = k[b], k[b] = tk;
    const V tv = v[a];
    v[a] = v[b], v[b] = tv;
  };
  auto sift = [&](std::size_t root, std::size_t end) {
    for (std::size_t child = 2 * root + 1; child < end; child = 2 * root + 1) {
      if (child + 1 < end && k[child] < k[child + 1]) ++child;
      if (!(k[root] < k[child])) return;
      swap_at(root, child);
      root = child;
    }
  };
  for (std::size_t r = n / 2; r-- > 0;) sift(r, n);
  for (std::size_t end = n - 1; end > 0; --end) {
    swap_at(0, end);
    sift(0, end);
  }
}

// Device form, step 4: row r's entries from its accumulator to its
// positions, in coordinate order.
template <class I, class C, class V>
struct ws_gather_fn {
  const std::uint64_t* tab;
  const I* keys;
  const V* tvals;
  const I* offsets;
  C* crd;
  V* vals;
  std::uint64_t len;
  bool sort;  // false: an unordered last level (csr_unsorted) keeps slot order
  TENSORLEV_HOST_DEVICE void operator()(std::size_t r) const {
    const std::uint64_t first = tab[r], cap = tab[r + 1] - first;
    const auto begin = static_cast<std::size_t>(offsets[r]);
    std::size_t q = begin;
    for (std::uint64_t s = first; s < first + cap; ++s) {
      if (keys[s] != I(0)) {
        crd[q] = static_cast<C>(keys[s] - 1);
        vals[q] = tvals[s];
        ++q;
      }
    }
    if (sort && cap != len) sort_by_key(crd + begin, vals + begin, q - begin);  // a dense row is in order already
  }
};

template <class S>
struct workspace_output : append_output<S> {
  using base = append_output<S>;
  using V = typename S::V;
  using I = typename S::I;
  static constexpr auto last = S::out_last_level;
  using last_level_t = typename base::last_level_t;

  // The device form (see the file's comment): a scanned last level under a
  // dense prefix whose rows loop 0 binds, or a sparse vector (one row).
  static constexpr bool device_builds =
      scanned_level<last_level_t> && (base::splits_rows || last == 0) && !S::accumulate;
  static constexpr par_kind par =
      base::par != par_kind::none
          ? base::par
          : (device_builds && base::splits_rows && S::O.ws_open >= 0 ? par_kind::append : par_kind::none);
  // What the device form's launches do with a product.
  enum class dphase : unsigned char { none, bound, accumulate };

  // In a parallel run: one chunk's entries and its parents' segments
  // (parent position, begin, end, counted from the chunk's first entry).
  struct chunk_out {
    std::vector<I> crd;
    std::vector<V> vals;
    std::vector<std::array<I, 3>> edges;
  };
  // The row's accumulator. Sorted rows (CSR): a dense row of values over
  // the last output variable and a mark per coordinate, cleared entry by
  // entry as the row is appended in coordinate order. Unsorted rows
  // (csr_unsorted): position marks (docs/design.md, "Position marks"):
  // where[x] - *base is x's slot in the row's values rv when where[x] >=
  // *base, anything less otherwise; closing a row adds its count to *base,
  // which makes every mark stale at once, and the row is appended from rv
  // as it stands. Nothing is cleared, and a mark takes 4 bytes against 9.
  static constexpr bool marks_positions = !S::D.acc[0].lev[last].ordered;
  // A position mark: 32 bits where the index type has at most 32, restarted
  // from zero before base could pass the type's maximum.
#ifdef TENSORLEV_TEST_MARK_TYPE  // a test narrows the marks so that they restart every few rows
  using mark_t = TENSORLEV_TEST_MARK_TYPE;
#else
  using mark_t = std::conditional_t<(sizeof(I) <= 4), std::uint32_t, std::uint64_t>;
#endif
  struct data : base::data {
    chunk_out* lout = nullptr;  // in a chunk: where the chunk's entries go
    // Position marks (unsorted rows): *base lives in the row, since a
    // chunk's state is a copy of the run's.
    mark_t* where = nullptr;
    mark_t* base = nullptr;
    std::size_t rlen = 0;  // the row's length
    V* rv = nullptr;       // the row's values, in the order first reached
    V* ws = nullptr;  // sorted rows: dense row over the last output variable
    // Which row entries hold a coordinate. bool, not unsigned char: a
    // character store may alias anything, and the compiler then reloads
    // every pointer of the state after each one (SpGEMM ran 1.6x slower).
    bool* mark = nullptr;
    // Those coordinates, in the order first reached: an array as long as
    // the row, so that marking one calls nothing (a possible reallocation
    // in the loop would make the compiler reload every pointer it holds).
    I* touched = nullptr;
    I* spare = nullptr;  // as long as touched: the radix sort's other buffer
    std::uint64_t* bits = nullptr;  // a bit per coordinate of the row, zero between rows
    std::size_t ntouched = 0;
    std::size_t sampled = 0;  // a sampling run: the coordinates counted
    // compute_numeric: the output's pattern (its last level's bounds and
    // coordinates) and values, written in place; the row length; the rows
    // with a product outside the pattern or a corrupt pattern segment (and
    // the first of them).
    bool numeric = false;
    const void* npos = nullptr;
    const void* ncrd = nullptr;
    V* nvals = nullptr;
    std::size_t nlen = 0;
    std::size_t nbad = 0;
    I nbad_parent = I(0);
    std::size_t nchecked = 0;  // pattern entries the rows flushed so far cover
    bool nopen = false;        // the current row's pattern marked (open_numeric)
    // numeric_plan: the operands' and the output's patterns are those of
    // a run that found every product in the pattern, so the innermost loop
    // adds without looking at the marks (leaf_emit) in rows whose pattern
    // is marked.
    bool ntrusted = false;
    // numeric_plan's table of identical innermost segments (kernel::jam_scan;
    // null: none), for trusted runs.
    const std::uint8_t* nspan = nullptr;
    // numeric_plan's slot table (docs/design.md, "Slot tables"): nslot_mode
    // 1 adds each product of a trusted row at the slot of the row's
    // pattern the table gives, straight into the output's values (nrowv:
    // the row's first value; nslot: the row's next slot), 2 records the
    // slots (into nrec, each row's first at nrec_first[parent]; nslotmap:
    // the column's slot in a sorted row); nrec_bad: the table cannot be
    // recorded (too large, a row too long for a slot, a product not through
    // the leaf), the rest of the run goes on trusted without it.
    int nslot_mode = 0;
    bool nslot_row = false;  // the current row runs through the table
    const std::uint16_t* nslots = nullptr;
    const std::uint64_t* nslot_first = nullptr;
    const std::uint16_t* nslot = nullptr;
    V* nrowv = nullptr;
    std::vector<std::uint16_t>* nrec = nullptr;
    std::uint64_t* nrec_first = nullptr;
    std::size_t nrec_cap = 0;
    std::uint16_t* nslotmap = nullptr;
    bool nrec_bad = false;
    // The device form: the phase, each row's products (bound), each row's
    // first slot in the arena (accumulate; row r has tab[r + 1] - tab[r]
    // slots), the slots' coordinates plus one (0: empty) and values, and
    // the row length (a row with that many slots is dense). Distinct
    // coordinates are counted into base::data::counts.
    dphase dph = dphase::none;
    std::uint64_t* bound = nullptr;
    const std::uint64_t* tab = nullptr;
    I* keys = nullptr;
    V* tvals = nullptr;
    std::uint64_t len = 0;
  };
  using row = detail::ws_row<I, V, mark_t, marks_positions>;
  template <class St>
  static std::size_t row_length(const St& st) {
    return static_cast<std::size_t>(st.extent[S::var_index(S::D.acc[0].lev[last].var)]);
  }
  static row make_row(std::size_t n) {
    row r;
    r.len = n;
    r.touched = detail::unique_array<I>::for_overwrite(n);
    if constexpr (marks_positions) {
      r.where = detail::unique_array<mark_t>::zeroed(n);
      r.rv = detail::unique_array<V>::for_overwrite(n);
    } else {
      r.ws.assign(n, V{});
      r.mark = detail::unique_array<bool>::zeroed(n);
      r.spare = detail::unique_array<I>::for_overwrite(n);
      r.bits = detail::unique_array<std::uint64_t>::zeroed(n / 64 + 1);
    }
    return r;
  }
  // A one-thread run's row: the one this thread kept from an earlier run
  // when it is long enough (docs/design.md, "Kept rows"), else a new one.
  // A run that ends normally leaves its row clear (every row flushed) and
  // gives it back with keep_row; one that throws destroys it.
  static row take_row(std::size_t n) {
    row& kept = detail::kept_ws_row<row>();
    if (kept.touched && kept.len >= n) return std::exchange(kept, row{});
    return make_row(n);
  }
  static void keep_row(row&& r) noexcept {
    if (r.len <= detail::kept_row_max) detail::kept_ws_row<row>() = std::move(r);
  }
  template <class St>
  static void use_row(St& st, row& r) {
    st.out.ws = r.ws.data(), st.out.mark = r.mark.get(), st.out.touched = r.touched.get();
    st.out.spare = r.spare.get(), st.out.bits = r.bits.get(), st.out.ntouched = 0;
    st.out.where = r.where.get(), st.out.base = &r.base, st.out.rlen = r.len, st.out.rv = r.rv.get();
  }
  // Position marks: ends the current row, every mark stale. base stays at
  // most the mark type's maximum less the row's length, so that base + t
  // fits.
  template <class St>
  static void close_row(St& st) {
    mark_t& b = *st.out.base;
    b += static_cast<mark_t>(st.out.ntouched);
    st.out.ntouched = 0;
    if (b > mark_limit || static_cast<std::size_t>(mark_limit - b) < st.out.rlen) {
      for (std::size_t q = 0; q < st.out.rlen; ++q) st.out.where[q] = mark_t{0};
      b = 1;
    }
  }
  static constexpr mark_t mark_limit = std::numeric_limits<mark_t>::max();

  TENSORLEV_HD_ANY_STORAGE
  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void emit(St& st, const Cs& cs, const V& value) {
    const I c = st.var_val[S::var_index(S::D.acc[0].lev[last].var)];
    if constexpr (device_builds) {
      if (st.out.dph != dphase::none) return device_emit(st, cs, c, value);
    }
    if constexpr (has_leaf) {
      if constexpr (marks_positions)
        add_at_position(st.out.where, *st.out.base, st.out.rv, st.out.touched, st.out.ntouched, c, value);
      else
        add_at_mark(st.out.mark, st.out.ws, st.out.touched, st.out.ntouched, c, value);
    }
  }
  // Adds value at coordinate c of the row: position marks (see data), or
  // a dense row and its marks. (The row's parts as arguments: emit's come
  // from the state, leaf_emit's from the innermost loop's locals.)
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void add_at_position(mark_t* where, mark_t b, V* rv, I* touched,
                                                                           std::size_t& nt, I c, const V& value) {
    const auto x = static_cast<std::size_t>(c);
    const mark_t m = where[x];
    if (m >= b) {
      rv[m - b] += value;
    } else {
      const std::size_t t = nt++;
      where[x] = static_cast<mark_t>(b + static_cast<mark_t>(t));
      touched[t] = c;
      rv[t] = value;
    }
  }
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void add_at_mark(bool* mark, V* ws, I* touched, std::size_t& nt,
                                                                       I c, const V& value) {
    const auto x = static_cast<std::size_t>(c);
    if (!mark[x]) {
      mark[x] = true;
      touched[nt++] = c;
      ws[x] = value;
    } else {
      ws[x] += value;
    }
  }
  // The row as the innermost loop holds it (kernel::leaf_loop): what emit
  // reads and writes per product, copied into a local before the loop and
  // its count written back after it. Through the state, every product
  // reloaded the row's pointers and base (a store into the row may alias
  // the state as far as the compiler knows) and stored the coordinate's
  // variable. leaf_open declines in the device form's launches (emit then
  // runs as ever).
  static constexpr bool has_leaf = base::host_assembled;
  static constexpr char leaf_var = S::D.acc[0].lev[last].var;
  struct leaf_positions {
    mark_t* where;
    V* rv;
    I* touched;
    std::size_t nt;
    mark_t b;
    bool trusted;  // every product lies in the row's marked pattern (numeric_plan)
  };
  struct leaf_dense {
    bool* mark;
    V* ws;
    I* touched;
    std::size_t nt;
    bool trusted;
  };
  using leaf_marks = std::conditional_t<marks_positions, leaf_positions, leaf_dense>;
  // The slot table's modes (kernel::leaf_mode 2 and 3) add these.
  struct leaf_slots : leaf_marks {
    // (Set by leaf_open in those modes only: no initializers, which would
    // add stores to every other mode's loop entry.)
    const std::uint16_t* slot;        // mode 2: the next product's slot
    V* rowv;                          // mode 2: the row's values
    std::vector<std::uint16_t>* rec;  // mode 3: the table recorded
    const std::uint16_t* slotmap;     // mode 3, sorted rows: a column's slot
  };
  using leaf = leaf_slots;
  template <int Mode = 0, class St>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static bool leaf_open(St& st, leaf& l) {
    if constexpr (device_builds) {
      if (st.out.dph != dphase::none) return false;
    }
    const bool trusted = st.out.ntrusted && st.out.nopen;
    if constexpr (marks_positions)
      static_cast<leaf_marks&>(l) =
          leaf_marks{st.out.where, st.out.rv, st.out.touched, st.out.ntouched, *st.out.base, trusted};
    else
      static_cast<leaf_marks&>(l) = leaf_marks{st.out.mark, st.out.ws, st.out.touched, st.out.ntouched, trusted};
    if constexpr (Mode == 2) {
      l.slot = st.out.nslot;
      l.rowv = st.out.nrowv;
    } else if constexpr (Mode == 3) {
      l.rec = st.out.nrec;
      l.slotmap = st.out.nslotmap;
    }
    return true;
  }
  template <int Mode = 0, class St>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void leaf_close(St& st, const leaf& l) {
    st.out.ntouched = l.nt;
    if constexpr (Mode == 2) st.out.nslot = l.slot;
  }
  // The slot table's mode for the row just opened (kernel::slot_nest): 1
  // through the table, 2 recording it, 0 neither (the row is not trusted,
  // or the table is not there).
  template <class St>
  TENSORLEV_ALWAYS_INLINE static int slot_mode(const St& st) {
    if constexpr (device_builds) {
      if (st.out.dph != dphase::none) return 0;
    }
    if (!st.out.ntrusted || !st.out.nopen) return 0;
    if (st.out.nslot_mode == 1) return 1;
    return st.out.nslot_mode == 2 && !st.out.nrec_bad ? 2 : 0;
  }
  // A product of a row being recorded reached it another way than the
  // leaf (kernel::inner): the table would miss it.
  template <class St>
  static void record_miss(St& st) {
    st.out.nrec_bad = true;
  }
  // The table of identical innermost segments where the current row runs
  // trusted on the host (kernel::jam_scan), else null.
  template <class St>
  TENSORLEV_ALWAYS_INLINE static const std::uint8_t* jam_span(const St& st) {
    if constexpr (device_builds) {
      if (st.out.dph != dphase::none) return nullptr;
    }
    return st.out.ntrusted && st.out.nopen ? st.out.nspan : nullptr;
  }
  // Whether the row's loop runs trusted (kernel: leaf_emit<true> in a loop
  // of its own).
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static bool leaf_trusted(const leaf& l) { return l.trusted; }
  template <int Mode>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void leaf_emit(leaf& l, I c, const V& value) {
    constexpr bool Trusted = Mode != 0;
    // A row through the slot table adds at the slot it gives, in the
    // output's values; one recording it records the column's slot, then
    // adds as a trusted row (docs/design.md, "Slot tables").
    if constexpr (Mode == 2) {
      (void)c;
      l.rowv[*l.slot++] += value;
      return;
    } else if constexpr (Mode == 3) {
      const auto x = static_cast<std::size_t>(c);
      if constexpr (marks_positions)
        l.rec->push_back(static_cast<std::uint16_t>(l.where[x] - l.b));
      else
        l.rec->push_back(l.slotmap[x]);
    }
    // A trusted row (numeric_plan) adds where its pattern put the column:
    // the dense row without loading the column's mark or branching on it,
    // position marks through the column's slot without the branch
    // (docs/design.md, "numeric_plan").
    if constexpr (marks_positions) {
      if constexpr (Trusted)
        l.rv[l.where[static_cast<std::size_t>(c)] - l.b] += value;
      else
        add_at_position(l.where, l.b, l.rv, l.touched, l.nt, c, value);
    } else {
      if constexpr (Trusted)
        l.ws[static_cast<std::size_t>(c)] += value;
      else
        add_at_mark(l.mark, l.ws, l.touched, l.nt, c, value);
    }
  }

  // The device form's product c (value) of the current row: counted, or
  // added into the row's accumulator.
  template <class St, class Cs>
  TENSORLEV_ALWAYS_INLINE TENSORLEV_HOST_DEVICE static void device_emit(St& st, const Cs& cs, I c, const V& value) {
    // The dense prefix's position: the row (one row without a prefix).
    const auto row = static_cast<std::size_t>(S::O.ws_open >= 0 ? cs.pos[0] : I(0));
    if (st.out.dph == dphase::bound) {
      ++st.out.bound[row];
      return;
    }
    const std::uint64_t first = st.out.tab[row], cap = st.out.tab[row + 1] - first;
    I* keys = st.out.keys + first;
    const I key = static_cast<I>(c + 1);  // c < the extent: c + 1 fits I
    std::uint64_t s = static_cast<std::uint64_t>(c);
    if (cap != st.out.len) {
      s = ((s * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
      while (keys[s] != key && keys[s] != I(0)) s = (s + 1) & (cap - 1);
    }
    if (keys[s] == I(0)) {
      keys[s] = key;
      st.out.tvals[first + s] = value;
      ++st.out.counts[row];
    } else {
      st.out.tvals[first + s] += value;
    }
  }
  // Whether values are not needed (the device form's bounding launch).
  template <class St>
  TENSORLEV_HOST_DEVICE static bool counting(const St& st) {
    if constexpr (device_builds)
      return st.out.dph == dphase::bound;
    else
      return false;
  }

  // The one-thread run reserves what a sample of its rows predicts (see the
  // file's comment).
  static constexpr bool samples_rows = base::host_assembled && base::par == par_kind::append;
  static constexpr std::size_t sample_every = 32;
  // An unordered last level (csr_unsorted) keeps each row in the order its
  // coordinates were first reached.
  static constexpr bool sorts_rows = S::D.acc[0].lev[last].ordered;
  using phase = typename base::phase;

  // Puts the row's touched coordinates in order. Where they lie close
  // together (span <= scan_factor * n * bit_width(n): banded and
  // finite-element products, bcsstk16's rows of 213 entries within 484
  // columns), one branch-free pass over the marks of that span is cheaper
  // than a comparison sort; rows of radix_min to bitmap_max coordinates
  // whose span is at most bitmap_factor 64-bit words per coordinate set a
  // bit each and read the words back in order (nsjac's rows of ~49 over a
  // few thousand columns); rows of radix_min coordinates or more whose
  // span needs at most 2 bytes (3 * radix_min for 3 bytes) take an LSD
  // radix sort of the offsets from the least one; the rest an introsort
  // (docs/design.md, "Rows ordered by a scan or a radix sort").
  static constexpr std::size_t scan_factor = 4;
  static constexpr std::size_t bitmap_factor = 2;
  static constexpr std::size_t bitmap_max = 256;
  static constexpr std::size_t radix_min = 32;
  static constexpr int radix_passes = 3;
  // LSD radix sort of t[0, n) by t[q] - lo, one byte per pass, through
  // spare (as long as t).
  static void radix_sort(I* t, I* spare, std::size_t n, I lo, int passes) {
    using U = std::make_unsigned_t<I>;
    I* a = t;
    I* b = spare;
    for (int p = 0; p < passes; ++p) {
      std::size_t cnt[256] = {};
      const int sh = 8 * p;
      for (std::size_t q = 0; q < n; ++q) ++cnt[(static_cast<U>(a[q] - lo) >> sh) & 255U];
      std::size_t sum = 0;
      for (std::size_t& c : cnt) {
        const std::size_t k = c;
        c = sum;
        sum += k;
      }
      for (std::size_t q = 0; q < n; ++q) b[cnt[(static_cast<U>(a[q] - lo) >> sh) & 255U]++] = a[q];
      std::swap(a, b);
    }
    if (a != t)
      for (std::size_t q = 0; q < n; ++q) t[q] = a[q];
  }
  template <class St>
  static void order_touched(St& st) {
    order_coords(st.out.touched, st.out.ntouched, st.out.mark, st.out.spare, st.out.bits);
  }
  // Out of line, and given arrays rather than the state: with the bitmap
  // case inlined into the loops the product itself ran 5-25% slower.
  [[gnu::noinline]] static void order_coords(I* t, std::size_t n, const bool* mark, I* spare, std::uint64_t* bits) {
    if (n < 2) return;
    I lo = t[0], hi = t[0];
    for (std::size_t q = 1; q < n; ++q) {
      lo = t[q] < lo ? t[q] : lo;
      hi = t[q] > hi ? t[q] : hi;
    }
    if (static_cast<std::size_t>(hi - lo) < scan_factor * n * static_cast<std::size_t>(std::bit_width(n))) {
      // The marks of [lo, hi] hold exactly the n coordinates, hi among
      // them: the last write is to t[n - 1].
      std::size_t k = 0;
      for (I x = lo; x <= hi; ++x) {
        t[k] = x;
        k += mark[static_cast<std::size_t>(x)] ? 1 : 0;
      }
    } else if (const std::size_t words = (static_cast<std::size_t>(hi - lo) >> 6) + 1;
               n >= radix_min && n < bitmap_max && words <= bitmap_factor * n) {
      // A bit per coordinate of [lo, hi], then the set bits word by word,
      // each word cleared as it is read.
      for (std::size_t q = 0; q < n; ++q) {
        const auto d = static_cast<std::size_t>(t[q] - lo);
        bits[d >> 6] |= std::uint64_t{1} << (d & 63);
      }
      std::size_t k = 0;
      for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t m = bits[w];
        bits[w] = 0;
        while (m != 0) {
          t[k++] = static_cast<I>(lo + static_cast<I>(w * 64 + static_cast<std::size_t>(std::countr_zero(m))));
          m &= m - 1;
        }
      }
    } else if (const int passes = (std::bit_width(static_cast<std::make_unsigned_t<I>>(hi - lo)) + 7) / 8;
               n >= (passes < 3 ? radix_min : 3 * radix_min) && passes <= radix_passes) {
      radix_sort(t, spare, n, lo, passes);
    } else {
      detail::sort(t, n);
    }
  }

  // Appends coordinates c[0, n) at positions p, p + 1, ... of level l: in
  // one call where the level offers it (compressed levels), else one by one.
  template <class L>
  static void append_coords(L& l, I p, const I* c, std::size_t n) {
    if constexpr (requires { l.append_coords(p, c, n); }) {
      l.append_coords(p, c, n);
    } else {
      for (std::size_t t = 0; t < n; ++t) l.append_coord(p + static_cast<I>(t), c[t]);
    }
  }

  // Appends the row's coordinates in order under the dense prefix's
  // current position (to the chunk's entries in a parallel run), and
  // clears it. While sampling: counts them, and clears the row.
  template <class St>
  static void flush(St& st, I parent) {
    if constexpr (samples_rows) {
      if (st.out.ph == phase::count) {  // sampling: count the row's coordinates, clear it
        st.out.sampled += st.out.ntouched;
        if constexpr (marks_positions) return close_row(st);
        for (std::size_t t = 0; t < st.out.ntouched; ++t) {
          const auto x = static_cast<std::size_t>(st.out.touched[t]);
          st.out.ws[x] = V{};
          st.out.mark[x] = false;
        }
        st.out.ntouched = 0;
        return;
      }
    }
    if constexpr (keeps_patterns) {
      if (st.out.numeric) return flush_numeric(st, parent);
    }
    const I begin = st.out.cnt;
    if constexpr (marks_positions) {  // the row as it stands, in bulk
      const std::size_t nt = st.out.ntouched;
      const I* tc = st.out.touched;
      if (st.out.lout != nullptr)
        st.out.lout->crd.insert(st.out.lout->crd.end(), tc, tc + nt);
      else
        append_coords(std::get<last>(*st.out.levels), st.out.cnt, tc, nt);
      st.out.vals->insert(st.out.vals->end(), st.out.rv, st.out.rv + nt);
      st.out.cnt += static_cast<I>(nt);
      close_row(st);
      return end_segment(st, parent, begin);
    }
    if constexpr (sorts_rows) order_touched(st);
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
    end_segment(st, parent, begin);
  }
  // The parent's segment [begin, cnt) of the last level, unless empty (to
  // the chunk's segments in a parallel run).
  template <class St>
  static void end_segment(St& st, I parent, I begin) {
    if (st.out.cnt == begin) return;
    if (st.out.lout != nullptr)
      st.out.lout->edges.push_back({parent, begin, st.out.cnt});
    else
      std::get<last>(*st.out.levels).append_edges(parent, begin, st.out.cnt);
  }
  // compute_numeric (values into the output's present pattern): a host
  // output whose last level stores bounds and coordinates (CSR, CSC, a
  // sparse vector), rows opened by the dense prefix or one row.
  static constexpr bool keeps_patterns = [] {
    if constexpr (scanned_level<last_level_t>)
      return base::host_assembled && !S::accumulate && (S::O.ws_open >= 0 || last == 0);
    else
      return false;
  }();
  // The output's pattern segment of parent position `parent`: its
  // coordinates and the segment's bounds [b, e).
  template <class St>
  static auto pattern_segment(const St& st, I parent) {
    using pos_t = typename last_level_t::pos_type;
    using crd_type = typename last_level_t::crd_type;
    struct segment {
      const crd_type* crd;
      std::size_t b, e;
    };
    const auto* pos = static_cast<const pos_t*>(st.out.npos);
    const auto p = static_cast<std::size_t>(parent);
    return segment{static_cast<const crd_type*>(st.out.ncrd), static_cast<std::size_t>(pos[p]),
                   static_cast<std::size_t>(pos[p + 1])};
  }
  // compute_numeric's rows are marked with their pattern before the
  // products (open_numeric): each product then adds into a marked column,
  // and the branch that finds a column new (which mispredicts on each
  // column's first product when rows are built) is taken only by a product
  // outside the pattern; flush_numeric writes the values where the
  // pattern puts them. A pattern entry no product reaches gets zero.
  template <class St>
  static void open_numeric(St& st, I parent) {
    const auto [crd, b, e] = pattern_segment(st, parent);
    if (st.out.nslot_mode == 1 && st.out.ntrusted) {
      // Through the slot table: the row's values start at zero and the
      // products add at the slots the table gives (no marks).
      for (std::size_t q = b; q < e; ++q) st.out.nvals[q] = V{};
      st.out.nrowv = st.out.nvals + b;
      st.out.nslot = st.out.nslots + st.out.nslot_first[static_cast<std::size_t>(parent)];
      st.out.nslot_row = true;
      st.out.nopen = true;
      return;
    }
    // A corrupt pattern row (longer than the row, a column out of it or
    // named twice) is left unmarked (and its marks so far cleared); the
    // row's products then build it as usual and flush_numeric reports it.
    st.out.nopen = false;
    if (e - b > st.out.nlen) return;
    if constexpr (marks_positions) {
      const mark_t base = *st.out.base;
      for (std::size_t q = b; q < e; ++q) {
        const auto x = static_cast<std::size_t>(crd[q]);
        if (x >= st.out.nlen || st.out.where[x] >= base) {
          st.out.ntouched = q - b;
          return close_row(st);  // the marks so far stale
        }
        st.out.where[x] = static_cast<mark_t>(base + static_cast<mark_t>(q - b));
        st.out.rv[q - b] = V{};
      }
      st.out.ntouched = e - b;
    } else {
      for (std::size_t q = b; q < e; ++q) {
        const auto x = static_cast<std::size_t>(crd[q]);
        if (x >= st.out.nlen || st.out.mark[x]) {
          for (std::size_t r = b; r < q; ++r) st.out.mark[static_cast<std::size_t>(crd[r])] = false;
          return;
        }
        st.out.mark[x] = true;
        // Zero already: the store brings the column's line in ahead of the
        // products' loads (rows spread over a long row missed in cache,
        // mdual 1.17x slower without it).
        st.out.ws[x] = V{};
      }
    }
    st.out.nopen = true;
    if (st.out.nslot_mode == 2 && st.out.ntrusted && !st.out.nrec_bad) {
      // Recording the slot table: the row's first slot, and in a sorted row
      // each column's slot. A row too long for a 16-bit slot, or a table
      // past its cap (the output's values' bytes), ends the recording.
      if (e - b > std::size_t{65536} || st.out.nrec->size() > st.out.nrec_cap) {
        st.out.nrec_bad = true;
        return;
      }
      st.out.nrec_first[static_cast<std::size_t>(parent)] = st.out.nrec->size();
      if constexpr (!marks_positions)
        for (std::size_t q = b; q < e; ++q)
          st.out.nslotmap[static_cast<std::size_t>(crd[q])] = static_cast<std::uint16_t>(q - b);
    }
  }
  // The row's values to the positions of its coordinates in the pattern:
  // the row must be marked (open_numeric) and no product may lie outside
  // the pattern (one there takes a new column: touched), otherwise the row
  // is counted as differing and cleared.
  template <class St>
  static void flush_numeric(St& st, I parent) {
    const auto [crd, b, e] = pattern_segment(st, parent);
    st.out.nchecked += e - b;
    if (st.out.nslot_row) {  // written in place through the slot table
      st.out.nslot_row = false;
      return;
    }
    if constexpr (marks_positions) {
      // The pattern's columns hold slots 0, ..., e - b - 1 in its order.
      const bool same = st.out.nopen && st.out.ntouched == e - b;
      if (same)
        for (std::size_t q = b; q < e; ++q) st.out.nvals[q] = st.out.rv[q - b];
      else if (st.out.nbad++ == 0)
        st.out.nbad_parent = parent;
      return close_row(st);
    }
    if (st.out.nopen) {
      for (std::size_t q = b; q < e; ++q) {
        const auto x = static_cast<std::size_t>(crd[q]);
        st.out.nvals[q] = st.out.ws[x];
        st.out.ws[x] = V{};
        st.out.mark[x] = false;
      }
    }
    if (!st.out.nopen || st.out.ntouched != 0) {
      if (st.out.nbad++ == 0) st.out.nbad_parent = parent;
      for (std::size_t t = 0; t < st.out.ntouched; ++t) {
        const auto x = static_cast<std::size_t>(st.out.touched[t]);
        st.out.ws[x] = V{};
        st.out.mark[x] = false;
      }
    }
    st.out.ntouched = 0;
  }
  // Whether an operand reads the output's values (which the numeric run
  // overwrites as it goes).
  template <class St>
  static bool reads_output_values(const St& st) {
    const void* mine = std::get<0>(st.ops)->values().data();
    bool shared = false;
    std::apply(
        [&](const auto*, const auto*... ops) {
          (
              [&] {
                if constexpr (requires { ops->values().data(); })
                  shared = shared || (mine != nullptr && static_cast<const void*>(ops->values().data()) == mine);
              }(),
              ...);
        },
        st.ops);
    return shared;
  }
  // compute_numeric: loop 0 in chunks (each with its own row) on a
  // parallel executor where rows split, else on one thread; every row's
  // values written where the pattern puts them; then an error naming the
  // first row whose product differs from the pattern.
  template <class K, class St, class Cs>
  static void run_numeric(St& st, const Cs& cs, const executor& ex, bool trusted, const std::uint8_t* span = nullptr,
                          slot_table* slots = nullptr)
    requires keeps_patterns
  {
    auto* o = std::get<0>(st.ops);
    const auto& lvl = std::get<last>(o->levels());
    const I parent_size = level_output<S>::template prefix_size<last>(o->levels());
    const auto npos = static_cast<std::size_t>(parent_size) + 1;
    if (lvl.pos().size() != npos || o->values().size() != lvl.crd().size() ||
        (lvl.pos().size() > 0 && static_cast<std::size_t>(lvl.pos()[npos - 1]) != lvl.crd().size()))
      throw shape_error(detail::message() << "tensorlev: compute_numeric: the output holds no assembled pattern ("
                                          << lvl.pos().size() << " row bounds for " << parent_size << " rows, "
                                          << lvl.crd().size() << " coordinates, " << o->values().size()
                                          << " values); assemble it with = first");
    // Every row's bounds inside the coordinates (the rows read and write
    // pos[r] .. pos[r + 1] of them): the levels' own check (a first bound
    // other than 0 or one that decreases would send a row outside).
    detail::validate_bounds(lvl.pos(), parent_size, lvl.crd().size(),
                            "tensorlev: compute_numeric: the output's pattern (its last level)");
    if (reads_output_values(st))
      throw error("tensorlev: compute_numeric: an operand reads the output's values, which the run overwrites; "
                  "compute into a separate tensor");
    // The loops locate the dense prefix in the output's levels (read only
    // here: nothing is appended).
    st.out.levels = const_cast<typename S::out_levels_t*>(&o->levels());
    st.out.numeric = true;
    st.out.npos = lvl.pos().data();
    st.out.ncrd = lvl.crd().data();
    st.out.nvals = o->values().data();
    st.out.nlen = row_length(st);
    st.out.ntrusted = trusted;
    st.out.nspan = trusted ? span : nullptr;
    // The slot table (the kernel passes it where its rows may take it, for
    // a trusted run): through it once recorded; recorded on one thread by
    // the first trusted run (rows in any order: each row's first slot is
    // kept by row).
    std::vector<std::uint16_t> slotmap;
    const bool recording = trusted && slots != nullptr && slots->state == 0;
    if (trusted && slots != nullptr && slots->state == 1) {
      st.out.nslot_mode = 1;
      st.out.nslots = slots->slots.data();
      st.out.nslot_first = slots->first.data();
    } else if (recording) {
      st.out.nslot_mode = 2;
      slots->slots.clear();
      slots->first.assign(static_cast<std::size_t>(parent_size), 0);
      st.out.nrec = &slots->slots;
      st.out.nrec_first = slots->first.data();
      // At most the output's values' bytes (a product's slot is 2 bytes).
      st.out.nrec_cap = o->values().size() * sizeof(V) / sizeof(std::uint16_t);
      if constexpr (!marks_positions) {
        slotmap.assign(st.out.nlen, 0);
        st.out.nslotmap = slotmap.data();
      }
      st.out.nrec_bad = false;
    }
    std::size_t bad = 0, covered = 0;
    I first_bad = I(0);
    auto run_rows = [&] {
      bad = 0, covered = 0, first_bad = I(0);
      bool chunked = false;
      if constexpr (base::par == par_kind::append) {
        if (ex.parallel() && !recording) {
          chunked = true;
          const auto bounds = K::chunk_bounds(st, cs);
          const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
          std::vector<std::size_t> nbad(n, 0), checked(n, 0);
          std::vector<I> firsts(n, I(0));
          detail::scratch_pool<row> rows;
          const std::size_t len = st.out.nlen;
          K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
            row* r = rows.acquire([&] { return make_row(len); });
            use_row(local, *r);
            local.out.nbad = 0;
            local.out.nchecked = 0;
            V unused{};
            K::template loop<0, 0>(local, cs, unused);
            nbad[c] = local.out.nbad, firsts[c] = local.out.nbad_parent, checked[c] = local.out.nchecked;
            rows.release(r);
          });
          for (std::size_t c = 0; c < n; ++c) {
            if (nbad[c] != 0 && bad == 0) first_bad = firsts[c];
            bad += nbad[c];
            covered += checked[c];
          }
        }
      }
      if (!chunked) {
        row r = take_row(st.out.nlen);
        use_row(st, r);
        st.out.nbad = 0;
        st.out.nchecked = 0;
        if constexpr (S::O.ws_open < 0) open_numeric(st, I(0));  // one row (a vector)
        V unused{};
        K::template loop<0, 0>(st, cs, unused);
        if constexpr (S::O.ws_open < 0) flush(st, I(0));
        bad = st.out.nbad, first_bad = st.out.nbad_parent, covered = st.out.nchecked;
        keep_row(std::move(r));
      }
    };
    run_rows();
    // Rows the loops never reached (loop 0 walks a compressed level, DCSR's
    // rows, and an operand's row emptied) flushed nothing and hold old
    // values; which rows they are is not recorded, so the values are zeroed
    // and the rows run again (a rare case: a pattern larger than the
    // product's).
    if (bad == 0 && covered != lvl.crd().size()) {
      for (V& v : o->values()) v = V{};
      st.out.nrec_bad = true;  // (the rows would be recorded twice)
      run_rows();
    }
    if (recording) {
      // (The cap again: the last rows' products came after the last check.)
      const bool kept = bad == 0 && !st.out.nrec_bad && slots->slots.size() <= st.out.nrec_cap;
      slots->state = kept ? 1 : 2;
      if (!kept) slots->slots = {}, slots->first = {};
    }
    st.out.nslot_mode = 0;
    if (bad != 0)
      throw error(detail::message() << "tensorlev: compute_numeric: the product has entries outside the output's "
                                       "pattern in "
                                    << bad << " row(s), the first at position " << first_bad
                                    << " of the output's rows (or the pattern names a column there twice or out of "
                                       "range): the operands' patterns changed since the output was assembled; "
                                       "assemble it again with = (the output's values are unspecified now)");
  }

  // The capacity to reserve for a one-thread run: the coordinates of every
  // sample_every-th chunk of loop 0 counted, scaled to the whole range,
  // plus a quarter, at most the dense size (0: too few rows to sample).
  // Leaves the row clear.
  template <class K, class St, class Cs>
  static I sampled_capacity(St& st, const Cs& cs, const executor& ex, I parent_size) {
    const auto bounds = K::chunk_bounds(st, cs);
    const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
    if (n < 2 * sample_every) return I(0);
    // The sampled chunks and the gaps between them, as consecutive ranges.
    std::vector<I> ranges;
    double part = 0;  // of loop 0's range
    for (std::size_t c = sample_every / 2; c < n; c += sample_every) {
      ranges.push_back(bounds[c]);
      ranges.push_back(bounds[c + 1]);
      part += static_cast<double>(bounds[c + 1] - bounds[c]);
    }
    st.out.ph = phase::count;
    std::size_t counted_entries = 0;
    K::for_chunks(st, ranges, ex, [&](std::size_t c, St& local) {
      if (c % 2 != 0) return;  // a gap
      local.out.sampled = 0;
      V unused{};
      K::template loop<0, 0>(local, cs, unused);
      counted_entries += local.out.sampled;
    });
    st.out.ph = phase::single;
    if (part <= 0) return I(0);
    const double whole = static_cast<double>(bounds[n] - bounds[0]);
    const double estimate = static_cast<double>(counted_entries) * (whole / part) * 1.25;
    // At most what the level's stored positions can count (an estimate
    // past them would throw although the product itself may fit).
    double limit = static_cast<double>(std::numeric_limits<I>::max());
    if constexpr (requires { typename last_level_t::pos_type; })
      limit = detail::min_of(limit, static_cast<double>(std::numeric_limits<typename last_level_t::pos_type>::max()));
    const double most = detail::min_of(limit, static_cast<double>(parent_size) * static_cast<double>(row_length(st)));
    return static_cast<I>(estimate < most ? estimate : most);
  }

  TENSORLEV_HD_ANY_STORAGE
  template <std::size_t Dp, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void before_inner(St& st, const Cs& cs) {
    if constexpr (static_cast<int>(Dp) == S::O.ws_open && keeps_patterns) {
      if constexpr (device_builds) {
        if (st.out.dph != dphase::none) return;
      }
      if (st.out.numeric) open_numeric(st, cs.pos[0]);
    }
  }
  TENSORLEV_HD_ANY_STORAGE
  template <std::size_t Dp, class St, class Cs>
  TENSORLEV_HOST_DEVICE static void after_inner(St& st, const Cs& cs) {
    if constexpr (static_cast<int>(Dp) == S::O.ws_open && base::host_assembled) {
      if constexpr (device_builds) {
        if (st.out.dph != dphase::none) return;
      }
      flush(st, cs.pos[0]);
    }
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    // The output's own arrays when no operand reads them: a product
    // recomputed into the same tensor reuses their memory (see recycles).
    const bool reuse = base::recycles(st);
    const I parent_size = level_output<S>::template prefix_size<last>(o->levels());
    auto arrays = base::take_arrays(*o, reuse);
    auto& lv = arrays.first;
    auto& vals = arrays.second;
    st.out.levels = &lv;
    st.out.vals = &vals;
    typename base::template restore<T> guard{o, &arrays, reuse, parent_size};
    const I total = [&] {
      if constexpr (base::par == par_kind::append) {
        if (ex.parallel()) return run_chunked<K>(st, cs, ex, parent_size);
      }
      row r = take_row(row_length(st));
      use_row(st, r);
      I capacity = I(0);
      if constexpr (samples_rows) capacity = sampled_capacity<K>(st, cs, ex, parent_size);
      std::get<last>(lv).append_init(parent_size, capacity);
      vals.reserve(static_cast<std::size_t>(capacity));
      V unused{};
      K::template loop<0, 0>(st, cs, unused);
      if constexpr (S::O.ws_open < 0) flush(st, I(0));
      keep_row(std::move(r));
      return st.out.cnt;
    }();
    std::get<last>(lv).append_finalize(parent_size, total);
    guard.armed = false;
    *o = T(o->dims(), std::move(lv), std::move(vals));
  }

  // Loop 0 in chunks, each with its own row, collecting its entries; then
  // an exclusive scan of the chunks' counts, and a parallel pass that
  // places every chunk's entries and segments at their positions. Returns
  // the number of entries.
  template <class K, class St, class Cs>
  static I run_chunked(St& st, const Cs& cs, const executor& ex, I parent_size) {
    const auto bounds = K::chunk_bounds(st, cs);
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
        throw overflow_error(detail::message() << "tensorlev: the output's entries (more than " << outs[c].crd.size()
                                               << ") do not fit the index type (" << sizeof(I) * 8 << "-bit)");
      offset[c + 1] = static_cast<I>(outs[c].crd.size());
    }
    const I total = base::scan_counts(offset);
    auto& last_level = std::get<last>(*st.out.levels);
    last_level.append_init_sized(parent_size, total);
    tensorlev::detail::resize_fresh(*st.out.vals, static_cast<std::size_t>(total));
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

  // The device form (see the file's comment). host: the state on the host
  // (the output tensor); st: the state whose operand pointers are the
  // launcher's copies.
  template <class K, class St, class L>
  static void run_device(const St& host, St st, const L& dev)
    requires device_builds
  {
    using T = typename S::template op_t<0>;
    using crd_t = typename base::crd_t;
    T* o = std::get<0>(host.ops);
    typename S::out_levels_t lv = level_output<S>::device_levels(host, st, dev);
    const auto n = static_cast<std::size_t>(level_output<S>::template prefix_size<last>(lv));
    st.out.len = row_length(st);
    // 1. each row's products
    auto tab = dev.template alloc<std::uint64_t>(n + 1, true);
    st.out.bound = tab.data();
    st.out.dph = dphase::bound;
    const auto bound = K::device_fn(st);
    dev.for_each(bound.n, bound);
    // 2. each row's slots, placed by a scan
    dev.for_each(n, ws_slots_fn{tab.data(), st.out.len});
    const std::uint64_t slots = dev.exclusive_scan(tab.data(), n + 1);
    if (slots > std::numeric_limits<std::size_t>::max() / (sizeof(I) + sizeof(V)))
      throw overflow_error(detail::message() << "tensorlev: the device form's accumulators (" << slots
                                             << " slots) do not fit in memory");
    auto keys = dev.template alloc<I>(static_cast<std::size_t>(slots), true);
    auto tvals = dev.template alloc<V>(static_cast<std::size_t>(slots), false);
    auto offsets = dev.template alloc<I>(n + 1, true);
    // 3. the products added up, each row's coordinates counted
    st.out.tab = tab.data();
    st.out.keys = keys.data();
    st.out.tvals = tvals.data();
    st.out.counts = offsets.data();
    st.out.dph = dphase::accumulate;
    const auto accumulate = K::device_fn(st);
    dev.for_each(accumulate.n, accumulate);
    // 4. the level's bounds, and each row's entries gathered
    const std::uint64_t total = dev.exclusive_scan(offsets.data(), n + 1);
    base::check_device_total(total);
    auto crd = dev.template alloc<crd_t>(static_cast<std::size_t>(total), false);
    auto vals = dev.template alloc<V>(static_cast<std::size_t>(total), false);
    dev.for_each(n, ws_gather_fn<I, crd_t, V>{tab.data(), keys.data(), tvals.data(), offsets.data(), crd.data(),
                                              vals.data(), st.out.len, sorts_rows});
    base::adopt_device(dev, o, std::move(lv), n, std::move(offsets), std::move(crd), std::move(vals));
  }
};

}  // namespace tensorlev::cg
