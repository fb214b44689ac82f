// FROSTT reader: every kind of malformed input throws io_error naming the
// file, the 1-based line and the problem.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlev/io/frostt.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::io::read_frostt;
using tensorlev_test::throws_io_error;

const std::string kName = "bad.tns";

template <class V = double, class I = std::int32_t>
::testing::AssertionResult fails(const std::string& text, long line, const std::string& phrase) {
  return throws_io_error(
      [&] {
        std::istringstream s(text);
        (void)read_frostt<V, I>(s, kName);
      },
      kName, line, phrase);
}

template <class V = double, class I = std::int32_t>
::testing::AssertionResult fails_with_dims(const std::string& text, std::vector<I> dims, long line,
                                           const std::string& phrase) {
  return throws_io_error(
      [&] {
        std::istringstream s(text);
        (void)read_frostt<V, I>(s, kName, dims);
      },
      kName, line, phrase);
}

TEST(FrosttErrors, CannotOpenFile) {
  const std::string path = tensorlev_test::data_file("does_not_exist.tns");
  EXPECT_TRUE(throws_io_error([&] { (void)read_frostt<double>(path); }, path, 0, "cannot open file"));
  EXPECT_TRUE(throws_io_error([&] { (void)read_frostt<double>(path, {2, 2}); }, path, 0, "cannot open file"));
}

TEST(FrosttErrors, EmptyFile) { EXPECT_TRUE(fails("", 1, "empty file")); }

TEST(FrosttErrors, OnlyCommentsAndBlankLines) {
  EXPECT_TRUE(fails("# a comment\n\n   \n# another\n", 5, "empty file: no entries"));
}

TEST(FrosttErrors, EntryWithOnlyAValue) {
  EXPECT_TRUE(fails("# c\n1.5\n", 2, "entry has 1 field, expected at least one coordinate and a value"));
  EXPECT_TRUE(fails<std::complex<double>>("1 2\n", 1,
                                          "entry has 2 fields, expected at least one coordinate and real imaginary"));
}

TEST(FrosttErrors, InconsistentFieldCount) {
  EXPECT_TRUE(fails("# c\n1 1 1 1.0\n2 2 2 2.0\n3 3 3.0\n", 4,
                    "entry has 3 fields, expected 4 (3 coordinates and a value, as on line 2)"));
  EXPECT_TRUE(fails("1 1 1.0\n2 2 2 2.0\n", 2, "entry has 4 fields, expected 3"));
}

TEST(FrosttErrors, FieldCountDiffersFromDims) {
  EXPECT_TRUE(fails_with_dims("1 1 1.0\n", {2, 2, 2}, 1,
                              "entry has 3 fields, expected 4 (3 coordinates and a value, dims has 3 modes)"));
}

TEST(FrosttErrors, ZeroCoordinate) {
  EXPECT_TRUE(fails("1 1 1 1\n1 0 1 1\n", 2, "field 2 (mode 1): coordinate 0 is invalid; FROSTT coordinates are 1-based"));
  EXPECT_TRUE(fails_with_dims("0 1 1\n", {3, 3}, 1, "field 1 (mode 0): coordinate 0 is out of range [1, 3]; FROSTT coordinates are 1-based"));
}

TEST(FrosttErrors, NegativeCoordinate) {
  EXPECT_TRUE(fails("1 1 -4 1\n", 1, "field 3 (mode 2): coordinate -4 is invalid; FROSTT coordinates are 1-based"));
  EXPECT_TRUE(fails("1 -99999999999999999999 1\n", 1, "-99999999999999999999 is invalid; FROSTT coordinates are 1-based"));
}

TEST(FrosttErrors, CoordinateAboveGivenDimension) {
  EXPECT_TRUE(fails_with_dims("1 1 1 1\n2 4 1 1\n", {2, 3, 2}, 2, "field 2 (mode 1): coordinate 4 is out of range [1, 3]"));
}

TEST(FrosttErrors, NonNumericCoordinate) {
  EXPECT_TRUE(fails("1 1 1 1\n1 b 1 1\n", 2, "field 2 (mode 1): coordinate 'b' is not an integer"));
  EXPECT_TRUE(fails("1 1.5 1 1\n", 1, "field 2 (mode 1): coordinate '1.5' is not an integer"));
}

