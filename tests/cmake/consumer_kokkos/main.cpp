// SpMV on Kokkos' default host execution space from an installed tensorlev,
// checked against the serial kernel.
#include <tensorlev/kokkos.hpp>
#include <tensorlev/tensorlev.hpp>

#include <algorithm>
#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  using namespace tensorlev;
  using namespace tensorlev::indices;
  coordinate_list<double> list({500, 300});
  for (int e = 0; e < 4000; ++e) list.push_back({(e * 7919) % 500, (e * 104729) % 300}, (e % 9) - 4.0);
  const auto A = pack<csr>(list);
  tensor<double, dense_vector> x({300}), serial_y({500}), parallel_y({500});
  for (int c = 0; c < 300; ++c) x.values()[static_cast<std::size_t>(c)] = c % 5;
  serial_y(i) = A(i, j) * x(j);
  compute(kokkos_executor<>{}, parallel_y(i), A(i, j) * x(j));
  const bool ok = std::ranges::equal(serial_y.values(), parallel_y.values());
  std::printf("SpMV on %s with %d threads: %s\n", Kokkos::DefaultHostExecutionSpace::name(),
              Kokkos::DefaultHostExecutionSpace().concurrency(), ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
