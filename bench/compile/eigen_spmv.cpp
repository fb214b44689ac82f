// One Eigen sparse matrix-vector product, for the compile-time comparison.
#include <Eigen/SparseCore>

void spmv(const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& A, const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  y.noalias() = A * x;
}
