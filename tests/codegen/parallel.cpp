// The chunked code path of generated kernels without threads: every chunk
// runs on the calling thread in a scrambled order (odd chunks backwards,
// then even ones), and the chunks are counted. Runs under the sanitizers;
// tests/kokkos runs the same cases (parallel_cases.cpp, linked into both)
// on Kokkos OpenMP threads.
#include "parallel_common.hpp"

namespace tltest {
namespace {
long chunk_count = 0;

class counting_executor {
 public:
  operator tensorlev::executor() const noexcept { return tensorlev::executor(this, &run, 4); }

 private:
  static void run(const void*, std::size_t n, tensorlev::executor::chunk_fn fn, void* ctx) {
    for (std::size_t c = n; c-- > 0;)
      if (c % 2 == 1) fn(ctx, c), ++chunk_count;
    for (std::size_t c = 0; c < n; c += 2) fn(ctx, c), ++chunk_count;
  }
};
const counting_executor counting;
}  // namespace

tensorlev::executor test_executor() { return counting; }
long chunks_run() { return chunk_count; }
}  // namespace tltest

TEST(Parallel, SerialExecutorDoesNotChunk) {
  EXPECT_FALSE(tensorlev::serial.parallel());
  EXPECT_TRUE(tensorlev::executor(tensorlev::chunked_serial_executor{}).parallel());
  tensorlev::tensor<double, tensorlev::dense_vector> y({3}), x({3});
  for (auto& v : x.values()) v = 2;
  using namespace tensorlev::indices;
  tensorlev::compute(tensorlev::chunked_serial_executor{}, y(i), x(i) * x(i));
  EXPECT_EQ(y.values()[2], 4.0);
}
