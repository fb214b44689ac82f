#pragma once
/// @file dist/fetch_plan.hpp
/// Planning the distributed engine's messages without scanning every rank
/// for every rank (no MPI). Every rank plans every rank's messages (all
/// must agree on the list, and on whether it runs as broadcasts, shifts or
/// all-to-all traffic), so the cost that matters is per needed box: here a
/// box's holders are found by binary search over the tiles'
/// cut points, O(log p + holders), where a scan of all ranks made each
/// fetch O(p^2) on every rank (4096 ranks: 1.7e7 box tests a step).
///
/// - `grid_coords`: every rank's machine coordinates, computed once (the
///   planner measures ring distances between candidate ranks).
/// - `box_index`: every rank's box grouped by distinct box (one sort;
///   ranks ascending). When the distinct boxes are cells of one product
///   grid of cut points (a block distribution's tiles; one step's panels;
///   Cannon's shifted blocks) the box holding a point is found by a binary
///   search per dimension and one among the distinct boxes; otherwise
///   (boxes that overlap without being equal) by a scan of the distinct
///   boxes, never of the ranks.
/// - `plan_fetch`: for every rank's needed box, the nearest rank whose tile
///   or previously fetched box holds all of it (at equal distance a
///   previously fetched box wins: systolic shifts), else pieces from the
///   owners of the tiles it meets, in the order the full scan gave (the
///   same messages as before, checked against that scan in
///   tests/dist/fetch_plan.cpp).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "box.hpp"

namespace tensorlev::dist::detail {

struct box_hash {
  std::size_t operator()(const boxn& b) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull ^ b.n;
    const auto mix = [&](long long v) {
      h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    };
    for (std::size_t d = 0; d < b.n; ++d) {
      mix(b.lo[d]);
      mix(b.hi[d]);
    }
    return static_cast<std::size_t>(h);
  }
};

// Every rank's coordinates on a machine grid of the given dimensions
// (ranks in row-major coordinate order, as machine_grid numbers them).
class grid_coords {
 public:
  grid_coords() = default;
  explicit grid_coords(const std::vector<int>& dims) : dims_(dims) {
    for (int d : dims_) p_ *= d;
    coords_.resize(static_cast<std::size_t>(p_) * dims_.size());
    for (int r = 0; r < p_; ++r) {
      int x = r;
      for (std::size_t d = dims_.size(); d-- > 0;) {
        coords_[static_cast<std::size_t>(r) * dims_.size() + d] = x % dims_[d];
        x /= dims_[d];
      }
    }
  }
  [[nodiscard]] int size() const noexcept { return p_; }
  [[nodiscard]] const std::vector<int>& dims() const noexcept { return dims_; }
  [[nodiscard]] int coord(int r, std::size_t m) const noexcept {
    return coords_[static_cast<std::size_t>(r) * dims_.size() + m];
  }
  /// Ring distance between ranks a and b on the torus of the grid.
  [[nodiscard]] long long distance(int a, int b) const noexcept {
    long long dist = 0;
    for (std::size_t m = 0; m < dims_.size(); ++m) {
      const long long diff = std::llabs(static_cast<long long>(coord(a, m)) - coord(b, m));
      dist += std::min(diff, static_cast<long long>(dims_[m]) - diff);
    }
    return dist;
  }
  /// The axis along which a and b differ, if they differ in exactly one coordinate; else -1.
  [[nodiscard]] int single_axis(int a, int b) const noexcept {
    int axis = -1;
    for (std::size_t m = 0; m < dims_.size(); ++m)
      if (coord(a, m) != coord(b, m)) {
        if (axis >= 0) return -1;
        axis = static_cast<int>(m);
      }
    return axis;
  }

 private:
  std::vector<int> dims_;
  int p_ = 1;
  std::vector<int> coords_;
};

// Lexicographic order of boxes of the same dimensions (lo, then hi, by dimension).
inline int compare_boxes(const boxn& a, const boxn& b) noexcept {
  for (std::size_t d = 0; d < a.n; ++d) {
    if (a.lo[d] != b.lo[d]) return a.lo[d] < b.lo[d] ? -1 : 1;
    if (a.hi[d] != b.hi[d]) return a.hi[d] < b.hi[d] ? -1 : 1;
  }
  return 0;
}

