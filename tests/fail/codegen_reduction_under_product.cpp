// EXPECT: a reduction variable is used on only one side of a \+ or - that is nested inside a product
// (x(j) + 1) * 2 sums j over x only: the sum must be split or the product
// distributed; the twin distributes it.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  tensor<double, dense_vector> x({3}), y({2});
#ifdef TL_SHOULD_FAIL
  y(i) = (x(j) + 1.0) * 2.0;
#else
  y(i) = x(j) * 2.0 + 2.0;
#endif
  return static_cast<int>(y.stored()) - 2;
}
