#pragma once
/// @file dist/einsum_plan.hpp
/// Deinsum's contraction groups (seed 002, Sec. IV; no MPI here): the steps
/// of an einsum's contraction path partitioned into groups, each run on one
/// processor grid with no data moved inside it, and the bytes a run moves
/// by a model that shares no redistribution code with the engine.
///
///     auto plan = plan_einsum(spec, extents, P);      // groups, their grids
///     std::cout << plan.to_string(spec);              // "ja,ka,ijk->ia on i=2,j=2,k=2,a=1 (2 steps)"
///     auto bytes = einsum_traffic_model(plan, extents, sizeof(V));
///
/// - A group is a connected part of the path's tree of binary steps. Its
///   operands are inputs or the results of other groups; its iteration
///   space is the union of its steps' indices; its access sets are its
///   operands' and its result's (the intermediates inside it are never
///   communicated: seeds_002_004.md 1.3, the fused MTTKRP term).
/// - Any step may join its parent's group. Each rank then runs the group's
///   steps on its blocks in path order; an index summed by a step is summed
///   over the rank's block only, and the all-reduce over the grid
///   dimensions of every index summed in the group completes it (the group
///   is linear in each operand). A step is repeated on the ranks along the
///   grid dimensions of indices it lacks: MTTKRP's KRP (j,k,a) along i,
///   |jka| p_i products against the TDOT's 2 |ijka|; a later step of a TTV
///   chain along the j its child summed. A group is allowed when its FLOPs
///   on its grid, repetition included, are at most `max_redundancy` (1.25)
///   times its steps' FLOPs; the MTTKRP term of `ijk,ja,ka,al->il` fused
///   with the GEMM after it is not (1.30 at N = 10, P = 8), nor would it
///   move fewer words.
/// - Among the allowed partitions (every subset of the path's edges: at
///   most 2^(steps - 1), steps < 8), the plan takes the one whose groups,
///   each on its SOAP grid (all P ranks, or the most that factor over its
///   extents; the fewest per-rank words, ties to a grid within the
///   repetition bound, then to the fewest ranks sharing a block of the
///   result, then to the fewest FLOPs), hold and move the fewest words:
///   the per-rank sum of access sets times the ranks (SOAP's measure, what
///   inputs that start elsewhere would cost to bring) plus the words the
///   traffic model moves between and within groups; ties go to fewer
///   groups. `einsum_grid::first_index` instead splits each group's first
///   index only (the naive baseline).
///   `einsum_options{.fuse = false}` keeps one group per step (the
///   KRP-then-GEMM decomposition, for comparison).
/// - `einsum_traffic_model`: per group, the bytes sent to bring each
///   intermediate operand from its producer's blocks (one owner per block:
///   the rank at grid coordinate 0 along the producer's dimensions the
///   operand lacks) into the first replica of each consumer block (the
///   rank at coordinate 0 along the consumer's dimensions the operand
///   lacks): every entry has one owner and one first replica, so all of
///   the operand moves except what a rank that is both already holds
///   (O(P) boxes per operand; no use of Eq. 28; tests check it against
///   every (owner, replica) pair's overlap), plus the broadcast from
///   that replica to the k - 1 others ((k - 1) blocks, as a tree sends
///   them), plus the all-reduce of the partial results over the grid
///   dimensions of the summed indices, counted as a ring (reduce-scatter
///   and all-gather: 2 (k - 1) / k of the block per rank).

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "einsum.hpp"

