// Conjugate gradient on a symmetric positive definite matrix.
//
// Solves A x = b for b = A * ones (so the exact solution is all ones) with
// the matrix in CSR. Every vector operation is one index-notation statement:
// the SpMV, the dot products (order-0 outputs) and the updates (+= with a
// scalar constant). Each iteration gives its statements to `fuse` in three
// groups, which runs each group as one loop nest over the rows (the SpMV
// and p.q; the two updates and r.r; p = r + beta p in place), and counts
// the loop nests that ran (`kernels_run`). With --unfused every statement
// runs on its own, as `=` runs it (a temporary for the new p): six loop
// nests an iteration, the same iterates to rounding.
//
// Built as `cg_kokkos` (with Kokkos) the same statements run on Kokkos'
// default host space (OpenMP threads: KOKKOS_NUM_THREADS), chunks of rows
// on threads, partial sums added in chunk order.
//
//   cg [matrix.mtx] [tol] [--unfused]     (default: examples/data/pts5ldd03.mtx, 1e-10)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/fuse.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"
#ifdef TENSORLEV_EXAMPLE_KOKKOS
#include <Kokkos_Core.hpp>

#include "tensorlev/kokkos.hpp"
#endif

using namespace tensorlev;
using namespace tensorlev::indices;

int run(int argc, char** argv, const executor& ex) {
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
  const auto A = pack<csr>(io::read_matrix_market<double, int>(path));
  const int n = A.dimension(0);
  if (A.dimension(1) != n) throw shape_error(path + ": the matrix is not square");

  using vec = tensor<double, dense_vector>;
  vec ones({n}), b({n}), x({n}), r({n}), p({n}), q({n});
  for (auto& v : ones.values()) v = 1.0;
  compute(ex, b(i), A(i, j) * ones(j));  // right-hand side with a known solution

  scalar<double> dot, pq, rr_next;
  auto norm = [&](const vec& v) {
    compute(ex, dot(), v(i) * v(i));
    return std::sqrt(dot.value());
  };
  const double bnorm = norm(b);
  // x = 0, r = b - A x = b, p = r.
  compute(ex, r(i), b(i));
  compute(ex, p(i), r(i));
  compute(ex, dot(), r(i) * r(i));
  double rr = dot.value();
  int it = 0;
  const int max_it = 10 * n;
  const auto kernels_before = kernels_run();
  vec next({unfused ? n : 0});
  while (std::sqrt(rr) > tol * bnorm && it < max_it) {
    if (unfused) {
      compute(ex, q(i), A(i, j) * p(j));  // generated CSR SpMV
      compute(ex, pq(), p(i) * q(i));
      const double alpha = rr / pq.value();
      compute_add(ex, x(i), alpha * p(i));
      compute_add(ex, r(i), -alpha * q(i));
      compute(ex, rr_next(), r(i) * r(i));
      compute(ex, next(i), r(i) + (rr_next.value() / rr) * p(i));  // p = r + beta p
      std::swap(p, next);
    } else {
      fuse(ex, defer(q(i)) = A(i, j) * p(j), defer(pq()) = p(i) * q(i));
      const double alpha = rr / pq.value();
      fuse(ex, defer(x(i)) += alpha * p(i), defer(r(i)) += -alpha * q(i), defer(rr_next()) = r(i) * r(i));
      fuse(ex, defer(p(i)) = r(i) + (rr_next.value() / rr) * p(i));  // in place
    }
    rr = rr_next.value();
    ++it;
  }
  const auto kernels = kernels_run() - kernels_before;
  // Error against the exact solution.
  vec err({n});
  compute(ex, err(i), x(i) - ones(i));
  const double e = norm(err);
  std::printf("%s: %d x %d, %zu stored; CG (%s): %d iterations, relative residual %.3e (tol %.1e), ||x - 1|| = %.3e\n",
              path.c_str(), n, A.dimension(1), A.stored(), unfused ? "unfused" : "fused", it, std::sqrt(rr) / bnorm,
              tol, e);
  if (it > 0) std::printf("%llu kernels per iteration\n", static_cast<unsigned long long>(kernels / it));
  if (std::sqrt(rr) > tol * bnorm) {
    std::printf("not converged\n");
    return 1;
  }
  std::printf("converged\n");
  return 0;
}

int main(int argc, char** argv) try {
#ifdef TENSORLEV_EXAMPLE_KOKKOS
  Kokkos::ScopeGuard kokkos(argc, argv);
  const kokkos_executor<> space;
  std::printf("Kokkos %s, %d threads\n", Kokkos::DefaultHostExecutionSpace::name(),
              Kokkos::DefaultHostExecutionSpace().concurrency());
  return run(argc, argv, space);
#else
  return run(argc, argv, serial);
#endif
} catch (const std::exception& ex) {
  std::fprintf(stderr, "cg: %s\n", ex.what());
  return 2;
}
