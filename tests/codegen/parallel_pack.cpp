// pack and convert on an executor (parallel_cases' object library: the
// chunking executor without threads in test_codegen_parallel, Kokkos
// threads in test_kokkos_parallel). Generated lists: shapes with zero, one
// and many rows and columns, long rows (two counting passes) and short
// ones (a sort per row), one column, empty rows, duplicates under every
// policy; each result against a dense reference built in input order and,
// array for array, against the serial pack.
#include <algorithm>

#include "parallel_common.hpp"

namespace {
using tensorlev::coordinate_list;
using tensorlev::duplicates;
using tensorlev::pack;
using tensorlev::tensor;

struct listed {
  coordinate_list<double, int> list;
  std::vector<double> dense;  // the reference under the policy, row-major
  std::vector<char> present;  // which components the list names
};

// n entries in a rows x cols matrix; with `pooled`, from at most 5 distinct
// coordinates (every row then holds runs of duplicates); with `skewed`,
// every other entry in the first 16 rows.
listed random_list(int rows, int cols, std::size_t n, bool pooled, duplicates policy, std::mt19937_64& rng,
                   bool skewed = false) {
  listed l{coordinate_list<double, int>({rows, cols}), {}, {}};
  const auto size = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  l.dense.assign(size, 0.0);
  l.present.assign(size, 0);
  if (size == 0) return l;
  std::uniform_int_distribution<int> ri(0, rows - 1), ci(0, cols - 1), pick(0, 4);
  std::uniform_int_distribution<int> val(-50, 50);
  std::array<std::array<int, 2>, 5> pool{};
  for (auto& p : pool) p = {ri(rng), ci(rng)};
  for (std::size_t e = 0; e < n; ++e) {
    std::array<int, 2> x = pooled ? pool[static_cast<std::size_t>(pick(rng))] : std::array<int, 2>{ri(rng), ci(rng)};
    if (skewed && e % 2 == 0) x[0] %= 16;
    const double v = val(rng) / 8.0 + 0.001 * static_cast<double>(e % 7);
    l.list.push_back({x[0], x[1]}, v);
    const auto k = static_cast<std::size_t>(x[0]) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(x[1]);
    if (!l.present[k] || policy == duplicates::last)
      l.dense[k] = v;
    else if (policy == duplicates::sum)
      l.dense[k] += v;
    l.present[k] = 1;
  }
  return l;
}

template <class T>
bool same_arrays(const T& a, const T& b) {
  const auto& la = a.template level<1>();
  const auto& lb = b.template level<1>();
  return std::ranges::equal(la.pos(), lb.pos()) && std::ranges::equal(la.crd(), lb.crd()) &&
         std::ranges::equal(a.values(), b.values()) && a.dims() == b.dims();
}

// The dense form of a packed matrix, row-major whatever its format.
template <class T>
std::vector<double> dense_of(const T& t) {
  std::vector<double> d(static_cast<std::size_t>(t.dims()[0]) * static_cast<std::size_t>(t.dims()[1]), 0.0);
  tensorlev::for_each_component(t, [&](const auto& x, double v) {
    d[static_cast<std::size_t>(x[0]) * static_cast<std::size_t>(t.dims()[1]) + static_cast<std::size_t>(x[1])] += v;
  });
  return d;
}

template <class F>
void check_format(const tensorlev::executor& ex, const listed& l, duplicates policy, const std::string& what) {
  auto got = pack<F>(ex, l.list, policy);
  auto want = pack<F>(l.list, policy);
  EXPECT_EQ(count_mismatches<double>(dense_of(got), l.dense, what + " vs the dense reference"), 0u);
  if constexpr (requires { got.template level<1>().pos(); got.template level<1>().crd(); }) {
    EXPECT_TRUE(same_arrays(got, want)) << what << ": arrays differ from the serial pack";
  } else {
    EXPECT_EQ(count_mismatches<double>(dense_of(got), dense_of(want), what + " vs serial"), 0u);
  }
}

std::vector<tensorlev::executor> executors(const std::vector<tensorlev::chunked_serial_executor>& chunked) {
  std::vector<tensorlev::executor> ex{tltest::test_executor(), tensorlev::serial};
  for (const auto& c : chunked) ex.emplace_back(c);
  return ex;
}
}  // namespace

