#pragma once
// The second executor of the fuse tests: chunks scrambled on one thread,
// or, built with TL_FUSE_KOKKOS (tests/kokkos), a kokkos_executor on the
// host space's threads, for which this header also defines main (Kokkos
// initialized around the tests). Include it once per test binary.
#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "common.hpp"
#include "tensorlev/execution.hpp"

#ifdef TL_FUSE_KOKKOS
#include <Kokkos_Core.hpp>

#include "tensorlev/kokkos.hpp"
#endif

namespace tltest {

/// A random n x n matrix for the fuse tests: up to `most` random columns a
/// row (duplicates merged, so some rows are empty), values -3..3 (sums
/// stay exact); its coordinates and values are appended to c and v.
inline tensorlev::coordinate_list<double, int> random_rows(int n, int most, std::mt19937_64& rng,
                                                          std::vector<std::array<int, 2>>& c,
                                                          std::vector<double>& v) {
  std::uniform_int_distribution<int> val(-3, 3), per_row(0, most);
  tensorlev::coordinate_list<double, int> list({n, n});
  for (int x = 0; x < n; ++x) {
    std::vector<int> cols;
    for (int k = per_row(rng); k > 0; --k) cols.push_back(std::uniform_int_distribution<int>(0, n - 1)(rng));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int col : cols) {
      const double value = val(rng);
      list.push_back({x, col}, value);
      c.push_back({x, col});
      v.push_back(value);
    }
  }
  return list;
}

#ifdef TL_FUSE_KOKKOS
inline const tensorlev::kokkos_executor<>* kokkos_space = nullptr;  // set by main while Kokkos is initialized
inline tensorlev::executor second_executor() { return *kokkos_space; }
#else
inline tensorlev::executor second_executor() {
  static const tensorlev::chunked_serial_executor scrambled(3);
  return scrambled;
}
#endif

}  // namespace tltest

#ifdef TL_FUSE_KOKKOS
int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const tensorlev::kokkos_executor<> space;
  tltest::kokkos_space = &space;
  EXPECT_TRUE(tltest::second_executor().parallel());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
#endif
