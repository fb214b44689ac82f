// EXPECT: every argument after the executor is a deferred statement
// fuse() given a statement that has already run (an access) instead of a deferred one.
#include "tensorlev/fuse.hpp"
#include "tensorlev/formats.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  tensor<double, dense_vector> y({2}), x({2});
#ifdef TL_SHOULD_FAIL
  fuse(serial, y(i) = x(i));
#else
  fuse(serial, defer(y(i)) = x(i));
#endif
  return static_cast<int>(y.stored()) - 2;
}
