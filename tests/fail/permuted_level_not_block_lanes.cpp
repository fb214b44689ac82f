// EXPECT: a permuted level \(permuted_dense\) must carry a block_inner<d,B> map
// A permuted dense level permutes the rows a block's lanes stand for: at a
// mode<d> map (here CSR's rows) it has no block to permute.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using fmt = format<levels<permuted_dense<>, compressed<>>>;
#else
using fmt = sell_sigma<4>;
#endif
int main() {
  coordinate_list<double> l({3, 3});
  l.push_back({1, 2}, 1.0);
  return static_cast<int>(pack<fmt>(l).stored()) - 4;
}
