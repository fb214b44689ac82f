#pragma once
/// @file detail/algorithm.hpp
/// The few algorithms the kernel's include path needs, without
/// <algorithm>: in C++20 that header brings the ranges algorithms, a tenth
/// of a small kernel's compile time (docs/design.md, "What a translation
/// unit includes"). Headers off that path use <algorithm>.

#include <cstddef>

namespace tensorlev::detail {

template <class T>
constexpr T min_of(T a, T b) {
  return b < a ? b : a;
}
template <class T>
constexpr T max_of(T a, T b) {
  return a < b ? b : a;
}

/// Stable sort of [a, a + n) by `less`, through `spare` (room for n
/// elements, contents ignored): insertion sort of runs of 16, then
/// bottom-up merges between the two arrays; the result ends in a.
template <class T, class Less>
void stable_sort(T* a, T* spare, std::size_t n, Less less) {
  constexpr std::size_t run = 16;
  for (std::size_t lo = 0; lo < n; lo += run) {
    const std::size_t hi = min_of(n, lo + run);
    for (std::size_t k = lo + 1; k < hi; ++k) {
      T v = static_cast<T&&>(a[k]);
      std::size_t q = k;
      for (; q > lo && less(v, a[q - 1]); --q) a[q] = static_cast<T&&>(a[q - 1]);
      a[q] = static_cast<T&&>(v);
    }
  }
  T* src = a;
  T* dst = spare;
  for (std::size_t width = run; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = min_of(n, lo + width), hi = min_of(n, lo + 2 * width);
      std::size_t i = lo, j = mid, k = lo;
      // Branch-free: which side moves is data, not control (random keys
      // would mispredict every other element).
      while (i < mid && j < hi) {
        const bool right = less(src[j], src[i]);
        dst[k++] = right ? src[j] : src[i];
        j += right ? 1 : 0;
        i += right ? 0 : 1;
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    T* t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    for (std::size_t k = 0; k < n; ++k) a[k] = static_cast<T&&>(src[k]);
}

namespace sort_impl {
template <class T>
void swap_values(T& x, T& y) {
  T t = static_cast<T&&>(x);
  x = static_cast<T&&>(y);
  y = static_cast<T&&>(t);
}
template <class T, class Less>
void insertion(T* a, std::size_t n, Less& less) {
  for (std::size_t k = 1; k < n; ++k) {
    T v = static_cast<T&&>(a[k]);
    std::size_t q = k;
    for (; q > 0 && less(v, a[q - 1]); --q) a[q] = static_cast<T&&>(a[q - 1]);
    a[q] = static_cast<T&&>(v);
  }
}
template <class T, class Less>
void sift_down(T* a, std::size_t root, std::size_t n, Less& less) {
  for (std::size_t c; (c = 2 * root + 1) < n; root = c) {
    if (c + 1 < n && less(a[c], a[c + 1])) ++c;
    if (!less(a[root], a[c])) return;
    swap_values(a[root], a[c]);
  }
}
template <class T, class Less>
void heap_sort(T* a, std::size_t n, Less& less) {
  for (std::size_t k = n / 2; k-- > 0;) sift_down(a, k, n, less);
  for (std::size_t end = n; end-- > 1;) {
    swap_values(a[0], a[end]);
    sift_down(a, 0, end, less);
  }
}
// Quicksort around the median of three, small ranges left to one
// insertion sort at the end, a heap sort where the depth passes
// 2 log2 n (introsort; what std::sort does).
template <class T, class Less>
void intro_loop(T* a, std::size_t n, int depth, Less& less) {
  constexpr std::size_t small = 16;
  while (n > small) {
    if (depth-- == 0) {
      heap_sort(a, n, less);
      return;
    }
    T* m = a + n / 2;
    T* z = a + n - 1;
    // Median of a[1], *m, *z into a[0] as the pivot.
    T* lo = a + 1;
    if (less(*lo, *m)) {
      if (less(*m, *z)) swap_values(*a, *m);
      else if (less(*lo, *z)) swap_values(*a, *z);
      else swap_values(*a, *lo);
    } else if (less(*lo, *z)) swap_values(*a, *lo);
    else if (less(*m, *z)) swap_values(*a, *z);
    else swap_values(*a, *m);
    // Hoare partition of [1, n) around a[0] (each side stops at it).
    std::size_t i = 1, j = n;
    for (;;) {
      while (less(a[i], a[0])) ++i;
      --j;
      while (less(a[0], a[j])) --j;
      if (i >= j) break;
      swap_values(a[i], a[j]);
      ++i;
    }
    // [0, i) <= pivot <= [i, n): recurse into the smaller side (the
    // stack stays within log2 n frames), loop on the larger.
    if (i < n - i) {
      intro_loop(a, i, depth, less);
      a += i;
      n -= i;
    } else {
      intro_loop(a + i, n - i, depth, less);
      n = i;
    }
  }
}
}  // namespace sort_impl

/// Unstable sort of [a, a + n) by `less` (introsort).
template <class T, class Less>
void sort(T* a, std::size_t n, Less less) {
  if (n < 2) return;
  int depth = 0;
  for (std::size_t m = n; m > 1; m >>= 1) depth += 2;
  sort_impl::intro_loop(a, n, depth, less);
  // The first 16 hold the least element (every partition left the smaller
  // values to its left): a guarded insertion there, then one that needs
  // no bound check.
  const std::size_t head = n < 16 ? n : 16;
  sort_impl::insertion(a, head, less);
  for (std::size_t k = head; k < n; ++k) {
    T v = static_cast<T&&>(a[k]);
    T* q = a + k;
    for (; less(v, q[-1]); --q) *q = static_cast<T&&>(q[-1]);
    *q = static_cast<T&&>(v);
  }
}
template <class T>
void sort(T* a, std::size_t n) {
  sort(a, n, [](const T& x, const T& y) { return x < y; });
}

template <class T>
void stable_sort(T* a, T* spare, std::size_t n) {
  stable_sort(a, spare, n, [](const T& x, const T& y) { return x < y; });
}

}  // namespace tensorlev::detail
