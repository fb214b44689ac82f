#pragma once
/// @file pack.hpp
/// Packing unsorted coordinate lists into any format, and conversion
/// between formats and to and from dense arrays.
///
///     coordinate_list<double> list({4, 6});
///     list.push_back({2, 3}, 1.5);  list.push_back({0, 1}, 2.0);
///     auto A = pack<csr>(list);              // duplicates summed
///     auto B = convert<dia>(A);              // any format to any format
///
/// Algorithm: level coordinates are computed from the level map (diagonal
/// offsets and ELL slots from the data), entries are sorted by level
/// coordinates (stable LSD counting sort when the extents are small,
/// otherwise a stable comparison sort), duplicates are combined by the
/// policy, and each level is then assembled top-down through its assembly
/// capability only: append (compressed, singleton), insert at the position
/// locate gives (dense, hashed), or implicitly (range, offset).

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "coordinate_list.hpp"
#include "detail/algorithm.hpp"
#include "detail/message.hpp"
#include "error.hpp"
#include "execution.hpp"
#include "format.hpp"
#include "level_concepts.hpp"
#include "levels/detail_storage.hpp"
#include "tensor.hpp"

namespace tensorlev {

/// What pack does with entries that share all coordinates.
enum class duplicates {
  sum,    ///< add their values (default)
  first,  ///< keep the first in input order
  last,   ///< keep the last in input order
  error   ///< throw duplicate_error naming the coordinates
};

namespace detail {

// Level k's node key ends at level key_end[k]: a unique level groups by its
// own coordinate; a non-unique level followed by branchless levels groups by
// the whole branchless chain below it (one COO position per entry, one
// mode-generic position per fiber). Made monotone so nodes nest.
template <class F, class I>
consteval std::array<std::size_t, F::num_levels> key_ends() {
  using LT = typename F::template level_tuple<I>;
  constexpr std::size_t n = F::num_levels;
  std::array<bool, n> uniq{}, branchless{};
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((uniq[K] = std::tuple_element_t<K, LT>::is_unique), ...);
    ((branchless[K] = std::tuple_element_t<K, LT>::is_branchless), ...);
  }(std::make_index_sequence<n>{});
  std::array<std::size_t, n> e{};
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t m = k;
    if (!uniq[k])
      while (m + 1 < n && branchless[m + 1]) ++m;
    e[k] = (k > 0 && e[k - 1] > m) ? e[k - 1] : m;
  }
  return e;
}

// Appends "(c0,c1,...)": entry e's level coordinates.
template <class I>
message& append_coords(message& m, const std::vector<std::vector<I>>& lc, std::size_t e) {
  m << "(";
  for (std::size_t k = 0; k < lc.size(); ++k) m << (k ? "," : "") << lc[k][e];
  return m << ")";
}

// Stable sort of `perm` by the level coordinates lc[0..n) lexicographically.
template <class I>
void sort_by_levels(std::vector<I>& perm, const std::vector<std::vector<I>>& lc, const std::vector<I>& extents) {
  const std::size_t n = perm.size();
  bool counting = true;
  for (I ext : extents)
    if (static_cast<std::size_t>(ext) > detail::max_of<std::size_t>(4 * n, std::size_t{1} << 16)) counting = false;
  if (!counting) {
    std::vector<I> spare(n);
    detail::stable_sort(perm.data(), spare.data(), n, [&](I a, I b) {
      for (const auto& c : lc) {
        if (c[a] != c[b]) return c[a] < c[b];
      }
      return false;
    });
    return;
  }
  std::vector<I> tmp(n);
  std::vector<std::size_t> count;
  for (std::size_t k = lc.size(); k-- > 0;) {
    const std::vector<I>& key = lc[k];
    if (extents[k] <= 1) continue;  // one possible value: already sorted
    count.assign(static_cast<std::size_t>(extents[k]) + 1, 0);
    for (std::size_t e = 0; e < n; ++e) ++count[static_cast<std::size_t>(key[perm[e]]) + 1];
    for (std::size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
    for (std::size_t e = 0; e < n; ++e) tmp[count[static_cast<std::size_t>(key[perm[e]])]++] = perm[e];
    perm.swap(tmp);
  }
}

template <class Levels, std::size_t... K>
Levels unwrap_levels(std::tuple<std::optional<std::tuple_element_t<K, Levels>>...>& opt, std::index_sequence<K...>) {
  return Levels(std::move(*std::get<K>(opt))...);
}

template <class F>
std::string_view format_label() {
  if constexpr (requires { F::name; })
    return std::string_view(F::name);
  else
    return "format";
}

}  // namespace detail

namespace detail {

// The format-independent half of pack: sorted, deduplicated entries with
// their level coordinates. Instantiated once per (V, I), not per format.
template <class V, class I>
struct sorted_entries {
  std::vector<std::vector<I>> lc;        // lc[k][s]: level-k coordinate of entry s (sorted order)
  std::vector<V> vals;                   // combined values
  std::vector<I> extents;                // extent of each level's coordinates
  std::vector<I> offsets;                // sorted diagonal offsets (diagonal maps only)
  std::vector<unsigned char> first_diff; // first level whose coordinate differs from entry s-1
  std::vector<I> dims;
};

// The 64-bit sort key of an entry: level 0's coordinate in the high bits
// (shifted by `shift`), levels 1.. in mixed radix below it (stride[k]).
// Nothing when the extents do not fit 64 bits.
template <class I>
struct key_layout {
  std::vector<std::uint64_t> stride;  // stride[0] unused
  unsigned shift = 0;                 // bits of the inner part
};

template <class I>
std::optional<key_layout<I>> make_key_layout(const std::vector<I>& extents) {
  key_layout<I> kl;
  kl.stride.assign(extents.size(), 1);
  std::uint64_t inner = 1;
  for (std::size_t k = extents.size(); k-- > 1;) {
    kl.stride[k] = inner;
    if (extents[k] <= 0) return std::nullopt;
    if (__builtin_mul_overflow(inner, static_cast<std::uint64_t>(extents[k]), &inner)) return std::nullopt;
  }
  if (extents.empty() || extents[0] <= 0) return std::nullopt;
  kl.shift = static_cast<unsigned>(std::bit_width(inner - 1));
  const auto top_bits = static_cast<unsigned>(std::bit_width(static_cast<std::uint64_t>(extents[0]) - 1));
  if (kl.shift + top_bits > 64 || kl.shift >= 64) return std::nullopt;
  return kl;
}

template <class V>
struct keyed_entry {
  std::uint64_t key;
  V value;
};

// A fixed-size array whose elements are default-initialized (no zero fill
// for trivial types): pack's scratch arrays are written before being read.
// Large ones of trivial elements sit on huge pages (advise_huge_pages).
template <class T>
class scratch {
  static constexpr bool trivial = std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>;

