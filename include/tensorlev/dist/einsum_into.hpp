#pragma once
/// @file dist/einsum_into.hpp
/// Deinsum's plan (einsum_run.hpp: the contraction order, each group on its
/// SOAP grid, redistribution between groups) over tensors the caller
/// already holds distributed, in any block distribution of one grid:
///
///     namespace td = tensorlev::dist;
///     // X: order 3, A, B: matrices, M: the result, each in its own distribution on grid g.
///     auto r = td::einsum_into<"ijk,ja,ka->ia">(M, X, A, B);
///     // r.plan (the order, the groups), r.groups[q].grid, .bytes_sent, .bound_words
///
/// Each input moves once, from its tiles to the blocks the group that
/// reads it holds (the engine's fetch, `detail::fetcher`: from the
/// nearest rank that holds the block whole, else in pieces from the
/// owners), the einsum runs as `einsum_distributed` does, and the result
/// moves from the last group's blocks into `out`'s tiles (replicas
/// included); `out`'s previous values are replaced. Those two moves are
/// counted in the grid's `stats()`, the groups' own traffic in the
/// returned report. Indices of extent 0 give a result of zeros (an empty
/// sum) and move nothing.
///
/// Compile-time checks: the string (einsum<S>), one tensor per operand of
/// matching order, dense row-major tensors (dense_vector,
/// dense_row_major, dense_tensor<N>: sparse inputs go through
/// `einsum_distributed` with `einsum_sparse_input`), at least two inputs.
/// Run-time (shape_error, the same on every rank): every tensor on `out`'s
/// grid, one extent per index letter.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compute.hpp"
#include "einsum.hpp"
#include "einsum_plan.hpp"
#include "einsum_run.hpp"
#include "tensor.hpp"

