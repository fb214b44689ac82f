// The engine's fetch planning (dist/fetch_plan.hpp), no MPI: the indexed
// planner gives exactly the messages of a scan of every rank for every rank
// (the engine's planner until it was indexed, kept here as the reference),
// over generated grids, block distributions with replicas and empty tiles,
// previously fetched boxes that are cells of a grid or overlap, and needs
// inside a tile, inside a held box, across tiles, empty or whole; the
// broadcast test against the quadratic one; and the work per fetch at 4096
// ranks (Cannon's shift, SUMMA's broadcast, a transpose's pieces) bounded
// by the ranks and messages, where the scan takes p^2 box tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "fetch_plan_scan.hpp"
#include "tensorlev/dist/fetch_plan.hpp"

namespace {
using tensorlev::dist::detail::boxn;
using tensorlev::dist::detail::box_index;
using tensorlev::dist::detail::fetch_message;
using tensorlev::dist::detail::grid_coords;
using fetch_plan_scan::coords_of;
using fetch_plan_scan::scan_broadcast_axis;
using fetch_plan_scan::scan_plan;

bool same_messages(const std::vector<fetch_message>& a, const std::vector<fetch_message>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t q = 0; q < a.size(); ++q)
    if (a[q].src != b[q].src || a[q].dst != b[q].dst || !(a[q].box == b[q].box) || a[q].from_held != b[q].from_held)
      return false;
  return true;
}

std::string show(const std::vector<fetch_message>& msgs) {
  std::string s;
  for (const auto& m : msgs) {
    s += std::to_string(m.src) + "->" + std::to_string(m.dst) + (m.from_held ? " held [" : " [");
    for (std::size_t d = 0; d < m.box.n; ++d)
      s += std::to_string(m.box.lo[d]) + ":" + std::to_string(m.box.hi[d]) + (d + 1 < m.box.n ? "," : "");
    s += "] ";
  }
  return s;
}

boxn make_box(std::size_t n) { return boxn{n, {}, {}}; }

// A random sub-box of b (possibly empty, possibly all of it).
boxn sub_box(std::mt19937_64& rng, const boxn& b) {
  boxn s = b;
  for (std::size_t d = 0; d < b.n; ++d) {
    const long long w = b.hi[d] - b.lo[d];
    if (w <= 0) continue;
    const long long a = b.lo[d] + static_cast<long long>(rng() % static_cast<std::uint64_t>(w));
    const long long e = a + 1 + static_cast<long long>(rng() % static_cast<std::uint64_t>(b.hi[d] - a));
    s.lo[d] = rng() % 3 == 0 ? b.lo[d] : a;
    s.hi[d] = rng() % 3 == 0 ? b.hi[d] : e;
    if (s.hi[d] < s.lo[d]) s.hi[d] = s.lo[d];
  }
  return s;
}

struct config {
  std::vector<int> dims;
  std::size_t n = 0;
  std::vector<long long> extent;
  std::vector<boxn> tile, held;
  std::vector<bool> owner;
};

