// Two levels of the machine: MPI ranks, then a Kokkos execution space
// inside each rank (OpenMP in CI). Distributed kernels take the executor
// their local kernels run on; run by ctest under mpirun with 2 and 3 ranks
// and KOKKOS_NUM_THREADS=2, against the single-node serial results.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::dist;
using namespace tensorlev::indices;

namespace {
const tensorlev::kokkos_executor<>* space = nullptr;  // set by main while Kokkos is initialized

// Small integer values: every sum is exact, whatever the order.
template <class F>
tensor<double, F> random_tensor(std::vector<int> dims, double fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> val(1, 6);
  coordinate_list<double, int> list(dims);
  std::vector<int> x(dims.size(), 0);
  long long n = 1;
  for (int e : dims) n *= e;
  for (long long q = 0; q < n; ++q) {
    long long r = q;
    for (std::size_t d = dims.size(); d-- > 0;) {
      x[d] = static_cast<int>(r % dims[d]);
      r /= dims[d];
    }
    if (u(rng) < fill) list.push_back(x, val(rng));
  }
  return pack<F>(list);
}

template <class G, class T, class W>
void expect_gathered(const T& t, const W& want, const std::string& what) {
  const auto got = gather<G>(t);
  if (got) {
    EXPECT_EQ(to_dense(*got), to_dense(want)) << what;
  }
}

TEST(DistKokkos, KernelsRunOnTheExecutorInsideEachRank) {
  const executor ex = *space;
  const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  EXPECT_TRUE(ex.parallel());
  EXPECT_GE(threads, 1);
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  const bool l0 = line.rank() == 0;
  const bool p0 = plane.rank() == 0;
  // Row-blocked CSR SpMV.
  const auto A = random_tensor<csr>({37, 29}, 0.2, 1);
  const auto x = random_tensor<dense_vector>({29}, 1.0, 2);
  tensor<double, dense_vector> y_want({37});
  y_want(i) = A(i, j) * x(j);
  const auto dA = distribute<csr>(line, distribution_map<distribution<"xy->x">>({37, 29}, line.extents()),
                                  l0 ? &A : nullptr);
  const auto dx = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({29}, line.extents()),
                                           l0 ? &x : nullptr);
  auto dy = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({37}, line.extents()),
                                     l0 ? &y_want : nullptr);
  std::fill(dy.local().values().begin(), dy.local().values().end(), -1.0);
  spmv_rows(dy, dA, dx, ex);
  expect_gathered<dense_vector>(dy, y_want, "spmv_rows on Kokkos");
  // A dense matrix product by schedule, generated leaf on the executor.
  const auto P = random_tensor<dense_row_major>({23, 17}, 1.0, 3);
  const auto Q = random_tensor<dense_row_major>({17, 19}, 1.0, 4);
  tensor<double, dense_row_major> pq({23, 19});
  pq(i, j) = P(i, k) * Q(k, j);
  using tiles = distribution<"xy->xy">;
  const auto dP = distribute<dense_row_major>(plane, distribution_map<tiles>({23, 17}, plane.extents()),
                                              p0 ? &P : nullptr);
  const auto dQ = distribute<dense_row_major>(plane, distribution_map<tiles>({17, 19}, plane.extents()),
                                              p0 ? &Q : nullptr);
  auto dPQ = distribute<dense_row_major>(plane, distribution_map<tiles>({23, 19}, plane.extents()),
                                         p0 ? &pq : nullptr);
  std::fill(dPQ.local().values().begin(), dPQ.local().values().end(), -1.0);
  matmul(dPQ, dP, dQ, matmul_schedule::summa().blas(false), ex);
  expect_gathered<dense_row_major>(dPQ, pq, "SUMMA schedule on Kokkos");
  // A statement schedule whose leaf is the generated kernel (three
  // inputs: not a matrix product, so not BLAS) on the executor.
  const auto B = random_tensor<dense_tensor<3>>({9, 7, 5}, 1.0, 5);
  const auto c = random_tensor<dense_vector>({5}, 1.0, 6);
  tensor<double, dense_row_major> want({9, 7});
  want(i, j) = B(i, j, k) * c(k) * c(k);
  const auto dB = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xy">>({9, 7, 5}, plane.extents()),
                                              p0 ? &B : nullptr);
  const auto dc = distribute<dense_vector>(plane, distribution_map<distribution<"x->**">>({5}, plane.extents()),
                                           p0 ? &c : nullptr);
  auto dT = distribute<dense_row_major>(plane, distribution_map<tiles>({9, 7}, plane.extents()), p0 ? &want : nullptr);
  std::fill(dT.local().values().begin(), dT.local().values().end(), -1.0);
  static_assert(tensorlev::dist::detail::gemm_rows_vars<"ij", "ijk", "k", "k">() < 0);
  compute<"ij", "ijk", "k", "k">(ex, dT, statement_schedule().distribute("ij").divide('k', 2), dB, dc, dc);
  expect_gathered<dense_row_major>(dT, want, "statement on Kokkos");
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int worst = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const tensorlev::kokkos_executor<> ks;
    space = &ks;
    ::testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && worst == 0)
      std::printf("dist kokkos tests passed on %d ranks x %d threads\n", size,
                  Kokkos::DefaultHostExecutionSpace().concurrency());
  }
  MPI_Finalize();
  return worst;
}
