// Redistribution between block layouts (dist/redistribute.hpp), property
// tests over random extents and block sizes in 0-4 dimensions: the peers of
// Eq. 28 are the blocks whose intervals overlap (by brute force), no
// target block meets more source blocks than Eq. 26 allows, the messages
// cover every element exactly once (their sizes sum to the elements: the
// bytes equal the overlaps), and moving a tensor's blocks by the plan
// gives the target layout's blocks sliced from the whole tensor, and back
// again the original blocks (round trip).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tensorlev/dist/redistribute.hpp"

namespace {
using namespace tensorlev::dist;
using tensorlev::dist::detail::boxn;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

TEST(Redistribute, PeersAreTheOverlappingBlocks) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 3000; ++trial) {
    const long long n = static_cast<long long>(rng() % 40), bx = 1 + static_cast<long long>(rng() % 12),
                    by = 1 + static_cast<long long>(rng() % 12);
    for (long long px = 0; px < ceil_div(n, bx); ++px) {
      const auto [first, last] = block_peers(px, bx, by, n);
      const long long lo = px * bx, hi = std::min(n, (px + 1) * bx);
      for (long long py = 0; py < ceil_div(n, by); ++py) {
        const bool meets = std::max(lo, py * by) < std::min(hi, (py + 1) * by);
        EXPECT_EQ(meets, py >= first && py < last) << "n " << n << " bx " << bx << " by " << by << " px " << px;
      }
    }
    // Eq. 26: a target block meets at most ceil((by - 1) / bx) + 1 source blocks.
    for (long long py = 0; py < ceil_div(n, by); ++py) {
      long long k = 0;
      for (long long px = 0; px < ceil_div(n, bx); ++px) {
        const auto [first, last] = block_peers(px, bx, by, n);
        k += py >= first && py < last;
      }
      EXPECT_LE(k, ceil_div(by - 1, bx) + 1);
    }
  }
}

// A layout's blocks as row-major arrays, sliced from the whole tensor.
std::vector<std::vector<long long>> blocks_of(const block_layout& l, const std::vector<long long>& whole) {
  const std::size_t n = l.extent.size();
  const boxn all = block_layout(l.extent, std::vector<long long>(n, 1LL << 40)).box_of(0);
  std::vector<std::vector<long long>> out(static_cast<std::size_t>(l.count()));
  for (long long b = 0; b < l.count(); ++b) {
    const boxn bb = l.box_of(b);
    out[static_cast<std::size_t>(b)].resize(static_cast<std::size_t>(bb.size()));
    detail::for_each_run(all, bb, bb, [&](long long f, long long t, long long run) {
      for (long long r = 0; r < run; ++r)
        out[static_cast<std::size_t>(b)][static_cast<std::size_t>(t + r)] = whole[static_cast<std::size_t>(f + r)];
    });
  }
  return out;
}

// Applies a plan: each message's box copied from its source block's array
// into its target block's array.
std::vector<std::vector<long long>> move(const block_layout& from, const block_layout& to,
                                         const std::vector<detail::box_message>& plan,
                                         const std::vector<std::vector<long long>>& src) {
  std::vector<std::vector<long long>> dst(static_cast<std::size_t>(to.count()));
  for (long long b = 0; b < to.count(); ++b)
    dst[static_cast<std::size_t>(b)].assign(static_cast<std::size_t>(to.box_of(b).size()), -1);
  for (const auto& m : plan) {
    const boxn sb = from.box_of(m.src), tb = to.box_of(m.dst);
    EXPECT_TRUE(sb.contains(m.box) && tb.contains(m.box));
    detail::for_each_run(sb, tb, m.box, [&](long long f, long long t, long long run) {
      for (long long r = 0; r < run; ++r) {
        auto& x = dst[static_cast<std::size_t>(m.dst)][static_cast<std::size_t>(t + r)];
        EXPECT_EQ(x, -1) << "an element written twice";
        x = src[static_cast<std::size_t>(m.src)][static_cast<std::size_t>(f + r)];
      }
    });
  }
  return dst;
}

TEST(Redistribute, PlansCoverEveryElementOnceAndRoundTrip) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t dims = rng() % 5;
    std::vector<long long> ext(dims), bx(dims), by(dims);
    long long elements = 1;
    for (std::size_t d = 0; d < dims; ++d) {
      ext[d] = static_cast<long long>(rng() % (dims > 2 ? 7 : 15));
      bx[d] = 1 + static_cast<long long>(rng() % 9);
      by[d] = 1 + static_cast<long long>(rng() % 9);
      elements *= ext[d];
    }
    const block_layout from(ext, bx), to(ext, by);
    const auto plan = plan_redistribution(from, to);
    long long moved = 0;
    for (const auto& m : plan) moved += m.box.size();
    EXPECT_EQ(moved, elements) << "trial " << trial;
    std::vector<long long> whole(static_cast<std::size_t>(elements));
    for (auto& x : whole) x = static_cast<long long>(rng() % 1000000);
    const auto src = blocks_of(from, whole);
    const auto dst = move(from, to, plan, src);
    EXPECT_EQ(dst, blocks_of(to, whole)) << "trial " << trial;
    EXPECT_EQ(move(to, from, plan_redistribution(to, from), dst), src) << "trial " << trial;
  }
}

TEST(Redistribute, PaperExampleAndErrors) {
  // t1(i,a), 10 x 10: from row blocks over 2 ranks to 2x2 tiles over 4.
  const block_layout two({10, 10}, {5, 10}), four({10, 10}, {5, 5});
  const auto plan = plan_redistribution(two, four);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].src, 0);
  EXPECT_EQ(plan[0].dst, 0);
  EXPECT_EQ(plan[1].dst, 1);
  EXPECT_EQ(plan[2].src, 1);
  EXPECT_EQ(plan[3].dst, 3);
  EXPECT_EQ(plan[3].box.lo[0], 5);
  EXPECT_EQ(plan[3].box.lo[1], 5);
  EXPECT_THROW(plan_redistribution(two, block_layout({10, 9}, {5, 5})), tensorlev::shape_error);
  EXPECT_THROW(block_layout({10}, {0}), tensorlev::shape_error);
  EXPECT_THROW(block_layout({-1}, {2}), tensorlev::shape_error);
  EXPECT_THROW(block_layout({10, 10}, {2}), tensorlev::shape_error);
}

}  // namespace