namespace tensorlev::dist {

namespace detail {
// Rank r's block of operand k (its dimensions in the operand's order) on
// group g's grid; empty on ranks the group leaves idle.
inline boxn operand_block(const einsum_spec& e, std::size_t k, const einsum_group& g,
                          std::span<const long long> extent, long long r) {
  const auto [lo, hi] = group_block(g, extent, r);
  boxn b{e.input_order[k], {}, {}};
  for (std::size_t d = 0; d < e.input_order[k]; ++d) {
    const auto v = static_cast<std::size_t>(e.input[k][d]);
    b.lo[d] = lo[v];
    b.hi[d] = hi[v];
  }
  return b;
}
// einsum_distributed's fill over the blocks einsum_into fetched: entry x
// (global coordinates in operand q's order) of block q (row-major over
// box q). One type for every einsum of V, so einsum_distributed is
// instantiated once per value type.
template <class V>
struct fetched_blocks {
  const std::vector<V>* block;
  const boxn* box;
  V operator()(std::size_t q, const long long* x) const {
    const boxn& b = box[q];
    long long at = 0;
    for (std::size_t d = 0; d < b.n; ++d) at = at * (b.hi[d] - b.lo[d]) + (x[d] - b.lo[d]);
    return block[q][static_cast<std::size_t>(at)];
  }
};
// Whether rank r is the first replica on group g of an operand with
// indices `idx`: coordinate 0 along g's dimensions the operand lacks.
inline bool first_replica(const einsum_group& g, std::uint32_t idx, long long r) {
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((((g.indices & ~idx) >> v) & 1U) != 0 && group_coord(g, r, v) != 0) return false;
  return true;
}
}  // namespace detail

/// The einsum S of `in...` into `out` on their grid (see the file
/// comment), with `opt` for the plan (`gather` is ignored: the result goes
/// to `out`). Collective over the grid.
template <fixed_string S, class V, format_type FO, class DO, index_type I, format_type... FI, class... DI>
einsum_run_result<V> einsum_into(einsum_options opt, dist_tensor<V, FO, DO, I>& out,
                                 const dist_tensor<V, FI, DI, I>&... in) {
  constexpr einsum_spec e = einsum<S>::spec;
  constexpr std::size_t n = sizeof...(FI);
  static_assert(n == e.ninputs, "tensorlev::dist::einsum_into: one tensor per input of the einsum string");
  static_assert(n >= 2, "tensorlev::dist::einsum_into: at least two inputs (one input is a local reduction)");
  static_assert(FO::order == e.output_order && FO::order >= 1,
                "tensorlev::dist::einsum_into: the output's order must match the einsum's output indices (at least "
                "one)");
  static_assert([]<std::size_t... K>(std::index_sequence<K...>) {
    return ((FI::order == einsum<S>::spec.input_order[K]) && ...);
  }(std::make_index_sequence<n>{}),
                "tensorlev::dist::einsum_into: each input's order must match its indices in the einsum string");
  static_assert(detail::row_major_dense_v<FO> && (detail::row_major_dense_v<FI> && ...),
                "tensorlev::dist::einsum_into: every tensor must be dense row-major (dense_vector, dense_row_major, "
                "dense_tensor<N>); sparse inputs: einsum_distributed with einsum_sparse_input");
  using detail::boxn;
  const machine_grid& g = out.grid();
  const std::string where = "tensorlev::dist::einsum_into<\"" + std::string(S.view()) + "\">: ";
  // One grid, one extent per letter (maps are agreed across ranks, so
  // every rank finds the same error).
  std::array<long long, max_einsum_indices> extent{};
  extent.fill(-1);
  std::string why;
  const auto take = [&](std::size_t d, long long x, const char* what, std::size_t k, int v) {
    auto& have = extent[static_cast<std::size_t>(v)];
    if (have < 0) {
      have = x;
    } else if (have != x && why.empty()) {
      why = where + "index '" + std::string(1, e.letter[static_cast<std::size_t>(v)]) + "' has extent " +
            std::to_string(have) + " before, but " + std::to_string(x) + " in dimension " + std::to_string(d) +
            " of " + what + (k < n ? " " + std::to_string(k) + " (counted from 0)" : std::string());
    }
  };
  std::size_t k = 0;
  (
      [&](const auto& t) {
        if (why.empty() && !t.grid().same_as(g))
          why = where + "input " + std::to_string(k) + " is on another grid than the output (" +
                t.grid().shape_string() + " against " + g.shape_string() +
                (t.grid().dims() == g.dims() ? ": the same extents over other processes or another rank order" : "") +
                ")";
        for (std::size_t d = 0; d < e.input_order[k]; ++d) take(d, t.dims()[d], "input", k, e.input[k][d]);
        ++k;
      }(in),
      ...);
  for (std::size_t d = 0; d < e.output_order; ++d) take(d, out.dims()[d], "the output", n, e.output[d]);
  if (!why.empty()) throw shape_error(why);
  std::vector<long long> ext(extent.begin(), extent.begin() + static_cast<std::ptrdiff_t>(e.nindices));
  einsum_run_result<V> res;
  const auto values = out.local().values();
  if (std::find(ext.begin(), ext.end(), 0) != ext.end()) {  // an empty sum, or an empty output
    std::fill(values.begin(), values.end(), V{});
    return res;
  }
  opt.gather = false;
  const einsum_plan plan = plan_einsum(e, ext, g.size(), opt);
  const int p = g.size();
  const int me = g.rank();
  // Each input's block where the group that reads it holds it (only the
  // first replicas' with inputs_from_owners: they broadcast it).
  std::array<std::vector<V>, n> block;
  std::array<boxn, n> box;
  k = 0;
  (
      [&](const auto& t) {
        const einsum_group* reader = nullptr;
        for (const einsum_group& grp : plan.groups)
          for (const std::uint32_t u : grp.operands)
            if (u == (std::uint32_t{1} << k)) reader = &grp;
        std::vector<boxn> need;
        for (int r = 0; r < p; ++r) {
          const bool builds = !opt.inputs_from_owners || detail::first_replica(*reader, e.input_mask(k), r);
          need.push_back(builds ? detail::operand_block(e, k, *reader, ext, r) : boxn{e.input_order[k], {}, {}});
        }
        detail::fetcher<V> f(g, t);  // counted in out's grid's stats() (t's is the same or an equal one)
        block[k] = f.fetch(need);
        box[k] = need[static_cast<std::size_t>(me)];
        ++k;
      }(in),
      ...);
  res = einsum_distributed<V>(g.comm(), e, ext, detail::fetched_blocks<V>{block.data(), box.data()}, opt);
  // The run planned what this call planned (the same function of the same
  // arguments on every rank): the fetched blocks are the ones it read.
  bool same = res.plan.groups.size() == plan.groups.size();
  for (std::size_t q = 0; same && q < plan.groups.size(); ++q)
    same = res.plan.groups[q].grid == plan.groups[q].grid && res.plan.groups[q].ranks == plan.groups[q].ranks &&
           res.plan.groups[q].operands == plan.groups[q].operands;
  if (!same) throw error(where + "internal: the einsum ran another plan than the one its inputs were fetched for");
  // The result from the last group's blocks (every rank of the group holds
  // its block; the first replicas own them) into out's tiles.
  const einsum_group& last = plan.groups.back();
  std::vector<boxn> held, need;
  std::vector<bool> owner;
  for (int r = 0; r < p; ++r) {
    const auto [lo, hi] = detail::group_block(last, ext, r);
    boxn b{e.output_order, {}, {}};
    for (std::size_t d = 0; d < e.output_order; ++d) {
      b.lo[d] = lo[static_cast<std::size_t>(e.output[d])];
      b.hi[d] = hi[static_cast<std::size_t>(e.output[d])];
    }
    held.push_back(b);
    owner.push_back(r < last.ranks && detail::first_replica(last, e.output_mask(), r));
    need.push_back(detail::to_boxn(out.map().box_of(g.coords_of(r)), e.output_order));
  }
  const boxn& mine = held[static_cast<std::size_t>(me)];
  if (static_cast<long long>(res.local.data.size()) != mine.size())
    throw error(where + "internal: the result's block on rank " + std::to_string(me) + " has " +
                std::to_string(res.local.data.size()) + " values, its box " + std::to_string(mine.size()));
  detail::fetcher<V> f(g, std::move(held), std::move(owner), std::span<const V>(res.local.data));
  const std::vector<V>& mine_out = f.fetch(need);
  std::copy(mine_out.begin(), mine_out.end(), values.begin());
  return res;
}

/// einsum_into with the default options (`einsum_options{}`).
template <fixed_string S, class V, format_type FO, class DO, index_type I, format_type... FI, class... DI>
einsum_run_result<V> einsum_into(dist_tensor<V, FO, DO, I>& out, const dist_tensor<V, FI, DI, I>&... in) {
  return einsum_into<S>(einsum_options{}, out, in...);
}

}  // namespace tensorlev::dist
