// One generated SpMV, for the compile-time comparison (bench/compile_time.sh).
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

void spmv(const tensor<double, csr>& A, const tensor<double, dense_vector>& x, tensor<double, dense_vector>& y) {
  y(i) = A(i, j) * x(j);
}
