// The host primitives that stand in for <atomic>, <memory>, <algorithm>
// and std::string on the kernel's include path (detail/atomic.hpp,
// detail/owned.hpp, shared_array, detail/algorithm.hpp, detail/message.hpp):
// exact results under contention from several threads, ownership and
// sharing, sorting against std::stable_sort, messages. Built twice: with the compiler's __atomic builtins and with
// TENSORLEV_USE_STD_ATOMIC (std::atomic_ref).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorlev/codegen/output/common.hpp"
#include "tensorlev/detail/algorithm.hpp"
#include "tensorlev/detail/atomic.hpp"
#include "tensorlev/detail/message.hpp"
#include "tensorlev/detail/owned.hpp"
#include "tensorlev/error.hpp"
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

// Runs body(t) over and over on threads t = 0..threads-1 that start
// together and stop together after 100 ms (or after `cap` calls each, to
// keep sums exact); returns how many calls each thread made. 100 ms is
// many scheduler slices: on a loaded 2-core machine the threads are
// preempted inside one another's operations, so a non-atomic version of
// what body checks loses updates (one pass of a fixed small count could
// finish within one slice, the threads never overlapping).
template <class F>
std::vector<long> run_together(F body, long cap = 1L << 40) {
  std::atomic<int> ready{0};
  std::atomic<bool> stop{false};
  std::vector<long> calls(threads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      long n = 0;
      while (n < cap && !stop.load(std::memory_order_relaxed)) {
        body(t);
        ++n;
      }
      calls[static_cast<std::size_t>(t)] = n;
    });
  while (ready.load() < threads) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop.store(true);
  for (auto& t : ts) t.join();
  return calls;
}
long total(const std::vector<long>& calls) {
  long s = 0;
  for (long c : calls) s += c;
  return s;
}

TEST(PRIMITIVES, FetchAddIsExactUnderContention) {
  double d = 0.5;
  std::int64_t i64 = -7;
  std::uint32_t u32 = 3;
  float f = 0;
  // At most 2^22 calls a thread: 2^24 in all, exact in float.
  const long n = total(run_together(
      [&](int) {
        (void)detail::atomic_fetch_add_relaxed(&d, 1.0);
        (void)detail::atomic_fetch_add_relaxed(&i64, std::int64_t{2});
        (void)detail::atomic_fetch_add_relaxed(&u32, std::uint32_t{1});
        (void)detail::atomic_fetch_add_relaxed(&f, 1.0f);
      },
      1L << 22));
  ASSERT_GT(n, 0);
  EXPECT_EQ(d, 0.5 + static_cast<double>(n));
  EXPECT_EQ(i64, -7 + 2 * static_cast<std::int64_t>(n));
  EXPECT_EQ(u32, 3u + static_cast<std::uint32_t>(n));
  EXPECT_EQ(f, static_cast<float>(n));
  // The old value comes back.
  EXPECT_EQ(detail::atomic_fetch_add_relaxed(&d, -0.5), 0.5 + static_cast<double>(n));
  EXPECT_EQ(d, static_cast<double>(n));
  EXPECT_EQ(detail::atomic_load_relaxed(&i64), -7 + 2 * static_cast<std::int64_t>(n));
}

TEST(PRIMITIVES, OutputAtomicAddMatchesTheSum) {
  std::vector<double> out(3, 0.0);
  std::vector<long> next(threads, 0);  // each thread's own call count
  const std::vector<long> calls = run_together([&](int t) {
    long& r = next[static_cast<std::size_t>(t)];
    detail::atomic_add(&out[static_cast<std::size_t>(r % 3)], static_cast<double>(t + 1));
    ++r;
  });
  // Thread t added t + 1 to slot r % 3 for r < calls[t].
  for (std::size_t s = 0; s < 3; ++s) {
    double want = 0;
    for (int t = 0; t < threads; ++t) {
      const long c = calls[static_cast<std::size_t>(t)];
      want += static_cast<double>(t + 1) * static_cast<double>((c - static_cast<long>(s) + 2) / 3);
    }
    EXPECT_EQ(out[s], want) << "slot " << s;
  }
}

TEST(PRIMITIVES, SpinGuardExcludes) {
  unsigned char flag = 0;
  volatile long counter = 0;  // not atomic: only the lock keeps the increments apart (volatile: one
                              // load and one store each, never merged across calls)
  const long n = total(run_together([&](int) {
    const detail::spin_guard g(flag);
    counter = counter + 1;
  }));
  EXPECT_EQ(counter, n);
  EXPECT_EQ(flag, 0);
}

