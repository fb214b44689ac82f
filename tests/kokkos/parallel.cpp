// The parallel cases on Kokkos' default host execution space (OpenMP in
// CI), run by ctest with KOKKOS_NUM_THREADS=2.
#include <Kokkos_Core.hpp>
#include <cstdlib>

#include "../codegen/parallel_common.hpp"
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

// Level arrays held in Kokkos Views (vector_view, csr_view): SpMV and
// a scalar reduction on the executor, against the same statements on tensors.
TEST(Kokkos, KernelsOverKokkosViews) {
  std::mt19937_64 rng(611);
  for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 9}, {40, 30}, {3000, 700}}) {
    auto A = random_operand<csr>(d, 0.05, rng);
    auto x = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
    const auto& pos = A.t.level<1>().pos();
    const auto& crd = A.t.level<1>().crd();
    Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", pos.size()), entries("entries", crd.size());
    Kokkos::View<double*, Kokkos::HostSpace> vals("vals", A.t.values().size()), xk("x", d[1]), yk("y", d[0]);
    for (std::size_t p = 0; p < pos.size(); ++p) row_map(p) = pos[p];
    for (std::size_t p = 0; p < crd.size(); ++p) entries(p) = crd[p];
    for (std::size_t p = 0; p < vals.extent(0); ++p) vals(p) = A.t.values()[p];
    for (int c = 0; c < d[1]; ++c) xk(c) = x.t.values()[static_cast<std::size_t>(c)];
    Kokkos::View<const int*, Kokkos::HostSpace> row_map_c = row_map;
    Kokkos::View<const double*, Kokkos::HostSpace> vals_c = vals, x_c = xk;
    const auto Av = tensorlev::csr_view(d[0], d[1], row_map_c, entries, vals_c);
    const auto xv = tensorlev::vector_view(x_c);
    auto yv = tensorlev::vector_view(yk);
    static_assert(std::is_same_v<std::remove_const_t<decltype(Av)>, tensorlev::tensor_view<const double, csr, int>>);
    compute(test_executor(), yv(i), Av(i, j) * xv(j));
    tensor<double, dense_vector> want({d[0]});
    want(i) = A.t(i, j) * x.t(j);
    EXPECT_EQ(differ<double>(std::span<const double>(yk.data(), yk.extent(0)), want.values(), "SpMV over Kokkos Views"), 0u);
    scalar<double> s_want, s_got;
    s_want() = x.t(i) * A.t(j, i) * x.t(i);
    compute(test_executor(), s_got(), xv(i) * Av(j, i) * xv(i));
    EXPECT_EQ(s_got.value(), s_want.value());
  }
  // Extents that cannot be a CSR matrix of that shape are refused.
  Kokkos::View<int*, Kokkos::HostSpace> rm("rm", 3), en("en", 2);
  Kokkos::View<double*, Kokkos::HostSpace> va("va", 1);
  EXPECT_THROW((void)tensorlev::csr_view(2, 2, rm, en, va), std::invalid_argument);
  EXPECT_THROW((void)tensorlev::csr_view(5, 2, rm, en, Kokkos::View<double*, Kokkos::HostSpace>("v2", 2)),
               std::invalid_argument);
}

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const tensorlev::kokkos_executor<> space;
  tltest::space = &space;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
