// The host primitives that stand in for <atomic> and <memory> on the
// kernel's include path (detail/atomic.hpp, detail/owned.hpp, shared_array):
// exact results under contention from several threads, ownership and
// sharing. Built twice: with the compiler's __atomic builtins and with
// TENSORLEV_USE_STD_ATOMIC (std::atomic_ref).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "tensorlev/codegen/output/common.hpp"
#include "tensorlev/detail/atomic.hpp"
#include "tensorlev/detail/owned.hpp"
#include "tensorlev/execution.hpp"
#include "tensorlev/storage.hpp"

#ifdef TENSORLEV_USE_STD_ATOMIC
#define PRIMITIVES PrimitivesStdAtomic
static_assert(TENSORLEV_STD_ATOMIC == 1);
#else
#define PRIMITIVES Primitives
#if defined(__GNUC__) || defined(__clang__)
#ifdef TENSORLEV_STD_ATOMIC
#error "the builtins were expected"
#endif
#endif
#endif

namespace {
using namespace tensorlev;

constexpr int threads = 4;
constexpr int rounds = 50000;

// Runs f(t) on threads t = 0..threads-1, started together (each waits for
// all to be ready), so that their work overlaps.
template <class F>
void on_threads(F f) {
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      f(t);
    });
  for (auto& t : ts) t.join();
}

TEST(PRIMITIVES, FetchAddIsExactUnderContention) {
  double d = 0.5;
  std::int64_t i64 = -7;
  std::uint32_t u32 = 3;
  float f = 0;
  on_threads([&](int) {
    for (int r = 0; r < rounds; ++r) {
      (void)detail::atomic_fetch_add_relaxed(&d, 1.0);
      (void)detail::atomic_fetch_add_relaxed(&i64, std::int64_t{2});
      (void)detail::atomic_fetch_add_relaxed(&u32, std::uint32_t{1});
      (void)detail::atomic_fetch_add_relaxed(&f, 1.0f);
    }
  });
  EXPECT_EQ(d, 0.5 + threads * rounds);
  EXPECT_EQ(i64, -7 + 2 * threads * rounds);
  EXPECT_EQ(u32, 3u + threads * rounds);
  EXPECT_EQ(f, static_cast<float>(threads * rounds));  // 2e5 < 2^24: exact in float
  // The old value comes back.
  EXPECT_EQ(detail::atomic_fetch_add_relaxed(&d, -0.5), 0.5 + threads * rounds);
  EXPECT_EQ(d, static_cast<double>(threads * rounds));
  EXPECT_EQ(detail::atomic_load_relaxed(&i64), -7 + 2 * threads * rounds);
}

TEST(PRIMITIVES, OutputAtomicAddMatchesTheSum) {
  std::vector<double> out(3, 0.0);
  on_threads([&](int t) {
    for (int r = 0; r < rounds; ++r) detail::atomic_add(&out[static_cast<std::size_t>(r % 3)], static_cast<double>(t + 1));
  });
  // Each of 4 threads adds t + 1 to slot r % 3 for r < rounds.
  for (std::size_t s = 0; s < 3; ++s) {
    const double per_thread = static_cast<double>((rounds - static_cast<int>(s) + 2) / 3);
    EXPECT_EQ(out[s], per_thread * (1 + 2 + 3 + 4)) << "slot " << s;
  }
}

TEST(PRIMITIVES, SpinGuardExcludes) {
  unsigned char flag = 0;
  volatile long counter = 0;  // not atomic: only the lock keeps the increments apart (volatile: one
                              // load and one store each, never merged across the loop)
  on_threads([&](int) {
    for (int r = 0; r < 4 * rounds; ++r) {
      const detail::spin_guard g(flag);
      counter = counter + 1;
    }
  });
  EXPECT_EQ(counter, 4L * threads * rounds);
  EXPECT_EQ(flag, 0);
}

