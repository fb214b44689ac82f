// EXPECT: tensorlev::locate: this level type has no locate capability
// Asking a compressed level for locate does not compile; the twin asks a
// dense level.
#include "tensorlev/tensorlev.hpp"
int main() {
  using namespace tensorlev;
  const ancestor_coord<int> coords[1] = {0};
#ifdef TL_SHOULD_FAIL
  compressed_level<int> l;
#else
  dense_level<int> l(4);
#endif
  return locate(l, 0, ancestors<int>(coords, 1), 2).found ? 0 : 1;
}