namespace tensorlev::dist {

/// How a group's grid is chosen: SOAP's (`soap_grid`); the naive baseline
/// that splits only the group's first index (in the einsum's order) over
/// min(P, its extent) ranks, as a row-block distribution would; or `split`:
/// only the letters in einsum_options::split (SpMV with j split: "j"), the
/// factorization over them SOAP's, groups with none of them SOAP's.
enum class einsum_grid { soap, first_index, split };

struct einsum_options {
  bool fuse = true;             ///< false: one group per step of the path
  einsum_grid grid = einsum_grid::soap;
  std::string split = {};       ///< with einsum_grid::split: the letters whose indices the grids split
  double max_redundancy = 1.25; ///< a group's FLOPs on its grid, recomputation included, over its steps' FLOPs
  bool blas = true;             ///< einsum_distributed's local products by the BLAS where there is one
  bool gather = true;           ///< einsum_distributed gathers the result on rank 0 (false: it stays in blocks)
  bool bound = true;            ///< einsum_distributed reports each group's SOAP bound (on rank 0; costs a solve)
  bool fill_barrier = false;    ///< einsum_distributed waits for every rank's inputs before the first group
  /// false (the default): every replica of a dense input block is built in
  /// place and nothing moves; true: only the first replica (coordinate 0
  /// along the grid dimensions the input lacks) builds it and broadcasts it
  /// over the others, counted, as when inputs start distributed once.
  bool inputs_from_owners = false;
};

/// Path steps run together on one grid.
struct einsum_group {
  std::vector<std::size_t> steps;       ///< indices into the path's steps, in path order; the last is the root
  std::vector<std::uint32_t> operands;  ///< what it reads: an input (one bit) or an earlier group's result (its inputs)
  std::uint32_t inputs = 0;             ///< the einsum inputs below its root: names its result
  std::uint32_t indices = 0;            ///< its iteration space (mask over the einsum's indices)
  std::uint32_t result_indices = 0;     ///< the indices its result keeps
  contraction_group access;             ///< its operands' and its result's access sets
  std::array<long long, max_einsum_indices> grid{};  ///< ranks along each index (1 outside the group)
  long long ranks = 0;                  ///< the ranks its grid uses (the first ones of the communicator)
  long long words_per_rank = 0;         ///< the per-rank sum of access sets on that grid
  double path_flops = 0;                ///< its steps' FLOPs (optimal_path's count)
  double flops = 0;                     ///< what its ranks run together: a step is repeated along the
                                        ///< grid dimensions of indices it lacks

  /// The indices summed out inside the group.
  [[nodiscard]] std::uint32_t summed() const { return indices & ~result_indices; }
  /// SOAP's lower bound on the words the whole group moves with S =
  /// words_per_rank (0 for an empty iteration space).
  [[nodiscard]] double bound_words(std::span<const long long> extent) const {
    if (static_cast<std::size_t>(std::bit_width(indices)) > extent.size()) throw shape_error("einsum_group::bound_words: an extent per index is needed");
    double volume = 1;
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((indices >> v) & 1U) volume *= static_cast<double>(extent[v]);
    if (indices == 0 || volume <= 0 || words_per_rank <= 0) return 0;
    return soap_tiling(access, static_cast<double>(words_per_rank)).bound(volume);
  }
};

/// A path and its groups, in the order they run.
struct einsum_plan {
  contraction_path path;
  std::vector<einsum_group> groups;
  bool inputs_from_owners = false;  ///< einsum_options::inputs_from_owners: inputs broadcast from first replicas

  /// One line per group: "ijk,ja,ka->ia on i=2,j=2,k=2,a=1 (2 steps)", the
  /// operands in their own index order (an intermediate in index order),
  /// the result in the output's order for the last group.
  [[nodiscard]] std::string to_string(const einsum_spec& e) const {
    std::string s;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const einsum_group& gr = groups[g];
      for (std::size_t q = 0; q < gr.operands.size(); ++q) {
        const std::uint32_t u = gr.operands[q];
        if (q) s += ',';
        if (std::has_single_bit(u)) {
          const auto k = static_cast<std::size_t>(std::countr_zero(u));
          for (std::size_t d = 0; d < e.input_order[k]; ++d) s += e.letter[static_cast<std::size_t>(e.input[k][d])];
        } else {
          s += e.letters(result_of(u));
        }
      }
      s += "->";
      if (g + 1 == groups.size())
        for (std::size_t d = 0; d < e.output_order; ++d) s += e.letter[static_cast<std::size_t>(e.output[d])];
      else
        s += e.letters(gr.result_indices);
      s += " on ";
      bool first = true;
      for (std::size_t v = 0; v < e.nindices; ++v)
        if ((gr.indices >> v) & 1U) {
          s += (first ? "" : ",") + std::string(1, e.letter[v]) + "=" + std::to_string(gr.grid[v]);
          first = false;
        }
      s += " (" + std::to_string(gr.steps.size()) + (gr.steps.size() == 1 ? " step)\n" : " steps)\n");
    }
    return s;
  }
  /// The indices of the result of the group whose inputs are u.
  [[nodiscard]] std::uint32_t result_of(std::uint32_t u) const {
    for (const einsum_group& g : groups)
      if (g.inputs == u) return g.result_indices;
    throw error("einsum_plan: no group produces that operand");
  }
};

