// Matrix Market reader: formats, fields and symmetries against expected entries.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <tensorlev/io/matrix_market.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::io::mm_header;
using tensorlev::io::read_matrix_market;
using tensorlev_test::entries2;
using tensorlev_test::same_bits;
using cd = std::complex<double>;

template <class V = double, class I = std::int32_t>
auto read(const std::string& text, mm_header* h = nullptr) {
  std::istringstream s(text);
  return read_matrix_market<V, I>(s, "test.mtx", h);
}

template <class V>
using triples = std::vector<std::tuple<long long, long long, V>>;

TEST(MatrixMarketParse, CoordinateRealGeneral) {
  mm_header h;
  const auto a = read(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "3 4 3\n"
      "1 1 1.5\n"
      "3 4 -2e-3\n"
      "2 2 7\n",
      &h);
  EXPECT_EQ(a.order(), 2u);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(entries2(a), (triples<double>{{0, 0, 1.5}, {2, 3, -2e-3}, {1, 1, 7.0}}));
  EXPECT_EQ(h.object, mm_header::object_kind::matrix);
  EXPECT_EQ(h.format, mm_header::format_kind::coordinate);
  EXPECT_EQ(h.field, mm_header::field_kind::real);
  EXPECT_EQ(h.symmetry, mm_header::symmetry_kind::general);
  EXPECT_EQ(h.rows, 3);
  EXPECT_EQ(h.cols, 4);
  EXPECT_EQ(h.entries, 3);
  EXPECT_EQ(tensorlev::io::to_string(h), "%%MatrixMarket matrix coordinate real general");
}

TEST(MatrixMarketParse, HeaderIsCaseInsensitive) {
  mm_header h;
  const auto a = read<cd>("%%matrixmarket MATRIX Coordinate COMPLEX Hermitian\n2 2 1\n2 1 1 2\n", &h);
  EXPECT_EQ(h.field, mm_header::field_kind::complex);
  EXPECT_EQ(h.symmetry, mm_header::symmetry_kind::hermitian);
  EXPECT_EQ(tensorlev::io::to_string(h), "%%MatrixMarket matrix coordinate complex hermitian");
  EXPECT_EQ(a.size(), 2u);
}

TEST(MatrixMarketParse, CommentsBlankLinesCrLfTabsAndNoFinalNewline) {
  const auto a = read(
      "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\r\n"
      "%\r\n"
      "\r\n"
      "   \t\r\n"
      "% another comment\r\n"
      "  2\t2   2  \r\n"
      "\t1 2\t0.25\r\n"
      "\r\n"
      "2 1 -4");
  EXPECT_EQ(entries2(a), (triples<double>{{0, 1, 0.25}, {1, 0, -4.0}}));
}

TEST(MatrixMarketParse, TrailingBlankLinesAndCommentsAreAccepted) {
  const auto a = read("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 3\n\n% end\n\n");
  EXPECT_EQ(a.size(), 1u);
}

