// EXPECT: tensorlev::convert: the target format has a different order
#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
int main() {
  coordinate_list<double> l({2, 2});
  const auto a = pack<csr>(l);
#ifdef TL_SHOULD_FAIL
  return static_cast<int>(convert<csf>(a).stored());
#else
  return static_cast<int>(convert<coo>(a).stored());
#endif
}
