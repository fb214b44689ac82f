// EXPECT: the level map must have one entry per level \(wrong number of levels\)
// A format whose level map lists fewer maps than levels.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using bad = format<levels<dense<>, compressed<>>, modes<0>>;
#else
using bad = format<levels<dense<>, compressed<>>, modes<0, 1>>;
#endif
int main() { return static_cast<int>(bad::order) - 2; }