// A block distribution of an order-n tensor over the grid: some tensor
// dimensions cut along distinct grid axes at random points (empty blocks
// included), the others whole; grid axes no dimension uses replicate the
// tiles, owned by the ranks at one coordinate of them.
config random_config(std::mt19937_64& rng) {
  config c;
  const std::size_t order = 1 + rng() % 3;
  for (std::size_t m = 0; m < order; ++m) c.dims.push_back(1 + static_cast<int>(rng() % 4));
  c.n = rng() % 4;
  for (std::size_t d = 0; d < c.n; ++d) c.extent.push_back(static_cast<long long>(rng() % 8));
  std::vector<int> axis_of(c.n, -1);
  std::vector<bool> used(order, false);
  for (std::size_t d = 0; d < c.n; ++d) {
    const auto m = static_cast<std::size_t>(rng() % order);
    if (!used[m] && rng() % 4 != 0) {
      used[m] = true;
      axis_of[d] = static_cast<int>(m);
    }
  }
  std::vector<std::vector<long long>> cuts(c.n);
  for (std::size_t d = 0; d < c.n; ++d) {
    if (axis_of[d] < 0) continue;
    const int q = c.dims[static_cast<std::size_t>(axis_of[d])];
    auto& cu = cuts[d];
    cu.push_back(0);
    for (int k = 1; k < q; ++k) cu.push_back(static_cast<long long>(rng() % static_cast<std::uint64_t>(c.extent[d] + 1)));
    cu.push_back(c.extent[d]);
    std::sort(cu.begin(), cu.end());
  }
  std::vector<int> owner_at(order);
  for (std::size_t m = 0; m < order; ++m) owner_at[m] = static_cast<int>(rng() % static_cast<std::uint64_t>(c.dims[m]));
  int p = 1;
  for (int x : c.dims) p *= x;
  for (int r = 0; r < p; ++r) {
    const auto co = coords_of(c.dims, r);
    boxn b = make_box(c.n);
    for (std::size_t d = 0; d < c.n; ++d) {
      if (axis_of[d] < 0) {
        b.hi[d] = c.extent[d];
      } else {
        const auto k = static_cast<std::size_t>(co[static_cast<std::size_t>(axis_of[d])]);
        b.lo[d] = cuts[d][k];
        b.hi[d] = cuts[d][k + 1];
      }
    }
    c.tile.push_back(b);
    bool own = true;
    for (std::size_t m = 0; m < order; ++m)
      if (!used[m] && co[m] != owner_at[m]) own = false;
    c.owner.push_back(own);
  }
  return c;
}

boxn random_box(std::mt19937_64& rng, const config& c) {
  boxn b = make_box(c.n);
  for (std::size_t d = 0; d < c.n; ++d) {
    const auto e = static_cast<std::uint64_t>(c.extent[d] + 1);
    long long x = static_cast<long long>(rng() % e), y = static_cast<long long>(rng() % e);
    if (x > y) std::swap(x, y);
    b.lo[d] = x;
    b.hi[d] = y;
  }
  return b;
}

// Previously fetched boxes of several kinds: none; the tiles moved along
// (cells of one grid, like Cannon's); one panel for a row of ranks; sub-boxes
// of tiles (overlapping: the index scans); anything.
std::vector<boxn> random_held(std::mt19937_64& rng, const config& c) {
  const std::size_t p = c.tile.size();
  std::vector<boxn> h(p, make_box(c.n));
  switch (rng() % 5) {
    case 0: break;
    case 1: {
      const std::size_t shift = 1 + rng() % p;
      for (std::size_t r = 0; r < p; ++r) h[r] = c.tile[(r + shift) % p];
      break;
    }
    case 2: {
      const boxn panel = c.tile[rng() % p];
      for (std::size_t r = 0; r < p; ++r)
        if (rng() % 2) h[r] = panel;
      break;
    }
    case 3:
      for (std::size_t r = 0; r < p; ++r) h[r] = sub_box(rng, c.tile[rng() % p]);
      break;
    default:
      for (std::size_t r = 0; r < p; ++r) h[r] = random_box(rng, c);
  }
  return h;
}

std::vector<boxn> random_need(std::mt19937_64& rng, const config& c) {
  const std::size_t p = c.tile.size();
  std::vector<boxn> need;
  for (std::size_t r = 0; r < p; ++r) {
    switch (rng() % 7) {
      case 0: need.push_back(make_box(c.n)); break;
      case 1: need.push_back(c.tile[rng() % p]); break;
      case 2: need.push_back(sub_box(rng, c.tile[rng() % p])); break;
      case 3: need.push_back(sub_box(rng, c.held[rng() % p])); break;
      case 4: need.push_back(c.held[rng() % p]); break;
      case 5: {
        boxn all = make_box(c.n);
        for (std::size_t d = 0; d < c.n; ++d) all.hi[d] = c.extent[d];
        need.push_back(all);
        break;
      }
      default: need.push_back(random_box(rng, c));
    }
  }
  return need;
}