// Every rank's box (an empty box: none), grouped by distinct box; see the
// file comment. Every box has the same number of dimensions (one tensor's).
// Built by one sort (no allocation per box: an index of 4096 distinct
// boxes is rebuilt per fetch); the probe counter makes an index
// single-threaded.
class box_index {
 public:
  box_index() = default;
  explicit box_index(const std::vector<boxn>& boxes) {
    for (std::size_t r = 0; r < boxes.size(); ++r)
      if (!boxes[r].empty()) {
        n_ = boxes[r].n;
        ranks_.push_back(static_cast<int>(r));
      }
    std::sort(ranks_.begin(), ranks_.end(), [&](int x, int y) {
      const int c = compare_boxes(boxes[static_cast<std::size_t>(x)], boxes[static_cast<std::size_t>(y)]);
      return c != 0 ? c < 0 : x < y;
    });
    for (std::size_t q = 0; q < ranks_.size(); ++q) {
      const boxn& b = boxes[static_cast<std::size_t>(ranks_[q])];
      if (groups_.empty() || !(groups_.back().box == b)) groups_.push_back({b, q, 0});
      ++groups_.back().count;
    }
    // Cells of one product grid: every distinct box spans exactly one
    // interval between consecutive cut points in every dimension.
    for (std::size_t d = 0; d < n_; ++d) {
      auto& c = cuts_[d];
      for (const group& g : groups_) {
        c.push_back(g.box.lo[d]);
        c.push_back(g.box.hi[d]);
      }
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
    }
    cells_ = true;
    for (const group& g : groups_)
      for (std::size_t d = 0; d < n_ && cells_; ++d) {
        const auto& c = cuts_[d];
        const auto k = static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), g.box.lo[d]) - c.begin());
        cells_ = k + 1 < c.size() && c[k + 1] == g.box.hi[d];
      }
    // A table from cell to distinct box, where the grid of cells has no
    // more than a few cells per box (block distributions, one step's
    // panels); else cells are found by binary search among the boxes.
    if (!cells_ || groups_.empty()) return;
    std::size_t cells = 1;
    const std::size_t cap = 4 * groups_.size() + 16;
    for (std::size_t d = 0; d < n_ && cells <= cap; ++d) cells *= cuts_[d].size() - 1;
    if (cells > cap) return;
    table_.assign(cells, -1);
    for (std::size_t q = 0; q < groups_.size(); ++q) {
      std::size_t at = 0;
      for (std::size_t d = 0; d < n_; ++d) {
        const auto& c = cuts_[d];
        at = at * (c.size() - 1) +
             static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), groups_[q].box.lo[d]) - c.begin());
      }
      table_[at] = static_cast<int>(q);
    }
  }

  /// The number of distinct nonempty boxes.
  [[nodiscard]] std::size_t distinct() const noexcept { return groups_.size(); }
  /// Whether the distinct boxes are cells of one product grid (queries by search).
  [[nodiscard]] bool cells() const noexcept { return cells_; }
  /// Boxes compared and cells looked up so far (the planner's work, for tests).
  [[nodiscard]] long long probes() const noexcept { return probes_; }

  /// Appends to `out` the ranks whose box contains the nonempty box b, ascending.
  void holders(const boxn& b, std::vector<int>& out) const {
    const std::size_t first = out.size();
    if (cells_) {
      std::array<std::size_t, max_dist_dims> k{};
      for (std::size_t d = 0; d < n_; ++d) {
        const auto& cu = cuts_[d];
        const auto x = std::upper_bound(cu.begin(), cu.end(), b.lo[d]) - cu.begin();
        if (x == 0 || static_cast<std::size_t>(x) >= cu.size()) return;
        k[d] = static_cast<std::size_t>(x - 1);
      }
      ++probes_;
      const group* g = cell(k);
      if (g != nullptr && g->box.contains(b)) append(*g, out);
      return;
    }
    for (const group& g : groups_) {
      ++probes_;
      if (g.box.contains(b)) append(g, out);
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }

  /// Calls f(box, ranks) for each distinct box that meets the nonempty box
  /// b, with the ranks holding it (ascending).
  template <class F>
  void meeting(const boxn& b, F&& f) const {
    if (cells_) {
      // The cells between b's corners, when there are no more of them than
      // distinct boxes (else the scan below is cheaper).
      std::array<std::size_t, max_dist_dims> k0{}, k1{};
      const auto cap = static_cast<long long>(groups_.size());
      long long combos = 1;  // saturates at cap + 1
      for (std::size_t d = 0; d < n_; ++d) {
        const auto& cu = cuts_[d];
        const auto lo = std::upper_bound(cu.begin(), cu.end(), b.lo[d]) - cu.begin();
        const auto hi = std::lower_bound(cu.begin(), cu.end(), b.hi[d]) - cu.begin();
        const std::ptrdiff_t first = std::max<std::ptrdiff_t>(lo - 1, 0);
        const std::ptrdiff_t last = std::min<std::ptrdiff_t>(hi, static_cast<std::ptrdiff_t>(cu.size()) - 1);
        if (last <= first) return;  // b lies outside every cell along d
        k0[d] = static_cast<std::size_t>(first);
        k1[d] = static_cast<std::size_t>(last);
        const auto span = static_cast<long long>(last - first);
        combos = combos > cap / span ? cap + 1 : combos * span;
      }
      if (combos <= cap) {
        std::array<std::size_t, max_dist_dims> k = k0;
        for (;;) {
          ++probes_;
          const group* g = cell(k);
          if (g != nullptr && !g->box.meet(b).empty()) f(g->box, ranks_of(*g));
          std::size_t d = n_;
          for (;;) {  // odometer, last dimension fastest
            if (d == 0) return;
            --d;
            if (++k[d] < k1[d]) break;
            k[d] = k0[d];
          }
        }
      }
    }
    for (const group& g : groups_) {
      ++probes_;
      if (!g.box.meet(b).empty()) f(g.box, ranks_of(g));
    }
  }

 private:
  struct group {
    boxn box;
    std::size_t first;  // its ranks: ranks_[first, first + count)
    std::size_t count;
  };
  // The distinct box that is cell k (interval k[d] between cuts along d), if any.
  [[nodiscard]] const group* cell(const std::array<std::size_t, max_dist_dims>& k) const {
    if (!table_.empty()) {
      std::size_t at = 0;
      for (std::size_t d = 0; d < n_; ++d) at = at * (cuts_[d].size() - 1) + k[d];
      return table_[at] < 0 ? nullptr : &groups_[static_cast<std::size_t>(table_[at])];
    }
    boxn c{n_, {}, {}};
    for (std::size_t d = 0; d < n_; ++d) {
      c.lo[d] = cuts_[d][k[d]];
      c.hi[d] = cuts_[d][k[d] + 1];
    }
    return find(c);
  }
  [[nodiscard]] const group* find(const boxn& c) const {
    const auto it = std::lower_bound(groups_.begin(), groups_.end(), c,
                                     [](const group& g, const boxn& x) { return compare_boxes(g.box, x) < 0; });
    return it != groups_.end() && it->box == c ? &*it : nullptr;
  }
  [[nodiscard]] std::span<const int> ranks_of(const group& g) const {
    return {ranks_.data() + g.first, g.count};
  }
  void append(const group& g, std::vector<int>& out) const {
    const auto r = ranks_of(g);
    out.insert(out.end(), r.begin(), r.end());
  }

  std::vector<int> ranks_;  // nonempty boxes' ranks, by box, then rank
  std::vector<group> groups_;
  std::size_t n_ = 0;
  bool cells_ = false;
  std::array<std::vector<long long>, max_dist_dims> cuts_;
  std::vector<int> table_;  // cell (row-major over the cut intervals) -> group, or -1
  mutable long long probes_ = 0;
};