namespace detail {
// The per-rank sum of access sets on grid p (saturating at 2^62, as
// soap_grid's).
inline long long words_on(const contraction_group& g, std::span<const long long> extent,
                          const std::array<long long, max_einsum_indices>& p) {
  double w = 0;
  for (const std::uint32_t m : g.access) {
    double a = 1;
    for (std::size_t q = 0; q < max_einsum_indices; ++q)
      if ((m >> q) & 1U) a = std::min(0x1p62, a * static_cast<double>((extent[q] + p[q] - 1) / p[q]));
    w = std::min(0x1p62, w + a);
  }
  return static_cast<long long>(w);
}
// Grid coordinates along index v that hold entries: ceil(N / ceil(N / p)).
inline double busy_blocks(long long n, long long p) {
  const long long b = (n + p - 1) / p;
  return static_cast<double>((n + b - 1) / b);
}
// The grid of a group: all P ranks where P factors over its extents, else
// the most that do (at most the product of its extents); ties to the
// smallest tie(p) (see plan_einsum).
template <class Tie>
soap_grid_result group_grid(const contraction_group& g, std::span<const long long> extent, long long P, Tie&& tie,
                            long long& used) {
  soap_grid_result r;
  r.p.fill(1);
  if (g.indices == 0) {  // scalars only (",->"): one rank, a word per access set
    used = 1;
    r.words = static_cast<long long>(g.access.size());
    return r;
  }
  long long most = 1;  // no grid has more ranks than entries
  for (std::size_t v = 0; v < max_einsum_indices && most < P; ++v)
    if ((g.indices >> v) & 1U) most = most > P / extent[v] ? P : std::min(P, most * extent[v]);
  for (used = std::min(P, most); used >= 1; --used) {
    r = soap_grid_search(g, extent, used, tie);
    if (r.words >= 0) return r;
  }
  throw error("plan_einsum: no grid for a group");  // unreachable: one rank always factors
}
}  // namespace detail

namespace detail {
// Rank r's block [lo, hi) of the indices in `which` on group g's grid
// (ranks at or past g.ranks hold nothing).
inline std::pair<std::array<long long, max_einsum_indices>, std::array<long long, max_einsum_indices>>
group_block(const einsum_group& g, std::span<const long long> extent, long long r) {
  auto b = grid_block(extent, g.indices, g.grid, r < g.ranks ? r : 0);
  if (r >= g.ranks) b.second = b.first;
  return b;
}
// Rank r's grid coordinate along index v on group g's grid (row-major over
// the group's indices in index order, as grid_block numbers them).
inline long long group_coord(const einsum_group& g, long long r, std::size_t v) {
  for (std::size_t q = max_einsum_indices; q-- > 0;) {
    if (((g.indices >> q) & 1U) == 0) continue;
    if (q == v) return r % g.grid[q];
    r /= g.grid[q];
  }
  return 0;
}
}  // namespace detail

