// EXPECT: tensorlev: this sparse output's arrays cannot grow
// A sparse output whose storage owns arrays that cannot grow (as device
// memory cannot) is assembled only by the device form's count, scan and
// fill; a host executor refuses it. Here owned host vectors marked not
// growable; the twin uses owning<> itself.
#include "tensorlev/tensorlev.hpp"

struct fixed_arrays : tensorlev::owning<> {
  static constexpr bool growable = false;
};

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  const auto A = pack<csr>(coordinate_list<double, int>({3, 3}));
#ifdef TL_SHOULD_FAIL
  tensor<double, csr, int, fixed_arrays> C;
#else
  tensor<double, csr, int, owning<>> C;
#endif
  C(i, j) = A(i, j) * 2.0;
  return static_cast<int>(C.stored());
}
