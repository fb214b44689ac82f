#pragma once
/// @file dist/fuse.hpp
/// `fuse` over distributed tensors: every rank runs the statements, written
/// over its pieces (`t.local()`), as one fusion (fuse.hpp: the same fused
/// kernels, lockstep and temporaries), and each order-0 output is summed
/// over the grid, one MPI_Allreduce per scalar:
///
///     namespace td = tensorlev::dist;
///     spmv.exchange(p);  // ghost_spmv: the entries of p the rank's rows use
///     td::fuse(grid, ex, defer(q.local()(i)) = spmv.matrix()(i, j) * spmv.ghost_values()(j),
///              defer(pq()) = p.local()(i) * q.local()(i));
///
/// Statements on the same row distribution need nothing from other ranks
/// in their loops: fusing them adds no communication, and the scalars'
/// sums are the only messages. What a statement reads at other rows (the
/// x of an SpMV) is the caller's to bring first (ghost_spmv::exchange, or
/// an all-gather), outside the fused loops.
///
/// Errors the plan finds (a piece of another shape than the others of its
/// statement, an output read at other rows) are agreed first: every rank
/// throws the same error (one small all-reduce a call, not counted as
/// traffic). An error while the statements run (an allocation) is this
/// rank's alone, as in every collective of the library that runs local
/// kernels.
///
/// The grid's sum counts every rank once: pieces must not be replicated
/// (a broadcast dimension of the distribution would count them once per
/// copy), and a statement of order 1 or more that sums over rows keeps
/// each rank's partial sum (use an order-0 output, or dist::compute).
///
/// A scalar is the same on every rank before the call (replicated) and
/// after it: `=` gives the grid's sum, `+=` adds it. Each order-0 output
/// must be a reduction fuse runs in its chunked loop (`fusable_v`), checked
/// at compile time, so every rank makes the same reductions in the same
/// order whatever the run-time plan; a scalar statement on its own runs
/// that loop too, never `=`'s loops, which would sum only the local rows.

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "../fuse.hpp"
#include "grid.hpp"
#include "tensor.hpp"

namespace tensorlev::dist {

namespace detail {
// fusion's reducer: a chunked scalar's local sum, summed over the grid.
struct grid_sum {
  const machine_grid* grid;
  template <class V>
  void operator()(V& sum) const {
    grid->allreduce_sum(&sum, 1, grid->comm());
  }
};

// dist::fuse's body: the fusion built (its errors agreed), then run.
struct run_body {
  const machine_grid* grid;
  const executor* ex;
  template <class M>
  void operator()(const M& m) const {
    std::optional<typename M::type> f;
    std::string why;
    try {
      m.into(f, grid_sum{grid});
    } catch (const std::exception& e) {
      why = std::string("tensorlev::dist::fuse: ") + e.what();
    }
    agree(*grid, why.empty(), why);
    f->run(*ex);
  }
};

// Whether a statement's output, if of order 0, is a chunked reduction.
template <class S>
inline constexpr bool scalar_chunked_v =
    cg::fused_statement<S>::desc::D.acc[0].order != 0 || cg::fused_statement<S>::role == cg::fuse_role::scalar;
template <class... S>
void check_dist_fuse() {
  cg::check_fused_statements<S...>();
  static_assert((scalar_chunked_v<S> && ...),
                "tensorlev::dist::fuse: an order-0 output must be a reduction over rows that fuse runs in chunks "
                "(fusable_v: dense operands, or a sparse one whose outer level is dense); the others would sum "
                "only this rank's rows");
}
}  // namespace detail

/// Runs the deferred statements (over this rank's pieces) as one fusion on
/// `ex`, and sums each order-0 output over `grid`. Collective: every rank
/// calls it with the same statements.
template <class... S>
void fuse(const machine_grid& grid, const executor& ex, const S&... s) {
  detail::check_dist_fuse<S...>();
  // The plan's checks (local shapes, reads of an output) may fail on some
  // ranks only (pieces split differently, empty pieces): agreed before any
  // rank enters the reductions, so every rank throws the same error.
  cg::with_fusion<detail::grid_sum>(detail::run_body{&grid, &ex}, s...);
}
/// dist::fuse keeping every temporary (fuse.hpp, keep_temporaries).
template <class... S>
void fuse(const machine_grid& grid, keep_temporaries_t, const executor& ex, const S&... s) {
  detail::check_dist_fuse<S...>();
  cg::with_fusion<detail::grid_sum, false>(detail::run_body{&grid, &ex}, s...);
}
/// dist::fuse on the calling thread of each rank.
template <class... S>
  requires(sizeof...(S) >= 1 && (cg::is_statement<S>::value && ...))
void fuse(const machine_grid& grid, const S&... s) {
  dist::fuse(grid, serial, s...);
}

}  // namespace tensorlev::dist
