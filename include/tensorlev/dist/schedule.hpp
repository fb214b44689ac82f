#pragma once
/// @file dist/schedule.hpp
/// The matrix product's presets of the dist engine (compute.hpp):
/// C(i,j) = A(i,k) B(k,j) over dense tiles in any distributions, as a
/// `statement_schedule` says (DISTAL §3.3). A schedule only changes where
/// data moves and how, never the result.
///
///     using namespace tensorlev::dist;
///     matmul(C, A, B, statement_schedule().distribute("ij").divide(q).rotate("ij"));  // Cannon
///     matmul(C, A, B, statement_schedule::summa());
///     matmul(C, A, B, statement_schedule::johnson());   // on a 3D grid, C on a face ("xy->xy0")
///     summa(C, A, B);    // matmul with statement_schedule::summa()
///     cannon(C, A, B);   // matmul with statement_schedule::cannon(q) on a q x q grid
///
/// matmul is `compute<"ij", "ik", "kj">` with two defaults: a schedule that
/// divides nothing runs k in steps at A's column and B's row split points,
/// at most `statement_schedule::summa_panel` (128) wide (SUMMA's steps),
/// and errors name matmul and the shapes of A, B and C.
/// How data moves follows from the schedule (see compute.hpp): each fetch
/// takes every rank's box from the nearest rank holding it (its own tile,
/// a replicated copy, or the box it fetched at the previous step), so
/// SUMMA's panels go by axis broadcasts and Cannon's by systolic shifts;
/// partial products go to C's holders by a reduction along the
/// distributed-k axis when C sits on one face of it (Johnson, 2.5D), in
/// place when each rank computes its own C tile, and by messages otherwise.
/// `matmul_schedule` is the same type as `statement_schedule` (the engine
/// has one schedule type).

#include <algorithm>
#include <string>
#include <vector>

#include "compute.hpp"

namespace tensorlev::dist {

/// The matrix product's name for the engine's schedule type.
using matmul_schedule = statement_schedule;

/// C(i,j) = A(i,k) B(k,j) on dense tiles in any distributions, as the
/// schedule says. Collective; C's previous values are replaced (C may be A
/// or B: every fetch happens before C is written).
template <class V, class DC, class DA, class DB, index_type I>
void matmul(dist_tensor<V, dense_row_major, DC, I>& C, const dist_tensor<V, dense_row_major, DA, I>& A,
            const dist_tensor<V, dense_row_major, DB, I>& B, const statement_schedule& s, const executor& ex = serial,
            const char* fn = "matmul") {
  const machine_grid& g = C.grid();
  std::string why = detail::same_grid(fn, g, A, B);
  if (why.empty()) why = detail::product_shapes(fn, C, A, B);
  if (why.empty() && s.step_variable() == 0 && !s.rotated_by().empty())
    why = std::string("tensorlev::dist::") + fn + ": rotate needs divide or split";
  agree(g, why.empty(), why);
  if (s.step_variable() != 0) {
    detail::run_statement<"ij", "ik", "kj">(fn, ex, C, s, A, B);
    return;
  }
  statement_schedule at_splits = s;  // SUMMA's k steps
  detail::run_statement<"ij", "ik", "kj">(fn, ex, C, at_splits.divide_at_splits('k', statement_schedule::summa_panel),
                                         A, B);
}

/// SUMMA: matmul with `statement_schedule::summa()` on a 2D grid of
/// tiles: k in steps at the owners' block boundaries, each step's A panel
/// broadcast along grid rows and B panel along grid columns. A's columns
/// and B's rows may be split differently (the steps merge both).
template <class V, class DC, class DA, class DB, index_type I>
void summa(dist_tensor<V, dense_row_major, DC, I>& C, const dist_tensor<V, dense_row_major, DA, I>& A,
           const dist_tensor<V, dense_row_major, DB, I>& B, const executor& ex = serial) {
  static_assert(tiles_v<DA> && tiles_v<DB> && tiles_v<DC>,
                "tensorlev::dist::summa: A, B and C must be distributed in 2D tiles (\"xy->xy\")");
  matmul(C, A, B, statement_schedule::summa(), ex, "summa");
}

/// Cannon's algorithm on a square q x q grid of tiles with A's column
/// splits equal to B's row splits: matmul with k stepped at those splits
/// and rotated by both coordinates (`statement_schedule::cannon(q)` with
/// even splits), each block fetched from the nearest rank
/// holding it (the skew from its owner, then the neighbour's previous
/// block: systolic shifts).
template <class V, class DC, class DA, class DB, index_type I>
void cannon(dist_tensor<V, dense_row_major, DC, I>& C, const dist_tensor<V, dense_row_major, DA, I>& A,
            const dist_tensor<V, dense_row_major, DB, I>& B, const executor& ex = serial) {
  static_assert(tiles_v<DA> && tiles_v<DB> && tiles_v<DC>,
                "tensorlev::dist::cannon: A, B and C must be distributed in 2D tiles (\"xy->xy\")");
  const machine_grid& g = C.grid();
  std::string why = detail::same_grid("cannon", g, A, B);
  if (why.empty() && g.dims()[0] != g.dims()[1])
    why = "tensorlev::dist::cannon: needs a square grid, not " + g.shape_string();
  if (why.empty()) why = detail::product_shapes("cannon", C, A, B);
  if (why.empty())
    why = detail::same_splits("cannon", "A's columns", A.map().splits(1), "B's rows", B.map().splits(0));
  agree(g, why.empty(), why);
  // q rotated steps at the k blocks (A's column splits, which are B's row
  // splits): each step's blocks are whole tiles.
  matmul(C, A, B, statement_schedule().distribute("ij").divide_at_splits('k').rotate("ij"), ex, "cannon");
}

}  // namespace tensorlev::dist