TEST(FetchPlan, SameMessagesAsTheScanOfEveryRank) {
  std::mt19937_64 rng(19);
  long long cases = 0, messages = 0, broadcasts = 0, from_held = 0, pieces = 0, scanned = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    config c = random_config(rng);
    c.held = random_held(rng, c);
    const grid_coords g(c.dims);
    const box_index tiles(c.tile), held(c.held);
    ASSERT_TRUE(tiles.cells()) << "a block distribution's tiles are cells of one grid";
    scanned += held.cells() ? 0 : 1;
    for (int round = 0; round < 3; ++round) {
      const std::vector<boxn> need = random_need(rng, c);
      const auto got = tensorlev::dist::detail::plan_fetch(g, tiles, c.owner, held, need);
      const auto want = scan_plan(c.dims, c.tile, c.owner, c.held, need);
      ASSERT_TRUE(same_messages(got, want)) << "trial " << trial << "\n got:  " << show(got) << "\n want: " << show(want);
      ++cases;
      messages += static_cast<long long>(got.size());
      for (const auto& m : got) {
        from_held += m.from_held ? 1 : 0;
        pieces += m.box == need[static_cast<std::size_t>(m.dst)] ? 0 : 1;
      }
      std::vector<fetch_message> others = got;
      std::erase_if(others, [](const fetch_message& m) { return m.src == m.dst; });
      const int axis = tensorlev::dist::detail::broadcast_axis(g, others);
      ASSERT_EQ(axis, scan_broadcast_axis(c.dims, others)) << show(others);
      broadcasts += axis >= 0 ? 1 : 0;
    }
  }
  // The generator reaches every path.
  EXPECT_GT(messages, 10000);
  EXPECT_GT(from_held, 1000);
  EXPECT_GT(pieces, 1000);
  EXPECT_GT(scanned, 500);
  EXPECT_GT(broadcasts, 20);
  RecordProperty("cases", static_cast<int>(cases));
}

// A q x q grid over an (n q) x (n q) matrix in n x n blocks: rank (i, j)'s tile is block (i, j).
config square(int q, long long n) {
  config c;
  c.dims = {q, q};
  c.n = 2;
  c.extent = {n * q, n * q};
  for (int r = 0; r < q * q; ++r) {
    boxn b = make_box(2);
    b.lo[0] = (r / q) * n;
    b.hi[0] = b.lo[0] + n;
    b.lo[1] = (r % q) * n;
    b.hi[1] = b.lo[1] + n;
    c.tile.push_back(b);
    c.owner.push_back(true);
  }
  c.held.assign(c.tile.size(), make_box(2));
  return c;
}

boxn block(int i, int j, long long n) {
  boxn b = make_box(2);
  b.lo = {i * n, j * n};
  b.hi = {(i + 1) * n, (j + 1) * n};
  return b;
}

