// EXPECT: tensorlev: the statement is too big for one kernel: at most 16 accesses, 64 expression nodes and 16 loop variables
// Four BCSR operands bring four private block variables each: 16 + i, j, m
// loop variables are more than a kernel's descriptor holds (found by the
// differential tester, where it failed with "constexpr variable 'd' must be
// initialized by a constant expression"). The twin has one BCSR operand
// per statement.
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
int main() {
  const auto B = pack<bcsr<2>>(coordinate_list<double, int>({4, 4}));
  tensor<double, dense_row_major> O({4, 4});
#ifdef TL_SHOULD_FAIL
  O(i, j) = B(i, j) * B(i, j) - (B(i, j) + B(m, i) * B(i, j));
#else
  O(i, j) = B(i, j);
  O(i, j) += -B(i, j);
#endif
  return static_cast<int>(O.stored()) - 16;
}
