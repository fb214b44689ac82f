// EXPECT: precompute needs an output whose levels above the precomputed variable are dense
// A DCSR output has a compressed row level: there is no dense prefix to
// hold one workspace row per row.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  auto B = A;
#ifdef TL_SHOULD_FAIL
  auto C = pack<dcsr>(coordinate_list<double>({2, 2}));
#else
  auto C = A;
#endif
  compute(C(i, j), A(i, j) + B(i, j), precompute(j));
  return static_cast<int>(C.stored());
}
