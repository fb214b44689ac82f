// EXPECT: tensorlev::erf: no erf for this value type
// EXPECT_ONE_ERROR
// erf of complex values: the standard library has none, and the builtins
// that stand in for <cmath> on real types must not accept one either.
#include <complex>

#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  tensor<std::complex<double>, dense_vector> x({2}), y({2});
  x.values()[0] = {1.0, 0.5};
#ifdef TL_SHOULD_FAIL
  y(i) = erf(x(i));
#else
  y(i) = exp(x(i)) + sqrt(x(i)) - log(x(i));
#endif
  return y.values()[0] == std::complex<double>{} ? 1 : 0;
}
