// EXPECT: the loop_order must name every index variable of the statement exactly once
// A loop order that forgets j.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  tensor<double, dense_vector> x({2}), y({2});
#ifdef TL_SHOULD_FAIL
  compute(y(i), A(i, j) * x(j), loop_order<'i'>{});
#else
  compute(y(i), A(i, j) * x(j), loop_order<'i', 'j'>{});
#endif
  return static_cast<int>(y.stored()) - 2;
}
