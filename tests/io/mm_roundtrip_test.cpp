// Matrix Market writer: read(write(x)) reproduces x bit for bit.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlev/io/matrix_market.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::coordinate_list;
using tensorlev::io::mm_header;
using tensorlev::io::mm_write_options;
using tensorlev::io::read_matrix_market;
using tensorlev::io::write_matrix_market;
using tensorlev::io::write_matrix_market_array;
using tensorlev_test::identical;
using tensorlev_test::same_bits;

/// A random finite double drawn from all bit patterns (subnormals included).
double random_double(std::mt19937_64& rng) {
  for (;;) {
    const double d = std::bit_cast<double>(rng());
    if (std::isfinite(d)) return d;
  }
}
float random_float(std::mt19937_64& rng) {
  for (;;) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isfinite(f)) return f;
  }
}

std::vector<double> special_doubles() {
  using L = std::numeric_limits<double>;
  return {0.0,         -0.0,        1e-300,      -1e-300,        L::denorm_min(), -L::denorm_min(), L::min(),
          L::max(),    -L::max(),   L::epsilon(), 0.1,           1.0 / 3.0,       123456789.0,     5e-324,
          2.2250738585072009e-308 /* largest subnormal */, L::infinity(), -L::infinity()};
}

template <class V, class I>
coordinate_list<V, I> through_stream(const coordinate_list<V, I>& a, const mm_write_options& opt = {},
                                     mm_header* h = nullptr) {
  std::stringstream s;
  write_matrix_market(s, a, opt);
  return read_matrix_market<V, I>(s, "roundtrip.mtx", h);
}

TEST(MatrixMarketRoundTrip, WritesCoordinateGeneral) {
  coordinate_list<double> a({2, 3});
  a.push_back({1, 2}, 0.1);
  a.push_back({0, 0}, -2.0);
  std::ostringstream s;
  write_matrix_market(s, a);
  EXPECT_EQ(s.str(), "%%MatrixMarket matrix coordinate real general\n2 3 2\n2 3 0.1\n1 1 -2\n");
}

TEST(MatrixMarketRoundTrip, RandomDoublesAreBitExact) {
  std::mt19937_64 rng(42);
  coordinate_list<double> a({50, 70});
  for (double v : special_doubles()) a.push_back({static_cast<int>(rng() % 50), static_cast<int>(rng() % 70)}, v);
  for (int k = 0; k < 5000; ++k)
    a.push_back({static_cast<int>(rng() % 50), static_cast<int>(rng() % 70)}, random_double(rng));
  mm_header h;
  const auto b = through_stream(a, {}, &h);
  EXPECT_TRUE(identical(a, b));
  EXPECT_EQ(h.field, mm_header::field_kind::real);
  EXPECT_EQ(h.symmetry, mm_header::symmetry_kind::general);
}

TEST(MatrixMarketRoundTrip, RandomFloatsAreBitExact) {
  std::mt19937_64 rng(7);
  coordinate_list<float> a({10, 10});
  a.push_back({0, 0}, std::numeric_limits<float>::denorm_min());
  a.push_back({0, 1}, -0.0f);
  for (int k = 0; k < 3000; ++k)
    a.push_back({static_cast<int>(rng() % 10), static_cast<int>(rng() % 10)}, random_float(rng));
  EXPECT_TRUE(identical(a, through_stream(a)));
}

TEST(MatrixMarketRoundTrip, ComplexIsBitExact) {
  std::mt19937_64 rng(3);
  coordinate_list<std::complex<double>> a({20, 30});
  a.push_back({0, 0}, {-0.0, 1e-300});
  a.push_back({1, 0}, {std::numeric_limits<double>::denorm_min(), -0.0});
  for (int k = 0; k < 2000; ++k)
    a.push_back({static_cast<int>(rng() % 20), static_cast<int>(rng() % 30)},
                {random_double(rng), random_double(rng)});
  mm_header h;
  EXPECT_TRUE(identical(a, through_stream(a, {}, &h)));
  EXPECT_EQ(h.field, mm_header::field_kind::complex);

  coordinate_list<std::complex<float>> f({3, 3});
  for (int k = 0; k < 500; ++k)
    f.push_back({static_cast<int>(rng() % 3), static_cast<int>(rng() % 3)}, {random_float(rng), random_float(rng)});
  EXPECT_TRUE(identical(f, through_stream(f)));
}

TEST(MatrixMarketRoundTrip, IntegersUseTheIntegerField) {
  coordinate_list<std::int64_t, std::int64_t> a({3000000000LL, 2});
  a.push_back({2999999999LL, 1}, std::numeric_limits<std::int64_t>::min());
  a.push_back({0, 0}, std::numeric_limits<std::int64_t>::max());
  a.push_back({5, 1}, 0);
  mm_header h;
  EXPECT_TRUE(identical(a, through_stream(a, {}, &h)));
  EXPECT_EQ(h.field, mm_header::field_kind::integer);
}

TEST(MatrixMarketRoundTrip, NanAndInfinityKeepTheirSign) {
  coordinate_list<double> a({1, 4});
  a.push_back({0, 0}, std::numeric_limits<double>::quiet_NaN());
  a.push_back({0, 1}, -std::numeric_limits<double>::quiet_NaN());
  a.push_back({0, 2}, std::numeric_limits<double>::infinity());
  a.push_back({0, 3}, -std::numeric_limits<double>::infinity());
  const auto b = through_stream(a);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_TRUE(std::isnan(b.value(0)) && !std::signbit(b.value(0)));
  EXPECT_TRUE(std::isnan(b.value(1)) && std::signbit(b.value(1)));
  EXPECT_EQ(b.value(2), a.value(2));
  EXPECT_EQ(b.value(3), a.value(3));
}

