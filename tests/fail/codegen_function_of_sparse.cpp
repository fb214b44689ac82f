// EXPECT: the argument of exp, log, sqrt or erf, and the divisor of /, must be dense
// exp of a sparse matrix: exp(0) = 1 is needed where A stores nothing.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  tensor<double, dense_row_major> D({2, 2}), C({2, 2});
#ifdef TL_SHOULD_FAIL
  C(i, j) = exp(A(i, j)) * D(i, j);
#else
  C(i, j) = A(i, j) * exp(D(i, j));
#endif
  return static_cast<int>(C.stored()) - 4;
}
