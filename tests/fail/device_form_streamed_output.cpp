// EXPECT: tensorlev: the device form assembles sparse outputs whose levels are dense, then compressed or singleton levels
// EXPECT_ONE_ERROR
// A CSR output of a CSC operand is reached column by column: on a host
// executor its entries are streamed into a list and packed, which the
// device form does not do; the readable refusal comes alone (no error about
// the output tensor being copied bytewise, none about a missing member).
// The twin reads a CSR operand, whose rows arrive in order (count, scan,
// fill).
#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
#ifdef TL_SHOULD_FAIL
  const tensor<double, csc> A;
#else
  const tensor<double, csr> A;
#endif
  tensor<double, csr> C;
  cg::run_device_form<false>(stub_launcher{}, C(i, j), A(i, j) * 2.0);
  return 0;
}
