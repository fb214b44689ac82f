#pragma once
/// @file dist/box.hpp
/// Boxes of tensor coordinates and the messages that move them, shared by
/// the distributed engine (compute.hpp) and redistribution planning
/// (redistribute.hpp); no MPI.

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>

#include "notation.hpp"

namespace tensorlev::dist::detail {

// A box of up to max_dist_dims dimensions (lo inclusive, hi exclusive).
struct boxn {
  std::size_t n = 0;
  std::array<long long, max_dist_dims> lo{}, hi{};
  [[nodiscard]] bool empty() const {
    for (std::size_t d = 0; d < n; ++d)
      if (hi[d] <= lo[d]) return true;
    return false;
  }
  [[nodiscard]] long long size() const {
    if (empty()) return 0;
    long long s = 1;
    for (std::size_t d = 0; d < n; ++d) s *= hi[d] - lo[d];
    return s;
  }
  [[nodiscard]] bool contains(const boxn& b) const {
    if (b.empty()) return true;
    if (empty()) return false;
    for (std::size_t d = 0; d < n; ++d)
      if (b.lo[d] < lo[d] || b.hi[d] > hi[d]) return false;
    return true;
  }
  [[nodiscard]] boxn meet(const boxn& b) const {
    boxn m{n, {}, {}};
    for (std::size_t d = 0; d < n; ++d) {
      m.lo[d] = std::max(lo[d], b.lo[d]);
      m.hi[d] = std::min(hi[d], b.hi[d]);
    }
    return m;
  }
  friend bool operator==(const boxn& a, const boxn& b) {
    if (a.n != b.n) return false;
    for (std::size_t d = 0; d < a.n; ++d)
      if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d]) return false;
    return true;
  }
};

inline boxn to_boxn(const std::optional<block_box>& b, std::size_t n) {
  boxn r{n, {}, {}};
  if (b)
    for (std::size_t d = 0; d < n; ++d) {
      r.lo[d] = b->lo[d];
      r.hi[d] = b->hi[d];
    }
  return r;  // no box: all extents 0, empty
}

// Visits the row-major offsets of sub-box `part` in arrays over `from` and
// `to`, one run along the last dimension at a time: f(from_offset,
// to_offset, run_length).
template <class F>
void for_each_run(const boxn& from, const boxn& to, const boxn& part, F&& f) {
  if (part.empty()) return;
  const std::size_t n = part.n;
  if (n == 0) {
    f(0, 0, 1);
    return;
  }
  std::array<long long, max_dist_dims> x = part.lo;
  const long long run = part.hi[n - 1] - part.lo[n - 1];
  for (;;) {
    long long of = 0, ot = 0;
    for (std::size_t d = 0; d < n; ++d) {
      of = of * (from.hi[d] - from.lo[d]) + (x[d] - from.lo[d]);
      ot = ot * (to.hi[d] - to.lo[d]) + (x[d] - to.lo[d]);
    }
    f(of, ot, run);
    std::size_t d = n - 1;  // odometer over all but the last dimension
    for (;;) {
      if (d == 0) return;
      --d;
      if (++x[d] < part.hi[d]) break;
      x[d] = part.lo[d];
    }
  }
}

// Copies sub-box `part` of a row-major array over box `from` into a
// row-major array over box `to`.
template <class V>
void copy_box(const V* src, const boxn& from, V* dst, const boxn& to, const boxn& part) {
  for_each_run(from, to, part, [&](long long of, long long ot, long long run) { std::copy_n(src + of, run, dst + ot); });
}

// A box sent from rank (or block) src to dst.
struct box_message {
  int src;
  int dst;
  boxn box;
};

}  // namespace tensorlev::dist::detail
