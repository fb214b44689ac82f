// EXPECT: tensorlev::tensor: a const value type needs borrowed storage
// An owning tensor of const values could never be filled; read-only data
// someone else owns is a view (borrowed storage), as in the twin.
#include "tensorlev/tensorlev.hpp"
int main() {
  using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
  const tensor<const double, csr> t;
#else
  const tensor<const double, csr, int, borrowed<>> t;
#endif
  return static_cast<int>(t.stored());
}
