// Conjugate gradient over MPI ranks: run with mpirun.
//
//   mpirun -n 4 cg_dist [matrix.mtx] [tol] [--unfused]
//
// The distributed form of examples/cg: rank 0 reads the matrix, the rows
// are split so that each rank holds about the same number of stored
// entries, and every vector is split like the rows. Each iteration is the
// same three fused kernels as cg, run by dist::fuse on every rank's rows:
// the SpMV with p.q, the two updates with r.r, and p = r + beta p in place.
// Before the SpMV, ghost_spmv brings the entries of p a rank's rows use
// (one all-to-all); the two dot products are summed over the ranks (one
// MPI_Allreduce each). Nothing else moves. With --unfused each statement
// runs on its own (six loop nests an iteration, a temporary for the new p).
// Prints the iterations, the residual and the error like cg, the loop
// nests an iteration counted as they ran, and the bytes each rank moved.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/dist/fuse.hpp"
#include "tensorlev/formats.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;
namespace td = tensorlev::dist;

namespace {
// Bytes an all-reduce moved (counted as a reduce to rank 0 and a broadcast back).
long long sum_bytes(const td::comm_stats& s) {
  const auto& r = s[td::comm_kind::reduce];
  const auto& b = s[td::comm_kind::broadcast];
  return r.bytes_sent + r.bytes_received + b.bytes_sent + b.bytes_received;
}

int run(int argc, char** argv) {
  bool unfused = false;
  std::string path = "examples/data/pts5ldd03.mtx";
  double tol = 1e-10;
  int positional = 0;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--unfused") == 0)
      unfused = true;
    else if (positional++ == 0)
      path = argv[a];
    else
      tol = std::stod(argv[a]);
  }
  td::machine_grid grid(MPI_COMM_WORLD, {0});
  using rows = td::distribution<"xy->x">;
  using blocks = td::distribution<"x->x">;
  const auto A = td::read_matrix_market<csr, rows>(grid, path, td::split_policy::nonzeros);
  const long long n = A.dims()[0];
  td::agree(grid, A.dims()[1] == n, path + ": the matrix is not square");

  // Vectors split like A's rows: every statement below reads them at the
  // rows it writes.
  td::distribution_map<blocks> vmap({n}, grid.extents());
  vmap.set_splits(0, A.map().splits(0));
  using vec = tensor<double, dense_vector>;
  const int local_n = A.local().dimension(0);
  auto piece = [&] { return td::dist_tensor<double, dense_vector, blocks>(grid, vmap, vec({local_n})); };
  auto ones = piece(), b = piece(), x = piece(), r = piece(), p = piece(), q = piece(), next = piece();
  for (auto& v : ones.local().values()) v = 1.0;
  td::ghost_spmv<double, csr, rows, blocks> spmv(A, vmap);
  spmv(b, ones);  // right-hand side with a known solution

  scalar<double> dot, pq, rr_next;
  auto norm = [&](const vec& v) {
    td::fuse(grid, defer(dot()) = v(i) * v(i));
    return std::sqrt(dot.value());
  };
  const double bnorm = norm(b.local());
  // x = 0, r = b, p = r.
  compute(serial, r.local()(i), b.local()(i));
  compute(serial, p.local()(i), r.local()(i));
  double rr = norm(r.local());
  rr *= rr;
  auto& xl = x.local();
  auto& rl = r.local();
  auto& pl = p.local();
  auto& ql = q.local();
  const auto& M = spmv.matrix();
  const auto& G = spmv.ghost_values();
  int it = 0;
  const long long max_it = 10 * n;
  grid.stats().reset();
  const auto kernels_before = kernels_run();
  while (std::sqrt(rr) > tol * bnorm && it < max_it) {
    spmv.exchange(p);  // the entries of p this rank's rows use
    if (unfused) {
      compute(serial, ql(i), M(i, j) * G(j));
      td::fuse(grid, defer(pq()) = pl(i) * ql(i));
      const double alpha = rr / pq.value();
      compute_add(serial, xl(i), alpha * pl(i));
      compute_add(serial, rl(i), -alpha * ql(i));
      td::fuse(grid, defer(rr_next()) = rl(i) * rl(i));
      compute(serial, next.local()(i), rl(i) + (rr_next.value() / rr) * pl(i));  // p = r + beta p
      std::swap(pl, next.local());
    } else {
      td::fuse(grid, defer(ql(i)) = M(i, j) * G(j), defer(pq()) = pl(i) * ql(i));
      const double alpha = rr / pq.value();
      td::fuse(grid, defer(xl(i)) += alpha * pl(i), defer(rl(i)) += -alpha * ql(i), defer(rr_next()) = rl(i) * rl(i));
      td::fuse(grid, defer(pl(i)) = rl(i) + (rr_next.value() / rr) * pl(i));  // in place
    }
    rr = rr_next.value();
    ++it;
  }
  const auto kernels = kernels_run() - kernels_before;
  const auto moved = grid.stats();
  // Error against the exact solution.
  auto err = piece();
  compute(serial, err.local()(i), xl(i) - ones.local()(i));
  const double e = norm(err.local());
  for (int rk = 0; rk < grid.size(); ++rk) {
    if (rk == grid.rank())
      std::printf("rank %d: rows %lld..%lld, %zu stored; per iteration: %lld bytes of p received, %lld bytes sent "
                  "and received in sums\n",
                  rk, A.offset(0), A.offset(0) + local_n, A.local().stored(),
                  it > 0 ? moved[td::comm_kind::alltoall].bytes_received / it : 0,
                  it > 0 ? sum_bytes(moved) / it : 0);
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (grid.rank() != 0) return std::sqrt(rr) > tol * bnorm ? 1 : 0;
  std::printf("%s: %lld x %lld on %d ranks; CG (%s): %d iterations, relative residual %.3e (tol %.1e), ||x - 1|| = "
              "%.3e\n",
              path.c_str(), n, n, grid.size(), unfused ? "unfused" : "fused", it, std::sqrt(rr) / bnorm, tol, e);
  if (it > 0) std::printf("%llu kernels per iteration\n", static_cast<unsigned long long>(kernels / it));
  if (std::sqrt(rr) > tol * bnorm) {
    std::printf("not converged\n");
    return 1;
  }
  std::printf("converged\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cg_dist: %s\n", e.what());
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
