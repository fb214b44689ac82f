// EXPECT: must be floating point or complex
// Integer values: 0.5 cast to 0 would divide by zero.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  tensor<int, dense_vector> y({2}), x({2});
#ifdef TL_SHOULD_FAIL
  y(i) = x(i) / 0.5;
#else
  y(i) = x(i) * 2;
#endif
  return static_cast<int>(y.stored()) - 2;
}
