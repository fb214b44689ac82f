// EXPECT: a temporary \(tensorlev::temporary\) holds values only inside fuse
// A temporary written by a statement that runs on its own: it has no values there.
#include "tensorlev/fuse.hpp"
#include "tensorlev/formats.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  tensor<double, dense_vector> y({2}), x({2});
  temporary<double> t({2});
#ifdef TL_SHOULD_FAIL
  t(i) = x(i);
#else
  fuse(serial, defer(t(i)) = x(i), defer(y(i)) = t(i));
#endif
  return static_cast<int>(y.stored()) - 2;
}
