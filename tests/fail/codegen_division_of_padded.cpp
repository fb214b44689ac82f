// EXPECT: not ELL, SELL, DIA, BCSR or CSB: their padding and block fill are stored zeros
// ELL's padding slots would divide 0 by the divisor's component at column 0.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<ell>(coordinate_list<double>({2, 2}));
  tensor<double, dense_row_major> D({2, 2});
  tensor<double, dense_vector> y({2});
#ifdef TL_SHOULD_FAIL
  y(i) = A(i, j) / D(i, j);
#else
  y(i) = A(i, j) * D(i, j);
#endif
  return static_cast<int>(y.stored()) - 2;
}
