// The parallel cases on Kokkos' default host execution space (OpenMP in
// CI), run by ctest with --kokkos-threads=1, 2 and 4.
#include <Kokkos_Core.hpp>
#include <cstdlib>

#include "../codegen/parallel_cases.hpp"
#include "tensorlev/kokkos.hpp"

namespace tltest {
namespace {
const tensorlev::kokkos_executor<>* space = nullptr;  // set by main while Kokkos is initialized
}
tensorlev::executor test_executor() { return *space; }
long chunks_run() { return -1; }
}  // namespace tltest

TEST(Kokkos, RunsOnTheRequestedThreads) {
  const char* expect = std::getenv("TL_EXPECT_THREADS");
  const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  std::printf("execution space %s, %d threads\n", Kokkos::DefaultHostExecutionSpace::name(), threads);
  if (expect != nullptr) {
    EXPECT_EQ(threads, std::atoi(expect));
  }
  EXPECT_TRUE(tltest::test_executor().parallel());
}

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const tensorlev::kokkos_executor<> space;
  tltest::space = &space;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
