#pragma once
// Shared by the libFuzzer harnesses (tests/fuzz/*.cpp): checks that trap on
// a wrong result, a reference model of pack (entries combined in input
// order), and the bounds that keep a harness from packing formats whose
// storage grows with the declared extents rather than with the input.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensorlev/tensorlev.hpp"

namespace tlfuzz {
using namespace tensorlev;

[[noreturn]] inline void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, expr);
  std::fflush(stderr);
  __builtin_trap();
}
/// A wrong result is a crash: libFuzzer saves the input.
#define TLF_CHECK(c) ((c) ? (void)0 : ::tlfuzz::check_failed(#c, __FILE__, __LINE__))

/// Bounds on what a harness packs when the size follows the extents rather
/// than the entries: a file of 40 bytes can declare 2^31 rows, which the
/// library handles correctly (or rejects with overflow_error) but which
/// would be a fuzzer out-of-memory or timeout, not a finding.
/// max_cells: most elements of an array indexed by one extent (CSR row
/// pointers, CSC column pointers, DIA's diagonal marks, ELL's row ranks).
inline constexpr long long max_cells = 1LL << 18;
/// max_stored: most stored positions of a format whose storage grows with
/// the product of extents (dense, DIA, ELL, hashed buckets, CSB's block
/// grid); every stored position is visited by the checks.
inline constexpr long long max_stored = 1LL << 14;

/// FNV-1a of the input: picks the variations (convert targets, duplicate
/// policy) so that plain text files serve as corpus entries.
inline std::uint64_t input_hash(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

template <class V>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};

/// Equal values, NaN equal to NaN (any payload); -0 equals +0.
template <class V>
bool same(const V& a, const V& b) {
  if constexpr (is_complex<V>::value) {
    return same(a.real(), b.real()) && same(a.imag(), b.imag());
  } else if constexpr (std::is_floating_point_v<V>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

/// Bit-for-bit equal except NaN payloads (what the writers promise).
template <class V>
bool identical(const V& a, const V& b) {
  if constexpr (is_complex<V>::value) {
    return identical(a.real(), b.real()) && identical(a.imag(), b.imag());
  } else if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
  } else {
    return a == b;
  }
}

template <class V, class I>
using entry_map = std::map<std::vector<I>, V>;

/// The list's entries combined as pack promises: duplicates in input order
/// by `policy` (duplicates::error is treated as first; `dup` tells whether
/// there were any).
template <class V, class I>
entry_map<V, I> combine(const coordinate_list<V, I>& list, duplicates policy, bool* dup = nullptr) {
  entry_map<V, I> m;
  bool any = false;
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto c = list.coords(e);
    auto [it, inserted] = m.try_emplace(std::vector<I>(c.begin(), c.end()), list.value(e));
    if (inserted) continue;
    any = true;
    if (policy == duplicates::sum)
      it->second += list.value(e);
    else if (policy == duplicates::last)
      it->second = list.value(e);
  }
  if (dup != nullptr) *dup = any;
  return m;
}

/// t stores every entry of `ref` with its value and nothing else but zeros
/// (padding, DIA's in-range zeros); stored duplicates (ELL padding) are
/// summed in storage order. With `zeros_dropped`, entries of ref whose value
/// is zero may be missing.
template <class T, class V, class I>
void check_stores(const T& t, const entry_map<V, I>& ref, bool zeros_dropped = false) {
  entry_map<V, I> got;  // the components at coordinates of ref
  std::vector<I> key;
  for_each_component(t, [&](const auto& x, const V& v) {
    for (std::size_t d = 0; d < x.size(); ++d) TLF_CHECK(x[d] >= 0 && x[d] < t.dims()[d]);
    key.assign(x.begin(), x.end());
    if (ref.find(key) == ref.end()) {
      TLF_CHECK(v == V{});
      return;
    }
    auto [it, inserted] = got.try_emplace(key, v);
    if (!inserted) it->second += v;
  });
  for (const auto& [k, v] : ref) {
    const auto it = got.find(k);
    if (it == got.end()) {
      TLF_CHECK(zeros_dropped && v == V{});
      continue;
    }
    TLF_CHECK(same(it->second, v));
  }
}

/// The same list with every value replaced by a small integer (the value
/// itself when it is one, else one derived from its position), so that a
/// kernel's sums are exact whatever order it adds in.
template <class V, class I>
coordinate_list<V, I> small_integer_values(const coordinate_list<V, I>& list) {
  auto small = [](auto v, std::size_t e) -> double {
    const double d = static_cast<double>(v);
    if (std::isfinite(d) && d == std::trunc(d) && std::abs(d) <= 64) return d;
    return static_cast<double>(static_cast<long long>(e % 13) - 6);
  };
  coordinate_list<V, I> out(list.dims());
  out.reserve(list.size());
  for (std::size_t e = 0; e < list.size(); ++e) {
    if constexpr (is_complex<V>::value)
      out.push_back(list.coords(e), V(small(list.value(e).real(), e), small(list.value(e).imag(), e + 5)));
    else
      out.push_back(list.coords(e), static_cast<V>(small(list.value(e), e)));
  }
  return out;
}

/// What the bounds look at, from the parsed list (order 2).
struct matrix_stats {
  long long rows = 0, cols = 0, entries = 0;
  long long diagonals = 0;    // distinct c - r
  long long longest_row = 0;  // distinct columns in the fullest row
};

template <class V, class I>
matrix_stats stats_of(const coordinate_list<V, I>& list) {
  matrix_stats s;
  s.rows = list.dims()[0];
  s.cols = list.dims()[1];
  s.entries = static_cast<long long>(list.size());
  std::set<long long> diag;
  std::map<long long, std::set<long long>> row;
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto c = list.coords(e);
    diag.insert(static_cast<long long>(c[1]) - c[0]);
    row[c[0]].insert(c[1]);
  }
  s.diagonals = static_cast<long long>(diag.size());
  for (const auto& [r, cs] : row) s.longest_row = std::max<long long>(s.longest_row, static_cast<long long>(cs.size()));
  return s;
}

/// a * b + c <= limit, without overflow (all non-negative).
inline bool fits_in(long long limit, long long a, long long b, long long c = 0) {
  if (c > limit) return false;
  if (a != 0 && b > (limit - c) / a) return false;
  return true;
}
/// Arrays of a + b elements indexed by extents fit max_cells (an extent
/// may be 2^63 - 1: no a + 1 here).
inline bool extent_fits(long long a, long long b = 0) { return a <= max_cells && b <= max_cells - a; }
/// a * b + c stored positions fit max_stored. An extent of zero counts as
/// one: a 0 x 10^10 dense matrix stores nothing but its traversal still
/// walks the 10^10 positions of its outer level.
inline bool stored_fits(long long a, long long b, long long c = 0) {
  return fits_in(max_stored, std::max(a, 1LL), std::max(b, 1LL), c);
}

}  // namespace tlfuzz
