// EXPECT: a permuted level \(permuted_dense\) must carry a block_inner<d,B> map, and a format has at most one
// Block CSR with both block dimensions' lanes permuted: pack sorts one
// dimension's rows (a format holds one permutation).
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
using fmt = format<levels<dense<>, compressed<>, permuted_dense<4>, permuted_dense<4>>,
                   level_map<block_outer<0, 2>, block_outer<1, 2>, block_inner<0, 2>, block_inner<1, 2>>>;
#else
using fmt = format<levels<dense<>, compressed<>, permuted_dense<4>, dense<>>,
                   level_map<block_outer<0, 2>, block_outer<1, 2>, block_inner<0, 2>, block_inner<1, 2>>>;
#endif
int main() {
  coordinate_list<double> l({3, 3});
  l.push_back({1, 2}, 1.0);
  return static_cast<int>(pack<fmt>(l).stored()) - 4;
}
