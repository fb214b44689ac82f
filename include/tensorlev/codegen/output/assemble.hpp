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
///
/// In the device form (kernel::run_device; every assembled level either
/// scanned, CSF's and COO's first level, or a branchless coordinate array,
/// COO's singletons) the same chunked count, scan and fill runs where the
/// launcher does, one chunk per value of loop 0's variable: each chunk's
/// assembly state lives in an array the launcher allocates (kernel's
/// device_chunk hands each chunk its own), a counting launch fills them, the
/// launcher scans each level's chunk counts (the chunks' first positions and
/// the level's total), the coordinates and values are allocated by the
/// totals, and a filling launch stores every position through raw pointers.
/// A compressed level's bounds come from its children's counts: a parent's
/// children are appended by one chunk, in a row, so the last one appended
/// writes how many there are, and an exclusive scan of those counts is the
/// level's `pos` (the root of a level without a dense prefix, shared by
/// every chunk, gets the level's total). Nothing passes through the host but
/// the totals.

#include "../../detail/algorithm.hpp"
#include "common.hpp"

namespace tensorlev::cg {

// What the assembly of one chunk (or of a whole serial run) tracks, per
// level: positions counted so far (the next position), the current
// coordinate and position, and where the current parent's children begin.
// All-zero bits are the default state (the device form's arrays of them
// are zero-filled), so a run counts unless `filling`.
template <class I, std::size_t ML>
struct assembly_state {
  bool filling = false;
  bool any = false;
  // A chunk of a parallel run, with no prefix: the first level's one
  // parent (the root) is every chunk's, so its edges are set afterwards.
  bool shared_root = false;
  I prefix_pos = 0;
  I cnt[ML]{};
  I crd[ML]{};
  I pos[ML]{};
  I parent[ML]{};
  I begin[ML]{};
  bool open[ML]{};  // a parent's children begun at this level
};

// The device form's chunk states: the counting pass's counts gathered per
// level (counts[x * stride + c], for the launcher's scan), then each chunk
// reset to fill from its first positions (the scanned counts).
template <class I, std::size_t ML>
struct gather_counts_fn {
  const assembly_state<I, ML>* chunks;
  I* counts;
  std::size_t stride, first, levels;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t c) const {
    for (std::size_t x = 0; x < levels; ++x) counts[x * stride + c] = chunks[c].cnt[first + x];
  }
};
template <class I, std::size_t ML>
struct start_filling_fn {
  assembly_state<I, ML>* chunks;
  const I* starts;
  std::size_t stride, first, levels;
  bool shared_root;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t c) const {
    assembly_state<I, ML> as{};
    as.filling = true;
    as.shared_root = shared_root;
    for (std::size_t x = 0; x < levels; ++x) as.cnt[first + x] = starts[x * stride + c];
    chunks[c] = as;
  }
};
// a[0] = v (one launch of one element).
template <class T>
struct set_first_fn {
  T* a;
  T v;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t) const { a[0] = v; }
};

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
  using assembly = assembly_state<I, S::ML>;

  // The first assembled level that is not unique (L if none).
  static constexpr std::size_t first_non_unique = [] {
    for (std::size_t k = prefix; k < L; ++k)
      if (!S::D.acc[0].lev[k].unique) return k;
    return L;
  }();

  // How the device form builds assembled level k: 1, scanned (positions
  // from the children's counts, coordinates by position); 2, a branchless
  // coordinate array (one child per parent: coordinates only); 0, neither.
  template <std::size_t K>
  static constexpr int device_level_kind() {
    using Lv = std::tuple_element_t<K, levels_t>;
    if constexpr (scanned_level<Lv>)
      return 1;
    else if constexpr (coordinate_array_level<Lv>)
      return 2;
    else
      return 0;
  }
  static constexpr bool host_assembled = growable_storage<typename S::template op_t<0>::storage>;
  static constexpr bool device_builds = !S::accumulate && []<std::size_t... X>(std::index_sequence<X...>) {
    return ((device_level_kind<prefix + X>() != 0) && ...);
  }(std::make_index_sequence<L - prefix>{});
  // Chunks of loop 0: on a host executor when every level has a sized
  // append (growable storage), in the device form when it builds there
  // (arrays it cannot grow; without this, one chunk: a GPU's one thread).
  static constexpr par_kind par =
      S::outer_splittable && (sized || device_builds) ? par_kind::assemble : par_kind::none;

  template <class St>
  TENSORLEV_HOST_DEVICE static bool counting(const St& st) {
    return !st.out.as->filling;
  }
  struct data : level_output<S>::data {
    assembly* as = nullptr;
    // The device form: every chunk's state (chunk c takes chunks[c]), and
    // where the filling pass stores each assembled level's coordinates (a
    // pointer to its crd_type), the children's counts per parent of its
    // scanned levels, and the values.
    assembly* chunks = nullptr;
    void* crd_at[S::ML]{};
    I* children_at[S::ML]{};
    V* val_at = nullptr;
    bool on_device = false;
  };

  // The device form: chunk c's assembly state (kernel::device_chunk).
  template <class St>
  TENSORLEV_HOST_DEVICE static void begin_chunk(St& st, std::size_t c) {
    if (st.out.chunks != nullptr) st.out.as = st.out.chunks + c;
  }

  // Level k's coordinate c at position q, below parent, into the host
  // levels. Out of emit's lambda, which nvcc's pragma does not reach: its
  // host-only level calls are never made on a device (on_device returns
  // before them there).
  TENSORLEV_HD_ANY_STORAGE
  template <std::size_t k, class St>
  TENSORLEV_HOST_DEVICE static void host_append(St& st, const assembly& as, I q, I c, I parent) {
    auto& lvl = std::get<k>(*st.out.levels);
    if constexpr (sized)
      lvl.append_coord_at(q, c);
    else
      lvl.append_coord(q, c);
    if (k != prefix || !as.shared_root) lvl.append_edges(parent, as.begin[k], q + 1);
  }

  // An entry equal to the previous one adds to it.
  TENSORLEV_HD_ANY_STORAGE
  template <class St, class Cs>
  TENSORLEV_HOST_DEVICE static void emit(St& st, const Cs&, const V& value) {
    assembly& as = *st.out.as;
    const I p = level_output<S>::template locate_prefix<prefix>(st);
    std::size_t first = L;
    if (!as.any || p != as.prefix_pos) first = prefix;
    // The first level whose coordinate changed (constant indices only:
    // the statement's description is not in device memory).
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            constexpr std::size_t k = prefix + K;
            constexpr std::size_t v = S::var_index(S::D.acc[0].lev[k].var);
            if (first == L && st.var_val[v] != as.crd[k]) first = k;
          }(),
          ...);
    }(std::make_index_sequence<L - prefix>{});
    if (first == L) {  // the same coordinates again
      if (as.filling) {
        if constexpr (device_builds) {
          if (st.out.on_device) {
            st.out.val_at[static_cast<std::size_t>(as.pos[L - 1])] += value;
            return;
          }
        }
        if constexpr (!host_assembled)
          return;
        else if constexpr (sized)
          (*st.out.vals)[static_cast<std::size_t>(as.pos[L - 1])] += value;
        else
          st.out.vals->back() += value;
      }
      return;
    }
    // Below a non-unique level every entry is new.
    if (first > first_non_unique) first = first_non_unique;
    as.any = true;
    as.prefix_pos = p;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            constexpr std::size_t k = prefix + K;
            if (k < first) return;
            const I c = st.var_val[S::var_index(S::D.acc[0].lev[k].var)];
            I parent = p;
            if constexpr (k != prefix) parent = as.pos[k - 1];
            const I q = as.cnt[k]++;
            as.crd[k] = c;
            as.pos[k] = q;
            if (!as.filling) return;
            if (!as.open[k] || as.parent[k] != parent) as.open[k] = true, as.parent[k] = parent, as.begin[k] = q;
            if constexpr (device_builds) {
              if (st.out.on_device) {
                using C = std::remove_const_t<typename std::tuple_element_t<k, levels_t>::crd_type>;
                static_cast<C*>(st.out.crd_at[k])[static_cast<std::size_t>(q)] = static_cast<C>(c);
                if constexpr (device_level_kind<k>() == 1)
                  if (k != prefix || !as.shared_root)
                    st.out.children_at[k][static_cast<std::size_t>(parent)] = q + 1 - as.begin[k];
                return;
              }
            }
            if constexpr (host_assembled) host_append<k>(st, as, q, c, parent);
          }(),
          ...);
    }(std::make_index_sequence<L - prefix>{});
    if (as.filling) {
      if constexpr (device_builds) {
        if (st.out.on_device) {
          st.out.val_at[static_cast<std::size_t>(as.pos[L - 1])] = value;
          return;
        }
      }
      if constexpr (!host_assembled)
        return;
      else if constexpr (sized)
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
    if constexpr (par == par_kind::assemble && sized) {
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
      tensorlev::detail::assign_fresh(vals, static_cast<std::size_t>(counted.cnt[L - 1]), V{});
    else
      vals.reserve(static_cast<std::size_t>(counted.cnt[L - 1]));
    st.out.vals = &vals;
    as = assembly{};
    as.filling = true;
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
    const auto bounds = K::chunk_bounds(st, cs);
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
      chunk[c].filling = true;
      chunk[c].shared_root = prefix == 0;
      for (std::size_t k = prefix; k < L; ++k) {
        const I m = counted.cnt[k];
        chunk[c].cnt[k] = total[k];  // the chunk's first position at level k
        if (m > std::numeric_limits<I>::max() - total[k])
          throw overflow_error(detail::message() << "tensorlev: the output's positions at level " << k << " (more than "
                                                 << total[k] << ") do not fit the index type (" << sizeof(I) * 8
                                                 << "-bit)");
        total[k] += m;
      }
    }
    init_levels(lv, prefix_size, total);
    tensorlev::detail::assign_fresh(*st.out.vals, static_cast<std::size_t>(total[L - 1]), V{});
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

  // The device form (see the file's comment). host: the state on the host
  // (the output tensor); st: the state whose operand pointers are the
  // launcher's copies.
  template <class K, class St, class Ln>
  static void run_device(const St& host, St st, const Ln& dev)
    requires device_builds
  {
    using T = typename S::template op_t<0>;
    T* o = std::get<0>(host.ops);
    levels_t lv = level_output<S>::device_levels(host, st, dev);
    const I prefix_size = level_output<S>::template prefix_size<prefix>(lv);
    // count: every chunk's positions per level
    const std::size_t n = K::device_fn(st).n;
    auto chunks = dev.template alloc<assembly>(n, true);
    st.out.chunks = chunks.data();
    const auto count = K::device_fn(st);
    dev.for_each(n, count);
    // scan: each chunk's first position per level, and the levels' totals
    constexpr std::size_t levels = L - prefix;
    const std::size_t stride = n + 1;
    auto starts = dev.template alloc<I>(levels * stride, true);
    dev.for_each(n, gather_counts_fn<I, S::ML>{chunks.data(), starts.data(), stride, prefix, levels});
    I total[S::ML]{};
    for (std::size_t x = 0; x < levels; ++x)
      total[prefix + x] = checked_total(dev.exclusive_scan(starts.data() + x * stride, stride), prefix + x);
    dev.for_each(n, start_filling_fn<I, S::ML>{chunks.data(), starts.data(), stride, prefix, levels, prefix == 0});
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (check_positions<prefix + X>(total), ...);
    }(std::make_index_sequence<levels>{});
    // fill: every level's coordinates (and children's counts) and the values
    auto vals = dev.template alloc<V>(static_cast<std::size_t>(total[L - 1]), false);
    st.out.val_at = vals.data();
    st.out.on_device = true;
    fill_levels<K, prefix>(dev, st, n, lv, prefix_size, total);
    *o = T(o->dims(), std::move(lv), typename T::values_array(std::move(vals)));
  }

  // A level's total number of positions, checked against the index type
  // (and std::size_t).
  static I checked_total(std::uint64_t total, std::size_t k) {
    const auto most = detail::min_of(static_cast<std::uint64_t>(std::numeric_limits<I>::max()),
                                     static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max()));
    if (total > most)
      throw overflow_error(detail::message() << "tensorlev: the output's positions at level " << k << " (" << total
                                             << ") do not fit the index type (" << sizeof(I) * 8 << "-bit)");
    return static_cast<I>(total);
  }

  // A scanned level's total number of positions fits its position type
  // (checked for every level before anything is allocated).
  template <std::size_t Kl>
  static void check_positions(const I* total) {
    if constexpr (device_level_kind<Kl>() == 1) {
      using P = std::remove_const_t<typename std::tuple_element_t<Kl, levels_t>::pos_type>;
      if (static_cast<std::uint64_t>(total[Kl]) > static_cast<std::uint64_t>(std::numeric_limits<P>::max()))
        throw overflow_error(detail::message() << "tensorlev: the output's level " << Kl << " cannot hold " << total[Kl]
                                               << " positions in its position type (at most "
                                               << static_cast<std::uint64_t>(std::numeric_limits<P>::max()) << ")");
    } else {
      (void)total;
    }
  }

  // The filling launch, with every assembled level's arrays allocated by
  // the totals (level Kl's, then the rest by recursion; no tuple of arrays):
  // its coordinates, and for a scanned level its children's counts per
  // parent (zeroed, one more than the parents: the scan's total). Each
  // level adopts its arrays once the launch has filled them.
  template <class K, std::size_t Kl, class Ln, class St>
  static void fill_levels(const Ln& dev, St& st, std::size_t n, levels_t& lv, I prefix_size, const I* total) {
    if constexpr (Kl == L) {
      (void)lv, (void)prefix_size, (void)total;
      const auto fill = K::device_fn(st);
      dev.for_each(n, fill);
    } else {
      using Lv = std::tuple_element_t<Kl, levels_t>;
      using C = std::remove_const_t<typename Lv::crd_type>;
      // (The coordinates fit C: the empty level checked its extent; the
      // positions fit P: check_positions.)
      auto crd = dev.template alloc<C>(static_cast<std::size_t>(total[Kl]), false);
      st.out.crd_at[Kl] = crd.data();
      const I parents = Kl == prefix ? prefix_size : total[Kl == 0 ? 0 : Kl - 1];
      auto children = dev.template alloc<I>(device_level_kind<Kl>() == 1 ? static_cast<std::size_t>(parents) + 1 : 0,
                                            true);
      st.out.children_at[Kl] = children.data();
      fill_levels<K, Kl + 1>(dev, st, n, lv, prefix_size, total);
      adopt_level<Kl>(dev, lv, std::move(crd), std::move(children), parents, total);
    }
  }

  // Level k of the output from its device arrays: a scanned level's
  // bounds are its children's counts, scanned (the root's, shared by every
  // chunk, is the level's total), converted where the position type is not
  // I; its coordinates are adopted as they are.
  template <std::size_t Kl, class Ln, class Crd, class Children>
  static void adopt_level(const Ln& dev, levels_t& lv, Crd crd, Children children, I parents, const I* total) {
    using Lv = std::tuple_element_t<Kl, levels_t>;
    const I extent = std::get<Kl>(lv).dimension();
    if constexpr (device_level_kind<Kl>() == 1) {
      using P = std::remove_const_t<typename Lv::pos_type>;
      const auto np = static_cast<std::size_t>(parents);
      if (Kl == 0) dev.for_each(1, set_first_fn<I>{children.data(), total[0]});
      const std::uint64_t sum = dev.exclusive_scan(children.data(), np + 1);
      if (sum != static_cast<std::uint64_t>(total[Kl]))
        throw error(detail::message() << "tensorlev: the device form's level " << Kl << " counts " << sum
                                      << " children but assembled " << total[Kl]);
      if constexpr (std::is_same_v<P, I>) {
        std::get<Kl>(lv) = Lv(extent, typename Lv::pos_array(std::move(children)), typename Lv::crd_array(std::move(crd)));
      } else {
        auto bounds = dev.template alloc<P>(np + 1, false);
        dev.for_each(np + 1, convert_fn<P, I>{bounds.data(), children.data()});
        std::get<Kl>(lv) = Lv(extent, typename Lv::pos_array(std::move(bounds)), typename Lv::crd_array(std::move(crd)));
      }
    } else {
      (void)dev, (void)parents, (void)total, (void)children;
      std::get<Kl>(lv) = Lv(extent, typename Lv::crd_array(std::move(crd)));
    }
  }
};

}  // namespace tensorlev::cg
