// EXPECT: every name in Y must appear in X
// A machine entry that names no tensor dimension; the twin partitions y.
#include "tensorlev/dist/notation.hpp"
#ifdef TL_SHOULD_FAIL
using D = tensorlev::dist::distribution<"xy->xz">;
#else
using D = tensorlev::dist::distribution<"xy->xy">;
#endif
static_assert(D::tensor_order == 2);
int main() { return 0; }
