// EXPECT: a tensor must be accessed with exactly one index variable per dimension
// A matrix accessed with one index variable.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  tensor<double, dense_vector> y({2}), x({2});
#ifdef TL_SHOULD_FAIL
  y(i) = A(i) * x(i);
#else
  y(i) = A(i, j) * x(j);
#endif
  return static_cast<int>(y.stored()) - 2;
}
