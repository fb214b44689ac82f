// EXPECT: tensorlev: the device form assembles sparse outputs whose levels are dense, then compressed or singleton levels
// The device form assembles CSR-like outputs (count, scan, fill), DCSR and
// COO matrices through CSR's shape, and CSF and COO tensors by chunked
// count, scan and fill; a hashed output is refused, the twin writes the
// same sum into a sparse vector.
#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  const tensor<double, sparse_vector> A;
#ifdef TL_SHOULD_FAIL
  tensor<double, hash_vector> C;
#else
  tensor<double, sparse_vector> C;
#endif
  cg::run_device_form<false>(stub_launcher{}, C(i), A(i) + A(i));
  return 0;
}
