#pragma once
/// @file dist/einsum_run.hpp
/// An einsum over MPI ranks as Deinsum runs it (seed 002, Sec. II, IV and
/// V; link `tensorlev::dist`): the FLOP-optimal order of binary
/// contractions (`optimal_path`) partitioned into groups (`plan_einsum`:
/// MTTKRP's KRP and TDOT run as one group), each group on its own Cartesian
/// grid of all the ranks (`soap_grid`: one grid dimension per index of the
/// group), every operand in blocks of ceil(N / p) along its indices and
/// replicated over the grid dimensions it does not index, the group's steps
/// contracted locally on each rank's blocks (`contract_gemm`: transposed
/// into matrix products, BLAS gemm with TENSORLEV_DIST_BLAS for float,
/// double and their complex; nothing moves inside a group), the partial sums combined by `MPI_Allreduce` over the
/// ranks that differ only in the summed indices, and each group's result
/// moved from its producer's blocks to its consumer's by the block-overlap
/// messages of Eq. 28 (`plan_redistribution`), two-sided, from one owner
/// per block to the consumer's first replica, which broadcasts it over the
/// sub-grid of the dimensions the result does not index (`MPI_Cart_sub`). Where P does not factor over a group's
/// extents, the group runs on the most ranks that do (the first ones), the
/// others idle. Inputs are never moved: each rank fills its own blocks from
/// `fill(operand, coordinates)`. The bytes counted per group equal
/// `einsum_traffic_model`'s (a test).
///
///     auto r = tensorlev::dist::einsum_distributed<std::complex<double>>(
///         MPI_COMM_WORLD, parse_einsum_checked("ijk,ja,ka->ia"), extents,
///         [](std::size_t operand, const long long* x) { ... });
///     // r.plan, r.groups[g].grid, .bytes_sent, .bound_words; r.output on rank 0
///
/// Operands dense (complex or real), or sparse inputs given as coordinate
/// lists (`einsum_sparse_input`: each rank keeps the nonzeros inside its
/// blocks; a step with a sparse input runs `contract_sparse`; results are
/// dense); at least two inputs; extents of at least 1.

#include <algorithm>
#include <bit>
#include <chrono>
#include <complex>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../coordinate_list.hpp"
#include "compute.hpp"
#include "einsum.hpp"
#include "einsum_leaf.hpp"
#include "einsum_plan.hpp"
#include "redistribute.hpp"

namespace tensorlev::dist {

/// One group's grid and traffic.
struct einsum_group_report {
  std::uint32_t indices = 0;               ///< the group's indices (mask)
  std::vector<long long> grid;             ///< ranks along each of them, in index order
  std::size_t steps = 0;                   ///< path steps run in the group
  long long words_per_rank = 0;            ///< the per-rank sum of access sets (soap_grid)
  long long bytes_sent = 0;                ///< all ranks together: moving operands into this group, and its reduction
  double bound_words = 0;                  ///< SOAP: the whole group moves at least this many words with S =
                                           ///< words_per_rank (rank 0, with einsum_options::bound; else 0)
};

template <class V>
struct einsum_run_result {
  einsum_plan plan;
  contraction_path path;  ///< plan.path
  std::vector<einsum_group_report> groups;
  dense_operand<V> output;  ///< the whole result, on rank 0 of the communicator (empty elsewhere; none without gather)
  dense_operand<V> local;   ///< this rank's block of the result (replicas alike); no indices and no values on
                            ///< ranks the last group leaves idle
  std::vector<long long> local_lo;  ///< where that block starts, per dimension of the output
  double fill_seconds = 0;     ///< time this rank spent building its input blocks (`fill`), before any group runs
  double compute_seconds = 0;  ///< time on this rank from then (after the barrier with fill_barrier) to the end
};

/// A sparse input of an einsum: operand `operand`'s nonzeros (global
/// coordinates in its own index order). Every rank passes one; each keeps
/// the entries inside its block on the grid of the group that reads the
/// operand (`plan_einsum` with the same options names it: grid_block of
/// that group's grid). Grids are planned as if the operand were dense.
template <class V, class I = long long>
struct einsum_sparse_input {
  std::size_t operand = 0;
  const coordinate_list<V, I>* entries = nullptr;
};

namespace detail {
// One operand as a group holds it on this rank: its indices (in the order
// of its array), this rank's block box and values.
template <class V>
struct held_operand {
  dense_operand<V> block;
  boxn box;  // over block.idx, in coordinates
};

// Row-major rank of grid coordinates (machine_grid: no reordering).
inline int grid_rank(const std::vector<long long>& dims, const std::vector<long long>& coords) {
  long long r = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) r = r * dims[d] + coords[d];
  return static_cast<int>(r);
}
}  // namespace detail

