#pragma once
// Internal helpers shared by the level headers. Not part of the public API.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <string_view>
#include <vector>

#if defined(__linux__) && __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif
#if defined(MADV_HUGEPAGE)
#define TENSORLEV_HAVE_MADVISE 1
#else
#define TENSORLEV_HAVE_MADVISE 0
#endif

#include "../detail/algorithm.hpp"
#include "../detail/message.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"
#include "../storage.hpp"

namespace tensorlev::detail {

// Large arrays written from scratch ask for transparent huge pages where
// the kernel gives them on request (Linux's "madvise" mode, Debian's
// default): one fault per 2 MiB instead of one per 4 KiB page. On the
// benchmark VM a fresh 4 KiB page costs ~19 us, so pack and sparse outputs
// of 10^7 entries spent most of their time faulting (bench/README.md,
// "bench_pack"). A hint only: where it fails, 4 KiB pages.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
inline constexpr std::size_t huge_array_min_bytes = std::size_t{4} << 20;  // at least one whole huge page inside

inline void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if TENSORLEV_HAVE_MADVISE
  if (bytes < huge_array_min_bytes) return;
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (first + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
  const std::uintptr_t end = (first + bytes) & ~(huge_page_bytes - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// Host heap arrays only (std::vector): other growable storages may hold
// memory that madvise should not touch (Kokkos UVM, pinned host memory).
template <class A>
inline constexpr bool is_std_vector = false;
template <class T, class Alloc>
inline constexpr bool is_std_vector<std::vector<T, Alloc>> = true;

// Empties a growable array and makes room for n elements; when that needs
// new memory and n elements are large, the memory is advised for huge
// pages before anything touches it.
template <class A>
void clear_reserve(A& a, std::size_t n) {
  using E = typename A::value_type;
  a.clear();
  if constexpr (is_std_vector<A>) {
    if (a.capacity() < n && n >= huge_array_min_bytes / sizeof(E)) {
      a = A();
      a.reserve(n);
      advise_huge_pages(static_cast<void*>(a.data()), a.capacity() * sizeof(E));
      return;
    }
  }
  a.reserve(n);
}

// a.resize(n), keeping a's elements; new memory for a large array is
// advised for huge pages before anything touches it.
template <class A>
void resize_fresh(A& a, std::size_t n) {
  using E = typename A::value_type;
  if constexpr (is_std_vector<A>) {
    if (a.capacity() < n && n >= huge_array_min_bytes / sizeof(E)) {
      A fresh;
      fresh.reserve(n);
      advise_huge_pages(static_cast<void*>(fresh.data()), fresh.capacity() * sizeof(E));
      fresh.assign(a.begin(), a.end());
      a.swap(fresh);
    }
  }
  a.resize(n);
}

// a.assign(n, v) through clear_reserve.
template <class A, class T>
void assign_fresh(A& a, std::size_t n, const T& v) {
  clear_reserve(a, n);
  a.assign(n, v);
}
/// Bytes held by a vector (its capacity, so slack would show).
template <class T>
[[nodiscard]] std::size_t vector_bytes(const std::vector<T>& v) noexcept {
  return v.capacity() * sizeof(T);
}
/// Writes x at index p of a growable array, growing it by one when
/// p == v.size() (append order; the common case, a push_back).
template <class A, class I, class T>
TENSORLEV_ALWAYS_INLINE void put_at(A& v, I p, const T& x) {
  const auto up = static_cast<std::size_t>(p);
  if (up == v.size()) [[likely]] {
    v.push_back(x);
  } else if (up < v.size()) {
    v[up] = x;
  } else {
    v.resize(up + 1);
    v[up] = x;
  }
}
/// Turns per-parent child counts pos[p+1] into segment bounds (Table 3's
/// append_finalize for pos arrays).
template <class A, class I>
void counts_to_bounds(A& pos, I parent_size) noexcept {
  const auto n = static_cast<std::size_t>(parent_size) + 1;
  for (std::size_t p = 1; p < n; ++p) pos[p] += pos[p - 1];
}
/// Lane `lane` of an array of R-tuples, indexed by tuple (for validation).
template <class Ptr>
struct strided {
  Ptr data;
  std::size_t lanes;
  std::size_t lane;
  auto operator[](std::size_t p) const { return data[p * lanes + lane]; }
};
/// Checks the coordinates crd[begin .. end) of one parent (`parent`, for
/// the message) of a level named `what` over extent n: each in [0, n),
/// increasing if `ordered` (strictly if `unique`), distinct if `unique`.
/// @throws shape_error naming the first violation.
template <class A, class I>
void validate_segment(const A& crd, std::size_t begin, std::size_t end, I n, bool ordered, bool unique,
                      const char* what, std::size_t parent) {
  // Appends "<what>: coordinate <c> at position <p> (parent position <parent>)" to m.
  auto where = [&](message&& m, std::size_t p) -> message& {
    return m << what << ": coordinate " << crd[p] << " at position " << p << " (parent position " << parent << ")";
  };
  for (std::size_t p = begin; p < end; ++p) {
    if (!std::in_range<I>(crd[p]) || static_cast<I>(crd[p]) < 0 || static_cast<I>(crd[p]) >= n)
      throw shape_error(where(message(), p) << " is outside [0, " << n << ")");
    if (ordered && p > begin && (unique ? !(crd[p - 1] < crd[p]) : crd[p] < crd[p - 1]))
      throw shape_error(where(message(), p) << (unique ? " does not follow " : " is below ") << crd[p - 1]
                                            << (unique ? " in increasing order (the level is ordered and unique)"
                                                       : " (the level is ordered)"));
  }
  if (unique && !ordered && end - begin > 1) {
    std::vector<std::pair<I, std::size_t>> seen;
    seen.reserve(end - begin);
    for (std::size_t p = begin; p < end; ++p) seen.emplace_back(static_cast<I>(crd[p]), p);
    detail::sort(seen.data(), seen.size());
    for (std::size_t k = 1; k < seen.size(); ++k)
      if (seen[k].first == seen[k - 1].first)
        throw shape_error(where(message(), seen[k].second) << " repeats the one at position " << seen[k - 1].second
                                                           << " (the level is unique)");
  }
}
/// Checks the segment bounds pos[0 .. parent_size] of a level named `what`:
/// parent_size + 1 entries, pos[0] == 0, non-decreasing, pos[parent_size]
/// == size (the coordinate array's length); each bound must fit I.
template <class A, class I>
void validate_bounds(const A& pos, I parent_size, std::size_t size, const char* what) {
  const auto np = static_cast<std::size_t>(parent_size) + 1;
  if (pos.size() != np)
    throw shape_error(message() << what << ": the position array has " << pos.size() << " entries, expected " << np
                                << " (one more than the " << parent_size << " parent positions)");
  if (pos[0] != 0) throw shape_error(message() << what << ": the position array starts at " << pos[0] << ", not 0");
  for (std::size_t p = 1; p < np; ++p)
    if (pos[p] < pos[p - 1])
      throw shape_error(message() << what << ": the position array decreases at entry " << p << " (" << pos[p - 1]
                                  << " then " << pos[p] << ")");
  if (!std::in_range<std::size_t>(pos[np - 1]) || static_cast<std::size_t>(pos[np - 1]) != size)
    throw shape_error(message() << what << ": the position array ends at " << pos[np - 1]
                                << ", but the coordinate array has " << size << " entries");
  if (!std::in_range<I>(pos[np - 1]))  // the message is built only on failure
    check_readable<I>(pos[np - 1], (message() << what << ": number of positions").c_str());
}

/// Checks that v (an index-type value entering a level: an extent, a
/// number of positions) fits stored type T: overflow_error naming `what`.
template <class T, class I>
void check_fits(I v, const char* what) {
  (void)to_stored<T>(v, what);
}

/// a * b, or overflow_error naming `what` if the product does not fit I.
template <class I>
[[nodiscard]] constexpr I checked_mul(I a, I b, const char* what) {
  I r{};
  if (__builtin_mul_overflow(a, b, &r))
    throw overflow_error(message() << what << ": " << a << " * " << b << " does not fit the index type ("
                                   << sizeof(I) * 8 << "-bit)");
  return r;
}
/// a + b, or overflow_error naming `what` if the sum does not fit I.
template <class I>
[[nodiscard]] constexpr I checked_add(I a, I b, const char* what) {
  I r{};
  if (__builtin_add_overflow(a, b, &r))
    throw overflow_error(message() << what << ": " << a << " + " << b << " does not fit the index type ("
                                   << sizeof(I) * 8 << "-bit)");
  return r;
}
/// Loop-nest printer text of a position-iterated level: children of parent
/// position a are positions pos[a] .. pos[a+1] (compressed) or a .. a+1
/// (singleton, `single`); `crd` is the coordinate expression's suffix.
/// Str is the text type (`std::string`, named by the caller: this header
/// does not include `<string>`).
template <class Str>
Str pos_level_code(level_fn f, std::string_view l, std::string_view a, bool single, std::string_view crd_suffix) {
  const Str L(l), A(a);
  switch (f) {
    case level_fn::pos_begin: return single ? A : L + "_pos[" + A + "]";
    case level_fn::pos_end: return single ? A + " + 1" : L + "_pos[" + A + " + 1]";
    case level_fn::pos_access: return L + "_crd[" + A + "]" + Str(crd_suffix);
    default: return L + ".?";
  }
}
}  // namespace tensorlev::detail
