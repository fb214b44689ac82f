// MTTKRP and CP-ALS on a third-order FROSTT tensor.
//
// Fits X ~ sum_r A(:,r) o B(:,r) o C(:,r) by alternating least squares.
// Each mode's update is one MTTKRP, written in index notation over X in
// CSF, e.g. M(i,r) = X(i,j,k) * B(j,r) * C(k,r), followed by a small dense
// solve with the Hadamard product of the other factors' Gram matrices
// (also index notation: G(r,s) = B(j,r) * B(j,s)). The fit
// 1 - ||X - model|| / ||X|| must not decrease from one iteration to the
// next (ALS is monotone); MTTKRP is checked against a plain loop over the
// entries, and against the same statement with X in COO.
//
//   cp_als [tensor.tns] [rank] [iterations]   (default: tests/data/nations.tns, 4, 10)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/frostt.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace {

using matrix = tensor<double, dense_row_major>;

// Solves F W = M for F (rows of M), W symmetric positive definite R x R,
// by Cholesky; a tiny ridge keeps W definite when a factor is degenerate.
void solve_rows(const matrix& M, matrix W, matrix& F) {
  const int n = M.dimension(0), R = M.dimension(1);
  auto w = [&](int r, int s) -> double& { return W.values()[static_cast<std::size_t>(r * R + s)]; };
  double trace = 0;
  for (int r = 0; r < R; ++r) trace += w(r, r);
  for (int r = 0; r < R; ++r) w(r, r) += 1e-12 * trace;
  for (int c = 0; c < R; ++c) {  // W = L L^T, L in the lower triangle
    for (int k = 0; k < c; ++k) w(c, c) -= w(c, k) * w(c, k);
    if (w(c, c) <= 0) throw error("cp_als: the Gram matrix is not positive definite");
    w(c, c) = std::sqrt(w(c, c));
    for (int r = c + 1; r < R; ++r) {
      for (int k = 0; k < c; ++k) w(r, c) -= w(r, k) * w(c, k);
      w(r, c) /= w(c, c);
    }
  }
  for (int row = 0; row < n; ++row) {
    double* f = F.values().data() + static_cast<std::size_t>(row) * R;
    const double* m = M.values().data() + static_cast<std::size_t>(row) * R;
    for (int r = 0; r < R; ++r) {  // L y = m
      double v = m[r];
      for (int k = 0; k < r; ++k) v -= w(r, k) * f[k];
      f[r] = v / w(r, r);
    }
    for (int r = R; r-- > 0;) {  // L^T f = y
      double v = f[r];
      for (int k = r + 1; k < R; ++k) v -= w(k, r) * f[k];
      f[r] = v / w(r, r);
    }
  }
}

double max_abs_diff(const matrix& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t q = 0; q < b.size(); ++q) m = std::max(m, std::abs(a.values()[q] - b[q]));
  return m;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "tests/data/nations.tns";
  const int R = argc > 2 ? std::stoi(argv[2]) : 4;
  const int iterations = argc > 3 ? std::stoi(argv[3]) : 10;
  if (R < 1 || iterations < 1) throw error("cp_als: rank and iterations must be positive");
  const auto list = io::read_frostt<double, int>(path);
  if (list.order() != 3) throw shape_error(path + ": CP-ALS here needs a third-order tensor");
  const auto X = pack<csf>(list);
  const auto Xc = pack<coo_tensor<3>>(list);
  const int I = X.dimension(0), J = X.dimension(1), K = X.dimension(2);

  // Deterministic positive initial factors.
  matrix A({I, R}), B({J, R}), C({K, R});
  auto init = [&](matrix& F, int salt) {
    for (std::size_t q = 0; q < F.values().size(); ++q)
      F.values()[q] = 0.1 + static_cast<double>((q * 7919 + static_cast<std::size_t>(salt) * 104729) % 1000) / 1000.0;
  };
  init(A, 1), init(B, 2), init(C, 3);

  // MTTKRP check: generated (CSF and COO) against a loop over the entries.
  matrix M0({I, R}), M0c({I, R});
  M0(i, l) = X(i, j, k) * B(j, l) * C(k, l);
  M0c(i, l) = Xc(i, j, k) * B(j, l) * C(k, l);
  std::vector<double> ref(static_cast<std::size_t>(I * R), 0.0);
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto x = list.coords(e);
    for (int r = 0; r < R; ++r)
      ref[static_cast<std::size_t>(x[0] * R + r)] += list.value(e) * B.values()[static_cast<std::size_t>(x[1] * R + r)] *
                                                      C.values()[static_cast<std::size_t>(x[2] * R + r)];
  }
  const double mttkrp_err = std::max(max_abs_diff(M0, ref), max_abs_diff(M0c, ref));
  std::printf("%s: %d x %d x %d, %zu entries; rank %d\nMTTKRP (CSF and COO) vs reference loop: max |diff| %.2e\n",
              path.c_str(), I, J, K, X.stored(), R, mttkrp_err);
  bool ok = mttkrp_err <= 1e-9;

  scalar<double> s;
  s() = X(i, j, k) * X(i, j, k);
  const double norm_x2 = s.value();
  matrix GA({R, R}), GB({R, R}), GC({R, R}), W({R, R}), M1({J, R}), M2({K, R});
  auto gram = [&](matrix& G, const matrix& F) { G(l, m) = F(j, l) * F(j, m); };
  gram(GA, A), gram(GB, B), gram(GC, C);
  double previous = -1.0;
  for (int it = 1; it <= iterations; ++it) {
    M0(i, l) = X(i, j, k) * B(j, l) * C(k, l);
    W(l, m) = GB(l, m) * GC(l, m);
    solve_rows(M0, W, A);
    gram(GA, A);
    M1(j, l) = X(i, j, k) * A(i, l) * C(k, l);
    W(l, m) = GA(l, m) * GC(l, m);
    solve_rows(M1, W, B);
    gram(GB, B);
    M2(k, l) = X(i, j, k) * A(i, l) * B(j, l);
    W(l, m) = GA(l, m) * GB(l, m);
    solve_rows(M2, W, C);
    gram(GC, C);
    // ||X - model||^2 = ||X||^2 - 2 <X, model> + ||model||^2, with
    // <X, model> = sum M2 .* C and ||model||^2 = sum (GA .* GB .* GC).
    s() = M2(k, l) * C(k, l);
    const double inner = s.value();
    s() = GA(l, m) * GB(l, m) * GC(l, m);
    const double norm_m2 = s.value();
    const double fit = 1.0 - std::sqrt(std::max(0.0, norm_x2 - 2 * inner + norm_m2)) / std::sqrt(norm_x2);
    std::printf("iteration %2d: fit %.6f\n", it, fit);
    if (fit < previous - 1e-9) {
      std::printf("the fit decreased\n");
      ok = false;
    }
    previous = fit;
  }
  if (!(previous > 0.0)) ok = false;
  std::printf(ok ? "CP-ALS ok\n" : "CP-ALS FAILED\n");
  return ok ? 0 : 1;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "cp_als: %s\n", ex.what());
  return 2;
}