namespace detail {
// Products and sums of non-negative counts, saturating at 2^62 (huge
// extents give a saturated count, never an overflow).
inline long long sat_mul(long long a, long long b) {
  constexpr long long cap = 1LL << 62;
  return b != 0 && a > cap / b ? cap : std::min(cap, a * b);
}
inline long long sat_add(long long a, long long b) {
  constexpr long long cap = 1LL << 62;
  return a > cap - b ? cap : a + b;
}

// Bytes sent to bring group `from`'s result into group g: to each block's
// first replica (coordinate 0 along g's dimensions the operand lacks) from
// its owners (likewise on from's grid), all of it but what a rank that is
// both already holds (every entry has one owner and one first replica),
// then the first replicas' broadcasts to the k - 1 others. O(P).
inline long long moved_into(const einsum_group& g, const einsum_group& from, std::span<const long long> extent,
                            long long vb) {
  const std::uint32_t idx = from.result_indices;
  auto at_zero = [&](const einsum_group& h, long long r) {  // coordinate 0 along h's dimensions the operand lacks
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((((h.indices & ~idx) >> v) & 1U) != 0 && group_coord(h, r, v) != 0) return false;
    return true;
  };
  long long b = 0, k = 1;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if (((g.indices & ~idx) >> v) & 1U) k *= g.grid[v];
  if (k > 1)
    for (long long r = 0; r < g.ranks; ++r) {
      if (!at_zero(g, r)) continue;
      const auto [lo, hi] = group_block(g, extent, r);
      long long size = 1;
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if ((idx >> v) & 1U) size = sat_mul(size, hi[v] - lo[v]);
      b = sat_add(b, sat_mul(sat_mul(k - 1, size), vb));
    }
  long long volume = 1, kept = 0;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((idx >> v) & 1U) volume = sat_mul(volume, extent[v]);
  for (long long r = 0; r < std::min(g.ranks, from.ranks); ++r) {
    if (!at_zero(from, r) || !at_zero(g, r)) continue;
    const auto [plo, phi] = group_block(from, extent, r);
    const auto [clo, chi] = group_block(g, extent, r);
    long long overlap = 1;
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((idx >> v) & 1U) overlap = sat_mul(overlap, std::max(0LL, std::min(phi[v], chi[v]) - std::max(plo[v], clo[v])));
    kept = sat_add(kept, overlap);
  }
  return sat_add(b, sat_mul(std::max(0LL, volume - kept), vb));
}

// Bytes of broadcasting an input over indices `idx` from its first
// replicas to the k - 1 others of each block on g's grid.
inline long long broadcast_input(const einsum_group& g, std::uint32_t idx, std::span<const long long> extent,
                                 long long vb) {
  long long k = 1, volume = 1;
  for (std::size_t v = 0; v < max_einsum_indices; ++v) {
    if (((g.indices & ~idx) >> v) & 1U) k *= g.grid[v];
    if ((idx >> v) & 1U) volume = sat_mul(volume, extent[v]);
  }
  return g.ranks > 0 ? sat_mul(sat_mul(k - 1, volume), vb) : 0;
}

// Bytes of g's all-reduce over the grid dimensions of its summed indices:
// a ring, 2 (k - 1) / k of each rank's result block.
inline long long reduced_in(const einsum_group& g, std::span<const long long> extent, long long vb) {
  long long k = 1, b = 0;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((g.summed() >> v) & 1U) k *= g.grid[v];
  if (k > 1)
    for (long long r = 0; r < g.ranks; ++r) {
      const auto [lo, hi] = group_block(g, extent, r);
      long long size = 1;
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if ((g.result_indices >> v) & 1U) size = sat_mul(size, hi[v] - lo[v]);
      b = sat_add(b, sat_mul(sat_mul(2 * (k - 1), size), vb) / k);
    }
  return b;
}
}  // namespace detail

/// Bytes each group of the plan sends, all ranks together (see the file's
/// comment); values of `value_bytes` bytes each. Counts saturate at 2^62.
inline std::vector<long long> einsum_traffic_model(const std::vector<einsum_group>& groups,
                                                   std::span<const long long> extent, std::size_t value_bytes,
                                                   bool inputs_from_owners = false) {
  std::vector<long long> bytes;
  const auto vb = static_cast<long long>(value_bytes);
  for (const einsum_group& g : groups)
    if (static_cast<std::size_t>(std::bit_width(g.indices)) > extent.size())
      throw shape_error("einsum_traffic_model: an extent per index is needed");
  for (const einsum_group& g : groups) {
    long long b = 0;
    for (std::size_t q = 0; q < g.operands.size(); ++q) {
      const std::uint32_t u = g.operands[q];
      if (std::has_single_bit(u)) {  // an input: built in place, or broadcast from its first replicas
        if (inputs_from_owners) b = detail::sat_add(b, detail::broadcast_input(g, g.access.access[q], extent, vb));
        continue;
      }
      const einsum_group* from = nullptr;
      for (const einsum_group& p : groups)
        if (p.inputs == u) from = &p;
      if (from == nullptr) throw error("einsum_traffic_model: no group produces an operand");
      b = detail::sat_add(b, detail::moved_into(g, *from, extent, vb));
    }
    bytes.push_back(detail::sat_add(b, detail::reduced_in(g, extent, vb)));
  }
  return bytes;
}

