// Google Benchmark under mpirun: every rank runs each benchmark for the
// same fixed number of iterations (so collectives stay in step); an
// iteration's time is the slowest rank's (barrier, run, max over ranks);
// only rank 0 reports.
#pragma once
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <chrono>

namespace tlbench {

// Times one iteration of f across the ranks and records it.
template <class F>
void timed(benchmark::State& state, F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  f();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  state.SetIterationTime(s);
}

class null_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

inline int run_all(int& argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    null_reporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace tlbench