TEST(MatrixMarketRoundTrip, EmptyMatrix) {
  coordinate_list<double> a({4, 0});
  EXPECT_TRUE(identical(a, through_stream(a)));
}

TEST(MatrixMarketRoundTrip, VectorIsWrittenAsColumn) {
  coordinate_list<double> v(std::vector<std::int32_t>{5});
  v.push_back({3}, 2.5);
  v.push_back({0}, -1.0);
  const auto m = through_stream(v);
  EXPECT_EQ(m.dims(), (std::vector<std::int32_t>{5, 1}));
  EXPECT_EQ(tensorlev_test::entries2(m), (std::vector<std::tuple<long long, long long, double>>{{3, 0, 2.5}, {0, 0, -1.0}}));
}

TEST(MatrixMarketRoundTrip, OrderThreeIsAShapeError) {
  coordinate_list<double> t({2, 2, 2});
  std::ostringstream s;
  EXPECT_THROW(write_matrix_market(s, t), tensorlev::shape_error);
  coordinate_list<double> scalar(std::vector<std::int32_t>{});
  EXPECT_THROW(write_matrix_market(s, scalar), tensorlev::shape_error);
}

TEST(MatrixMarketRoundTrip, PatternAndCommentOptions) {
  coordinate_list<double> a({3, 3});
  a.push_back({2, 1}, 7.5);
  mm_write_options opt;
  opt.pattern = true;
  opt.comment = "written by tensorlev\nsecond line";
  std::stringstream s;
  write_matrix_market(s, a, opt);
  EXPECT_EQ(s.str(),
            "%%MatrixMarket matrix coordinate pattern general\n%written by tensorlev\n%second line\n3 3 1\n3 2\n");
  const auto b = read_matrix_market<double>(s, "p.mtx");
  EXPECT_EQ(b.value(0), 1.0);
}

TEST(MatrixMarketRoundTrip, DenseArrayIsBitExact) {
  std::mt19937_64 rng(11);
  const std::size_t rows = 7, cols = 5;
  std::vector<double> dense(rows * cols);
  for (double& x : dense) x = random_double(rng);
  dense[3] = 0.0;
  dense[4] = -0.0;
  std::stringstream s;
  write_matrix_market_array(s, rows, cols, dense);
  mm_header h;
  const auto a = read_matrix_market<double>(s, "dense.mtx", &h);
  EXPECT_EQ(h.format, mm_header::format_kind::array);
  ASSERT_EQ(a.size(), dense.size());
  for (std::size_t k = 0; k < dense.size(); ++k) {
    EXPECT_EQ(a.coords(k)[0], static_cast<std::int32_t>(k % rows));
    EXPECT_EQ(a.coords(k)[1], static_cast<std::int32_t>(k / rows));
    EXPECT_TRUE(same_bits(a.value(k), dense[k])) << k;
  }
}

TEST(MatrixMarketRoundTrip, DenseComplexArray) {
  const std::vector<std::complex<double>> dense{{1, 2}, {-0.0, 3}, {1e-300, -1e300}, {0, 0}};
  std::stringstream s;
  write_matrix_market_array(s, 2, 2, dense);
  EXPECT_EQ(s.str().substr(0, s.str().find('\n')), "%%MatrixMarket matrix array complex general");
  const auto a = read_matrix_market<std::complex<double>>(s, "dense.mtx");
  ASSERT_EQ(a.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_TRUE(same_bits(a.value(k), dense[k]));
}

TEST(MatrixMarketRoundTrip, DenseArrayOfWrongSizeIsAShapeError) {
  std::ostringstream s;
  EXPECT_THROW(write_matrix_market_array(s, 2, 3, std::vector<double>(5)), tensorlev::shape_error);
}

TEST(MatrixMarketRoundTrip, ThroughFiles) {
  std::mt19937_64 rng(5);
  coordinate_list<double> a({100, 100});
  for (int k = 0; k < 1000; ++k)
    a.push_back({static_cast<int>(rng() % 100), static_cast<int>(rng() % 100)}, random_double(rng));
  tensorlev_test::temp_file f(".mtx");
  write_matrix_market(f.path(), a);
  EXPECT_TRUE(identical(a, read_matrix_market<double>(f.path())));

  tensorlev_test::temp_file g(".mtx");
  write_matrix_market_array(g.path(), 1, 2, std::vector<double>{1.5, -2.5});
  EXPECT_EQ(read_matrix_market<double>(g.path()).value(1), -2.5);
}

TEST(MatrixMarketRoundTrip, UnwritablePathIsAnIoError) {
  coordinate_list<double> a({1, 1});
  const std::string path = tensorlev_test::data_file("no_such_dir/out.mtx");
  EXPECT_TRUE(tensorlev_test::throws_io_error([&] { write_matrix_market(path, a); }, path, 0,
                                              "cannot open file for writing"));
}

TEST(MatrixMarketRoundTrip, FailedStreamIsAnIoError) {
  coordinate_list<double> a({1, 1});
  a.push_back({0, 0}, 1.0);
  std::ostringstream s;
  s.setstate(std::ios::badbit);
  EXPECT_TRUE(tensorlev_test::throws_io_error([&] { write_matrix_market(s, a); }, "<stream>", 0, "write error"));
}

}  // namespace
