// Conjugate gradient on a symmetric positive definite matrix.
//
// Solves A x = b for b = A * ones (so the exact solution is all ones) with
// the matrix in CSR. Every vector operation is one index-notation statement:
// the SpMV, the dot products (order-0 outputs) and the updates (+= with a
// scalar constant). Stops when ||r|| <= tol * ||b||.
//
//   cg [matrix.mtx] [tol]      (default: examples/data/pts5ldd03.mtx, 1e-10)
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "examples/data/pts5ldd03.mtx";
  const double tol = argc > 2 ? std::stod(argv[2]) : 1e-10;
  const auto A = pack<csr>(io::read_matrix_market<double, int>(path));
  const int n = A.dimension(0);
  if (A.dimension(1) != n) throw shape_error(path + ": the matrix is not square");

  using vec = tensor<double, dense_vector>;
  vec ones({n}), b({n}), x({n}), r({n}), p({n}), q({n}), next({n});
  for (auto& v : ones.values()) v = 1.0;
  b(i) = A(i, j) * ones(j);  // right-hand side with a known solution

  scalar<double> dot;
  auto norm = [&](const vec& v) {
    dot() = v(i) * v(i);
    return std::sqrt(dot.value());
  };
  const double bnorm = norm(b);
  // x = 0, r = b - A x = b, p = r.
  r(i) = b(i);
  p(i) = r(i);
  dot() = r(i) * r(i);
  double rr = dot.value();
  int it = 0;
  const int max_it = 10 * n;
  while (std::sqrt(rr) > tol * bnorm && it < max_it) {
    q(i) = A(i, j) * p(j);  // generated CSR SpMV
    dot() = p(i) * q(i);
    const double alpha = rr / dot.value();
    x(i) += alpha * p(i);
    r(i) += -alpha * q(i);
    dot() = r(i) * r(i);
    const double rr_next = dot.value();
    next(i) = r(i) + (rr_next / rr) * p(i);  // p = r + beta p
    std::swap(p, next);
    rr = rr_next;
    ++it;
  }
  // Error against the exact solution.
  vec err({n});
  err(i) = x(i) - ones(i);
  const double e = norm(err);
  std::printf("%s: %d x %d, %zu stored; CG: %d iterations, relative residual %.3e (tol %.1e), ||x - 1|| = %.3e\n",
              path.c_str(), n, A.dimension(1), A.stored(), it, std::sqrt(rr) / bnorm, tol, e);
  if (std::sqrt(rr) > tol * bnorm) {
    std::printf("not converged\n");
    return 1;
  }
  std::printf("converged\n");
  return 0;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "cg: %s\n", ex.what());
  return 2;
}