 public:
  // Default-initialized: no zero fill. (allocate sets huge_: not in the initializer list.)
  explicit scratch(std::size_t n) : size_(n) { data_ = allocate(n); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  scratch(scratch&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), huge_(o.huge_) {}
  scratch& operator=(scratch&&) = delete;
  ~scratch() {
    if (huge_)
      std::free(data_);  // NOLINT(cppcoreguidelines-no-malloc): from std::aligned_alloc
    else
      delete[] data_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  void swap(scratch& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(huge_, o.huge_);
  }

 private:
  T* allocate(std::size_t n) {
    if constexpr (trivial && TENSORLEV_HAVE_MADVISE) {
      if (n >= huge_array_min_bytes / sizeof(T) && n <= (std::numeric_limits<std::size_t>::max() - huge_page_bytes) / sizeof(T)) {
        const std::size_t bytes = (n * sizeof(T) + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
        // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): 2 MiB-aligned, freed with std::free
        if (void* p = std::aligned_alloc(huge_page_bytes, bytes)) {
          advise_huge_pages(p, bytes);
          huge_ = true;
          return static_cast<T*>(p);  // T is trivial: its lifetime begins with the storage
        }
      }
    }
    return new T[n];
  }
  T* data_ = nullptr;
  std::size_t size_;
  bool huge_ = false;
};

// Turns a histogram (count[b + 1] = entries in bucket b) into bucket starts.
template <class C>
void prefix_sum(std::vector<C>& count) {
  for (std::size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
}

// One stable scatter of `in` into `out` by bucket(entry), given bucket starts.
template <class V, class Bucket, class C>
void scatter_pass(const scratch<keyed_entry<V>>& in, scratch<keyed_entry<V>>& out, Bucket bucket,
                  std::vector<C>& start) {
  for (const auto& x : in) out[start[bucket(x)]++] = x;
}

// Stable sort of a[0..n) by key using buf (room for n entries).
template <class V>
void stable_sort_by_key(keyed_entry<V>* a, std::size_t n, keyed_entry<V>* buf) {
  detail::stable_sort(a, buf, n, [](const keyed_entry<V>& x, const keyed_entry<V>& y) { return x.key < y.key; });
}

// Rows in groups of 2^low for a counting pass by row over a large array:
// a stable pass by group (a few thousand write streams, each sequential),
// then each group sorted where it fits in cache (sort_keyed),
// instead of one pass that writes every entry to a random place of an
// array much larger than the cache. About 2^14 entries a group on
// average, at most 4096 groups; 0 (one pass) for small arrays, few rows
// or fewer than 16 groups (which 2^19 entries rule out: then at least 33).
inline unsigned row_group_bits(std::size_t rows, std::size_t n) noexcept {
  if (n < (std::size_t{1} << 19) || rows < (std::size_t{1} << 12)) return 0;
  auto low = static_cast<unsigned>(std::bit_width(detail::max_of<std::size_t>(1, (std::size_t{1} << 14) / (n / rows + 1)))) - 1;
  const auto row_bits = static_cast<unsigned>(std::bit_width(rows - 1));
  if (row_bits > low + 12) low = row_bits - 12;
  if (low < 2 || ((rows - 1) >> low) < 15) return 0;
  return low;
}

// Stable LSD radix sort of a[0, n) by key - base < 2^bits, in digits of
// at most 11 bits, through buf (room for n); returns where the result is
// (a or buf). For a group of long rows, which fits in cache.
template <class V>
keyed_entry<V>* radix_sort_keys(keyed_entry<V>* a, keyed_entry<V>* buf, std::size_t n, std::uint64_t base,
                                unsigned bits) {
  const unsigned passes = (bits + 10) / 11;
  const unsigned width = passes == 0 ? 0 : (bits + passes - 1) / passes;
  const std::size_t nb = std::size_t{1} << width;
  std::array<std::size_t, std::size_t{1} << 11> start;
  for (unsigned p = 0; p < passes; ++p) {
    const unsigned sh = p * width;
    auto digit = [&](const keyed_entry<V>& x) { return static_cast<std::size_t>((x.key - base) >> sh) & (nb - 1); };
    for (std::size_t d = 0; d < nb; ++d) start[d] = 0;
    for (std::size_t i = 0; i < n; ++i) ++start[digit(a[i])];
    std::size_t s = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      const std::size_t t = start[d];
      start[d] = s;
      s += t;
    }
    for (std::size_t i = 0; i < n; ++i) buf[start[digit(a[i])]++] = a[i];
    std::swap(a, buf);
  }
  return a;
}

// Stable sort of entries by key. Two LSD counting passes (inner part of the key, then the
// level-0 coordinate) when both ranges are small; otherwise a counting pass
// on level 0 and a sort inside each bucket; otherwise one stable sort.
// `make(e)` gives entry e; the entries are built here so that the
// histograms are counted in the same pass.
template <class V, class I, class Make>
void sort_keyed(scratch<keyed_entry<V>>& entries, I top_extent, unsigned shift, Make make) {
  // shift < 64: make_key_layout rejects wider inner parts.
  const std::uint64_t top_stride = std::uint64_t{1} << shift;
  const std::uint64_t mask = top_stride - 1;
  const std::size_t n = entries.size();
  const std::size_t small = detail::max_of<std::size_t>(4 * n, std::size_t{1} << 16);
  if (static_cast<std::size_t>(top_extent) > small) {
    for (std::size_t e = 0; e < n; ++e) entries[e] = make(e);
    scratch<keyed_entry<V>> buf(n);
    stable_sort_by_key(entries.begin(), n, buf.begin());
    return;
  }
  // LSD (two counting passes) only when buckets are long on average and the
  // inner range is small; short buckets are cheaper to merge-sort in place.
  const bool lsd = top_stride > 1 && top_stride <= small && n > 64 * static_cast<std::size_t>(top_extent);
  auto top_of = [shift](const keyed_entry<V>& x) { return static_cast<std::size_t>(x.key >> shift); };
  auto inner_of = [mask](const keyed_entry<V>& x) { return static_cast<std::size_t>(x.key & mask); };
  // Counters in the unsigned index type (n fits I): half the cache footprint
  // of size_t for 32-bit indices, and no aliasing with the 64-bit keys.
  using count_t = std::make_unsigned_t<I>;
  const auto top = static_cast<std::size_t>(top_extent);
  std::vector<count_t> count(top + 1, 0);
  {
    if (const unsigned low = row_group_bits(top, n); low > 0) {
      // By group of rows into entries, then each group by row through a
      // buffer that fits in cache, each row sorted there (row_group_bits).
      // Groups in order: group g's prefix sum starts from count[r0], which
      // group g - 1's left at g's first slot.
      const std::size_t groups = ((top - 1) >> low) + 1;
      std::vector<count_t> gnext(groups + 1, 0);
      for (std::size_t e = 0; e < n; ++e) ++gnext[(top_of(make(e)) >> low) + 1];
      prefix_sum(gnext);
      const std::vector<count_t> gstart(gnext);
      std::size_t widest = 0;
      for (std::size_t g = 0; g < groups; ++g) widest = detail::max_of<std::size_t>(widest, gstart[g + 1] - gstart[g]);
      for (std::size_t e = 0; e < n; ++e) {
        const keyed_entry<V> x = make(e);
        entries[gnext[top_of(x) >> low]++] = x;
      }
      scratch<keyed_entry<V>> local(widest), buf(top_stride > 1 && !lsd ? widest : 0);
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t r0 = g << low, r1 = detail::min_of(top, (g + 1) << low), s0 = gstart[g];
        keyed_entry<V>* first = entries.begin() + s0;
        keyed_entry<V>* last = entries.begin() + gstart[g + 1];
        if (lsd) {  // long rows: radix passes over the group's keys
          const auto len = static_cast<std::size_t>(last - first);
          const keyed_entry<V>* sorted =
              radix_sort_keys(first, local.begin(), len, static_cast<std::uint64_t>(r0) << shift, low + shift);
          if (sorted != first)
            for (std::size_t i = 0; i < len; ++i) first[i] = sorted[i];
          continue;
        }
        for (const keyed_entry<V>* x = first; x != last; ++x) ++count[top_of(*x) + 1];
        for (std::size_t c = r0 + 1; c <= r1; ++c) count[c] += count[c - 1];
        for (const keyed_entry<V>* x = first; x != last; ++x) local[count[top_of(*x)]++ - s0] = *x;
        if (top_stride > 1)
          for (std::size_t c = r0, b = 0; c < r1; b = count[c++] - s0)
            stable_sort_by_key(local.begin() + b, count[c] - s0 - b, buf.begin());
        for (keyed_entry<V>* x = first; x != last; ++x) *x = local[static_cast<std::size_t>(x - first)];
      }
      return;
    }
  }
  scratch<keyed_entry<V>> tmp(n);
  if (lsd) {  // both histograms while building the entries
    std::vector<count_t> inner(static_cast<std::size_t>(top_stride) + 1, 0);
    for (std::size_t e = 0; e < n; ++e) {
      const keyed_entry<V> x = make(e);
      entries[e] = x;
      ++count[top_of(x) + 1], ++inner[inner_of(x) + 1];
    }
    prefix_sum(inner);
    scatter_pass(entries, tmp, inner_of, inner);
  } else {
    for (std::size_t e = 0; e < n; ++e) {
      const keyed_entry<V> x = make(e);
      tmp[e] = x;
      ++count[top_of(x) + 1];
    }
  }
  prefix_sum(count);
  scatter_pass(tmp, entries, top_of, count);
  // count[c] now ends bucket c; bucket c starts at count[c-1] (0 for c = 0).
  if (lsd || top_stride == 1) return;
  // Sort each bucket by key, stably: insertion sort on runs of 16, then
  // bottom-up merges through one scratch buffer shared by all buckets.
  std::size_t longest = 0;
  for (std::size_t c = 0; c < top; ++c) longest = detail::max_of<std::size_t>(longest, count[c] - (c == 0 ? 0 : count[c - 1]));
  scratch<keyed_entry<V>> buf(longest);
  for (std::size_t c = 0; c < top; ++c) {
    keyed_entry<V>* first = entries.begin() + (c == 0 ? 0 : count[c - 1]);
    const std::size_t len = count[c] - (c == 0 ? 0 : count[c - 1]);
    stable_sort_by_key(first, len, buf.begin());
  }
}

template <class V, class I, class LevelCoord>
std::optional<sorted_entries<V, I>> sort_entries_keyed(const coordinate_list<V, I>& list, LevelCoord& level_coord,
                                                       sorted_entries<V, I>& base, duplicates policy,
                                                       std::string_view label) {
  const auto layout = make_key_layout(base.extents);
  if (!layout) return std::nullopt;
  const auto& stride = layout->stride;
  const unsigned shift = layout->shift;
  const std::size_t L = base.extents.size(), n_in = list.size(), N = list.order();
  const I* raw = list.raw_coords().data();
  auto key_of = [&](std::size_t e) {
    const I* x = raw + e * N;
    std::uint64_t key = static_cast<std::uint64_t>(level_coord(0, x)) << shift;
    for (std::size_t k = 1; k < L; ++k) key += static_cast<std::uint64_t>(level_coord(k, x)) * stride[k];
    return key;
  };
  scratch<keyed_entry<V>> entries(n_in);
  sort_keyed(entries, base.extents[0], shift, [&](std::size_t e) { return keyed_entry<V>{key_of(e), list.value(e)}; });

  // One pass: combine duplicates (runs of equal keys, in input order),
  // decode level coordinates (level 0 from the high bits, the last level is
  // the remainder, levels in between need one division each), and record
  // the first level where each entry differs from the previous one.
  sorted_entries<V, I> out;
  out.dims = std::move(base.dims);
  out.extents = std::move(base.extents);
  out.offsets = std::move(base.offsets);
  out.vals.reserve(n_in);
  out.lc.assign(L, std::vector<I>());
  for (auto& col : out.lc) col.reserve(n_in);
  out.first_diff.reserve(n_in);
  const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;  // shift < 64 (make_key_layout)
  std::uint64_t prev_key = 0;
  std::vector<I> c(L, I(0)), prev(L, I(0));
  for (std::size_t s = 0; s < n_in; ++s) {
    const std::uint64_t key = entries[s].key;
    if (s > 0 && key == prev_key) {
      switch (policy) {
        case duplicates::sum: out.vals.back() += entries[s].value; break;
        case duplicates::first: break;
        case duplicates::last: out.vals.back() = entries[s].value; break;
        case duplicates::error: {
          // Find the entry's logical coordinates for the message.
          std::size_t seen = 0, e = 0;
          for (; e < n_in; ++e)
            if (key_of(e) == key && ++seen == 2) break;
          message m;
          m << "pack into " << label << ": duplicate entry at coordinates (";
          const auto x = list.coords(e);
          for (std::size_t d = 0; d < x.size(); ++d) m << (d ? "," : "") << x[d];
          throw duplicate_error(m << ") (entry " << e << ")");
        }
      }
      continue;
    }
    c[0] = static_cast<I>(key >> shift);
    if (L > 1) {
      std::uint64_t r = key & mask;
      for (std::size_t k = 1; k + 1 < L; ++k) {
        const std::uint64_t q = r / stride[k];
        c[k] = static_cast<I>(q);
        r -= q * stride[k];
      }
      c[L - 1] = static_cast<I>(r);
    }
    std::size_t k = 0;
    if (s > 0)
      while (k < L && c[k] == prev[k]) ++k;
    out.first_diff.push_back(static_cast<unsigned char>(k));
    for (std::size_t m = 0; m < L; ++m) out.lc[m].push_back(c[m]);
    out.vals.push_back(entries[s].value);
    prev.swap(c);
    prev_key = key;
  }
  return out;
}

template <class V, class I>
sorted_entries<V, I> sort_entries(const coordinate_list<V, I>& list, std::span<const level_map_info> maps,
                                  duplicates policy, std::string_view label) {
  const std::size_t L = maps.size();
  const std::size_t N = list.order();
  sorted_entries<V, I> out;
  out.dims = list.dims();
  const auto& dims = out.dims;
  const std::size_t n_in = list.size();
  (void)checked_index<I>(static_cast<long long>(n_in), "pack: number of entries");
  // Coordinates are in range: coordinate_list checks every entry it accepts
  // and exposes no way to change coordinates afterwards.
  const auto& raw = list.raw_coords();

  // 1. Extents of the level coordinates; diagonal offsets from the data.
  auto& extents = out.extents;
  auto& offsets = out.offsets;
  extents.assign(L, I(0));
  bool has_slot = false;
  std::vector<I> diag_index;  // diagonal offset - diag_lo -> index into offsets
  long long diag_lo = 0;
  for (std::size_t k = 0; k < L; ++k) {
    const auto m = maps[k];
    const I B = checked_index<I>(static_cast<long long>(m.block), "pack: block size");
    switch (m.kind) {
      case map_kind::mode: extents[k] = dims[m.dim]; break;
      case map_kind::block_outer:
        extents[k] = static_cast<I>(dims[m.dim] / B + (dims[m.dim] % B != 0));
        // Block padding coordinates reach extents[k] * B - 1: they must fit I.
        (void)checked_mul(extents[k], B, "pack: blocked dimension rounded up to whole blocks");
        break;
      case map_kind::block_inner: extents[k] = B; break;
      case map_kind::diagonal:
        if (diag_index.empty() && n_in > 0) {
          // Offsets c - r lie in [-(rows-1), cols-1]: mark them.
          diag_lo = -static_cast<long long>(dims[m.dim]) + 1;
          diag_index.assign(static_cast<std::size_t>(dims[m.dim] + static_cast<long long>(dims[m.dim2])), I(-1));
          for (std::size_t e = 0; e < n_in; ++e)
            diag_index[static_cast<std::size_t>(static_cast<long long>(raw[e * N + m.dim2]) - raw[e * N + m.dim] -
                                                diag_lo)] = 0;
          for (std::size_t s = 0; s < diag_index.size(); ++s)
            if (diag_index[s] == 0) {
              diag_index[s] = static_cast<I>(offsets.size());
              offsets.push_back(static_cast<I>(static_cast<long long>(s) + diag_lo));
            }
        }
        extents[k] = static_cast<I>(offsets.size());
        break;
      case map_kind::slot:
        extents[k] = 1;  // assigned after duplicates are combined
        has_slot = true;
        break;
    }
  }
  // Level-k coordinate of the entry whose logical coordinates start at x.
  auto level_coord = [&](std::size_t k, const I* x) -> I {
    const auto& m = maps[k];
    switch (m.kind) {
      case map_kind::mode: return x[m.dim];
      case map_kind::block_outer: return x[m.dim] / static_cast<I>(m.block);
      case map_kind::block_inner: return x[m.dim] % static_cast<I>(m.block);
      case map_kind::diagonal:
        return diag_index[static_cast<std::size_t>(static_cast<long long>(x[m.dim2]) - x[m.dim] - diag_lo)];
      case map_kind::slot: return 0;
    }
    return 0;
  };

  if (!has_slot && n_in > 0) {
    if (auto fast = sort_entries_keyed(list, level_coord, out, policy, label)) return std::move(*fast);
  }

  std::vector<std::vector<I>> lc(L, std::vector<I>(n_in));
  for (std::size_t k = 0; k < L; ++k)
    for (std::size_t e = 0; e < n_in; ++e) lc[k][e] = level_coord(k, raw.data() + e * N);

  // 2. Sort by level coordinates and combine duplicates.
  std::vector<I> perm(n_in);
  for (std::size_t e = 0; e < n_in; ++e) perm[e] = static_cast<I>(e);
  sort_by_levels(perm, lc, extents);
  std::vector<I> uniq;  // first entry of each run of equal coordinates, in sorted order
  auto& vals = out.vals;
  uniq.reserve(n_in);
  vals.reserve(n_in);
  for (std::size_t s = 0; s < n_in; ++s) {
    const I e = perm[s];
    bool same = !uniq.empty();
    if (same) {
      const I prev = uniq.back();
      for (std::size_t k = 0; k < L && same; ++k) same = lc[k][e] == lc[k][prev];
    }
    if (!same) {
      uniq.push_back(e);
      vals.push_back(list.value(static_cast<std::size_t>(e)));
      continue;
    }
    switch (policy) {
      case duplicates::sum: vals.back() += list.value(static_cast<std::size_t>(e)); break;
      case duplicates::first: break;
      case duplicates::last: vals.back() = list.value(static_cast<std::size_t>(e)); break;
      case duplicates::error: {
        message m;
        m << "pack into " << label << ": duplicate entry at coordinates (";
        for (std::size_t d = 0; d < N; ++d) m << (d ? "," : "") << raw[static_cast<std::size_t>(e) * N + d];
        throw duplicate_error(m << ") (entry " << e << ")");
      }
    }
  }
  const std::size_t n = uniq.size();

  // Gather the sorted unique level coordinates.
  auto& slc = out.lc;
  slc.assign(L, std::vector<I>(n));
  for (std::size_t k = 0; k < L; ++k)
    for (std::size_t s = 0; s < n; ++s) slc[k][s] = lc[k][static_cast<std::size_t>(uniq[s])];
  lc.clear();
  lc.shrink_to_fit();

  // ELL slots: rank of each entry among those sharing its group coordinate.
  if (has_slot) {
    for (std::size_t k = 0; k < L; ++k) {
      if (maps[k].kind != map_kind::slot) continue;
      const std::size_t g = maps[k].dim;
      std::vector<I> rank(static_cast<std::size_t>(dims[g]), I(0));
      I longest = 0;
      for (std::size_t s = 0; s < n; ++s) {
        I& r = rank[static_cast<std::size_t>(raw[static_cast<std::size_t>(uniq[s]) * N + g])];
        slc[k][s] = r++;
        longest = detail::max_of(longest, r);
      }
      extents[k] = longest;
    }
    std::vector<I> p2(n);
    for (std::size_t e = 0; e < n; ++e) p2[e] = static_cast<I>(e);
    sort_by_levels(p2, slc, extents);
    for (auto& col : slc) {
      std::vector<I> c2(n);
      for (std::size_t s = 0; s < n; ++s) c2[s] = col[static_cast<std::size_t>(p2[s])];
      col.swap(c2);
    }
    std::vector<V> v2(n);
    for (std::size_t s = 0; s < n; ++s) v2[s] = vals[static_cast<std::size_t>(p2[s])];
    vals.swap(v2);
  }

  out.first_diff.assign(n, 0);
  for (std::size_t s = 1; s < n; ++s) {
    std::size_t k = 0;
    while (k < L && slc[k][s] == slc[k][s - 1]) ++k;
    out.first_diff[s] = static_cast<unsigned char>(k);
  }
  return out;
}

// The nodes of one level: the entries starting each node, the parent
// position of each, and the most children any parent has.
template <class I>
struct level_nodes {
  std::vector<I> starts;  // first entry of each node
  std::vector<I> parent;
  std::size_t max_children = 0;
};

template <class I>
void find_nodes(std::span<const unsigned char> first_diff, std::size_t key_end,
                const std::vector<I>& parent_starts, const std::vector<I>& parent_pos, level_nodes<I>& out) {
  out.starts.clear();
  out.parent.clear();
  out.starts.reserve(first_diff.size());
  out.parent.reserve(first_diff.size());
  out.max_children = 0;
  std::size_t pi = 0, run = 0;
  for (std::size_t s = 0; s < first_diff.size(); ++s) {
    if (s != 0 && first_diff[s] > key_end) continue;
    while (pi + 1 < parent_starts.size() && static_cast<std::size_t>(parent_starts[pi + 1]) <= s) ++pi, run = 0;
    out.starts.push_back(static_cast<I>(s));
    out.parent.push_back(parent_pos[pi]);
    out.max_children = detail::max_of(out.max_children, ++run);
  }
}

// Assembles one level from its nodes through its assembly capability and
// returns the level's size; node_pos receives each node's position.
// Instantiated once per level type, whatever format it appears in; `label`
// names the format in its messages.
template <class Lk, class I>
I assemble_level(Lk& lvl, std::size_t K, const std::vector<std::vector<I>>& slc, const level_nodes<I>& nodes,
                 I parent_size, std::vector<I>& node_pos, std::string_view label) {
  // Every message starts "pack into <label>: level K (name)".
  auto where = [&](message&& m) -> message& { return append_level(m << "pack into " << label << ": ", K, Lk::name); };
  const std::size_t count = nodes.starts.size();
  const auto& node_parent = nodes.parent;
  const std::vector<I>& crd = slc[K];
  node_pos.clear();
  node_pos.resize(count);
  std::vector<ancestor_coord<I>> anc_coords(K + 1, 0);
  const ancestors<I> anc(anc_coords.data(), K);
  auto set_anc = [&](std::size_t s) {
    for (std::size_t m = 0; m < K; ++m) anc_coords[m] = slc[m][s];
  };
  I size = 0;
  if constexpr (appendable_level<Lk>) {
    // Children must be appended in increasing parent position order.
    std::vector<std::size_t> sorted_order;  // only when parents are not in position order
    bool parents_sorted = true;
    for (std::size_t j = 1; j < node_parent.size() && parents_sorted; ++j)
      parents_sorted = !(node_parent[j] < node_parent[j - 1]);
    if (!parents_sorted) {
      sorted_order.resize(count);
      for (std::size_t j = 0; j < count; ++j) sorted_order[j] = j;
      std::vector<std::size_t> spare(count);
      detail::stable_sort(sorted_order.data(), spare.data(), count,
                          [&](std::size_t a, std::size_t b) { return node_parent[a] < node_parent[b]; });
    }
    auto order = [&](std::size_t j) { return sorted_order.empty() ? j : sorted_order[j]; };
    if constexpr (Lk::is_branchless) {
      // Exactly one child under every parent position: pad empty ones.
      for (std::size_t j = 1; j < count; ++j)
        if (node_parent[order(j)] == node_parent[order(j - 1)])
          throw shape_error(where(message()) << " is branchless, but parent position " << node_parent[order(j)]
                                             << " has several children: the data does not fit this format");
      // A padding child needs a coordinate inside the level's extent.
      if (static_cast<std::size_t>(parent_size) > count && lvl.dimension() == 0)
        throw shape_error(where(message()) << " is branchless and must pad " << parent_size - static_cast<I>(count)
                                           << " parent positions with a child, but its dimension has extent 0 (no "
                                              "coordinate to pad with): this format cannot hold a tensor with that "
                                              "empty dimension");
      size = parent_size;
      lvl.append_init(parent_size, size);
      std::size_t j = 0;
      for (I q = 0; q < parent_size; ++q) {
        if (j < count && node_parent[order(j)] == q) {
          const std::size_t nd = order(j++);
          lvl.append_coord(q, crd[nodes.starts[nd]]);
          node_pos[nd] = q;
        } else {
          lvl.append_coord(q, I(0));  // padding; its value stays zero
        }
        lvl.append_edges(q, q, I(q + 1));
      }
    } else {
      size = static_cast<I>(count);
      lvl.append_init(parent_size, size);
      I p = 0;
      std::size_t j = 0;
      while (j < count) {
        const I q = node_parent[order(j)];
        const I begin = p;
        for (; j < count && node_parent[order(j)] == q; ++j) {
          const std::size_t nd = order(j);
          lvl.append_coord(p, crd[nodes.starts[nd]]);
          node_pos[nd] = p++;
        }
        lvl.append_edges(q, begin, p);
      }
    }
    lvl.append_finalize(parent_size, size);
  } else if constexpr (insertable_level<Lk>) {
    size = lvl.size(parent_size);
    lvl.insert_init(parent_size, size);
    for (std::size_t nd = 0; nd < count; ++nd) {
      const auto s = static_cast<std::size_t>(nodes.starts[nd]);
      set_anc(s);
      const located<I> r = lvl.locate(node_parent[nd], anc, crd[s]);
      lvl.insert_coord(r.pos, crd[s]);
      node_pos[nd] = r.pos;
    }
    lvl.insert_finalize(parent_size, size);
  } else {
    size = lvl.implicit_size(parent_size);
    for (std::size_t nd = 0; nd < count; ++nd) {
      const auto s = static_cast<std::size_t>(nodes.starts[nd]);
      set_anc(s);
      const I c = crd[s];
      bool ok = false;
      if constexpr (coord_iterable_level<Lk>) {
        const bounds<I> b = lvl.coord_bounds(anc);
        if (c >= b.begin && c < b.end) {
          const located<I> r = lvl.coord_access(node_parent[nd], anc, c);
          ok = r.found;
          node_pos[nd] = r.pos;
        }
      } else {
        const bounds<I> b = lvl.pos_bounds(node_parent[nd]);
        for (I p = b.begin; p < b.end && !ok; ++p) {
          const coordinate<I> r = lvl.pos_access(p, anc);
          if (r.found && r.coord == c) ok = true, node_pos[nd] = p;
        }
      }
      if (!ok)
        throw shape_error(append_coords(where(message()) << " cannot hold coordinate " << c << " of entry ", slc, s));
    }
  }
  return size;
}

// ---- fast path: one dense level, then one compressed level (CSR, CSC) ------
//
// The generic path decodes the sorted keys into per-level coordinate
// arrays, groups them into nodes level by level and assembles each level
// from those. For a dense level over one mode followed by one unique,
// ordered, appendable level over another (CSR, CSC and any level types
// with those capabilities), the sorted keys are appended in one pass:
// the row's position comes from the dense level's locate, the column is
// appended, the row's edges are written as it ends. Same result, three
// passes fewer over the entries.
template <class F, class LT>
constexpr bool row_compressed_format() {
  if constexpr (F::num_levels != 2) {
    return false;
  } else {
    using L0 = std::tuple_element_t<0, LT>;
    using L1 = std::tuple_element_t<1, LT>;
    if constexpr (!locatable_level<L0> || !appendable_level<L1>) {
      return false;
    } else {
      return F::maps[0].kind == map_kind::mode && F::maps[1].kind == map_kind::mode && L0::is_full &&
             L0::always_found && L1::is_unique && L1::is_ordered && !L1::is_branchless;
    }
  }
}

// The modes of a row-compressed format's two levels, their extents in a
// list, and the key layout (row in the high bits); nothing when the keys
// do not fit 64 bits.
template <class I>
struct row_compressed_keys {
  std::size_t d0 = 0, d1 = 0;
  std::vector<I> extents;
  unsigned shift = 0;
};

template <class F, class V, class I>
std::optional<row_compressed_keys<I>> row_compressed_layout(const coordinate_list<V, I>& list) {
  // Counts and positions are kept in I (and its unsigned twin).
  (void)checked_index<I>(static_cast<long long>(list.size()), "pack: number of entries");
  row_compressed_keys<I> k{F::maps[0].dim, F::maps[1].dim, {}, 0};
  k.extents = {list.dims()[k.d0], list.dims()[k.d1]};
  const auto layout = make_key_layout(k.extents);
  if (!layout) return std::nullopt;
  k.shift = layout->shift;
  return k;
}

template <class T, class V, class I>
std::optional<T> pack_row_compressed(const coordinate_list<V, I>& list, duplicates policy) {
  using LT = typename T::level_tuple;
  using L0 = std::tuple_element_t<0, LT>;
  using L1 = std::tuple_element_t<1, LT>;
  const auto keys = row_compressed_layout<typename T::format_type>(list);
  if (!keys) return std::nullopt;
  const std::size_t d0 = keys->d0, d1 = keys->d1, n = list.size();
  const std::vector<I>& extents = keys->extents;
  const unsigned shift = keys->shift;
  const I* raw = list.raw_coords().data();

  L0 rows(level_shape<I>{extents[0], extents[1], 0, {}});
  L1 cols(level_shape<I>{extents[1], 0, 0, {}});
  const I parent_size = rows.size(I(1));
  std::vector<V> vals;
  // Appends sorted entries (key_at(s), val_at(s)), combining equal keys.
  auto assemble = [&](auto key_at, auto val_at) {
    cols.append_init(parent_size, static_cast<I>(n));
    clear_reserve(vals, n);
    const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;  // shift < 64 (make_key_layout)
    ancestor_coord<I> anc_crd[2]{};
    I q = 0, row_begin = 0, row_pos = 0;
    bool open = false;
    std::uint64_t prev_key = 0;
    for (std::size_t s = 0; s < n; ++s) {
      const std::uint64_t key = key_at(s);
      if (s > 0 && key == prev_key) {
        if (policy == duplicates::sum)
          vals.back() += val_at(s);
        else if (policy == duplicates::last)
          vals.back() = val_at(s);
        continue;
      }
      const auto r = static_cast<I>(key >> shift);
      if (!open || r != anc_crd[0]) {
        if (open) cols.append_edges(row_pos, row_begin, q);
        anc_crd[0] = r;
        row_pos = rows.locate(I(0), ancestors<I>(anc_crd, 0), r).pos;
        row_begin = q;
        open = true;
      }
      cols.append_coord(q, static_cast<I>(key & mask));
      vals.push_back(val_at(s));
      ++q;
      prev_key = key;
    }
    if (open) cols.append_edges(row_pos, row_begin, q);
    cols.append_finalize(parent_size, q);
  };

  scratch<keyed_entry<V>> entries(n);
  sort_keyed(entries, extents[0], shift, [&](std::size_t e) {
    const I* x = raw + 2 * e;
    return keyed_entry<V>{(static_cast<std::uint64_t>(x[d0]) << shift) + static_cast<std::uint64_t>(x[d1]),
                          list.value(e)};
  });
  assemble([&](std::size_t s) { return entries[s].key; }, [&](std::size_t s) { return entries[s].value; });
  std::array<I, 2> dims{list.dims()[0], list.dims()[1]};
  return T(dims, LT(std::move(rows), std::move(cols)), std::move(vals));
}

// ---- the same fast path on an executor: count, scan, scatter in chunks ----
//
// Every pass of the serial fast path split into chunks: the counting
// passes count per chunk of the input, a scan gives each (bucket, chunk)
// pair its start (buckets in order, chunks in order inside a bucket: the
// scatter stays stable, so duplicates combine in input order as in the
// serial path), the scatter runs per chunk; bucket sorts and the assembly
// run per range of rows holding about n / P entries; the assembly counts
// each row's distinct columns, scans the counts, then fills. The result
// is the serial path's, array for array.

// Start of part c when [0, n) is cut into P near-equal parts.
inline std::size_t part_begin(std::size_t n, std::size_t P, std::size_t c) noexcept {
  return n / P * c + detail::min_of(c, n % P);
}

// fn(c) for every c in [0, P) on the executor.
template <class Fn>
void for_parts(const executor& ex, std::size_t P, Fn& fn) {
  ex.for_chunks(
      P, [](void* ctx, std::size_t c) { (*static_cast<Fn*>(ctx))(c); }, &fn);
}

// One stable counting pass of items [0, n) into nb buckets: bucket(e) is
// item e's bucket, put(slot, e) stores item e at its sorted slot. P parts
// of the input; hist holds P * nb counters. On return bstart[b] is bucket
// b's first slot (bstart has nb + 1 entries, the last n).
template <class C, class Bucket, class Put>
void parallel_bucket_pass(const executor& ex, std::size_t P, std::size_t n, std::size_t nb, const Bucket& bucket,
                          const Put& put, scratch<C>& hist, std::vector<C>& bstart) {
  auto count = [&](std::size_t c) {
    C* h = hist.begin() + c * nb;
    for (std::size_t b = 0; b < nb; ++b) h[b] = C(0);
    const std::size_t e1 = part_begin(n, P, c + 1);
    for (std::size_t e = part_begin(n, P, c); e < e1; ++e) ++h[bucket(e)];
  };
  for_parts(ex, P, count);
  // Scan in bucket order, then part order, by P ranges of buckets.
  std::vector<C> range_total(P + 1, C(0));
  auto totals = [&](std::size_t r) {
    C s = 0;
    for (std::size_t b = part_begin(nb, P, r), b1 = part_begin(nb, P, r + 1); b < b1; ++b)
      for (std::size_t c = 0; c < P; ++c) s += hist[c * nb + b];
    range_total[r + 1] = s;
  };
  for_parts(ex, P, totals);
  for (std::size_t r = 1; r <= P; ++r) range_total[r] += range_total[r - 1];
  assign_fresh(bstart, nb + 1, C(0));
  auto starts = [&](std::size_t r) {
    C s = range_total[r];
    for (std::size_t b = part_begin(nb, P, r), b1 = part_begin(nb, P, r + 1); b < b1; ++b) {
      bstart[b] = s;
      for (std::size_t c = 0; c < P; ++c) {
        const C t = hist[c * nb + b];
        hist[c * nb + b] = s;
        s += t;
      }
    }
  };
  for_parts(ex, P, starts);
  bstart[nb] = static_cast<C>(n);
  auto scatter = [&](std::size_t c) {
    C* off = hist.begin() + c * nb;
    const std::size_t e1 = part_begin(n, P, c + 1);
    for (std::size_t e = part_begin(n, P, c); e < e1; ++e) put(static_cast<std::size_t>(off[bucket(e)]++), e);
  };
  for_parts(ex, P, scatter);
}

// Row ranges: P ranges of buckets, each holding about n / P entries
// (bucket b holds entries [bstart[b], bstart[b + 1])).
template <class C>
std::vector<std::size_t> balanced_ranges(const std::vector<C>& bstart, std::size_t P) {
  const std::size_t nb = bstart.size() - 1, n = static_cast<std::size_t>(bstart[nb]);
  std::vector<std::size_t> cut(P + 1, nb);
  cut[0] = 0;
  for (std::size_t r = 1; r < P; ++r) {
    const auto target = static_cast<C>(part_begin(n, P, r));
    // The first bucket in [0, nb) that starts at or past target (nb if none).
    std::size_t lo = 0, hi = nb;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (bstart[mid] < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    cut[r] = detail::max_of(cut[r - 1], lo);
  }
  return cut;
}

template <class T, class V, class I>
std::optional<T> pack_row_compressed_parallel(const executor& ex, const coordinate_list<V, I>& list,
                                              duplicates policy) {
  using LT = typename T::level_tuple;
  using L0 = std::tuple_element_t<0, LT>;
  using L1 = std::tuple_element_t<1, LT>;
  using C = std::make_unsigned_t<I>;  // n fits I, so every count and slot fits C
  const auto keys = row_compressed_layout<typename T::format_type>(list);
  if (!keys) return std::nullopt;
  const std::size_t d0 = keys->d0, d1 = keys->d1, n = list.size();
  const std::vector<I>& extents = keys->extents;
  const unsigned shift = keys->shift;
  const auto top = static_cast<std::size_t>(extents[0]);
  const std::uint64_t top_stride = std::uint64_t{1} << shift;
  const std::uint64_t mask = top_stride - 1;
  const std::size_t small = detail::max_of<std::size_t>(4 * n, std::size_t{1} << 16);
  if (top > small) return std::nullopt;  // the serial path's comparison sort
  // The serial path's choice: two counting passes (column, then row) when
  // rows are long on average, else one by row and a sort inside each row.
  const bool lsd = top_stride > 1 && top_stride <= small && n > 64 * top;
  // Parts: at most the executor's concurrency, and P histograms of the
  // widest pass hold at most 4n counters (one part: the serial path).
  const std::size_t widest = detail::max_of<std::size_t>(1, lsd ? detail::max_of<std::size_t>(top, top_stride) : top);
  const std::size_t P = detail::min_of(ex.concurrency(), detail::max_of<std::size_t>(1, 4 * n / widest));
  if (P < 2) return std::nullopt;

  const I* raw = list.raw_coords().data();
  auto key_of = [&](std::size_t e) {
    const I* x = raw + 2 * e;
    return (static_cast<std::uint64_t>(x[d0]) << shift) + static_cast<std::uint64_t>(x[d1]);
  };
  scratch<keyed_entry<V>> entries(n);
  scratch<C> hist(P * widest);
  std::vector<C> bstart;  // rows' first entries after the last pass
  std::vector<std::size_t> cut(P + 1, 0);  // parts' row ranges in the assembly
  std::vector<C> range_total(P + 1, C(0));  // parts' distinct entries, then their first slots
  bool counted = false;                     // range_total counted while sorting
  if (const unsigned low = row_group_bits(top, n); low > 0) {
    // By group of rows into entries (one parallel pass), then each group
    // by row through a buffer that fits in cache, each row sorted and its
    // distinct columns counted there, parts owning ranges of groups
    // (row_group_bits); hist's first `top` counters are the row cursors.
    std::vector<C> gstart;
    parallel_bucket_pass(
        ex, P, n, ((top - 1) >> low) + 1, [&](std::size_t e) { return static_cast<std::size_t>(raw[2 * e + d0]) >> low; },
        [&](std::size_t slot, std::size_t e) { entries[slot] = keyed_entry<V>{key_of(e), list.value(e)}; }, hist,
        gstart);
    assign_fresh(bstart, top + 1, C(0));
    const std::vector<std::size_t> gcut = balanced_ranges(gstart, P);
    for (std::size_t r = 0; r <= P; ++r) cut[r] = detail::min_of(top, gcut[r] << low);
    std::vector<std::size_t> group_max(P, 0);
    for (std::size_t r = 0; r < P; ++r)
      for (std::size_t g = gcut[r]; g < gcut[r + 1]; ++g)
        group_max[r] = detail::max_of(group_max[r], static_cast<std::size_t>(gstart[g + 1] - gstart[g]));
    std::vector<scratch<keyed_entry<V>>> locals, bufs;  // allocated here: nothing throws in a part
    locals.reserve(P), bufs.reserve(P);
    for (std::size_t r = 0; r < P; ++r) {
      locals.emplace_back(group_max[r]);
      bufs.emplace_back(top_stride > 1 && !lsd ? group_max[r] : 0);
    }
    auto by_row = [&](std::size_t r) {
      C* next = hist.begin();
      scratch<keyed_entry<V>>& local = locals[r];
      scratch<keyed_entry<V>>& buf = bufs[r];
      C d = 0;
      for (std::size_t g = gcut[r]; g < gcut[r + 1]; ++g) {
        const std::size_t r0 = g << low, r1 = detail::min_of(top, (g + 1) << low);
        const C s0 = gstart[g];
        keyed_entry<V>* first = entries.begin() + s0;
        keyed_entry<V>* last = entries.begin() + gstart[g + 1];
        for (std::size_t c = r0; c < r1; ++c) next[c] = C(0);
        for (const keyed_entry<V>* x = first; x != last; ++x) ++next[static_cast<std::size_t>(x->key >> shift)];
        C s = 0;
        for (std::size_t c = r0; c < r1; ++c) {
          const C t = next[c];
          bstart[c] = s0 + s;
          next[c] = s;
          s += t;
        }
        if (lsd) {  // long rows: radix passes over the group's keys
          const auto len = static_cast<std::size_t>(last - first);
          const keyed_entry<V>* sorted =
              radix_sort_keys(first, local.begin(), len, static_cast<std::uint64_t>(r0) << shift, low + shift);
          for (std::size_t i = 0; i < len; ++i) {
            d += static_cast<C>(i == 0 || sorted[i].key != sorted[i - 1].key);
            if (sorted != first) first[i] = sorted[i];
          }
          continue;
        }
        for (const keyed_entry<V>* x = first; x != last; ++x) local[next[static_cast<std::size_t>(x->key >> shift)]++] = *x;
        for (std::size_t c = r0, e0 = 0; c < r1; e0 = next[c++]) {
          const std::size_t e1 = next[c];
          if (top_stride > 1) stable_sort_by_key(local.begin() + e0, e1 - e0, buf.begin());
          for (std::size_t e = e0; e < e1; ++e) d += static_cast<C>(e == e0 || local[e].key != local[e - 1].key);
        }
        for (keyed_entry<V>* x = first; x != last; ++x) *x = local[static_cast<std::size_t>(x - first)];
      }
      range_total[r + 1] = d;
    };
    for_parts(ex, P, by_row);
    bstart[top] = static_cast<C>(n);
    counted = true;
  } else if (lsd) {
    scratch<keyed_entry<V>> tmp(n);
    std::vector<C> cstart;
    parallel_bucket_pass(
        ex, P, n, static_cast<std::size_t>(top_stride), [&](std::size_t e) { return static_cast<std::size_t>(raw[2 * e + d1]); },
        [&](std::size_t slot, std::size_t e) { tmp[slot] = keyed_entry<V>{key_of(e), list.value(e)}; }, hist, cstart);
    parallel_bucket_pass(
        ex, P, n, top, [&](std::size_t e) { return static_cast<std::size_t>(tmp[e].key >> shift); },
        [&](std::size_t slot, std::size_t e) { entries[slot] = tmp[e]; }, hist, bstart);
  } else {
    parallel_bucket_pass(
        ex, P, n, top, [&](std::size_t e) { return static_cast<std::size_t>(raw[2 * e + d0]); },
        [&](std::size_t slot, std::size_t e) { entries[slot] = keyed_entry<V>{key_of(e), list.value(e)}; }, hist,
        bstart);
  }
  auto row_len = [&](std::size_t b) { return static_cast<std::size_t>(bstart[b + 1] - bstart[b]); };
  // Distinct keys of entries [e0, e1), sorted.
  auto distinct = [&](std::size_t e0, std::size_t e1) {
    C s = 0;
    for (std::size_t e = e0; e < e1; ++e) s += static_cast<C>(e == e0 || entries[e].key != entries[e - 1].key);
    return s;
  };
  // Assemble: distinct columns per row range (counted while each row is
  // sorted, when rows need a sort), a scan, then the fill.
  if (!counted) {  // (the grouped pass counted them while sorting)
    cut = balanced_ranges(bstart, P);
    if (!lsd && top_stride > 1) {  // sort each row by column, stably
      std::vector<std::size_t> longest(P, 0);
      for (std::size_t r = 0; r < P; ++r)
        for (std::size_t b = cut[r]; b < cut[r + 1]; ++b) longest[r] = detail::max_of(longest[r], row_len(b));
      std::vector<scratch<keyed_entry<V>>> bufs;
      bufs.reserve(P);
      for (std::size_t r = 0; r < P; ++r) bufs.emplace_back(longest[r]);
      auto sort_rows = [&](std::size_t r) {
        C s = 0;
        for (std::size_t b = cut[r]; b < cut[r + 1]; ++b) {
          stable_sort_by_key(entries.begin() + bstart[b], row_len(b), bufs[r].begin());
          s += distinct(bstart[b], bstart[b + 1]);
        }
        range_total[r + 1] = s;
      };
      for_parts(ex, P, sort_rows);
    } else {
      auto count_distinct = [&](std::size_t r) { range_total[r + 1] = distinct(bstart[cut[r]], bstart[cut[r + 1]]); };
      for_parts(ex, P, count_distinct);
    }
  }
  L0 rows(level_shape<I>{extents[0], extents[1], 0, {}});
  L1 cols(level_shape<I>{extents[1], 0, 0, {}});
  const I parent_size = rows.size(I(1));
  for (std::size_t r = 1; r <= P; ++r) range_total[r] += range_total[r - 1];
  const auto total = static_cast<I>(range_total[P]);
  cols.append_init_sized(parent_size, total);
  std::vector<V> vals;
  assign_fresh(vals, static_cast<std::size_t>(total), V{});
  auto fill = [&](std::size_t r) {
    auto q = static_cast<I>(range_total[r]);
    ancestor_coord<I> anc_crd[2]{};
    for (std::size_t b = cut[r]; b < cut[r + 1]; ++b) {
      const std::size_t e0 = bstart[b], e1 = bstart[b + 1];
      if (e0 == e1) continue;
      anc_crd[0] = static_cast<I>(b);
      const I row_pos = rows.locate(I(0), ancestors<I>(anc_crd, 0), static_cast<I>(b)).pos;
      const I row_begin = q;
      for (std::size_t e = e0; e < e1; ++e) {
        const keyed_entry<V>& x = entries[e];
        if (e > e0 && x.key == entries[e - 1].key) {
          if (policy == duplicates::sum)
            vals[static_cast<std::size_t>(q) - 1] += x.value;
          else if (policy == duplicates::last)
            vals[static_cast<std::size_t>(q) - 1] = x.value;
          continue;
        }
        cols.append_coord_at(q, static_cast<I>(x.key & mask));
        vals[static_cast<std::size_t>(q)] = x.value;
        ++q;
      }
      cols.append_edges(row_pos, row_begin, q);
    }
  };
  for_parts(ex, P, fill);
  cols.append_finalize(parent_size, total);
  std::array<I, 2> dims{list.dims()[0], list.dims()[1]};
  return T(dims, LT(std::move(rows), std::move(cols)), std::move(vals));
}

}  // namespace detail

/// Packs an unsorted coordinate list into format F.
/// @throws shape_error if the list's order differs from F's, a coordinate
///         is out of range, or the data does not fit the format (e.g. two
///         entries under a branchless level); duplicate_error under
///         duplicates::error; overflow_error if a size does not fit I.
/// @post every component of `list` (combined by `policy`) is a stored
///       component of the result; nothing else is, except padding zeros.
///
/// Storage S (storage.hpp) must be growable: `pack<csr, owning<std::int64_t,
/// std::int32_t>>(list)` stores 64-bit positions and 32-bit coordinates
/// (each checked to fit).
namespace detail {
// The level of LT that remaps its blocked coordinate (permuted_dense), or
// the number of levels.
template <class LT>
constexpr std::size_t remap_level_index() {
  return []<std::size_t... K>(std::index_sequence<K...>) {
    std::size_t r = sizeof...(K);
    ((r = r == sizeof...(K) && remapping_level<std::tuple_element_t<K, LT>> ? K : r), ...);
    return r;
  }(std::make_index_sequence<std::tuple_size_v<LT>>{});
}

// SELL-C-sigma's row order: the rows of dimension d sorted by their number
// of entries (as listed, duplicates counted), longest first, within
// windows of `window` rows, ties in row order. perm[k] is the row at
// position k.
template <class V, class I>
std::vector<I> rows_by_length(const coordinate_list<V, I>& list, std::size_t d, std::size_t window) {
  const std::size_t m = static_cast<std::size_t>(list.dims()[d]), N = list.order();
  std::vector<std::size_t> count(m, 0);
  const auto& raw = list.raw_coords();
  for (std::size_t e = 0; e < list.size(); ++e) ++count[static_cast<std::size_t>(raw[e * N + d])];
  std::vector<I> perm(m), spare(m < window ? m : window);
  for (std::size_t r = 0; r < m; ++r) perm[r] = static_cast<I>(r);
  for (std::size_t w = 0; w < m; w += window) {
    const std::size_t len = m - w < window ? m - w : window;
    detail::stable_sort(perm.data() + w, spare.data(), len, [&](I a, I b) {
      return count[static_cast<std::size_t>(a)] > count[static_cast<std::size_t>(b)];
    });
  }
  return perm;
}

// The list with dimension d's coordinates r replaced by their position in
// perm (the inverse permutation), entries in the same order.
template <class V, class I>
coordinate_list<V, I> rows_renumbered(const coordinate_list<V, I>& list, std::size_t d, const std::vector<I>& perm) {
  std::vector<I> inv(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) inv[static_cast<std::size_t>(perm[k])] = static_cast<I>(k);
  const std::size_t N = list.order();
  std::vector<I> coords = list.raw_coords();
  for (std::size_t e = 0; e < list.size(); ++e) coords[e * N + d] = inv[static_cast<std::size_t>(coords[e * N + d])];
  return coordinate_list<V, I>(list.dims(), std::move(coords), list.raw_values());
}
}  // namespace detail

template <format_type F, storage_policy S = owning<>, class V, index_type I>
[[nodiscard]] tensor<V, F, I, S> pack(const coordinate_list<V, I>& list, duplicates policy = duplicates::sum) {
  static_assert(S::growable, "tensorlev::pack: the storage must be growable (owning, not borrowed): pack into an "
                             "owning tensor and view it");
  using T = tensor<V, F, I, S>;
  using LT = typename T::level_tuple;
  constexpr std::size_t L = F::num_levels;
  constexpr std::size_t N = F::order;
  static constexpr auto key_end = detail::key_ends<F, I>();
  static_assert([]<std::size_t... K>(std::index_sequence<K...>) {
    return (packable_level<std::tuple_element_t<K, LT>> && ...);
  }(std::make_index_sequence<L>{}),
                "tensorlev::pack: every level must be packable (constructible from level_shape and assembled by "
                "append, insert or implicitly)");
  const std::string_view label = detail::format_label<F>();
  if (list.order() != N)
    throw shape_error(detail::message() << "pack: the coordinate list has order " << list.order() << " but format "
                                        << label << " has order " << N);
  if constexpr (std::is_same_v<S, owning<>> && detail::row_compressed_format<F, LT>()) {
    if (policy != duplicates::error)  // the generic path names the duplicate
      if (auto t = detail::pack_row_compressed<T>(list, policy)) return std::move(*t);
  }
  static constexpr auto maps = F::maps;
  // SELL-C-sigma (a remapping level): the rows sorted by length within
  // windows, packed as rows 0, 1, ... in that order, the permutation kept
  // by the level.
  constexpr std::size_t remap_k = detail::remap_level_index<LT>();
  std::vector<I> row_perm;
  std::optional<coordinate_list<V, I>> renumbered;
  if constexpr (remap_k < L) {
    using Lr = std::tuple_element_t<remap_k, LT>;
    static_assert(requires(Lr& l, std::vector<I> p) {
      { Lr::window } -> std::convertible_to<std::size_t>;
      l.set_permutation(std::move(p));
    }, "tensorlev::pack: a remapping level needs `window` (rows sorted by length within windows of that many) and "
       "set_permutation(std::vector<I>) for pack to fill its permutation");
    constexpr std::size_t d = maps[remap_k].dim;
    row_perm = detail::rows_by_length(list, d, std::tuple_element_t<remap_k, LT>::window);
    renumbered.emplace(detail::rows_renumbered(list, d, row_perm));
    if (policy == duplicates::error) {  // named in the caller's coordinates
      std::array<level_map_info, N> plain{};
      for (std::size_t x = 0; x < N; ++x) plain[x] = level_map_info{map_kind::mode, x, x, 1};
      (void)detail::sort_entries(list, std::span<const level_map_info>(plain), policy, label);
    }
  }
  const coordinate_list<V, I>& src = renumbered ? *renumbered : list;
  auto sorted = detail::sort_entries(src, std::span<const level_map_info>(maps), policy, label);
  const std::size_t n = sorted.vals.size();

  auto opt_levels = []<std::size_t... K>(std::index_sequence<K...>) {
    return std::tuple<std::optional<std::tuple_element_t<K, LT>>...>{};
  }(std::make_index_sequence<L>{});
  std::vector<I> parent_starts;
  std::vector<I> parent_pos;
  if (n > 0) parent_starts.push_back(I(0)), parent_pos.push_back(I(0));
  I parent_size = 1;
  detail::level_nodes<I> nodes;
  std::vector<I> node_pos;

  auto build_level = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
    using Lk = std::tuple_element_t<K, LT>;
    detail::find_nodes<I>(sorted.first_diff, key_end[K], parent_starts, parent_pos, nodes);
    level_shape<I> shape;
    shape.extent = sorted.extents[K];
    shape.sibling_extent = K + 1 < L ? sorted.extents[K + 1 < L ? K + 1 : K] : I(0);
    shape.max_children = nodes.max_children;
    shape.offsets = std::span<const I>(sorted.offsets);
    std::vector<I> children;  // per parent position, for levels that insert (hashed sizes by it)
    if constexpr (insertable_level<Lk>) {
      children.assign(static_cast<std::size_t>(parent_size), I(0));
      for (const I q : nodes.parent) ++children[static_cast<std::size_t>(q)];
      shape.children = std::span<const I>(children);
    }
    Lk& lvl = std::get<K>(opt_levels).emplace(shape);
    if constexpr (remapping_level<Lk>) lvl.set_permutation(row_perm);
    auto up = [&]<std::size_t U>(std::integral_constant<std::size_t, U>) -> auto& {
      static_assert(U <= K, "tensorlev: a level can link only to levels above it");
      return *std::get<K - U>(opt_levels);
    };
    if constexpr (requires { lvl.link(up); }) lvl.link(up);
    parent_size = detail::assemble_level(lvl, K, sorted.lc, nodes, parent_size, node_pos, label);
    parent_starts.swap(nodes.starts);
    parent_pos.swap(node_pos);
  };
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (build_level(std::integral_constant<std::size_t, K>{}), ...);
  }(std::make_index_sequence<L>{});

