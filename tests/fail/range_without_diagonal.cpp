// EXPECT: a range \(offset\) level needs the level 1 \(2\) above it to carry it
// A range level reads the diagonal offsets of its parent's coordinate, so a
// format that puts it under a plain dense level is rejected.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using fmt = format<levels<dense<>, range<>>>;
#else
using fmt = format<levels<dense<>, range<>, offset<>>, level_map<diagonal<0, 1>, mode<0>, mode<1>>>;
#endif
int main() { return static_cast<int>(fmt::num_levels); }
