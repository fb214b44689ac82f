// EXPECT: no loop order visits every operand's levels outermost first \(no concordant order\)
// CSR (rows first) plus CSC (columns first) has no loop order that visits
// both in storage order; the twin stores B as CSR.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
#ifdef TL_SHOULD_FAIL
  auto B = pack<csc>(coordinate_list<double>({2, 2}));
#else
  auto B = pack<csr>(coordinate_list<double>({2, 2}));
#endif
  auto C = pack<csr>(coordinate_list<double>({2, 2}));
  C(i, j) = A(i, j) + B(i, j);
  return static_cast<int>(C.stored());
}