// A box one rank sends another in a fetch.
struct fetch_message {
  int src;
  int dst;
  boxn box;
  bool from_held;  // from the sender's previous panel (else its tile)
};

/// The messages of one fetch (see the file comment), every rank's, in the
/// order of the receiving ranks: need[r] is rank r's box; tiles and held
/// index every rank's tile and previously fetched box; owner[s] whether
/// rank s owns its tile (replicas do not send pieces). Self messages
/// included.
inline std::vector<fetch_message> plan_fetch(const grid_coords& g, const box_index& tiles,
                                             const std::vector<bool>& owner, const box_index& held,
                                             const std::vector<boxn>& need) {
  std::vector<fetch_message> msgs;
  msgs.reserve(need.size());
  std::vector<int> in_tile, in_held;
  std::vector<std::pair<int, boxn>> pieces;
  for (std::size_t ur = 0; ur < need.size(); ++ur) {
    const boxn& b = need[ur];
    if (b.empty()) continue;
    const int r = static_cast<int>(ur);
    in_tile.clear();
    in_held.clear();
    tiles.holders(b, in_tile);
    held.holders(b, in_held);
    // Candidates in ascending rank order, the nearest first; at equal
    // distance a box held from the previous fetch beats a tile.
    int best = -1;
    bool best_held = false;
    long long best_d = 0;
    std::size_t a = 0, h = 0;
    while (a < in_tile.size() || h < in_held.size()) {
      const int s = h == in_held.size() || (a < in_tile.size() && in_tile[a] < in_held[h]) ? in_tile[a] : in_held[h];
      const bool t = a < in_tile.size() && in_tile[a] == s;
      const bool k = h < in_held.size() && in_held[h] == s;
      a += t ? 1 : 0;
      h += k ? 1 : 0;
      const long long d = g.distance(s, r);
      const bool held_only = k && (!t || d > 0);
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
    // Pieces from the owners of the tiles b meets, by sending rank.
    pieces.clear();
    tiles.meeting(b, [&](const boxn& box, std::span<const int> ranks) {
      const boxn piece = box.meet(b);
      for (int s : ranks)
        if (owner[static_cast<std::size_t>(s)]) pieces.emplace_back(s, piece);
    });
    std::sort(pieces.begin(), pieces.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [s, piece] : pieces) msgs.push_back({s, r, piece, false});
  }
  return msgs;
}

/// The axis d if the messages (none from a rank to itself) are broadcasts
/// along d: each (sender, box) reaches every other rank of the sender's
/// d-axis, no sender receives, and nothing else moves; else -1. O(messages).
inline int broadcast_axis(const grid_coords& g, const std::vector<fetch_message>& msgs) {
  if (msgs.empty()) return -1;
  const int d = g.single_axis(msgs.front().src, msgs.front().dst);
  if (d < 0) return -1;
  const int others = g.dims()[static_cast<std::size_t>(d)] - 1;
  std::vector<char> received(static_cast<std::size_t>(g.size()), 0);
  for (const fetch_message& m : msgs) {
    if (g.single_axis(m.src, m.dst) != d) return -1;
    if (received[static_cast<std::size_t>(m.dst)]++ != 0) return -1;
  }
  // A root only sends: with two ranks on the axis, a swap is a shift.
  for (const fetch_message& m : msgs)
    if (received[static_cast<std::size_t>(m.src)] != 0) return -1;
  struct key_hash {
    std::size_t operator()(const fetch_message& m) const noexcept {
      return box_hash{}(m.box) ^ (static_cast<std::size_t>(m.src) * 0x9e3779b1u) ^ (m.from_held ? 0x5bd1e995u : 0u);
    }
  };
  struct key_eq {
    bool operator()(const fetch_message& x, const fetch_message& y) const noexcept {
      return x.src == y.src && x.from_held == y.from_held && x.box == y.box;
    }
  };
  std::unordered_map<fetch_message, int, key_hash, key_eq> same;
  for (const fetch_message& m : msgs) ++same[m];
  for (const auto& [m, count] : same)
    if (count != others) return -1;
  return d;
}

}  // namespace tensorlev::dist::detail
