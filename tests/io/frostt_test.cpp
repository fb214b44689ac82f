// FROSTT reader and writer: parsing, exact round trips, and the real
// nations.tns tensor (tests/data, a copy of ../shared/data/tns/nations.tns).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlev/io/frostt.hpp>
#include <tensorlev/io/matrix_market.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::coordinate_list;
using tensorlev::io::read_frostt;
using tensorlev::io::write_frostt;
using tensorlev_test::identical;
using tensorlev_test::same_bits;
using cd = std::complex<double>;

template <class V = double, class I = std::int32_t>
auto read(const std::string& text) {
  std::istringstream s(text);
  return read_frostt<V, I>(s, "test.tns");
}

template <class V, class I>
std::vector<std::vector<long long>> coords_of(const coordinate_list<V, I>& t) {
  std::vector<std::vector<long long>> r;
  for (std::size_t e = 0; e < t.size(); ++e) r.emplace_back(t.coords(e).begin(), t.coords(e).end());
  return r;
}

double random_double(std::mt19937_64& rng) {
  for (;;) {
    const double d = std::bit_cast<double>(rng());
    if (std::isfinite(d)) return d;
  }
}

TEST(FrosttParse, ThirdOrder) {
  const auto t = read("# a comment\n1 1 2 1.5\n\n3 2 1 -2\n");
  EXPECT_EQ(t.order(), 3u);
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{3, 2, 2}));
  EXPECT_EQ(coords_of(t), (std::vector<std::vector<long long>>{{0, 0, 1}, {2, 1, 0}}));
  EXPECT_EQ(t.value(0), 1.5);
  EXPECT_EQ(t.value(1), -2.0);
}

TEST(FrosttParse, WhitespaceCrLfAndNoFinalNewline) {
  const auto t = read("  # c\r\n\t1\t2   3.25  \r\n   \r\n2 1 +4");
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{2, 2}));
  EXPECT_EQ(coords_of(t), (std::vector<std::vector<long long>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(t.value(1), 4.0);
}

TEST(FrosttParse, FirstAndFifthOrder) {
  const auto v = read("4 1\n2 2\n");
  EXPECT_EQ(v.dims(), (std::vector<std::int32_t>{4}));
  EXPECT_EQ(v.size(), 2u);
  const auto t = read("1 2 3 4 5 0.5\n5 4 3 2 1 -0.5\n");
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{5, 4, 3, 4, 5}));
  EXPECT_EQ(coords_of(t)[1], (std::vector<long long>{4, 3, 2, 1, 0}));
}

TEST(FrosttParse, ComplexValuesUseTwoFields) {
  const auto t = read<cd>("1 1 1 0.5 -2\n2 3 1 0 1e-300\n");
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{2, 3, 1}));
  EXPECT_EQ(t.value(0), cd(0.5, -2));
  EXPECT_EQ(t.value(1), cd(0, 1e-300));
}

TEST(FrosttParse, IntegerAndFloatValueTypes) {
  const auto i = read<std::int64_t>("1 1 -9223372036854775808\n2 2 +7\n");
  EXPECT_EQ(i.value(0), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i.value(1), 7);
  const auto f = read<float>("1 1 0.1\n");
  EXPECT_EQ(f.value(0), 0.1f);
}

TEST(FrosttParse, SpecialValues) {
  const auto t = read("1 nan\n2 -inf\n3 -0\n4 1e-400\n5 4.9e-324\n");
  EXPECT_TRUE(std::isnan(t.value(0)));
  EXPECT_EQ(t.value(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(same_bits(t.value(2), -0.0));
  EXPECT_TRUE(same_bits(t.value(3), 0.0));
  EXPECT_EQ(t.value(4), std::numeric_limits<double>::denorm_min());
}

TEST(FrosttParse, GivenDimsAllowEmptyFilesAndLargerExtents) {
  std::istringstream empty("# nothing\n");
  const auto e = read_frostt<double>(empty, "e.tns", {4, 5, 6});
  EXPECT_EQ(e.dims(), (std::vector<std::int32_t>{4, 5, 6}));
  EXPECT_TRUE(e.empty());
  std::istringstream s("1 2 3\n");
  const auto t = read_frostt<double>(s, "t.tns", {10, 10});
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{10, 10}));
  EXPECT_EQ(t.value(0), 3.0);
}

TEST(FrosttRoundTrip, WritesOneLinePerEntry) {
  coordinate_list<double> t({2, 2, 2});
  t.push_back({0, 1, 1}, 0.25);
  t.push_back({1, 0, 0}, -3.0);
  std::ostringstream s;
  write_frostt(s, t);
  EXPECT_EQ(s.str(), "1 2 2 0.25\n2 1 1 -3\n");
}

TEST(FrosttRoundTrip, RandomDoublesAreBitExact) {
  std::mt19937_64 rng(1);
  coordinate_list<double> t({30, 20, 10, 5});
  // Entries at the far corner fix the dims read back without dims.
  t.push_back({29, 19, 9, 4}, -0.0);
  t.push_back({0, 0, 0, 0}, std::numeric_limits<double>::denorm_min());
  t.push_back({1, 0, 0, 0}, 1e-300);
  for (int k = 0; k < 5000; ++k)
    t.push_back({static_cast<int>(rng() % 30), static_cast<int>(rng() % 20), static_cast<int>(rng() % 10),
                 static_cast<int>(rng() % 5)},
                random_double(rng));
  std::stringstream s;
  write_frostt(s, t);
  EXPECT_TRUE(identical(t, read_frostt<double>(s, "rt.tns")));
}