TEST(PRIMITIVES, KernelCountFromThreads) {
  const auto before = kernels_run();
  on_threads([&](int) {
    for (int r = 0; r < 1000; ++r) detail::count_kernel();
  });
  EXPECT_EQ(kernels_run() - before, static_cast<std::uint64_t>(threads) * 1000);
}

// Counts its live instances, to see that owners destroy what they own once.
struct counted {
  static inline int live = 0;
  int v;
  explicit counted(int x = 0) : v(x) { ++live; }
  counted(const counted& o) : v(o.v) { ++live; }
  ~counted() { --live; }
};

TEST(PRIMITIVES, SharedArrayShares) {
  shared_vector<double> a;
  EXPECT_EQ(a.use_count(), 0);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_TRUE(a.empty());
  a.vec().assign({1, 2, 3});
  EXPECT_EQ(a.use_count(), 1);
  shared_vector<double> b = a;  // shares
  EXPECT_EQ(a.use_count(), 2);
  EXPECT_EQ(b.data(), a.data());
  EXPECT_TRUE(b == std::vector<double>({1, 2, 3}));
  a.fresh();  // the copy keeps the old buffer
  EXPECT_EQ(b.use_count(), 1);
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(b == std::vector<double>({1, 2, 3}));
  shared_vector<double> c = std::move(b);
  EXPECT_EQ(b.use_count(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(c.size(), 3u);
  const auto& alias = c;
  c = alias;  // self-assignment keeps the buffer
  EXPECT_EQ(c.use_count(), 1);
  EXPECT_TRUE(c == std::vector<double>({1, 2, 3}));
  a = c;
  EXPECT_EQ(c.use_count(), 2);
  a = std::move(c);  // a drops its share, takes c's
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_TRUE(a == std::vector<double>({1, 2, 3}));
  const shared_vector<double> from_vec(std::vector<double>{4, 5});
  EXPECT_EQ(from_vec[1], 5.0);
}

TEST(PRIMITIVES, SharedArrayCopiesOnThreadsFreeOnce) {
  {
    shared_array<std::vector<counted>> a(std::vector<counted>(5, counted(7)));
    EXPECT_EQ(counted::live, 5);
    on_threads([&](int) {
      for (int r = 0; r < rounds / 10; ++r) {
        shared_array<std::vector<counted>> copy = a;
        shared_array<std::vector<counted>> moved = std::move(copy);
        if (moved[4].v != 7) std::abort();
      }
    });
    EXPECT_EQ(a.use_count(), 1);
    EXPECT_EQ(counted::live, 5);
    shared_array<std::vector<counted>> last = a;
    a.fresh();
    EXPECT_EQ(counted::live, 5);  // last still holds them
  }
  EXPECT_EQ(counted::live, 0);
}

TEST(PRIMITIVES, UniqueOwners) {
  auto z = detail::unique_array<std::uint64_t>::zeroed(100);
  for (std::size_t k = 0; k < 100; ++k) EXPECT_EQ(z[k], 0u);
  z[3] = 9;
  auto m = std::move(z);
  EXPECT_FALSE(static_cast<bool>(z));  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(m[3], 9u);
  m = detail::unique_array<std::uint64_t>::for_overwrite(4);
  EXPECT_TRUE(static_cast<bool>(m));
  {
    auto arr = detail::unique_array<counted>::zeroed(3);
    EXPECT_EQ(counted::live, 3);
    detail::unique_object<counted> one(new counted(4));
    EXPECT_EQ(one->v, 4);
    EXPECT_EQ(counted::live, 4);
    std::vector<detail::unique_erased> owned;
    owned.push_back(detail::unique_erased::adopt(new counted(1)));
    owned.push_back(detail::unique_erased::adopt(new std::vector<counted>(2)));
    EXPECT_EQ(counted::live, 7);
    detail::unique_erased e = std::move(owned[0]);
    owned.clear();
    EXPECT_EQ(counted::live, 5);  // e still holds one
    e = detail::unique_erased::adopt(new counted(2));
    EXPECT_EQ(counted::live, 5);
  }
  EXPECT_EQ(counted::live, 0);
}

}  // namespace