  // Values: one slot per position of the last level, zero where padded.
  std::vector<V> values;
  bool identity = static_cast<std::size_t>(parent_size) == n;  // no padding, positions in entry order
  for (std::size_t s = 0; s < n && identity; ++s) identity = static_cast<std::size_t>(parent_pos[s]) == s;
  if (identity) {
    values = std::move(sorted.vals);
  } else {
    values.assign(static_cast<std::size_t>(parent_size), V{});
    for (std::size_t s = 0; s < n; ++s) values[static_cast<std::size_t>(parent_pos[s])] = sorted.vals[s];
  }
  std::array<I, N> dims{};
  for (std::size_t d = 0; d < N; ++d) dims[d] = list.dims()[d];
  return T(dims, detail::unwrap_levels<LT>(opt_levels, std::make_index_sequence<L>{}), std::move(values));
}

/// pack on an executor: the same result as `pack<F, S>(list, policy)`,
/// array for array. Formats whose first level is dense and whose second is
/// compressed (CSR, CSC and any levels with those capabilities; owning<>
/// storage) count, scan, scatter, sort and fill in parallel chunks on `ex`
/// (the output arrays' zero fill and the row bounds' scan stay on the
/// calling thread). The serial pack runs instead for every other format
/// and storage, duplicates::error, a serial executor, keys wider than 64
/// bits, more rows than max(4n, 2^16), and inputs too small for two chunks
/// (n entries, P = min(concurrency, 4n / buckets of the widest counting
/// pass) below 2: fewer entries than half the rows, or than half the
/// columns when rows are long).
///
///     auto A = pack<csr>(kokkos_executor<Kokkos::OpenMP>{}, list);
template <format_type F, storage_policy S = owning<>, class V, index_type I>
[[nodiscard]] tensor<V, F, I, S> pack(const executor& ex, const coordinate_list<V, I>& list,
                                      duplicates policy = duplicates::sum) {
  using T = tensor<V, F, I, S>;
  using LT = typename T::level_tuple;
  if constexpr (std::is_same_v<S, owning<>> && detail::row_compressed_format<F, LT>()) {
    if constexpr (parallel_appendable_level<std::tuple_element_t<1, LT>>) {
      if (ex.parallel() && policy != duplicates::error && list.order() == F::order)
        if (auto t = detail::pack_row_compressed_parallel<T>(ex, list, policy)) return std::move(*t);
    }
  }
  return pack<F, S>(list, policy);
}

/// What convert does with stored components whose value is zero.
enum class stored_zeros {
  keep,  ///< every stored component carries over (lossless; DIA's in-range zeros become explicit entries)
  drop   ///< only nonzero values carry over (what a user converting DIA or ELL to CSR usually wants)
};

namespace detail {
// The stored components of t as a list (only nonzero values under drop).
template <class V, class F, class I, class S>
coordinate_list<std::remove_const_t<V>, I> stored_list(const tensor<V, F, I, S>& t, stored_zeros zeros) {
  static_assert(S::host_accessible, "tensorlev::convert: the tensor's arrays must be readable on the host");
  using W = std::remove_const_t<V>;
  if (zeros == stored_zeros::keep) return to_coordinate_list(t);
  coordinate_list<W, I> list(std::vector<I>(t.dims().begin(), t.dims().end()));
  for_each_component(t, [&](const auto& x, const W& v) {
    if (v != W{}) list.push_back(std::span<const I>(x), v);
  });
  return list;
}
}  // namespace detail

/// Converts a tensor to format G (same value and index type) through its
/// stored components; stored duplicates (ELL padding) are summed.
/// From any host-accessible storage (a view included) into owning storage
/// S2 (owning<> by default).
template <format_type G, storage_policy S2 = owning<>, class V, class F, class I, class S>
[[nodiscard]] tensor<std::remove_const_t<V>, G, I, S2> convert(const tensor<V, F, I, S>& t,
                                                              stored_zeros zeros = stored_zeros::keep) {
  static_assert(G::order == F::order, "tensorlev::convert: the target format has a different order");
  return pack<G, S2>(detail::stored_list(t, zeros), duplicates::sum);
}

/// convert on an executor: the components are listed on the calling
/// thread, then packed by `pack<G, S2>(ex, ...)`.
template <format_type G, storage_policy S2 = owning<>, class V, class F, class I, class S>
[[nodiscard]] tensor<std::remove_const_t<V>, G, I, S2> convert(const executor& ex, const tensor<V, F, I, S>& t,
                                                              stored_zeros zeros = stored_zeros::keep) {
  static_assert(G::order == F::order, "tensorlev::convert: the target format has a different order");
  return pack<G, S2>(ex, detail::stored_list(t, zeros), duplicates::sum);
}

/// Packs the nonzeros of a dense row-major array (last dimension fastest)
/// into format F. @throws shape_error if data.size() != product of dims.
template <format_type F, class V, index_type I>
[[nodiscard]] tensor<V, F, I> from_dense(const std::array<I, F::order>& dims, std::span<const V> data) {
  if (data.size() != dense_size(dims))
    throw shape_error(detail::message() << "from_dense: the array has " << data.size()
                                        << " elements but the dimensions need " << dense_size(dims));
  coordinate_list<V, I> list(std::vector<I>(dims.begin(), dims.end()));
  std::array<I, F::order> x{};
  for (std::size_t idx = 0; idx < data.size(); ++idx) {
    if (data[idx] != V{}) list.push_back(std::span<const I>(x), data[idx]);
    for (std::size_t d = F::order; d-- > 0;) {
      if (++x[d] < dims[d]) break;
      x[d] = 0;
    }
  }
  return pack<F>(list);
}

}  // namespace tensorlev
