// The benchmarks' synthetic inputs: an n x n matrix with `per_row`
// uniformly random columns in every row (repeats possible) and a vector,
// values uniform in [-1, 1), from one generator so that every benchmark
// binary builds the same matrix for the same (n, per_row).
#pragma once

#include <random>

#include "tensorlev/coordinate_list.hpp"

namespace tlbench {

struct random_problem {
  tensorlev::coordinate_list<double, int> matrix, vector;
};

inline random_problem random_rows(int n, int per_row) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> col(0, n - 1);
  std::uniform_real_distribution<double> val(-1, 1);
  random_problem p{tensorlev::coordinate_list<double, int>({n, n}), tensorlev::coordinate_list<double, int>({n})};
  p.matrix.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(per_row));
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < per_row; ++k) {
      const int c = col(rng);
      const double v = val(rng);
      p.matrix.push_back({r, c}, v);
    }
  for (int c = 0; c < n; ++c) p.vector.push_back({c}, val(rng));
  return p;
}

}  // namespace tlbench
