#pragma once
// Small hand-made products for the numeric_plan tables' tests
// (jammed_rows.cpp, slot_table.cpp): square matrices from coordinate
// pairs, and a dense reference product.
#include "common.hpp"

namespace tltest {

// An n x n matrix in format F with entries at the (row, column) pairs of
// coords, valued scale * 1, scale * 2, ... in that order.
template <class F = tensorlev::csr>
tensorlev::tensor<double, F> square(int n, std::vector<int> coords, double scale = 1.0) {
  std::vector<double> vals;
  for (std::size_t x = 0; x < coords.size() / 2; ++x) vals.push_back(scale * (1.0 + static_cast<double>(x)));
  return tensorlev::pack<F>(tensorlev::coordinate_list<double, int>({n, n}, std::move(coords), std::move(vals)));
}

// The dense row-major product of A (m x n) and B (n x p), from their dense
// expansions.
template <class TA, class TB>
std::vector<double> dense_product(const TA& A, const TB& B, int m, int n, int p) {
  const auto a = to_dense(A), b = to_dense(B);
  std::vector<double> r(static_cast<std::size_t>(m) * static_cast<std::size_t>(p), 0.0);
  for (int x = 0; x < m; ++x)
    for (int col = 0; col < p; ++col)
      for (int q = 0; q < n; ++q)
        r[static_cast<std::size_t>(x * p + col)] +=
            a[static_cast<std::size_t>(x * n + q)] * b[static_cast<std::size_t>(q * p + col)];
  return r;
}

}  // namespace tltest