TEST(PRIMITIVES, KernelCountFromThreads) {
  const auto before = kernels_run();
  const long n = total(run_together([&](int) { detail::count_kernel(); }));
  EXPECT_EQ(kernels_run() - before, static_cast<std::uint64_t>(n));
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
    (void)run_together([&](int) {
      shared_array<std::vector<counted>> copy = a, second = a;
      shared_array<std::vector<counted>> moved = std::move(copy);
      second = moved;  // drops one share, takes another
      if (moved[4].v != 7 || second[0].v != 7) std::abort();
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

static_assert(detail::min_of(3, -2) == -2 && detail::max_of(3, -2) == 3);
static_assert(detail::min_of<std::size_t>(4, 7u) == 4 && detail::max_of<std::size_t>(4, 7u) == 7);

// detail::stable_sort against std::stable_sort: sizes around the runs of
// 16 and the merge widths, few distinct keys (long runs of equal ones, so
// stability shows), a comparator on part of the element.
TEST(PRIMITIVES, StableSortMatchesTheStandardOne) {
  std::mt19937_64 rng(11);
  for (const std::size_t n : {0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 64, 100, 257, 1000, 4099}) {
    for (const int distinct : {1, 3, 50, 1 << 30}) {
      std::vector<std::pair<int, std::size_t>> a(n);
      for (std::size_t k = 0; k < n; ++k) a[k] = {std::uniform_int_distribution<int>(0, distinct - 1)(rng), k};
      auto want = a;
      auto by_first = [](const auto& x, const auto& y) { return x.first < y.first; };
      std::stable_sort(want.begin(), want.end(), by_first);
      std::vector<std::pair<int, std::size_t>> spare(n, {-1, 0});
      detail::stable_sort(a.data(), spare.data(), n, by_first);
      EXPECT_EQ(a, want) << "n = " << n << ", " << distinct << " distinct keys";
    }
  }
  std::vector<long long> v = {5, -1, 3, 3, LLONG_MIN, 0, LLONG_MAX, 2};
  std::vector<long long> spare(v.size());
  detail::stable_sort(v.data(), spare.data(), v.size());
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  EXPECT_EQ(v.front(), LLONG_MIN);
  EXPECT_EQ(v.back(), LLONG_MAX);
}

// detail::sort (introsort) against std::sort: sizes around the insertion
// threshold and beyond, inputs that stress a quicksort (sorted, reversed,
// organ pipe, all equal, few distinct, alternating), a comparator on part
// of the element (equal keys in any order: sorted, and the same multiset),
// and the heap sort the depth limit falls back to, forced by a depth of 0.
TEST(PRIMITIVES, IntrosortMatchesTheStandardSort) {
  std::mt19937_64 rng(12);
  auto pattern = [&](int kind, std::size_t n) {
    std::vector<int> v(n);
    for (std::size_t k = 0; k < n; ++k) {
      const auto x = static_cast<int>(k);
      const auto m = static_cast<int>(n);
      switch (kind) {
        case 0: v[k] = std::uniform_int_distribution<int>(-1000000, 1000000)(rng); break;
        case 1: v[k] = x; break;
        case 2: v[k] = m - x; break;
        case 3: v[k] = x < m / 2 ? x : m - x; break;
        case 4: v[k] = 7; break;
        case 5: v[k] = std::uniform_int_distribution<int>(0, 2)(rng); break;
        default: v[k] = (k % 2 == 0) ? x : -x; break;
      }
    }
    return v;
  };
  for (const std::size_t n : {0, 1, 2, 3, 15, 16, 17, 18, 31, 33, 64, 100, 257, 1000, 3001}) {
    for (int kind = 0; kind < 7; ++kind) {
      std::vector<int> a = pattern(kind, n);
      auto want = a;
      std::sort(want.begin(), want.end());
      auto got = a;
      detail::sort(got.data(), n);
      EXPECT_EQ(got, want) << "n = " << n << ", pattern " << kind;
      // The heap sort alone (the depth limit reached at once).
      got = a;
      auto less = [](int x, int y) { return x < y; };
      if (n > 1) detail::sort_impl::intro_loop(got.data(), n, 0, less);
      if (n > 16) {
        EXPECT_EQ(got, want) << "heap sort, n = " << n << ", pattern " << kind;
      }
      // Pairs compared by their first member only.
      std::vector<std::pair<int, std::size_t>> p(n);
      for (std::size_t k = 0; k < n; ++k) p[k] = {a[k] % 5, k};
      auto sorted = p;
      detail::sort(sorted.data(), n, [](const auto& x, const auto& y) { return x.first < y.first; });
      EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end(),
                                 [](const auto& x, const auto& y) { return x.first < y.first; }))
          << "n = " << n << ", pattern " << kind;
      std::sort(sorted.begin(), sorted.end());
      std::sort(p.begin(), p.end());
      EXPECT_EQ(sorted, p) << "not a permutation, n = " << n << ", pattern " << kind;
    }
  }
}

TEST(PRIMITIVES, MessageFormatsTextAndIntegers) {
  detail::message m;
  m << "a" << 'b' << 0 << ' ' << -7 << ' ' << 18446744073709551615ULL << ' ' << LLONG_MIN << ' ' << LLONG_MAX << ' '
    << std::size_t{42} << ' ' << -1L << ' ' << 3U;
  EXPECT_STREQ(m.c_str(), "ab0 -7 18446744073709551615 -9223372036854775808 9223372036854775807 42 -1 3");
  EXPECT_EQ(m.size(), std::string(m.c_str()).size());
  // Growing: nothing is cut, whatever the length (past the inline buffer,
  // and through several doublings).
  detail::message big;
  const std::string chunk(100, 'x');
  std::string expect;
  for (int r = 0; r < 40; ++r) {
    big << chunk.c_str() << 1234567890 << std::string_view("|");
    expect += chunk + "1234567890|";
    ASSERT_EQ(std::string(big.c_str()), expect) << "after " << r + 1 << " pieces";
  }
  big << 'y' << std::int8_t{-5} << std::uint16_t{65535} << std::string("z");
  expect += "y-565535z";
  EXPECT_EQ(std::string(big.data(), big.size()), expect);
  EXPECT_EQ(big.size(), expect.size());
  // An append exactly filling the inline buffer, then one more character.
  detail::message edge;
  edge << std::string(255, 'e');
  EXPECT_EQ(edge.size(), 255U);
  edge << 'f';
  EXPECT_EQ(std::string(edge.c_str()), std::string(255, 'e') + "f");
  // Appending its own text, in the inline buffer and on the heap, with and
  // without growing (the old buffer must outlive the copy).
  for (const std::size_t n : {10, 100, 200, 300, 1000}) {
    detail::message self;
    const std::string start(n, 's');
    self << start;
    self << self;
    EXPECT_EQ(std::string(self.data(), self.size()), start + start) << "n = " << n;
    self << std::string_view(self.data(), 5);
    EXPECT_EQ(std::string(self.data(), self.size()), start + start + "sssss") << "n = " << n;
  }
}

// What a message refuses rather than print one converted character (as a
// char overload would): bool, enumerations, floating point.
template <class T>
concept message_prints = requires(detail::message& m, const T& v) { m << v; };
enum plain_enum { plain_value = 65 };
static_assert(message_prints<int> && message_prints<char> && message_prints<std::uint8_t> &&
              message_prints<std::size_t> && message_prints<const char*> && message_prints<std::string_view> &&
              message_prints<std::string>);
static_assert(!message_prints<bool> && !message_prints<double> && !message_prints<float> &&
              !message_prints<plain_enum>);

TEST(PRIMITIVES, ErrorSharesItsMessage) {
  const std::string text(1000, 'q');
  const shape_error e((detail::message() << text << 7));
  EXPECT_EQ(std::string(e.what()), text + "7");
  shape_error copy = e;  // a copy shares the text
  EXPECT_EQ(copy.what(), e.what());
  {
    const shape_error other("other");
    copy = other;
    EXPECT_STREQ(copy.what(), "other");
  }
  EXPECT_STREQ(copy.what(), "other");  // still alive after other's end
  EXPECT_EQ(std::string(e.what()), text + "7");
  const shape_error& same = copy;
  copy = same;  // self-assignment keeps the text
  EXPECT_STREQ(copy.what(), "other");
  const error from_string(std::string("from a string"));
  EXPECT_STREQ(from_string.what(), "from a string");
  const error from_span("abcdef", 3);
  EXPECT_STREQ(from_span.what(), "abc");
  // Caught as std::exception and as tensorlev::error, with the text.
  try {
    throw overflow_error((detail::message() << "n = " << -3));
  } catch (const std::exception& x) {
    EXPECT_STREQ(x.what(), "n = -3");
  }
  static_assert(std::is_nothrow_copy_constructible_v<shape_error>);
  static_assert(!std::is_convertible_v<const char*, error>, "explicit, as std::runtime_error's");
}

}  // namespace
