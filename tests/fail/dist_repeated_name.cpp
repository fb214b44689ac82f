// EXPECT: a tensor dimension is partitioned over two machine dimensions
// x partitioned over two machine dimensions; the twin broadcasts the second.
#include "tensorlev/dist/notation.hpp"
#ifdef TL_SHOULD_FAIL
using D = tensorlev::dist::distribution<"xy->xx">;
#else
using D = tensorlev::dist::distribution<"xy->x*">;
#endif
static_assert(D::machine_order() == 2);
int main() { return 0; }