/// The same for a plan's groups.
inline std::vector<long long> einsum_traffic_model(const einsum_plan& plan, std::span<const long long> extent,
                                                   std::size_t value_bytes) {
  return einsum_traffic_model(plan.groups, extent, value_bytes, plan.inputs_from_owners);
}

/// The groups for einsum e over P ranks (see the file's comment).
inline einsum_plan plan_einsum(const einsum_spec& e, std::span<const long long> extent, long long P,
                               einsum_options opt = {}) {
  if (P < 1) throw error("plan_einsum: the rank count must be at least 1, not " + std::to_string(P));
  einsum_plan plan;
  plan.inputs_from_owners = opt.inputs_from_owners;
  plan.path = optimal_path(e, extent);
  const std::vector<contraction_step>& st = plan.path.steps;
  const std::size_t n = st.size();
  if (n == 0) return plan;
  for (std::size_t v = 0; v < e.nindices; ++v)
    if (extent[v] < 1)
      throw shape_error("plan_einsum: index " + std::string(1, e.letter[v]) + " needs an extent of at least 1");
  std::uint32_t split_mask = 0;
  for (const char c : opt.split) {
    bool found = false;
    for (std::size_t v = 0; v < e.nindices; ++v)
      if (e.letter[v] == c) split_mask |= std::uint32_t{1} << v, found = true;
    if (!found) throw error(std::string("plan_einsum: the split names index ") + c + ", which the einsum does not have");
  }
  // parent[s]: the step that reads step s's result (none for the root).
  std::vector<std::size_t> parent(n, n);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t q = s + 1; q < n; ++q)
      if (st[q].left == (st[s].left | st[s].right) || st[q].right == (st[s].left | st[s].right)) parent[s] = q;
  auto span_of = [&](std::size_t s) { return st[s].left_indices | st[s].right_indices; };
  std::vector<std::size_t> edges;  // steps with a parent: each edge fused or cut
  for (std::size_t s = 0; s < n; ++s)
    if (opt.fuse && parent[s] < n) edges.push_back(s);
  // A group by its steps (mask), built once: a group recurs in many partitions.
  std::vector<std::pair<std::uint32_t, einsum_group>> memo;
  auto group_of = [&](std::uint32_t steps_mask, std::size_t r) -> einsum_group {
    for (const auto& [m, g] : memo)
      if (m == steps_mask) return g;
    einsum_group g;
    for (std::size_t s = 0; s < n; ++s)
      if ((steps_mask >> s) & 1U) g.steps.push_back(s);
    g.inputs = st[r].left | st[r].right;
    g.result_indices = st[r].result_indices;
    for (const std::size_t s : g.steps) {
      g.indices |= span_of(s);
      // An operand is read from outside when no step of the group made it.
      for (const auto& [side, idx] : {std::pair{st[s].left, st[s].left_indices}, {st[s].right, st[s].right_indices}}) {
        bool inside = false;
        for (const std::size_t c : g.steps) inside = inside || (st[c].left | st[c].right) == side;
        if (!inside) g.operands.push_back(side), g.access.access.push_back(idx);
      }
    }
    g.access.indices = g.indices;
    if (g.result_indices != 0) g.access.access.push_back(g.result_indices);
    // The group's FLOPs on grid p: a step runs again on every busy grid
    // coordinate along the indices it lacks.
    auto flops_on = [&](const std::array<long long, max_einsum_indices>& p) {
      double f = 0;
      for (const std::size_t s : g.steps) {
        double copies = 1;
        for (std::size_t v = 0; v < max_einsum_indices; ++v)
          if (((g.indices & ~span_of(s)) >> v) & 1U) copies *= detail::busy_blocks(extent[v], p[v]);
        f += st[s].flops * copies;
      }
      return f;
    };
    // Among grids holding the same words: one within the repetition bound,
    // then the fewest ranks sharing a block of the result (the all-reduce),
    // then the fewest FLOPs.
    for (const std::size_t s : g.steps) g.path_flops += st[s].flops;
    auto tie = [&](const std::array<long long, max_einsum_indices>& p) {
      const double f = flops_on(p);
      long long k = 1;
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if ((g.summed() >> v) & 1U) k *= p[v];
      return std::tuple{g.steps.size() > 1 && f > opt.max_redundancy * g.path_flops, k, f};
    };
    soap_grid_result sg;
    const std::uint32_t only = split_mask & g.indices;
    if (opt.grid == einsum_grid::soap || (opt.grid == einsum_grid::split && only == 0)) {
      sg = detail::group_grid(g.access, extent, P, tie, g.ranks);
    } else if (opt.grid == einsum_grid::split) {
      // SOAP's factorization over the split indices alone, then the words
      // with every index's block.
      contraction_group part = g.access;
      part.indices = only;
      sg = detail::group_grid(part, extent, P, tie, g.ranks);
      sg.words = detail::words_on(g.access, extent, sg.p);
    } else {  // the first index over as many ranks as it has entries
      sg.p.fill(1);
      const auto v = static_cast<std::size_t>(std::countr_zero(g.indices | (std::uint32_t{1} << 31)));
      g.ranks = v < max_einsum_indices ? std::min(P, extent[v]) : 1;
      if (v < max_einsum_indices) sg.p[v] = g.ranks;
      sg.words = detail::words_on(g.access, extent, sg.p);
    }
    g.grid = sg.p;
    g.words_per_rank = sg.words;
    g.flops = flops_on(g.grid);
    memo.emplace_back(steps_mask, g);
    return g;
  };
  // Words a group's all-reduce moves (from == nullptr) or that bringing
  // group `from`'s result into it moves, by their step sets.
  std::vector<std::pair<std::uint64_t, long long>> moved_memo;
  auto moved_cached = [&](const einsum_group& g, std::uint32_t gm, const einsum_group* from, std::uint32_t fm) {
    const std::uint64_t key = (std::uint64_t{gm} << 32) | fm;
    for (const auto& [k, w] : moved_memo)
      if (k == key) return w;
    const long long w = from == nullptr ? detail::reduced_in(g, extent, 1) : detail::moved_into(g, *from, extent, 1);
    moved_memo.emplace_back(key, w);
    return w;
  };
  double best_cost = -1;
  for (std::uint32_t pick = 0; pick < (std::uint32_t{1} << edges.size()); ++pick) {
    std::vector<bool> fused(n, false);
    for (std::size_t q = 0; q < edges.size(); ++q) fused[edges[q]] = ((pick >> q) & 1U) != 0;
    std::vector<std::uint32_t> members(n, 0);  // per root: its group's steps
    for (std::size_t s = 0; s < n; ++s) {
      std::size_t r = s;
      while (fused[r]) r = parent[r];
      members[r] |= std::uint32_t{1} << s;
    }
    std::vector<einsum_group> groups;
    std::vector<std::uint32_t> masks;  // each group's steps
    double cost = 0;
    bool allowed = true;
    for (std::size_t r = 0; r < n && allowed; ++r) {
      if (((members[r] >> r) & 1U) == 0) continue;
      einsum_group g = group_of(members[r], r);
      allowed = g.steps.size() == 1 || g.flops <= opt.max_redundancy * g.path_flops;
      cost += static_cast<double>(g.words_per_rank) * static_cast<double>(g.ranks);
      groups.push_back(std::move(g));
      masks.push_back(members[r]);
    }
    if (!allowed) continue;
    // Words moved: each (producer, consumer) pair's and each group's
    // all-reduce, computed once per pair of step sets.
    for (std::size_t c = 0; c < groups.size(); ++c) {
      cost += static_cast<double>(moved_cached(groups[c], masks[c], nullptr, 0));
      for (std::size_t q = 0; q < groups[c].operands.size(); ++q) {
        const std::uint32_t u = groups[c].operands[q];
        if (std::has_single_bit(u) && opt.inputs_from_owners)
          cost += static_cast<double>(detail::broadcast_input(groups[c], groups[c].access.access[q], extent, 1));
        for (std::size_t f = 0; f < groups.size() && !std::has_single_bit(u); ++f)
          if (groups[f].inputs == u) cost += static_cast<double>(moved_cached(groups[c], masks[c], &groups[f], masks[f]));
      }
    }
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && groups.size() < plan.groups.size())) {
      best_cost = cost;
      plan.groups = std::move(groups);
    }
  }
  return plan;
}

}  // namespace tensorlev::dist
