#pragma once
// The engine's fetch planning before it was indexed (a scan of every rank
// for every rank: O(p^2) box tests per fetch), kept as the reference the
// indexed planner is checked against (tests/dist/fetch_plan.cpp) and timed
// against (bench/dist/planning.cpp).
#include <algorithm>
#include <vector>

#include "tensorlev/dist/fetch_plan.hpp"

namespace fetch_plan_scan {
using tensorlev::dist::detail::boxn;
using tensorlev::dist::detail::fetch_message;

inline std::vector<long long> coords_of(const std::vector<int>& dims, int r) {
  std::vector<long long> c(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    c[d] = r % dims[d];
    r /= dims[d];
  }
  return c;
}

inline long long ring_distance(const std::vector<int>& dims, int a, int b) {
  const auto ca = coords_of(dims, a), cb = coords_of(dims, b);
  long long dist = 0;
  for (std::size_t m = 0; m < dims.size(); ++m) {
    const long long diff = ca[m] > cb[m] ? ca[m] - cb[m] : cb[m] - ca[m];
    dist += std::min<long long>(diff, dims[m] - diff);
  }
  return dist;
}

inline int axis_between(const std::vector<int>& dims, int a, int b) {
  const auto ca = coords_of(dims, a), cb = coords_of(dims, b);
  int axis = -1;
  for (std::size_t m = 0; m < dims.size(); ++m)
    if (ca[m] != cb[m]) {
      if (axis >= 0) return -1;
      axis = static_cast<int>(m);
    }
  return axis;
}

// The scan the planner replaced: every rank against every rank.
inline std::vector<fetch_message> scan_plan(const std::vector<int>& dims, const std::vector<boxn>& tile,
                                            const std::vector<bool>& owner, const std::vector<boxn>& held,
                                            const std::vector<boxn>& need) {
  const int p = static_cast<int>(need.size());
  std::vector<fetch_message> msgs;
  for (int r = 0; r < p; ++r) {
    const boxn& b = need[static_cast<std::size_t>(r)];
    if (b.empty()) continue;
    int best = -1;
    bool best_held = false;
    long long best_d = 0;
    for (int s = 0; s < p; ++s) {
      const bool in_tile = tile[static_cast<std::size_t>(s)].contains(b);
      const bool in_held = held[static_cast<std::size_t>(s)].contains(b);
      if (!in_tile && !in_held) continue;
      const long long d = ring_distance(dims, s, r);
      const bool held_only = in_held && (!in_tile || d > 0);
      if (best < 0 || d < best_d || (d == best_d && held_only && !best_held)) {
        best = s;
        best_d = d;
        best_held = held_only;
      }
    }
    if (best >= 0) {
      msgs.push_back({best, r, b, best_held});
      continue;
    }
    for (int s = 0; s < p; ++s) {
      if (!owner[static_cast<std::size_t>(s)]) continue;
      const boxn piece = tile[static_cast<std::size_t>(s)].meet(b);
      if (!piece.empty()) msgs.push_back({s, r, piece, false});
    }
  }
  return msgs;
}

inline int scan_broadcast_axis(const std::vector<int>& dims, const std::vector<fetch_message>& msgs) {
  if (msgs.empty()) return -1;
  const int d = axis_between(dims, msgs.front().src, msgs.front().dst);
  if (d < 0) return -1;
  const int others = dims[static_cast<std::size_t>(d)] - 1;
  int p = 1;
  for (int x : dims) p *= x;
  std::vector<int> received(static_cast<std::size_t>(p), 0);
  for (const fetch_message& m : msgs) {
    if (axis_between(dims, m.src, m.dst) != d) return -1;
    if (++received[static_cast<std::size_t>(m.dst)] > 1) return -1;
    for (const fetch_message& o : msgs)
      if (o.dst == m.src) return -1;
    int same = 0;
    for (const fetch_message& o : msgs) same += o.src == m.src && o.box == m.box && o.from_held == m.from_held ? 1 : 0;
    if (same != others) return -1;
  }
  return d;
}

}  // namespace fetch_plan_scan
