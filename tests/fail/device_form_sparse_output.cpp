// EXPECT: tensorlev: the device form writes dense outputs and scalars; a sparse output is not assembled on a device yet
// The device form assembles no sparse output yet (CSR here); the twin
// writes the same sum into a dense matrix.
#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  const tensor<double, csr> A;
#ifdef TL_SHOULD_FAIL
  tensor<double, csr> C;
#else
  tensor<double, dense_row_major> C({3, 3});
#endif
  cg::run_device_form<false>(stub_launcher{}, C(i, j), A(i, j) + A(i, j));
  return 0;
}
