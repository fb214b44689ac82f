// EXPECT: tensorlev: a tensor of this statement keeps its arrays in memory the host cannot read
// A tensor whose storage lives where the host cannot read it (a Kokkos View
// in CUDA or HIP memory: kokkos_storage<Kokkos::CudaSpace> says so through
// host_accessible) cannot run on a host executor (the device form, on a
// launcher that reaches that memory, runs it). Here a storage policy like
// borrowed<> that says its memory is a device's; the twin uses borrowed<>
// itself.
#include <span>
#include <vector>

#include "tensorlev/tensorlev.hpp"
#include "device_stubs.hpp"

int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
#ifdef TL_SHOULD_FAIL
  using S = device_memory;
#else
  using S = borrowed<>;
#endif
  std::vector<double> xs(3, 1.0);
  const tensor<const double, dense_vector, int, S> x({3}, {dense_level<int>(3)}, std::span<const double>(xs));
  tensor<double, dense_vector> y({3});
  y(i) = x(i) + x(i);
  return static_cast<int>(y.values()[0]);
}