TEST(MatrixMarketParse, EmptyMatrix) {
  const auto a = read("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{0, 0}));
  EXPECT_TRUE(a.empty());
  const auto b = read("%%MatrixMarket matrix coordinate real general\n5 7 0\n");
  EXPECT_EQ(b.dims(), (std::vector<std::int32_t>{5, 7}));
  EXPECT_TRUE(b.empty());
}

TEST(MatrixMarketParse, DuplicatesAreKept) {
  const auto a = read("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n");
  EXPECT_EQ(entries2(a), (triples<double>{{0, 0, 1.0}, {0, 0, 2.0}}));
}

TEST(MatrixMarketParse, SymmetricMirrorsOffDiagonalEntries) {
  const auto a = read("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 1 -1\n3 2 2.5\n");
  EXPECT_EQ(entries2(a), (triples<double>{{0, 0, 4.0}, {2, 0, -1.0}, {0, 2, -1.0}, {2, 1, 2.5}, {1, 2, 2.5}}));
}

TEST(MatrixMarketParse, SkewSymmetricNegatesMirror) {
  const auto a = read("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n3 2 -0.5\n");
  EXPECT_EQ(entries2(a), (triples<double>{{1, 0, 5.0}, {0, 1, -5.0}, {2, 1, -0.5}, {1, 2, 0.5}}));
  const auto b = read<int>("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 7\n");
  EXPECT_EQ(entries2(b), (triples<int>{{1, 0, 7}, {0, 1, -7}}));
}

TEST(MatrixMarketParse, HermitianConjugatesMirror) {
  const auto a = read<cd>("%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 3 0\n2 1 1 2\n");
  EXPECT_EQ(entries2(a), (triples<cd>{{0, 0, cd(3, 0)}, {1, 0, cd(1, 2)}, {0, 1, cd(1, -2)}}));
}

TEST(MatrixMarketParse, HermitianWithRealFieldReadsAsSymmetric) {
  const auto a = read("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 6\n");
  EXPECT_EQ(entries2(a), (triples<double>{{1, 0, 6.0}, {0, 1, 6.0}}));
}

TEST(MatrixMarketParse, ComplexSymmetricAndSkewDoNotConjugate) {
  const auto s = read<cd>("%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n2 1 1 2\n");
  EXPECT_EQ(entries2(s), (triples<cd>{{1, 0, cd(1, 2)}, {0, 1, cd(1, 2)}}));
  const auto k = read<cd>("%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 1 1 2\n");
  EXPECT_EQ(entries2(k), (triples<cd>{{1, 0, cd(1, 2)}, {0, 1, cd(-1, -2)}}));
}

TEST(MatrixMarketParse, PatternGivesOnes) {
  const auto a = read("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
  EXPECT_EQ(entries2(a), (triples<double>{{0, 2, 1.0}, {1, 0, 1.0}}));
  const auto s = read<int>("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 1\n3 1\n");
  EXPECT_EQ(entries2(s), (triples<int>{{0, 0, 1}, {2, 0, 1}, {0, 2, 1}}));
  const auto c = read<cd>("%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n");
  EXPECT_EQ(c.value(0), cd(1, 0));
}

TEST(MatrixMarketParse, IntegerFieldIntoEveryValueType) {
  const std::string text =
      "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 -7\n2 2 +12\n1 2 9007199254740993\n";
  const auto d = read<double>(text);
  EXPECT_EQ(entries2(d), (triples<double>{{0, 0, -7.0}, {1, 1, 12.0}, {0, 1, 9007199254740992.0}}));
  const auto l = read<std::int64_t>(text);
  EXPECT_EQ(entries2(l), (triples<std::int64_t>{{0, 0, -7}, {1, 1, 12}, {0, 1, 9007199254740993LL}}));
  const auto c = read<cd>(text);
  EXPECT_EQ(c.value(0), cd(-7, 0));
  const auto f = read<float>(text);
  EXPECT_EQ(f.value(1), 12.0f);
}

TEST(MatrixMarketParse, ComplexGeneral) {
  const std::string text = "%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 2 0.5 -1.25\n2 1 -0 3e2\n";
  const auto a = read<cd>(text);
  EXPECT_EQ(entries2(a), (triples<cd>{{0, 1, cd(0.5, -1.25)}, {1, 0, cd(-0.0, 300)}}));
  EXPECT_TRUE(std::signbit(a.value(1).real()));
  const auto f = read<std::complex<float>>(text);
  EXPECT_EQ(f.value(0), std::complex<float>(0.5f, -1.25f));
}

TEST(MatrixMarketParse, RealFieldIntoComplex) {
  const auto a = read<cd>("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1 4\n");
  EXPECT_EQ(entries2(a), (triples<cd>{{1, 0, cd(4, 0)}, {0, 1, cd(4, 0)}}));
}

TEST(MatrixMarketParse, ArrayGeneralIsColumnMajorWithZeros) {
  mm_header h;
  const auto a = read("%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n0\n4\n5\n0\n", &h);
  EXPECT_EQ(h.format, mm_header::format_kind::array);
  EXPECT_EQ(h.entries, 6);
  EXPECT_EQ(entries2(a), (triples<double>{{0, 0, 1.0}, {1, 0, 2.0}, {0, 1, 0.0}, {1, 1, 4.0}, {0, 2, 5.0},
                                          {1, 2, 0.0}}));
}

TEST(MatrixMarketParse, ArraySymmetricStoresLowerTriangle) {
  mm_header h;
  // Lower triangle of [[1 2 3] [2 4 5] [3 5 6]], column by column.
  const auto a = read("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n", &h);
  EXPECT_EQ(h.entries, 6);
  EXPECT_EQ(entries2(a), (triples<double>{{0, 0, 1.0},
                                          {1, 0, 2.0},
                                          {0, 1, 2.0},
                                          {2, 0, 3.0},
                                          {0, 2, 3.0},
                                          {1, 1, 4.0},
                                          {2, 1, 5.0},
                                          {1, 2, 5.0},
                                          {2, 2, 6.0}}));
}

TEST(MatrixMarketParse, ArraySkewSymmetricStoresStrictLowerTriangle) {
  mm_header h;
  const auto a = read("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n", &h);
  EXPECT_EQ(h.entries, 3);
  EXPECT_EQ(entries2(a), (triples<double>{{1, 0, 1.0}, {0, 1, -1.0}, {2, 0, 2.0}, {0, 2, -2.0}, {2, 1, 3.0},
                                          {1, 2, -3.0}}));
}

TEST(MatrixMarketParse, ArrayComplexHermitian) {
  const auto a = read<cd>("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n");
  EXPECT_EQ(entries2(a), (triples<cd>{{0, 0, cd(1, 0)}, {1, 0, cd(2, 3)}, {0, 1, cd(2, -3)}, {1, 1, cd(4, 0)}}));
}

TEST(MatrixMarketParse, ArrayIntegerAndEmpty) {
  const auto a = read<int>("%%MatrixMarket matrix array integer general\n1 2\n-3\n4\n");
  EXPECT_EQ(entries2(a), (triples<int>{{0, 0, -3}, {0, 1, 4}}));
  const auto e = read("%%MatrixMarket matrix array real general\n3 0\n");
  EXPECT_EQ(e.dims(), (std::vector<std::int32_t>{3, 0}));
  EXPECT_TRUE(e.empty());
}

TEST(MatrixMarketParse, VectorObjectsHaveOrderOne) {
  mm_header h;
  const auto a = read("%%MatrixMarket vector coordinate real general\n5 2\n2 1.5\n5 -1\n", &h);
  EXPECT_EQ(h.object, mm_header::object_kind::vector);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.cols, 1);
  ASSERT_EQ(a.order(), 1u);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{5}));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.coords(0)[0], 1);
  EXPECT_EQ(a.value(0), 1.5);
  EXPECT_EQ(a.coords(1)[0], 4);
  const auto d = read("%%MatrixMarket vector array real general\n3\n1\n0\n2\n");
  ASSERT_EQ(d.order(), 1u);
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.coords(2)[0], 2);
  EXPECT_EQ(d.value(2), 2.0);
}

