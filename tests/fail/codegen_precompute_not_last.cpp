// EXPECT: precompute\(v\) must name the variable of the output's last level
// Precomputing over i into a CSR output: the workspace must be a row over j.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
  auto B = A;
  auto C = A;
#ifdef TL_SHOULD_FAIL
  compute(C(i, j), A(i, j) + B(i, j), precompute(i));
#else
  compute(C(i, j), A(i, j) + B(i, j), precompute(j));
#endif
  return static_cast<int>(C.stored());
}
