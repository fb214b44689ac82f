// EXPECT: the level Lane levels above must be a compressed_aos level with R lanes
// An array-of-structs singleton needs the tuple-owning head above it.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using fmt = format<levels<compressed_nonunique, singleton_aos<2, 1>>>;
#else
using fmt = format<levels<compressed_aos<2>, singleton_aos<2, 1>>>;
#endif
int main() {
  coordinate_list<double> l({3, 3});
  l.push_back({1, 2}, 1.0);
  return static_cast<int>(pack<fmt>(l).stored()) - 1;
}
