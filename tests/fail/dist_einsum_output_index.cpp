// EXPECT: every output index must appear in some input
// An einsum whose output names an index no input has.
#include "tensorlev/dist/einsum.hpp"
#ifdef TL_SHOULD_FAIL
using E = tensorlev::dist::einsum<"ij,jk->iz">;
#else
using E = tensorlev::dist::einsum<"ij,jk->ik">;
#endif
static_assert(E::inputs == 2);
int main() { return 0; }