TEST(ParallelPack, EqualsTheSerialPackAndTheDenseReference) {
  std::mt19937_64 rng(2026);
  const std::vector<tensorlev::chunked_serial_executor> chunked{tensorlev::chunked_serial_executor(2),
                                                                tensorlev::chunked_serial_executor(3),
                                                                tensorlev::chunked_serial_executor(7)};
  const auto exs = executors(chunked);
  // (rows, cols): none, one, few rows with many entries each (two counting
  // passes), many short rows (a sort per row), one column, wide rows.
  const std::vector<std::array<int, 2>> shapes{{0, 0}, {0, 5}, {4, 0}, {1, 1}, {1, 9}, {9, 1}, {2, 3},
                                                {3, 50}, {7, 1000}, {100, 100}, {1000, 7}, {2000, 30}, {30, 2000}};
  const std::vector<std::size_t> sizes{0, 1, 2, 37, 1000, 20000};
  std::size_t cases = 0;
  for (const auto& s : shapes)
    for (const std::size_t n : sizes)
      for (const bool pooled : {false, true})
        for (const duplicates policy : {duplicates::sum, duplicates::first, duplicates::last}) {
          if (s[0] * s[1] == 0 && n > 0) continue;
          const listed l = random_list(s[0], s[1], n, pooled, policy, rng);
          for (std::size_t x = 0; x < exs.size(); ++x) {
            const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + ", " + std::to_string(n) +
                                     (pooled ? " pooled" : "") + " entries, policy " +
                                     std::to_string(static_cast<int>(policy)) + ", executor " + std::to_string(x);
            check_format<tensorlev::csr>(exs[x], l, policy, "CSR " + what);
            check_format<tensorlev::csc>(exs[x], l, policy, "CSC " + what);
            ++cases;
          }
        }
  EXPECT_GT(cases, 1000u);
}

// The parallel path runs (chunks counted, where the executor counts them)
// in both regimes: long rows and short rows.
TEST(ParallelPack, RunsInChunks) {
  std::mt19937_64 rng(7);
  for (const std::array<int, 2> s : {std::array<int, 2>{3, 50}, {100, 100}}) {
    const listed l = random_list(s[0], s[1], 1000, false, duplicates::sum, rng);
    const long before = chunks_run();
    auto got = pack<tensorlev::csr>(test_executor(), l.list);
    if (chunks_run() >= 0) {
      EXPECT_GE(chunks_run() - before, 8) << s[0] << "x" << s[1] << ": pack did not run in chunks";
    }
    EXPECT_EQ(count_mismatches<double>(dense_of(got), l.dense, "pack in chunks"), 0u);
  }
}

// Formats and storages without the parallel path, and duplicates::error,
// take the serial pack on an executor.
TEST(ParallelPack, OtherFormatsStoragesAndPolicies) {
  std::mt19937_64 rng(11);
  const tensorlev::chunked_serial_executor ex(3);
  for (const bool pooled : {false, true}) {
    const listed l = random_list(40, 30, 500, pooled, duplicates::sum, rng);
    check_format<tensorlev::coo>(ex, l, duplicates::sum, "COO");
    check_format<tensorlev::dcsr>(ex, l, duplicates::sum, "DCSR");
    check_format<tensorlev::dense_row_major>(ex, l, duplicates::sum, "dense");
    auto narrow = pack<tensorlev::csr, tensorlev::owning<std::int64_t, std::int16_t>>(ex, l.list);
    EXPECT_EQ(count_mismatches<double>(dense_of(narrow), l.dense, "owning<int64, int16>"), 0u);
  }
  const listed dup = random_list(10, 10, 50, true, duplicates::sum, rng);
  EXPECT_THROW((void)pack<tensorlev::csr>(ex, dup.list, duplicates::error), tensorlev::duplicate_error);
  coordinate_list<double, int> wrong({4, 4, 4});
  wrong.push_back({1, 2, 3}, 1.0);
  EXPECT_THROW((void)pack<tensorlev::csr>(ex, wrong), tensorlev::shape_error);
}

