// EXPECT: compute_numeric recomputes the values of a product assembled through a workspace
// compute_numeric on a statement whose output is not assembled through a
// workspace (an SpMV into a dense vector): a readable compile error.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  const auto A = pack<csr>(coordinate_list<double, int>({3, 3}));
  tensor<double, dense_vector> x({3});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}));
#ifdef TL_SHOULD_FAIL
  tensor<double, dense_vector> y({3});
  compute_numeric(y(i), A(i, j) * x(j));
#else
  compute_numeric(C(i, j), A(i, k) * A(k, j));
#endif
  return static_cast<int>(C.stored());
}
