#pragma once
/// @file dist/redistribute.hpp
/// Moving a tensor between block distributions (Deinsum, seed 002, Sec. V:
/// Eqs. 10-13 and 26-28); planning only, no MPI.
///
/// A block layout puts coordinate i_d in block p_d = floor(i_d / B_d) at
/// offset i_d mod B_d (Eqs. 10-13), ceil(N_d / B_d) blocks along dimension
/// d, numbered row-major. Between two layouts of the same extents, source
/// block p^x meets target blocks p^y with
///     ceil((p^x B^x + 1) / B^y) - 1 <= p^y < ceil((p^x + 1) B^x / B^y)
/// along each dimension (Eq. 28, the last block clipped at the extent), so
/// the messages are found per source block in time proportional to their
/// number, two-sided (the sender and the receiver both know every
/// message's box), one message per overlapping pair of blocks (aggregated:
/// never an element at a time), and no coordinate list between them.

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "box.hpp"

namespace tensorlev::dist {

/// One tensor's block layout: its extents and block sizes (at least 1).
struct block_layout {
  std::vector<long long> extent;
  std::vector<long long> block;

  block_layout(std::vector<long long> n, std::vector<long long> b) : extent(std::move(n)), block(std::move(b)) {
    if (extent.size() != block.size() || extent.size() > max_dist_dims)
      throw shape_error("block_layout: " + std::to_string(extent.size()) + " extents and " +
                        std::to_string(block.size()) + " block sizes (at most " + std::to_string(max_dist_dims) +
                        " dimensions, one block size each)");
    for (std::size_t d = 0; d < extent.size(); ++d)
      if (extent[d] < 0 || block[d] < 1)
        throw shape_error("block_layout: dimension " + std::to_string(d) + " has extent " +
                          std::to_string(extent[d]) + " and block " + std::to_string(block[d]) +
                          " (an extent of at least 0, a block of at least 1)");
  }
  /// Blocks along dimension d: ceil(N_d / B_d).
  [[nodiscard]] long long blocks(std::size_t d) const { return (extent[d] + block[d] - 1) / block[d]; }
  /// Blocks in all.
  [[nodiscard]] long long count() const {
    long long c = 1;
    for (std::size_t d = 0; d < extent.size(); ++d) c *= blocks(d);
    return c;
  }
  /// The box of the block with row-major number id (empty where an
  /// extent is 0: there are no blocks).
  [[nodiscard]] detail::boxn box_of(long long id) const {
    detail::boxn b{extent.size(), {}, {}};
    for (std::size_t d = extent.size(); d-- > 0;) {
      const long long nb = blocks(d);
      const long long p = nb > 0 ? id % nb : 0;
      id = nb > 0 ? id / nb : 0;
      b.lo[d] = p * block[d];
      b.hi[d] = std::min(extent[d], (p + 1) * block[d]);
    }
    return b;
  }
};

/// Eq. 28 along one dimension of extent n: the target blocks [first, last)
/// of size by that source block px of size bx meets.
inline std::pair<long long, long long> block_peers(long long px, long long bx, long long by, long long n) {
  auto ceil_div = [](long long a, long long b) { return (a + b - 1) / b; };
  const long long first = ceil_div(px * bx + 1, by) - 1;
  const long long last = std::min(ceil_div((px + 1) * bx, by), ceil_div(n, by));
  return {first, std::max(first, last)};
}

/// The messages that move a tensor from layout `from` to layout `to` (the
/// same extents): for every pair of blocks that overlap, their overlap,
/// `src` the source block's number and `dst` the target's. Every element
/// is in exactly one message.
inline std::vector<detail::box_message> plan_redistribution(const block_layout& from, const block_layout& to) {
  if (from.extent != to.extent)
    throw shape_error("plan_redistribution: the layouts cover different extents");
  if (from.count() > (1LL << 31) - 1 || to.count() > (1LL << 31) - 1)
    throw shape_error("plan_redistribution: more than 2^31 - 1 blocks in a layout");
  const std::size_t n = from.extent.size();
  std::vector<detail::box_message> msgs;
  const long long sources = from.count();
  std::array<long long, max_dist_dims> first{}, last{}, q{};
  for (long long s = 0; s < sources; ++s) {
    const detail::boxn sb = from.box_of(s);
    if (sb.empty()) continue;
    bool any = true;
    for (std::size_t d = 0; d < n; ++d) {
      const auto r = block_peers(sb.lo[d] / from.block[d], from.block[d], to.block[d], from.extent[d]);
      first[d] = r.first, last[d] = r.second, q[d] = r.first;
      any = any && r.first < r.second;
    }
    if (!any) continue;
    for (bool more = true; more;) {  // odometer over the peers
      long long t = 0;
      for (std::size_t d = 0; d < n; ++d) t = t * to.blocks(d) + q[d];
      const detail::boxn m = sb.meet(to.box_of(t));
      if (!m.empty()) msgs.push_back({static_cast<int>(s), static_cast<int>(t), m});
      more = false;
      for (std::size_t d = n; d-- > 0;) {
        if (++q[d] < last[d]) {
          more = true;
          break;
        }
        q[d] = first[d];
      }
    }
  }
  return msgs;
}

}  // namespace tensorlev::dist
