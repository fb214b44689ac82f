// EXPECT: tensorlev: a tensor of this statement keeps its arrays in memory this execution space cannot access
// The device form checks at compile time that the launcher reaches every
// tensor's memory: here a launcher that reaches device memory only (as
// kokkos_executor<Kokkos::Cuda> reaches CudaSpace) and an operand in host
// memory; the twin's operand says its arrays are device memory.
#include <span>
#include <vector>

#include "tensorlev/tensorlev.hpp"
#define TL_STUB_DEVICE_ONLY
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  std::vector<double> xs(3, 1.0), ys(3, 0.0);
#ifdef TL_SHOULD_FAIL
  using S = borrowed<>;
#else
  using S = device_memory;
#endif
  const tensor<const double, dense_vector, int, S> x({3}, {dense_level<int>(3)}, std::span<const double>(xs));
  tensor<double, dense_vector, int, device_memory> y({3}, {dense_level<int>(3)}, std::span<double>(ys));
  cg::run_device_form<false>(stub_launcher{}, y(i), x(i) * x(i));
  return 0;
}
