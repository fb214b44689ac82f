// EXPECT: tensorlev: the device form assembles sparse outputs whose levels are dense, then one compressed level
// The device form assembles CSR-like outputs only (count, scan, fill);
// DCSR here is refused, the twin writes the same sum into CSR.
#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  const tensor<double, csr> A;
#ifdef TL_SHOULD_FAIL
  tensor<double, dcsr> C;
#else
  tensor<double, csr> C;
#endif
  cg::run_device_form<false>(stub_launcher{}, C(i, j), A(i, j) + A(i, j));
  return 0;
}