// The work per fetch: at most a few probes of the indexes per needed box
// (plus one per piece), where the scan tests p boxes per needed box.
TEST(FetchPlan, WorkGrowsWithRanksAndMessagesNotTheirSquare) {
  for (const int q : {8, 32, 64}) {
    const int p = q * q;
    const long long n = 3;
    config c = square(q, n);
    const grid_coords g(c.dims);
    const box_index tiles(c.tile);
    // Cannon: rank (i, j) held A(i, i + j + t) and needs A(i, i + j + t + 1), held by its right neighbour.
    std::vector<boxn> need(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const int i = r / q, j = r % q;
      c.held[static_cast<std::size_t>(r)] = block(i, (i + j + 2) % q, n);
      need[static_cast<std::size_t>(r)] = block(i, (i + j + 3) % q, n);
    }
    {
      const box_index held(c.held);
      ASSERT_TRUE(held.cells());
      const auto msgs = tensorlev::dist::detail::plan_fetch(g, tiles, c.owner, held, need);
      ASSERT_EQ(msgs.size(), static_cast<std::size_t>(p));
      // From the right neighbour's panel, or from the rank's own tile where
      // the block is its own (row q - 3).
      for (const auto& m : msgs) {
        EXPECT_TRUE(m.src == m.dst ? !m.from_held : m.from_held && g.distance(m.src, m.dst) == 1)
            << m.src << " -> " << m.dst;
      }
      std::vector<fetch_message> moved = msgs;
      std::erase_if(moved, [](const fetch_message& m) { return m.src == m.dst; });
      EXPECT_EQ(tensorlev::dist::detail::broadcast_axis(g, moved), -1);
      EXPECT_LE(tiles.probes() + held.probes(), 2LL * p) << q;
      if (q <= 32) {
        EXPECT_TRUE(same_messages(msgs, scan_plan(c.dims, c.tile, c.owner, c.held, need)));
      }
    }
    // SUMMA's step t + 1: every rank of row i needs A(i, t + 1), held from step t: A(i, t).
    const long long before = tiles.probes();
    for (int r = 0; r < p; ++r) {
      c.held[static_cast<std::size_t>(r)] = block(r / q, 4 % q, n);
      need[static_cast<std::size_t>(r)] = block(r / q, 5 % q, n);
    }
    {
      const box_index held(c.held);
      auto msgs = tensorlev::dist::detail::plan_fetch(g, tiles, c.owner, held, need);
      EXPECT_LE(tiles.probes() - before + held.probes(), 2LL * p) << q;
      if (q <= 32) {
        EXPECT_TRUE(same_messages(msgs, scan_plan(c.dims, c.tile, c.owner, c.held, need)));
      }
      std::erase_if(msgs, [](const fetch_message& m) { return m.src == m.dst; });
      EXPECT_EQ(tensorlev::dist::detail::broadcast_axis(g, msgs), 1);
    }
    // A transpose: rank (i, j) needs block (j, i) in its four quarters'
    // columns shifted by half a block, so in pieces from two owners.
    const long long before2 = tiles.probes();
    for (int r = 0; r < p; ++r) {
      c.held[static_cast<std::size_t>(r)] = make_box(2);
      boxn b = block(r % q, r / q, n);
      b.lo[1] += 1;
      b.hi[1] = std::min(b.hi[1] + 1, n * q);
      need[static_cast<std::size_t>(r)] = b;
    }
    {
      const box_index held(c.held);
      const auto msgs = tensorlev::dist::detail::plan_fetch(g, tiles, c.owner, held, need);
      EXPECT_GT(msgs.size(), static_cast<std::size_t>(p));
      EXPECT_LE(tiles.probes() - before2 + held.probes(), 2LL * p + static_cast<long long>(msgs.size())) << q;
      if (q <= 32) {
        EXPECT_TRUE(same_messages(msgs, scan_plan(c.dims, c.tile, c.owner, c.held, need)));
      }
    }
  }
}

// Boxes that overlap without being equal: answered by a scan of the
// distinct boxes, the same holders as the cells' search would give.
TEST(FetchPlan, OverlappingBoxesAreScanned) {
  std::vector<boxn> boxes(5, make_box(1));
  boxes[0].hi[0] = 4;                    // [0, 4)
  boxes[1].lo[0] = 2, boxes[1].hi[0] = 6;  // [2, 6)
  boxes[2] = boxes[0];
  boxes[4].lo[0] = 5, boxes[4].hi[0] = 5;  // empty
  const box_index ix(boxes);
  EXPECT_FALSE(ix.cells());
  EXPECT_EQ(ix.distinct(), 2U);
  boxn b = make_box(1);
  b.lo[0] = 2;
  b.hi[0] = 4;
  std::vector<int> who;
  ix.holders(b, who);
  EXPECT_EQ(who, (std::vector<int>{0, 1, 2}));
  b.hi[0] = 5;
  who.clear();
  ix.holders(b, who);
  EXPECT_EQ(who, (std::vector<int>{1}));
  int met = 0;
  b.lo[0] = 4;
  ix.meeting(b, [&](const boxn&, std::span<const int> ranks) { met += static_cast<int>(ranks.size()); });
  EXPECT_EQ(met, 1);
}

// An order-0 tensor: one box, every rank holds it.
TEST(FetchPlan, ScalarsAreOneCell) {
  const std::vector<boxn> boxes(3, make_box(0));
  const box_index ix(boxes);
  EXPECT_TRUE(ix.cells());
  std::vector<int> who;
  ix.holders(make_box(0), who);
  EXPECT_EQ(who, (std::vector<int>{0, 1, 2}));
  int met = 0;
  ix.meeting(make_box(0), [&](const boxn&, std::span<const int> ranks) { met += static_cast<int>(ranks.size()); });
  EXPECT_EQ(met, 3);
}

}  // namespace
