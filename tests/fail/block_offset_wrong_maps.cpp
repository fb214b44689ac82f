// EXPECT: a level's own requirement on the level map \(its fits_maps\) is not met
// A block offset level computes its column from the block, the diagonal and
// the row in the block: under other maps (here DIA's, without blocks) the
// format is rejected.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using fmt = format<levels<dense<>, range<>, block_offset<4>>, level_map<diagonal<0, 1>, mode<0>, mode<1>>>;
#else
using fmt = blocked_dia<4>;
#endif
int main() {
  coordinate_list<double> l({5, 5});
  l.push_back({1, 2}, 1.0);
  return static_cast<int>(pack<fmt>(l).stored()) - 4;
}
