// EXPECT: tensorlev: the device form assembles sparse outputs whose levels are dense, then one compressed level
// The device form assembles CSR-like outputs (count, scan, fill) and DCSR
// and COO matrices through CSR's shape; a CSF output is refused, the twin
// writes the same sum into a DCSR matrix.
#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
#ifdef TL_SHOULD_FAIL
  const tensor<double, csf> A;
  tensor<double, csf> C;
  cg::run_device_form<false>(stub_launcher{}, C(i, j, k), A(i, j, k) + A(i, j, k));
#else
  const tensor<double, dcsr> A;
  tensor<double, dcsr> C;
  cg::run_device_form<false>(stub_launcher{}, C(i, j), A(i, j) + A(i, j));
#endif
  return 0;
}