TEST(FrosttErrors, NonNumericValue) {
  EXPECT_TRUE(fails("1 1 1 1\n2 2 2 one\n", 2, "value 'one' is not a number"));
  EXPECT_TRUE(fails<std::complex<double>>("1 1 1 1\n2 2 2 j\n", 2, "imaginary part 'j' is not a number"));
}

TEST(FrosttErrors, RealValueIntoIntegerValueType) {
  EXPECT_TRUE(fails<int>("1 1 1\n1 2 0.5\n", 2, "value '0.5' is not an integer"));
}

TEST(FrosttErrors, ValueAboveLargestFinite) {
  EXPECT_TRUE(fails<float>("1 1 1e39\n", 1, "value '1e39' is out of range for float"));
}

TEST(FrosttErrors, CoordinateDoesNotFitIndexType) {
  EXPECT_TRUE(fails("1 1 1\n1 3000000000 1\n", 2, "field 2 (mode 1): coordinate 3000000000 does not fit the index type (32-bit)"));
  EXPECT_TRUE((fails<double, std::int64_t>("99999999999999999999 1 1\n", 1, "does not fit the index type (64-bit)")));
  EXPECT_TRUE(fails_with_dims("3000000000 1 1\n", {5, 5}, 1, "field 1 (mode 0): coordinate 3000000000 does not fit the index type"));
  // 64-bit indices hold it.
  std::istringstream s("1 3000000000 1\n");
  const auto t = read_frostt<double, std::int64_t>(s, kName);
  EXPECT_EQ(t.dims()[1], 3000000000LL);
}

TEST(FrosttErrors, LineNumbersCountCommentsBlankLinesAndCrLf) {
  EXPECT_TRUE(fails("# c\r\n\r\n1 1 1\r\n  # indented comment\r\n\r\n2 2 x\r\n", 6, "value 'x' is not a number"));
}

TEST(FrosttErrors, NegativeDimsAreAShapeError) {
  std::istringstream s("");
  EXPECT_THROW((void)read_frostt<double>(s, kName, {2, -1}), tensorlev::shape_error);
  std::istringstream t("");
  EXPECT_THROW((void)read_frostt<double>(t, kName, std::vector<std::int32_t>{}), tensorlev::shape_error);
}

TEST(FrosttErrors, PathOverloadNamesThePath) {
  tensorlev_test::temp_file f(".tns");
  {
    std::ofstream out(f.path(), std::ios::binary);
    out << "1 1 1 1\n1 1 1\n";
  }
  EXPECT_TRUE(throws_io_error([&] { (void)read_frostt<double>(f.path()); }, f.path(), 2, "entry has 3 fields"));
}

TEST(FrosttErrors, MutatedFilesThrowOnlyIoError) {
  const std::string seed = "# tensor\n1 1 2 1.5\n3 2 1 -2e-3\n\n2 2 2 7\n1 3 1 nan\n";
  const char alphabet[] = "0123456789 -+.eE\n#x\t";
  std::mt19937 rng(99);
  int read_ok = 0, threw = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const std::size_t pos = rng() % text.size();
      if (rng() % 2)
        text[pos] = alphabet[rng() % (sizeof(alphabet) - 1)];
      else
        text.erase(pos, 1 + rng() % 3);
      if (text.empty()) text = "x";
    }
    try {
      std::istringstream s(text);
      auto t = read_frostt<double>(s, kName);
      for (std::size_t e = 0; e < t.size(); ++e)
        for (std::size_t d = 0; d < t.order(); ++d) ASSERT_LT(t.coords(e)[d], t.dims()[d]);
      ++read_ok;
    } catch (const tensorlev::io_error& e) {
      ASSERT_EQ(std::string(e.what()).rfind(kName + ":", 0), 0u) << e.what();
      ++threw;
    } catch (const std::exception& e) {
      FAIL() << "unexpected " << typeid(e).name() << ": " << e.what() << "\ninput:\n" << text;
    }
  }
  EXPECT_GT(read_ok, 0);
  EXPECT_GT(threw, 0);
}

}  // namespace
