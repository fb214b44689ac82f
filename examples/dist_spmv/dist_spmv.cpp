// Distributed SpMV from a Matrix Market file: run with mpirun.
//
//   mpirun -n 4 dist_spmv [matrix.mtx] [products]
//
// Rank 0 reads the matrix; the rows are split so that each rank holds about
// the same number of stored entries (SuperTaco's balanced row blocks), each
// rank keeps its rows as a CSR tensor, and y = A x runs as a row-blocked
// SpMV: x is all-gathered, then every rank runs the generated CSR kernel on
// its rows. y is gathered back on rank 0 and checked against the product on
// one node; the per-rank communication is printed.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;
namespace td = tensorlev::dist;

namespace {
int run(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "examples/data/jagmesh7.mtx";
  const int products = argc > 2 ? std::stoi(argv[2]) : 10;
  if (products < 1) throw error("dist_spmv: the number of products must be positive");
  td::machine_grid grid(MPI_COMM_WORLD, {0});
  const bool root = grid.rank() == 0;

  using rows = td::distribution<"xy->x">;
  using blocks = td::distribution<"x->x">;
  const auto A = td::read_matrix_market<csr, rows>(grid, path, td::split_policy::nonzeros);
  const long long m = A.dims()[0];
  const long long n = A.dims()[1];
  // x_j = 1 + j % 7 in blocks, y in A's row blocks. (Every rank builds x
  // here to keep the example short; distribute reads it on rank 0 alone.)
  td::distribution_map<blocks> xmap({n}, grid.extents());
  tensor<double, dense_vector> x_all({static_cast<int>(n)});
  for (std::size_t q = 0; q < x_all.values().size(); ++q) x_all.values()[q] = 1.0 + static_cast<double>(q % 7);
  const auto x = td::distribute<dense_vector>(grid, xmap, root ? &x_all : nullptr);
  td::distribution_map<blocks> ymap({m}, grid.extents());
  ymap.set_splits(0, A.map().splits(0));
  tensor<double, dense_vector> zeros({static_cast<int>(m)});
  auto y = td::distribute<dense_vector>(grid, ymap, root ? &zeros : nullptr);

  grid.stats().reset();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int p = 0; p < products; ++p) td::spmv_rows(y, A, x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / products;
  const auto stats = grid.stats()[td::comm_kind::allgather];
  const auto y_global = td::gather<dense_vector>(y);

  // Per-rank figures, printed in rank order.
  for (int r = 0; r < grid.size(); ++r) {
    if (r == grid.rank())
      std::printf("rank %d: rows %lld..%lld, %zu stored entries; per product: received %lld bytes of x\n", r,
                  A.offset(0), A.offset(0) + A.local().dimension(0), A.local().stored(),
                  stats.bytes_received / products);
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (!root) return 0;
  // Check against the product on one node.
  const auto list = io::read_matrix_market<double, int>(path);
  const auto A1 = pack<csr>(list);
  tensor<double, dense_vector> want({static_cast<int>(m)});
  want(i) = A1(i, j) * x_all(j);
  double diff = 0;
  double scale = 0;
  for (long long q = 0; q < m; ++q) {
    diff = std::max(diff, std::abs(y_global->values()[static_cast<std::size_t>(q)] - want.values()[static_cast<std::size_t>(q)]));
    scale = std::max(scale, std::abs(want.values()[static_cast<std::size_t>(q)]));
  }
  std::printf("%s: %lld x %lld, %zu entries on %d ranks: %.3f ms per product, max |y - y_serial| = %g\n",
              path.c_str(), m, n, A1.stored(), grid.size(), ms, diff);
  if (diff > 1e-12 * std::max(scale, 1.0)) {
    std::printf("distributed SpMV: WRONG\n");
    return 1;
  }
  std::printf("distributed SpMV matches the single-node result\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_spmv: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
