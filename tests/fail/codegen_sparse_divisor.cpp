// EXPECT: the argument of exp, log, sqrt or erf, and the divisor of /, must be dense
// A sparse divisor: the quotient is not defined where A stores nothing.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  tensor<double, dense_row_major> D({2, 2}), C({2, 2});
#ifdef TL_SHOULD_FAIL
  C(i, j) = D(i, j) / A(i, j);
#else
  C(i, j) = A(i, j) / D(i, j);
#endif
  return static_cast<int>(C.stored()) - 4;
}
