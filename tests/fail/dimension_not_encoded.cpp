// EXPECT: every logical dimension must be encoded by exactly one mode<d> level
// Two levels encode dimension 0 and none encodes dimension 1.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using bad = format<levels<dense<>, compressed<>>, modes<1, 1>>;
#else
using bad = format<levels<dense<>, compressed<>>, modes<1, 0>>;
#endif
int main() { return static_cast<int>(bad::order) - 2; }