TEST(MatrixMarketParse, SpecialFloatingValues) {
  const auto a = read(
      "%%MatrixMarket matrix coordinate real general\n1 9 9\n"
      "1 1 nan\n1 2 -inf\n1 3 Infinity\n1 4 NaN\n1 5 -0.0\n1 6 1.5D+03\n1 7 +2.5\n1 8 4.9e-324\n1 9 .5\n");
  EXPECT_TRUE(std::isnan(a.value(0)));
  EXPECT_EQ(a.value(1), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(a.value(2), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(a.value(3)));
  EXPECT_TRUE(same_bits(a.value(4), -0.0));
  EXPECT_EQ(a.value(5), 1500.0);
  EXPECT_EQ(a.value(6), 2.5);
  EXPECT_EQ(a.value(7), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(a.value(8), 0.5);
}

TEST(MatrixMarketParse, UnderflowRoundsToSignedZero) {
  const std::string text = "%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 1e-400\n1 2 -1e-400\n1 3 1e-50\n";
  const auto d = read<double>(text);
  EXPECT_TRUE(same_bits(d.value(0), 0.0));
  EXPECT_TRUE(same_bits(d.value(1), -0.0));
  EXPECT_EQ(d.value(2), 1e-50);
  const auto f = read<float>(text);
  EXPECT_TRUE(same_bits(f.value(2), 0.0f));
}

TEST(MatrixMarketParse, SixtyFourBitIndices) {
  const auto a = read<double, std::int64_t>(
      "%%MatrixMarket matrix coordinate real general\n5000000000 3 1\n4999999999 2 1\n");
  EXPECT_EQ(a.dims(), (std::vector<std::int64_t>{5000000000LL, 3}));
  EXPECT_EQ(a.coords(0)[0], 4999999998LL);
  EXPECT_EQ(a.coords(0)[1], 1);
}

TEST(MatrixMarketParse, LongLinesAndManyEntries) {
  // Longer than the reader's block, so lines straddle block boundaries.
  std::string text = "%%MatrixMarket matrix coordinate real general\n% " + std::string(1 << 19, 'c') + "\n";
  const int n = 100000;
  text += "1000 1000 " + std::to_string(n) + "\n";
  for (int k = 0; k < n; ++k)
    text += std::to_string(k % 1000 + 1) + " " + std::to_string(k / 100 + 1) + " " + std::to_string(k) + ".25\n";
  const auto a = read(text);
  ASSERT_EQ(a.size(), static_cast<std::size_t>(n));
  for (int k = 0; k < n; k += 997) {
    EXPECT_EQ(a.coords(k)[0], k % 1000);
    EXPECT_EQ(a.coords(k)[1], k / 100);
    EXPECT_EQ(a.value(k), k + 0.25);
  }
}

TEST(MatrixMarketParse, HeaderToStringNamesEveryKeyword) {
  using tensorlev::io::to_string;
  EXPECT_STREQ(to_string(mm_header::object_kind::vector), "vector");
  EXPECT_STREQ(to_string(mm_header::format_kind::array), "array");
  EXPECT_STREQ(to_string(mm_header::field_kind::pattern), "pattern");
  EXPECT_STREQ(to_string(mm_header::field_kind::integer), "integer");
  EXPECT_STREQ(to_string(mm_header::symmetry_kind::skew_symmetric), "skew-symmetric");
}

}  // namespace
