// One generated SpMV through the umbrella header (everything single-node).
#include "tensorlev/tensorlev.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

void spmv(const tensor<double, csr>& A, const tensor<double, dense_vector>& x, tensor<double, dense_vector>& y) {
  y(i) = A(i, j) * x(j);
}