TEST(ParallelPack, ConvertOnAnExecutor) {
  std::mt19937_64 rng(5);
  const listed l = random_list(300, 200, 4000, false, duplicates::sum, rng);
  const auto coo = pack<tensorlev::coo>(l.list);
  for (const auto& ex : executors({tensorlev::chunked_serial_executor(4)})) {
    const auto a = tensorlev::convert<tensorlev::csr>(ex, coo);
    EXPECT_TRUE(same_arrays(a, tensorlev::convert<tensorlev::csr>(coo)));
    const auto b = tensorlev::convert<tensorlev::csc>(ex, a, tensorlev::stored_zeros::drop);
    EXPECT_EQ(count_mismatches<double>(dense_of(b), l.dense, "convert to CSC"), 0u);
  }
}

// Inputs large enough for the huge-page scratch and output arrays
// (detail::advise_huge_pages: 4 MiB and more), serial and in chunks: long
// rows (two counting passes), short rows (a sort per row), wide rows; and
// rows in groups (detail::row_group_bits: many rows over a large array),
// short (sorted one by one) and long (radix passes over each group), with
// a last group shorter than the others, about 5 entries a row, one column,
// one radix pass (5000 x 16) and two,
// and most entries in a few groups. CSC packs the transpose: its rows are
// the list's columns.
TEST(ParallelPack, LargeInputs) {
  std::mt19937_64 rng(3);
  const std::size_t n = (std::size_t{1} << 19) + 4096;
  EXPECT_EQ(tensorlev::detail::row_group_bits(40000, n), 10u);
  EXPECT_EQ(tensorlev::detail::row_group_bits(100003, n), 11u);
  EXPECT_EQ(tensorlev::detail::row_group_bits(1500, n), 0u);
  EXPECT_EQ(tensorlev::detail::row_group_bits(100003, n / 2), 0u);
  EXPECT_EQ(tensorlev::detail::row_group_bits(std::size_t{1} << 28, std::size_t{1} << 26), 16u);  // 4096 groups
  struct shape {
    int rows, cols;
    bool skewed;
  };
  for (const shape s : {shape{1500, 1500, false}, {60, 20000, false}, {40000, 40, false}, {40001, 40, false},
                        {100003, 7, false}, {7, 100003, false}, {65536, 30, true}, {5000, 1000, false},
                        {1000, 5000, false}, {4096, 700, true}, {8192, 1, false}, {5000, 16, false}}) {
    const listed l = random_list(s.rows, s.cols, n, false, duplicates::sum, rng, s.skewed);
    const std::string what = std::to_string(s.rows) + "x" + std::to_string(s.cols) + (s.skewed ? " skewed" : "");
    const auto want = pack<tensorlev::csr>(l.list);
    EXPECT_EQ(count_mismatches<double>(dense_of(want), l.dense, "serial CSR pack of 2^19 + 4096 entries, " + what),
              0u);
    const auto want_csc = pack<tensorlev::csc>(l.list);
    EXPECT_EQ(count_mismatches<double>(dense_of(want_csc), l.dense, "serial CSC pack, " + what), 0u);
    for (const auto& ex : executors({tensorlev::chunked_serial_executor(3)})) {
      EXPECT_TRUE(same_arrays(pack<tensorlev::csr>(ex, l.list), want)) << what;
      EXPECT_TRUE(same_arrays(pack<tensorlev::csc>(ex, l.list), want_csc)) << what << ", CSC";
    }
  }
  // Which duplicate wins depends on the passes keeping the input order:
  // short rows (sorted one by one) and long rows (radix passes) in groups.
  EXPECT_EQ(tensorlev::detail::row_group_bits(5000, n), 7u);
  for (const duplicates policy : {duplicates::first, duplicates::last})
    for (const std::array<int, 2> s : {std::array<int, 2>{40001, 40}, {5000, 300}}) {
      const listed l = random_list(s[0], s[1], n, false, policy, rng);
      const auto want = pack<tensorlev::csr>(l.list, policy);
      EXPECT_EQ(count_mismatches<double>(dense_of(want), l.dense, "serial pack in groups, policy first or last"), 0u);
      EXPECT_TRUE(same_arrays(pack<tensorlev::csr>(tensorlev::chunked_serial_executor(3), l.list, policy), want));
    }
}