/// Runs einsum e over the ranks of comm (see the file's comment). `extent`
/// has one entry per index; `fill(k, x)` is input k's entry at coordinates
/// x (in its own index order). Every rank calls it with the same
/// arguments; the result is gathered on rank 0.
template <class V, class Fill, class I = long long>
einsum_run_result<V> einsum_distributed(MPI_Comm comm, const einsum_spec& e, std::span<const long long> extent,
                                        Fill&& fill, einsum_options opt = {},
                                        const std::vector<einsum_sparse_input<V, I>>& sparse = {}) {
  if (e.error != einsum_error::none) throw error("einsum_distributed: the einsum did not parse");
  if (e.ninputs < 2) throw error("einsum_distributed: at least two inputs (one input is a local reduction)");
  for (std::size_t v = 0; v < e.nindices; ++v)
    if (v >= extent.size() || extent[v] < 1)
      throw shape_error("einsum_distributed: index " + std::string(1, e.letter[v]) + " needs an extent of at least 1");
  // Sparse inputs: each names an operand once, with its order and extents.
  std::vector<const coordinate_list<V, I>*> sparse_of(e.ninputs, nullptr);
  for (const einsum_sparse_input<V, I>& in : sparse) {
    if (in.operand >= e.ninputs || in.entries == nullptr || sparse_of[in.operand] != nullptr)
      throw shape_error("einsum_distributed: a sparse input names no operand, or one twice, or has no entries");
    const coordinate_list<V, I>& l = *in.entries;
    if (l.order() != e.input_order[in.operand])
      throw shape_error("einsum_distributed: sparse operand " + std::to_string(in.operand) + " has order " +
                        std::to_string(l.order()) + ", its einsum term " + std::to_string(e.input_order[in.operand]));
    for (std::size_t d = 0; d < l.order(); ++d)
      if (static_cast<long long>(l.dims()[d]) != extent[static_cast<std::size_t>(e.input[in.operand][d])])
        throw shape_error("einsum_distributed: sparse operand " + std::to_string(in.operand) + "'s dimension " +
                          std::to_string(d) + " is not its index's extent");
    sparse_of[in.operand] = &l;
  }
  using detail::box_message;
  using detail::boxn;
  using detail::exchange_boxes;
  int size = 0, me = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  einsum_run_result<V> res;
  res.plan = plan_einsum(e, extent, size, opt);
  res.path = res.plan.path;
  const std::vector<contraction_step>& steps = res.plan.path.steps;
  // What each live operand (a subset of the inputs) looks like where it was
  // produced: its group's grid dims (over the group's indices) and block sizes.
  struct producer {
    std::vector<long long> dims;  // the producing group's grid
    std::vector<int> grid_idx;    // the producing group's indices, in grid order
    std::vector<long long> block; // per index number (0 where absent)
    detail::held_operand<V> held;
  };
  std::vector<std::pair<std::uint32_t, producer>> live;
  auto indices_of = [&](std::uint32_t m) {
    std::vector<int> v;
    for (std::size_t q = 0; q < e.nindices; ++q)
      if ((m >> q) & 1U) v.push_back(static_cast<int>(q));
    return v;
  };
  // Every input block this rank holds, built first (an input is read by
  // one group): its block on that group's grid (none on idle ranks).
  // A sparse input keeps the entries inside the block, coordinates from
  // its corner.
  std::vector<std::pair<std::uint32_t, dense_operand<V>>> inputs;
  std::vector<std::pair<std::uint32_t, sparse_operand<V>>> sparse_inputs;
  const auto t_fill = std::chrono::steady_clock::now();
  for (const einsum_group& grp : res.plan.groups) {
    std::array<long long, max_einsum_indices> lo{}, hi{};
    if (me < grp.ranks) std::tie(lo, hi) = grid_block(extent, grp.indices, grp.grid, me);
    for (const std::uint32_t u : grp.operands) {
      if (!std::has_single_bit(u)) continue;
      const auto k = static_cast<std::size_t>(std::countr_zero(u));
      if (sparse_of[k] == nullptr) {
        // With inputs_from_owners only the first replica builds it (the
        // others receive it by broadcast); the rest are zeros of its shape.
        bool first = true;
        for (std::size_t v = 0; v < max_einsum_indices && opt.inputs_from_owners && me < grp.ranks; ++v)
          if ((((grp.indices & ~e.input_mask(k)) >> v) & 1U) != 0 && detail::group_coord(grp, me, v) != 0) first = false;
        if (first) {
          inputs.emplace_back(u, input_block<V>(e, k, lo, hi, fill));
        } else {
          dense_operand<V> t;
          for (std::size_t d = 0; d < e.input_order[k]; ++d) {
            const auto v = static_cast<std::size_t>(e.input[k][d]);
            t.idx.push_back(e.input[k][d]);
            t.ext.push_back(hi[v] - lo[v]);
          }
          t.data.assign(static_cast<std::size_t>(t.size()), V{});
          inputs.emplace_back(u, std::move(t));
        }
        continue;
      }
      const coordinate_list<V, I>& l = *sparse_of[k];
      const std::size_t n = l.order();
      sparse_operand<V> t;
      for (std::size_t d = 0; d < n; ++d) {
        const auto v = static_cast<std::size_t>(e.input[k][d]);
        t.idx.push_back(e.input[k][d]);
        t.ext.push_back(std::max<long long>(0, hi[v] - lo[v]));
      }
      for (std::size_t q = 0; q < l.size(); ++q) {
        const auto c = l.coords(q);
        bool in = true;
        for (std::size_t d = 0; d < n && in; ++d) {
          const auto v = static_cast<std::size_t>(e.input[k][d]);
          in = static_cast<long long>(c[d]) >= lo[v] && static_cast<long long>(c[d]) < hi[v];
        }
        if (!in) continue;
        for (std::size_t d = 0; d < n; ++d)
          t.coords.push_back(static_cast<long long>(c[d]) - lo[static_cast<std::size_t>(e.input[k][d])]);
        t.vals.push_back(l.value(q));
      }
      sparse_inputs.emplace_back(u, std::move(t));
    }
  }
  res.fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_fill).count();
  if (opt.fill_barrier) check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const auto t_compute = std::chrono::steady_clock::now();
  for (std::size_t gi = 0; gi < res.plan.groups.size(); ++gi) {
    const einsum_group& grp = res.plan.groups[gi];
    const bool last_group = gi + 1 == res.plan.groups.size();
    const int used = static_cast<int>(grp.ranks);
    einsum_group_report rep;
    rep.indices = grp.indices;
    rep.steps = grp.steps.size();
    const std::vector<int> gidx = indices_of(grp.indices);
    std::vector<int> gd;
    for (const int v : gidx) {
      rep.grid.push_back(grp.grid[static_cast<std::size_t>(v)]);
      gd.push_back(static_cast<int>(grp.grid[static_cast<std::size_t>(v)]));
    }
    rep.words_per_rank = grp.words_per_rank;
    // The group's ranks (the first `used` of comm, in order) and the
    // exchanges over all of comm (producers and consumers may differ).
    MPI_Comm group_comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(comm, me < used ? 0 : MPI_UNDEFINED, me, &group_comm), "MPI_Comm_split");
    const bool active = me < used;
    if (gd.empty()) gd.push_back(1);  // a group of scalars (",->"): one rank
    std::unique_ptr<machine_grid> gp = active ? std::make_unique<machine_grid>(group_comm, gd) : nullptr;
    machine_grid all(comm, std::vector<int>{size});
    all.stats().reset();
    std::array<long long, max_einsum_indices> block{}, lo{}, hi{}, local{};
    if (active) std::tie(lo, hi) = grid_block(extent, grp.indices, grp.grid, gp->rank());  // idle: empty blocks
    for (const int q : gidx) {
      const auto v = static_cast<std::size_t>(q);
      block[v] = std::max<long long>(1, (extent[v] + grp.grid[v] - 1) / grp.grid[v]);
      if (!active) lo[v] = hi[v] = 0;
      local[v] = hi[v] - lo[v];
    }
    // This rank's block of an operand over indices idx (in its order).
    auto box_over = [&](const std::vector<int>& idx) {
      boxn b{idx.size(), {}, {}};
      for (std::size_t d = 0; d < idx.size(); ++d)
        b.lo[d] = lo[static_cast<std::size_t>(idx[d])], b.hi[d] = hi[static_cast<std::size_t>(idx[d])];
      return b;
    };
    // Replication: the first replica broadcasts t over the sub-grid of the
    // dimensions it does not index (MPI_Cart_sub; its rank 0 is the one at
    // coordinate 0 along them).
    auto replicate = [&](dense_operand<V>& t) {
      std::vector<int> remain(gidx.size(), 0);
      bool replicated = false;
      for (std::size_t q = 0; q < gidx.size(); ++q)
        if (std::find(t.idx.begin(), t.idx.end(), gidx[q]) == t.idx.end() && rep.grid[q] > 1)
          remain[q] = 1, replicated = true;
      if (active && replicated) {
        MPI_Comm sub = MPI_COMM_NULL;
        check_mpi(MPI_Cart_sub(gp->comm(), remain.data(), &sub), "MPI_Cart_sub");
        all.broadcast(t.data.data(), t.data.size(), 0, sub);
        MPI_Comm_free(&sub);
      }
    };
    auto operand_for = [&](std::uint32_t u, int tag) -> dense_operand<V> {
      if (std::has_single_bit(u)) {  // an input: built above (by its first replica with inputs_from_owners)
        auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == u; });
        if (it == inputs.end()) throw error("einsum_distributed: an input read twice");
        dense_operand<V> t = std::move(it->second);
        inputs.erase(it);
        if (opt.inputs_from_owners) replicate(t);
        return t;
      }
      // An intermediate: from its producer's blocks (one owner each) to
      // this group's blocks (every replica), by Eq. 28's overlaps.
      auto it = std::find_if(live.begin(), live.end(), [&](const auto& p) { return p.first == u; });
      if (it == live.end()) throw error("einsum_distributed: the plan does not match the einsum");
      producer pr = std::move(it->second);
      live.erase(it);
      const std::vector<int>& ridx = pr.held.block.idx;
      std::vector<long long> rext, fromb, tob;
      for (const int v : ridx) {
        rext.push_back(extent[static_cast<std::size_t>(v)]);
        fromb.push_back(pr.block[static_cast<std::size_t>(v)]);
        tob.push_back(block[static_cast<std::size_t>(v)]);
      }
      const block_layout from(rext, fromb), to(rext, tob);
      std::vector<box_message> msgs;
      auto position = [](const std::vector<int>& in, int v) {
        for (std::size_t q = 0; q < in.size(); ++q)
          if (in[q] == v) return static_cast<long long>(q);
        return -1LL;
      };
      for (const box_message& m : plan_redistribution(from, to)) {
        // The owner of the source block: its block coordinates on the
        // operand's indices, 0 on the producer's other grid dimensions.
        const boxn sb = from.box_of(m.src), tb = to.box_of(m.dst);
        std::vector<long long> pc(pr.dims.size(), 0);
        for (std::size_t d = 0; d < ridx.size(); ++d)
          pc[static_cast<std::size_t>(position(pr.grid_idx, ridx[d]))] = sb.lo[d] / fromb[d];
        const int src = detail::grid_rank(pr.dims, pc);
        // The target block's first replica: coordinate 0 along this
        // group's grid dimensions the operand does not index.
        std::vector<long long> tc(gidx.size(), 0);
        for (std::size_t d = 0; d < ridx.size(); ++d) tc[static_cast<std::size_t>(position(gidx, ridx[d]))] = tb.lo[d] / tob[d];
        msgs.push_back({src, detail::grid_rank(rep.grid, tc), m.box});
      }
      dense_operand<V> t;
      t.idx = ridx;
      for (const int v : ridx) t.ext.push_back(local[static_cast<std::size_t>(v)]);
      const boxn tbox = box_over(ridx);
      t.data.assign(static_cast<std::size_t>(t.size()), V{});
      exchange_boxes<V>(all, msgs, std::span<const V>(pr.held.block.data), pr.held.box, comm_kind::alltoall, tag,
                        [&](const V* data, const boxn& data_box, const boxn& part) {
                          detail::copy_box(data, data_box, t.data.data(), tbox, part);
                        });
      replicate(t);
      return t;
    };
    // The group's operands on this rank, then its steps on them in path
    // order (a step's result stays local when a later step of the group
    // reads it), each into the indices it keeps (the output's order for
    // the einsum's last step).
    std::vector<std::pair<std::uint32_t, dense_operand<V>>> here;
    std::vector<std::pair<std::uint32_t, sparse_operand<V>>> sparse_here;
    for (std::size_t q = 0; q < grp.operands.size(); ++q) {
      const std::uint32_t u = grp.operands[q];
      auto sp = std::find_if(sparse_inputs.begin(), sparse_inputs.end(), [&](const auto& p) { return p.first == u; });
      if (sp != sparse_inputs.end()) {
        sparse_here.push_back(std::move(*sp));
        sparse_inputs.erase(sp);
      } else {
        here.emplace_back(u, operand_for(u, static_cast<int>(2 * (gi * max_einsum_inputs + q) + 1)));
      }
    }
    auto take_from = [](auto& from, std::uint32_t u) {
      auto it = std::find_if(from.begin(), from.end(), [&](const auto& p) { return p.first == u; });
      if (it == from.end()) throw error("einsum_distributed: a group's step reads an operand it does not have");
      auto t = std::move(it->second);
      from.erase(it);
      return t;
    };
    auto take = [&](std::uint32_t u) { return take_from(here, u); };
    auto is_sparse = [&](std::uint32_t u) {
      return std::any_of(sparse_here.begin(), sparse_here.end(), [&](const auto& p) { return p.first == u; });
    };
    const std::span<const long long> lext(local.data(), e.nindices);
    for (const std::size_t s : grp.steps) {
      const contraction_step& st = steps[s];
      std::vector<int> keep;
      if (last_group && s == grp.steps.back())
        keep.assign(e.output.begin(), e.output.begin() + static_cast<std::ptrdiff_t>(e.output_order));
      else
        keep = indices_of(st.result_indices);
      if (is_sparse(st.left) || is_sparse(st.right)) {
        // A sparse input with the other operand dense (a second sparse
        // one made dense): its nonzeros drive the loop.
        const std::uint32_t su = is_sparse(st.left) ? st.left : st.right, du = su == st.left ? st.right : st.left;
        const sparse_operand<V> a = take_from(sparse_here, su);
        const dense_operand<V> b = is_sparse(du) ? densify(take_from(sparse_here, du)) : take(du);
        here.emplace_back(st.left | st.right, contract_sparse(a, b, keep, lext));
        continue;
      }
      const dense_operand<V> a = take(st.left), b = take(st.right);
      here.emplace_back(st.left | st.right,
                        contract_gemm(a, b, keep, lext, [&](long long m, long long k, long long n, const V* x, const V* y, V* z) {
                          detail::gemm_add<V, long long>(m, k, n, std::span<const V>(x, static_cast<std::size_t>(m * k)),
                                                         std::span<const V>(y, static_cast<std::size_t>(k * n)),
                                                         std::span<V>(z, static_cast<std::size_t>(m * n)), serial,
                                                         {}, opt.blas);
                        }));
    }
    if (here.size() != 1 || here.front().first != grp.inputs)
      throw error("einsum_distributed: a group does not join its operands");
    detail::held_operand<V> r;
    r.block = std::move(here.front().second);
    r.box = box_over(r.block.idx);
    // Partial sums over the summed indices split across ranks (an index
    // summed by any step of the group): combined over the ranks that
    // differ only in those grid coordinates.
    const std::uint32_t summed = grp.summed();
    int group_size = 1;
    for (std::size_t q = 0; q < gidx.size(); ++q)
      if ((summed >> gidx[q]) & 1U) group_size *= static_cast<int>(rep.grid[q]);
    if (active && group_size > 1) {
      long long color = 0;
      for (std::size_t q = 0; q < gidx.size(); ++q)
        if (((summed >> gidx[q]) & 1U) == 0) color = color * rep.grid[q] + gp->coords()[q];
      MPI_Comm sub = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split(gp->comm(), static_cast<int>(color), gp->rank(), &sub), "MPI_Comm_split");
      // Every rank of sub holds the same output block (they differ only in
      // summed coordinates), so all make the same chunked calls.
      detail::allreduce_sum_chunked(r.block.data.data(), r.block.size(), sub);
      MPI_Comm_free(&sub);
      // Counted as a reduce-scatter plus an all-gather: 2 (k - 1) / k of the block sent.
      const long long bytes = 2 * (group_size - 1) * r.block.size() * static_cast<long long>(sizeof(V)) / group_size;
      all.stats().sent(comm_kind::reduce, bytes);
    }
    long long mine = all.stats().total().bytes_sent, total = 0;
    check_mpi(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm), "MPI_Allreduce");
    rep.bytes_sent = total;
    gp.reset();
    if (group_comm != MPI_COMM_NULL) MPI_Comm_free(&group_comm);
    if (opt.bound && me == 0) rep.bound_words = grp.bound_words(extent);
    producer pr;
    pr.dims = rep.grid;
    pr.grid_idx = gidx;
    pr.block.assign(max_einsum_indices, 0);
    for (const int v : gidx) pr.block[static_cast<std::size_t>(v)] = block[static_cast<std::size_t>(v)];
    pr.held = std::move(r);
    live.emplace_back(grp.inputs, std::move(pr));
    res.groups.push_back(std::move(rep));
  }
  producer& last = live.front().second;
  // This rank's block of the result, where it is one of the last group's ranks.
  const bool holds = me < res.plan.groups.back().ranks;
  auto keep_local = [&] {
    if (!holds) return;
    for (std::size_t d = 0; d < last.held.box.n; ++d) res.local_lo.push_back(last.held.box.lo[d]);
    res.local = std::move(last.held.block);
  };
  auto done = [&] {
    keep_local();
    res.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_compute).count();
    return std::move(res);
  };
  if (!opt.gather) return done();
  // The result to rank 0: every block's owner sends it.
  const std::vector<int>& oidx = last.held.block.idx;
  std::vector<long long> oext, ob;
  for (const int v : oidx) {
    oext.push_back(extent[static_cast<std::size_t>(v)]);
    ob.push_back(last.block[static_cast<std::size_t>(v)]);
  }
  const block_layout from(oext, ob);
  std::vector<long long> whole(oext.size());
  for (std::size_t d = 0; d < oext.size(); ++d) whole[d] = std::max<long long>(1, oext[d]);
  const block_layout to(oext, whole);
  std::vector<box_message> msgs;
  for (const box_message& m : plan_redistribution(from, to)) {
    const boxn sb = from.box_of(m.src);
    std::vector<long long> pc(last.dims.size(), 0);
    for (std::size_t d = 0; d < oidx.size(); ++d)
      for (std::size_t q = 0; q < last.grid_idx.size(); ++q)
        if (last.grid_idx[q] == oidx[d]) pc[q] = sb.lo[d] / ob[d];
    msgs.push_back({detail::grid_rank(last.dims, pc), 0, m.box});
  }
  res.output.idx = oidx;
  res.output.ext = oext;
  const boxn obox = to.box_of(0);
  if (me == 0) res.output.data.assign(static_cast<std::size_t>(res.output.size()), V{});
  {
    machine_grid all(comm, std::vector<int>{size});
    exchange_boxes<V>(all, msgs, std::span<const V>(last.held.block.data), last.held.box, comm_kind::alltoall,
                      2 * static_cast<int>(res.plan.groups.size() * max_einsum_inputs) + 1, [&](const V* data, const boxn& data_box, const boxn& part) {
                        detail::copy_box(data, data_box, res.output.data.data(), obox, part);
                      });
  }
  return done();
}

}  // namespace tensorlev::dist
