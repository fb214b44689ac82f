#pragma once
// main() of an MPI test binary: every rank runs the tests, only rank 0
// prints progress, every rank prints its failures (prefixed with its
// rank), and rank 0 prints "<what> passed on <N> ranks" when every rank
// passed (CTest's PASS_REGULAR_EXPRESSION). Include once per binary,
// define TL_MPI_TESTS_PASSED as the message's start.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#ifndef TL_MPI_TESTS_PASSED
#error "define TL_MPI_TESTS_PASSED (e.g. \"dist tests\") before including mpi_main.hpp"
#endif

namespace tltest {
// On ranks other than 0: print failures only, prefixed with the rank.
class rank_failure_printer : public ::testing::EmptyTestEventListener {
 public:
  explicit rank_failure_printer(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::printf("[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                  r.message());
      std::fflush(stdout);  // kept if the run is killed later (a rank left waiting)
    }
  }

 private:
  int rank_;
};
}  // namespace tltest

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new tltest::rank_failure_printer(rank));
  }
  const int rc = RUN_ALL_TESTS();
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst == 0) std::printf(TL_MPI_TESTS_PASSED " passed on %d ranks\n", size);
  MPI_Finalize();
  return worst;
}
