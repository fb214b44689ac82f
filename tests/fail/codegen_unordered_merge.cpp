// EXPECT: an unordered level \(e.g. hashed\) would have to be co-iterated with other levels
// Adding two sparse vectors merges them in coordinate order; an unordered
// compressed level cannot be merged. The twin's x is ordered.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
struct unordered_sparse_vector : format<levels<compressed<sparse_options{.ordered = false}>>> {};
int main() {
#ifdef TL_SHOULD_FAIL
  auto x = pack<unordered_sparse_vector>(coordinate_list<double>({3}));
#else
  auto x = pack<sparse_vector>(coordinate_list<double>({3}));
#endif
  auto z = pack<sparse_vector>(coordinate_list<double>({3}));
  tensor<double, dense_vector> y({3});
  y(i) = x(i) + z(i);
  return static_cast<int>(y.stored()) - 3;
}