// Rows in groups through the generic pack (every matrix format but DIA,
// whose diagonals here would span gigabytes, as an output; CSR with 64-bit
// positions, which skips the CSR fast path): short rows and long rows.
TEST(ParallelPack, LargeInputsEveryFormat) {
  std::mt19937_64 rng(23);
  const std::size_t n = (std::size_t{1} << 19) + 4096;
  for (const std::array<int, 2> s : {std::array<int, 2>{40001, 40}, {5000, 300}}) {
    const listed l = random_list(s[0], s[1], n, false, duplicates::sum, rng);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]);
    std::size_t packed = 0;
    std::apply(
        [&]<class... F>(F...) {
          auto one = [&]<class G>(G) {
            if constexpr (!std::is_same_v<G, tensorlev::dia>) {
              const auto t = pack<G>(l.list);
              const std::string what = shape + ", " + std::string(tensorlev::detail::format_label<G>());
              EXPECT_EQ(count_mismatches<double>(dense_of(t), l.dense, what), 0u);
              ++packed;
            }
          };
          (one(F{}), ...);
        },
        tltest::matrix_formats{});
    EXPECT_GT(packed, 10u);
    const auto wide = pack<tensorlev::csr, tensorlev::owning<std::int64_t, std::int32_t>>(l.list);
    EXPECT_EQ(count_mismatches<double>(dense_of(wide), l.dense, shape + ", owning<int64, int32>"), 0u);
  }
}

// The radix passes of a group of long rows against std::stable_sort on
// the key: keys of 1 to 33 bits above a base (one, two and three passes,
// widths that do not divide the bits), lengths 0, 1 and more, many equal
// keys (stability: values record the input order).
TEST(ParallelPack, RadixPassesSortStably) {
  using entry = tensorlev::detail::keyed_entry<double>;
  std::mt19937_64 rng(17);
  for (const unsigned bits : {1u, 2u, 11u, 12u, 22u, 23u, 33u})
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{777}, std::size_t{5000}}) {
      const std::uint64_t base = std::uint64_t{12345} << bits;
      const std::uint64_t top = (std::uint64_t{1} << bits) - 1;
      std::uniform_int_distribution<std::uint64_t> key(0, top), few(0, std::min<std::uint64_t>(top, 7));
      std::vector<entry> a(n), buf(n);
      for (std::size_t i = 0; i < n; ++i)
        a[i] = entry{base + (i % 3 == 0 ? few(rng) : key(rng)), static_cast<double>(i)};
      std::vector<entry> want = a;
      std::stable_sort(want.begin(), want.end(), [](const entry& x, const entry& y) { return x.key < y.key; });
      const entry* got = tensorlev::detail::radix_sort_keys(a.data(), buf.data(), n, base, bits);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += got[i].key != want[i].key || got[i].value != want[i].value;
      EXPECT_EQ(wrong, 0u) << bits << " bits, " << n << " entries";
    }
}

// The array helpers behind the huge-page hint keep std::vector's meaning,
// below and above the size where they allocate and advise.
TEST(ParallelPack, FreshArrayHelpersKeepVectorSemantics) {
  namespace d = tensorlev::detail;
  for (const std::size_t n : {std::size_t{0}, std::size_t{10}, (d::huge_array_min_bytes / sizeof(double)) * 3 + 5}) {
    std::vector<double> a{1.0, 2.0, 3.0};
    d::resize_fresh(a, n + 3);
    ASSERT_EQ(a.size(), n + 3);
    EXPECT_EQ(a[0], 1.0);
    EXPECT_EQ(a[2], 3.0);
    EXPECT_EQ(a[n + 2], n > 0 ? 0.0 : 3.0);
    d::assign_fresh(a, n, 7.0);
    EXPECT_EQ(a.size(), n);
    EXPECT_EQ(std::count(a.begin(), a.end(), 7.0), static_cast<std::ptrdiff_t>(n));
    d::clear_reserve(a, 2 * n);
    EXPECT_TRUE(a.empty());
    EXPECT_GE(a.capacity(), 2 * n);
  }
}
