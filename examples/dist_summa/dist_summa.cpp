// Distributed dense matrix product by SUMMA (and Cannon on square grids):
// run with mpirun.
//
//   mpirun -n 4 dist_summa [m] [k] [n]
//
// The ranks form a 2D grid (MPI_Dims_create); A (m x k), B (k x n) and C
// are split into tiles ("xy->xy"). Each run is the statement
// C(i,j) = A(i,k) * B(k,j) on tensorlev's one distributed engine under a
// schedule: SUMMA broadcasts, for each k block, the A panel along grid rows
// and the B panel along grid columns, and every rank adds the product of
// the two panels into its C tile (BLAS when linked, else the generated
// kernel). Cannon (square grids only) rotates the steps, so blocks move by
// shifts instead; the last run writes the statement in index notation with
// a DISTAL schedule. C is gathered on rank 0 and checked against the
// product on one node; the bytes each rank sent are printed.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/formats.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;
namespace td = tensorlev::dist;

namespace {
tensor<double, dense_row_major> make(int rows, int cols, int seed) {
  tensor<double, dense_row_major> t({rows, cols});
  for (std::size_t q = 0; q < t.values().size(); ++q)
    t.values()[q] = static_cast<double>((q * 7 + static_cast<std::size_t>(seed)) % 11) - 5.0;
  return t;
}

int run(int argc, char** argv) {
  const int m = argc > 1 ? std::stoi(argv[1]) : 300;
  const int kd = argc > 2 ? std::stoi(argv[2]) : 200;
  const int n = argc > 3 ? std::stoi(argv[3]) : 250;
  if (m < 0 || kd < 0 || n < 0) throw error("dist_summa: dimensions must not be negative");
  td::machine_grid grid(MPI_COMM_WORLD, {0, 0});
  const bool root = grid.rank() == 0;
  using tiles = td::distribution<"xy->xy">;
  // Every rank builds the inputs to keep the example short; distribute
  // reads them on rank 0 alone.
  const auto A1 = make(m, kd, 1);
  const auto B1 = make(kd, n, 2);
  const auto A = td::distribute<dense_row_major>(grid, td::distribution_map<tiles>({m, kd}, grid.extents()),
                                                 root ? &A1 : nullptr);
  const auto B = td::distribute<dense_row_major>(grid, td::distribution_map<tiles>({kd, n}, grid.extents()),
                                                 root ? &B1 : nullptr);
  const tensor<double, dense_row_major> zero({m, n});
  auto C = td::distribute<dense_row_major>(grid, td::distribution_map<tiles>({m, n}, grid.extents()),
                                           root ? &zero : nullptr);
  tensor<double, dense_row_major> want({m, n});
  if (root) want(i, j) = A1(i, k) * B1(k, j);

  bool ok = true;
  const auto check = [&](const char* name) {
    // Bytes this rank sent, against SUMMA's model: per k block, the owner
    // column sends its A panel to the other gy - 1 ranks of its grid row,
    // the owner row its B panel to the other gx - 1 of its grid column.
    const auto sent = grid.stats().total().bytes_sent;
    const auto Cg = td::gather<dense_row_major>(C);
    for (int r = 0; r < grid.size(); ++r) {
      if (r == grid.rank())
        std::printf("%s rank %d (grid %d,%d): C tile %d x %d, sent %lld bytes (broadcast %lld, shift %lld)\n", name,
                    r, grid.coords()[0], grid.coords()[1], C.local().dimension(0), C.local().dimension(1), sent,
                    grid.stats()[td::comm_kind::broadcast].bytes_sent, grid.stats()[td::comm_kind::shift].bytes_sent);
      std::fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!root) return;
    double diff = 0;
    for (std::size_t q = 0; q < want.values().size(); ++q)
      diff = std::max(diff, std::abs(Cg->values()[q] - want.values()[q]));
    std::printf("%s: %d x %d x %d on a %s grid: max |C - C_serial| = %g\n", name, m, kd, n,
                grid.shape_string().c_str(), diff);
    ok = ok && diff == 0;  // integer-valued inputs: every sum is exact
  };
  grid.stats().reset();
  td::summa(C, A, B);
  check("SUMMA");
  if (grid.dims()[0] == grid.dims()[1]) {
    grid.stats().reset();
    td::cannon(C, A, B);
    check("Cannon");
  }
  // The same product in index notation with a DISTAL schedule (Fig. 12:
  // distribute i and j over the grid, k in steps at the block boundaries,
  // the steps outermost among the rank's loops); a schedule changes how
  // data moves, never the result.
  grid.stats().reset();
  {
    using namespace tensorlev::indices;
    td::compute(C(i, j) = A(i, k) * B(k, j), td::statement_schedule::summa().reorder({"ko", "ii", "ji", "ki"}));
  }
  check("C(i,j) = A(i,k) * B(k,j), SUMMA schedule");
  if (!root) return 0;
  std::printf(ok ? "distributed matrix product matches the single-node result\n" : "distributed product: WRONG\n");
  return ok ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_summa: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
