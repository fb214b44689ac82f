// The suite's synthetic inputs, shared by bench_suite_* (suite.hpp) and
// bench_kokkos_kernels (a separate project that cannot include Kokkos'
// OpenMP build): the 27-point stencil and the vector x.
#pragma once

#include <cstddef>

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

}  // namespace tlbench
