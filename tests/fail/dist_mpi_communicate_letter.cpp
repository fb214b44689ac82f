// EXPECT: number the input from 0
// matmul's old schedule named inputs by letter; the one schedule type
// numbers them, and a letter (which would convert to input 65) is refused.
#include "tensorlev/dist/schedule.hpp"
namespace td = tensorlev::dist;
int main() {
#ifdef TL_SHOULD_FAIL
  auto s = td::matmul_schedule::summa().communicate('A', 'i');
#else
  auto s = td::matmul_schedule::summa().communicate(0, 'i');
#endif
  return s.distributed().size() == 2 ? 0 : 1;
}
