// Eigen in, Eigen out: a compressed Eigen::SparseMatrix and a dense
// Eigen::MatrixXd viewed in place, an SpMM written into an Eigen matrix,
// and a sparse tensorlev result handed back as an Eigen::Map (no copies).
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cstdio>
#include <vector>

#include "tensorlev/interop/eigen.hpp"
#include "tensorlev/tensorlev.hpp"

int main() {
  using namespace tensorlev::indices;
  std::vector<Eigen::Triplet<double>> t{{0, 0, 1}, {0, 2, 2}, {2, 0, 3}, {2, 1, 4}};
  Eigen::SparseMatrix<double, Eigen::RowMajor> a(3, 3);
  a.setFromTriplets(t.begin(), t.end());
  const Eigen::MatrixXd b = Eigen::MatrixXd::Ones(3, 2);
  Eigen::MatrixXd c(3, 2);

  const auto A = tensorlev::eigen_view(a);  // CSR over a's arrays
  auto C = tensorlev::eigen_view(c);        // column-major, written in place
  C(i, k) = A(i, j) * tensorlev::eigen_view(b)(j, k);

  auto S = tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({3, 3}));
  S(i, j) = A(i, j) + A(i, j);
  const auto s = tensorlev::eigen_map(S);  // Eigen::Map<const SparseMatrix<double, RowMajor, int>>

  const bool ok = c == a * b && s.toDense() == (2 * a).toDense();
  std::printf("C = A * B: %s; S = A + A seen by Eigen: %s\n", c == a * b ? "right" : "WRONG",
              s.toDense() == (2 * a).toDense() ? "right" : "WRONG");
  return ok ? 0 : 1;
}
