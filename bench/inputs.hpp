// The suite's synthetic inputs, shared by bench_suite_* (suite.hpp) and
// bench_kokkos_kernels (a separate project that cannot include Kokkos'
// OpenMP build): the 27-point stencil, the vector x, and the symmetric
// positive definite systems the CG benchmarks solve.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensorlev/coordinate_list.hpp"

namespace tlbench {

// The 27-point stencil on an n x n x n grid (lexicographic numbering):
// row (a, b, c) couples with every neighbour (a+da, b+db, c+dc) inside the
// grid, da, db, dc in {-1, 0, 1}; diagonal 26, off-diagonal -1.
inline tensorlev::coordinate_list<double, int> stencil27(int n) {
  const int N = n * n * n;
  tensorlev::coordinate_list<double, int> l({N, N});
  l.reserve(static_cast<std::size_t>(N) * 27);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < n; ++c) {
        const int r = (a * n + b) * n + c;
        for (int da = -1; da <= 1; ++da)
          for (int db = -1; db <= 1; ++db)
            for (int dc = -1; dc <= 1; ++dc) {
              const int x = a + da, y = b + db, z = c + dc;
              if (x < 0 || y < 0 || z < 0 || x >= n || y >= n || z >= n) continue;
              const int col = (x * n + y) * n + z;
              l.push_back({r, col}, col == r ? 26.0 : -1.0);
            }
      }
  return l;
}

// x(j) = 1 + (j % 7) / 8, in every binary.
inline double x_value(int j) { return 1.0 + static_cast<double>(j % 7) / 8.0; }

// The system the CG benchmarks solve (bench_suite_fuse, bench_petsc): a
// suite matrix made symmetric positive definite, A + A^T off the diagonal
// (its diagonal dropped) and each diagonal entry 1 + its row's
// off-diagonal absolute sum, as a list with duplicates (pack sums them);
// b = A x for x(j) = x_value(j) (A * ones would be an eigenvector of
// matrices whose rows all sum to one value, the stencil's: CG would stop
// after one step).
struct spd_system {
  tensorlev::coordinate_list<double, int> A;
  std::vector<double> b;
};
inline spd_system make_spd(const tensorlev::coordinate_list<double, int>& m) {
  const int n = m.dims()[0];
  spd_system s{tensorlev::coordinate_list<double, int>({n, n}), std::vector<double>(static_cast<std::size_t>(n), 0.0)};
  std::vector<double> diag(static_cast<std::size_t>(n), 1.0);
  const auto add = [&](int r, int c, double v) {
    s.A.push_back({r, c}, v);
    s.b[static_cast<std::size_t>(r)] += v * x_value(c);
  };
  for (std::size_t e = 0; e < m.size(); ++e) {
    const auto crd = m.coords(e);
    const int r = crd[0], c = crd[1];
    const double v = m.value(e);
    if (r == c) continue;
    add(r, c, v);
    add(c, r, v);
    diag[static_cast<std::size_t>(r)] += std::abs(v);
    diag[static_cast<std::size_t>(c)] += std::abs(v);
  }
  for (int r = 0; r < n; ++r) add(r, r, diag[static_cast<std::size_t>(r)]);
  return s;
}

// Values grouped_rows<G> stores for m: G x the distinct (row / G, column)
// pairs (one sort of the pairs; duplicates count once).
inline std::size_t grouped_values(const tensorlev::coordinate_list<double, int>& m, std::size_t G) {
  const int* x = m.raw_coords().data();
  std::vector<std::uint64_t> key(m.size());
  for (std::size_t e = 0; e < key.size(); ++e)
    key[e] = (static_cast<std::uint64_t>(x[2 * e]) / G) << 32 | static_cast<std::uint32_t>(x[2 * e + 1]);
  std::sort(key.begin(), key.end());
  return G * static_cast<std::size_t>(std::unique(key.begin(), key.end()) - key.begin());
}

}  // namespace tlbench