TEST(FrosttRoundTrip, ComplexAndFloatAreBitExact) {
  std::mt19937_64 rng(2);
  coordinate_list<cd> t({4, 4, 4});
  t.push_back({3, 3, 3}, {-0.0, 5e-324});
  for (int k = 0; k < 1000; ++k)
    t.push_back({static_cast<int>(rng() % 4), static_cast<int>(rng() % 4), static_cast<int>(rng() % 4)},
                {random_double(rng), random_double(rng)});
  std::stringstream s;
  write_frostt(s, t);
  EXPECT_TRUE(identical(t, read_frostt<cd>(s, "rt.tns")));

  coordinate_list<float> f({3, 3});
  f.push_back({2, 2}, 0.1f);
  f.push_back({0, 1}, std::numeric_limits<float>::denorm_min());
  std::stringstream g;
  write_frostt(g, f);
  EXPECT_TRUE(identical(f, read_frostt<float>(g, "rt.tns")));
}

TEST(FrosttRoundTrip, DimsAreRestoredWhenGiven) {
  coordinate_list<double, std::int64_t> t({100, 7000000000LL});
  t.push_back({5, 6999999999LL}, 2.0);
  t.push_back({0, 0}, 1.0);
  std::stringstream s;
  write_frostt(s, t);
  EXPECT_TRUE(identical(t, read_frostt<double, std::int64_t>(s, "rt.tns", t.dims())));
  // An empty tensor, too.
  coordinate_list<double> e({3, 3, 3});
  std::stringstream es;
  write_frostt(es, e);
  EXPECT_TRUE(identical(e, read_frostt<double>(es, "rt.tns", e.dims())));
}

TEST(FrosttRoundTrip, OrderZeroIsAShapeError) {
  coordinate_list<double> scalar(std::vector<std::int32_t>{});
  std::ostringstream s;
  EXPECT_THROW(write_frostt(s, scalar), tensorlev::shape_error);
}

TEST(FrosttRoundTrip, ThroughFiles) {
  coordinate_list<double> t({3, 3, 3});
  t.push_back({2, 2, 2}, 0.3);
  t.push_back({0, 1, 2}, -1e300);
  tensorlev_test::temp_file f(".tns");
  write_frostt(f.path(), t);
  EXPECT_TRUE(identical(t, read_frostt<double>(f.path())));
  EXPECT_TRUE(identical(t, read_frostt<double>(f.path(), {3, 3, 3})));
}

TEST(FrosttRealData, Nations) {
  const auto t = read_frostt<double>(tensorlev_test::data_file("nations.tns"));
  EXPECT_EQ(t.order(), 3u);
  EXPECT_EQ(t.dims(), (std::vector<std::int32_t>{14, 55, 14}));
  EXPECT_EQ(t.size(), 1992u);
  EXPECT_EQ(coords_of(t).front(), (std::vector<long long>{0, 0, 1}));   // "1 1 2 1"
  EXPECT_EQ(coords_of(t)[1], (std::vector<long long>{0, 0, 3}));        // "1 1 4 1"
  EXPECT_EQ(coords_of(t).back(), (std::vector<long long>{13, 49, 1}));  // "14 50 2 1"
  for (std::size_t e = 0; e < t.size(); ++e) EXPECT_EQ(t.value(e), 1.0);

  std::stringstream s;
  write_frostt(s, t);
  EXPECT_TRUE(identical(t, read_frostt<double>(s, "nations-rt.tns")));

  // Integer values, 64-bit indices and given dims read the same entries.
  const auto i = read_frostt<int, std::int64_t>(tensorlev_test::data_file("nations.tns"), {14, 55, 14});
  EXPECT_EQ(i.size(), 1992u);
  EXPECT_EQ(i.raw_coords().size(), t.raw_coords().size());
}

TEST(FrosttRealData, NationsCopyMatchesSharedData) {
  const std::string shared = tensorlev_test::shared_data_file("tns/nations.tns");
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << shared << " is not present";
  EXPECT_TRUE(identical(read_frostt<double>(shared), read_frostt<double>(tensorlev_test::data_file("nations.tns"))));
}

TEST(FrosttRealData, NationsSliceAsMatrixMarket) {
  // Slice relation 0 of nations into a 14 x 14 matrix and round-trip it through Matrix Market.
  const auto t = read_frostt<double>(tensorlev_test::data_file("nations.tns"));
  coordinate_list<double> m({14, 14});
  for (std::size_t e = 0; e < t.size(); ++e)
    if (t.coords(e)[1] == 0) m.push_back({t.coords(e)[0], t.coords(e)[2]}, t.value(e));
  EXPECT_GT(m.size(), 0u);
  std::stringstream s;
  tensorlev::io::write_matrix_market(s, m);
  EXPECT_TRUE(identical(m, tensorlev::io::read_matrix_market<double>(s, "slice.mtx")));
}

}  // namespace
