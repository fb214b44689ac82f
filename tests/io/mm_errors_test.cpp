// Matrix Market reader: every kind of malformed input throws io_error naming
// the file, the 1-based line and the problem.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include <tensorlev/io/matrix_market.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::io::read_matrix_market;
using tensorlev_test::throws_io_error;

const std::string kName = "bad.mtx";

template <class V = double, class I = std::int32_t>
auto read(const std::string& text) {
  std::istringstream s(text);
  return read_matrix_market<V, I>(s, kName);
}

template <class V = double, class I = std::int32_t>
::testing::AssertionResult fails(const std::string& text, long line, const std::string& phrase) {
  return throws_io_error([&] { (void)read<V, I>(text); }, kName, line, phrase);
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";

// The checker itself rejects a wrong file, line, phrase or exception type.
TEST(MatrixMarketErrors, CheckerRejectsMismatches) {
  const std::string text = kGeneral + "3 3 1\n0 1 1\n";
  EXPECT_TRUE(fails(text, 3, "1-based"));
  EXPECT_FALSE(fails(text, 2, "1-based"));
  EXPECT_FALSE(fails(text, 3, "truncated"));
  EXPECT_FALSE(throws_io_error([&] { (void)read(text); }, "other.mtx", 3, "1-based"));
  EXPECT_FALSE(throws_io_error([] { throw tensorlev::shape_error("x"); }, kName, 3, "x"));
  EXPECT_FALSE(throws_io_error([] {}, kName, 3, "x"));
}

// --- Opening -----------------------------------------------------------------

TEST(MatrixMarketErrors, CannotOpenFile) {
  const std::string path = tensorlev_test::data_file("does_not_exist.mtx");
  EXPECT_TRUE(throws_io_error([&] { (void)read_matrix_market<double>(path); }, path, 0, "cannot open file"));
}

TEST(MatrixMarketErrors, DirectoryIsNotAFile) {
  const std::string path = tensorlev_test::data_file("");
  EXPECT_TRUE(throws_io_error([&] { (void)read_matrix_market<double>(path); }, path, 0, "is a directory"));
}

TEST(MatrixMarketErrors, EmptyFile) { EXPECT_TRUE(fails("", 1, "empty file")); }

// --- Banner ------------------------------------------------------------------

TEST(MatrixMarketErrors, MissingBanner) {
  EXPECT_TRUE(fails("3 3 1\n1 1 1\n", 1, "missing %%MatrixMarket banner"));
  EXPECT_TRUE(fails("% a comment first\n%%MatrixMarket matrix coordinate real general\n", 1,
                    "missing %%MatrixMarket banner"));
  EXPECT_TRUE(fails("\n%%MatrixMarket matrix coordinate real general\n", 1, "missing %%MatrixMarket banner"));
}

TEST(MatrixMarketErrors, BannerWithTooFewFields) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "malformed banner: 4 fields, expected 5"));
}

TEST(MatrixMarketErrors, BannerWithTooManyFields) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 1,
                    "malformed banner: 6 fields, expected 5"));
}

TEST(MatrixMarketErrors, UnknownObject) {
  EXPECT_TRUE(fails("%%MatrixMarket tensor coordinate real general\n1 1 0\n", 1, "unknown object 'tensor'"));
}

TEST(MatrixMarketErrors, UnknownFormat) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unknown format 'sparse'"));
}

TEST(MatrixMarketErrors, UnknownField) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1, "unknown field 'double'"));
}

TEST(MatrixMarketErrors, UnknownSymmetry) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real skew\n1 1 0\n", 1, "unknown symmetry 'skew'"));
}

TEST(MatrixMarketErrors, ArrayCannotBePattern) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix array pattern general\n1 1\n", 1, "array format cannot have field pattern"));
}

TEST(MatrixMarketErrors, PatternCannotBeSkewSymmetric) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n", 1,
                    "pattern field cannot be skew-symmetric"));
}

TEST(MatrixMarketErrors, VectorMustBeGeneral) {
  EXPECT_TRUE(fails("%%MatrixMarket vector coordinate real symmetric\n2 1\n1 1\n", 1, "a vector must be general"));
}

TEST(MatrixMarketErrors, ComplexIntoRealValueType) {
  const std::string text = "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 2\n";
  EXPECT_TRUE(fails<double>(text, 1, "complex values cannot be read into a real value type"));
  EXPECT_TRUE(fails<float>(text, 1, "complex values cannot be read into a real value type"));
  EXPECT_TRUE(fails<int>(text, 1, "complex values cannot be read into a real value type"));
}

TEST(MatrixMarketErrors, RealIntoIntegerValueType) {
  EXPECT_TRUE(fails<int>(kGeneral + "1 1 1\n1 1 1.5\n", 1, "real values cannot be read into an integer value type"));
}

TEST(MatrixMarketErrors, SkewSymmetricIntoUnsigned) {
  EXPECT_TRUE(fails<unsigned>("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n", 1,
                              "unsigned value type"));
}

// --- Size line ---------------------------------------------------------------

TEST(MatrixMarketErrors, MissingSizeLine) {
  EXPECT_TRUE(fails(kGeneral + "% only comments\n\n", 4, "missing size line"));
  EXPECT_TRUE(fails(kGeneral, 2, "missing size line"));
}

TEST(MatrixMarketErrors, SizeLineWithWrongFieldCount) {
  EXPECT_TRUE(fails(kGeneral + "3 3\n", 2, "malformed size line: 2 fields, expected 3 '<rows> <columns> <entries>'"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1 1\n", 2, "malformed size line: 4 fields, expected 3"));
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real general\n% c\n3 3 9\n", 3,
                    "malformed size line: 3 fields, expected 2 '<rows> <columns>'"));
}

TEST(MatrixMarketErrors, SizeLineNotNumeric) {
  EXPECT_TRUE(fails(kGeneral + "3 x 1\n", 2, "number of columns 'x' is not an integer"));
  EXPECT_TRUE(fails(kGeneral + "3.0 3 1\n", 2, "number of rows '3.0' is not an integer"));
}

TEST(MatrixMarketErrors, NegativeSizes) {
  EXPECT_TRUE(fails(kGeneral + "-3 3 1\n", 2, "number of rows -3 is negative"));
  EXPECT_TRUE(fails(kGeneral + "3 -1 1\n", 2, "number of columns -1 is negative"));
  EXPECT_TRUE(fails(kGeneral + "3 3 -1\n", 2, "number of entries -1 is negative"));
  EXPECT_TRUE(fails(kGeneral + "3 3 -99999999999999999999\n", 2, "number of entries -99999999999999999999 is negative"));
}

TEST(MatrixMarketErrors, DimensionDoesNotFitIndexType) {
  EXPECT_TRUE(fails(kGeneral + "3000000000 3 0\n", 2, "number of rows 3000000000 does not fit the index type (32-bit)"));
  EXPECT_TRUE(fails(kGeneral + "3 2147483648 0\n", 2, "number of columns 2147483648 does not fit the index type"));
  EXPECT_TRUE((fails<double, std::int64_t>(kGeneral + "3 99999999999999999999 0\n", 2,
                                           "does not fit the index type (64-bit)")));
  // The same size fits a 64-bit index type.
  const auto a = read<double, std::int64_t>(kGeneral + "3000000000 3 0\n");
  EXPECT_EQ(a.dims()[0], 3000000000LL);
}

TEST(MatrixMarketErrors, EntryCountDoesNotFitIndexType) {
  EXPECT_TRUE(fails(kGeneral + "3 3 4000000000\n1 1 1\n", 2,
                    "number of entries 4000000000 does not fit the index type (32-bit)"));
}

TEST(MatrixMarketErrors, ArraySizeDoesNotFitIndexType) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real general\n100000 100000\n1\n", 2,
                    "100000 x 100000 entries, which does not fit the index type (32-bit)"));
}

TEST(MatrixMarketErrors, SymmetricMatrixMustBeSquare) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2,
                    "a symmetric matrix must be square, this one is 3 x 4"));
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real skew-symmetric\n3 2\n", 2,
                    "a skew-symmetric matrix must be square"));
}

// --- Entry count -------------------------------------------------------------

TEST(MatrixMarketErrors, TruncatedFile) {
  EXPECT_TRUE(fails(kGeneral + "3 3 3\n1 1 1\n2 2 2\n", 5, "file ends after 2 of 3 entries (truncated file?)"));
  // Without a final newline the missing entry is still on the next line.
  EXPECT_TRUE(fails(kGeneral + "3 3 3\n1 1 1\n2 2 2", 5, "truncated file"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n", 3, "file ends after 0 of 1 entries"));
}

TEST(MatrixMarketErrors, TruncatedArray) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 6, "file ends after 3 of 4 entries"));
}

TEST(MatrixMarketErrors, MoreEntriesThanDeclared) {
  EXPECT_TRUE(fails(kGeneral + "3 3 2\n1 1 1\n2 2 2\n\n3 3 3\n", 6, "more entries than the 2 declared on the size line"));
}

TEST(MatrixMarketErrors, MoreArrayEntriesThanDeclared) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", 5,
                    "more entries than the 2 declared by the array size"));
}

// --- Coordinates -------------------------------------------------------------

TEST(MatrixMarketErrors, RowIndexAboveDimension) {
  EXPECT_TRUE(fails(kGeneral + "3 4 2\n1 1 1\n4 1 1\n", 4, "row index 4 is out of range [1, 3]"));
}

TEST(MatrixMarketErrors, ColumnIndexAboveDimension) {
  EXPECT_TRUE(fails(kGeneral + "3 4 1\n1 5 1\n", 3, "column index 5 is out of range [1, 4]"));
}

TEST(MatrixMarketErrors, ZeroIndexIsRejectedAsOneBased) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n0 1 1\n", 3, "row index 0 is out of range [1, 3]; Matrix Market indices are 1-based"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 0 1\n", 3, "column index 0 is out of range [1, 3]; Matrix Market indices are 1-based"));
}

TEST(MatrixMarketErrors, NegativeIndex) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n-2 1 1\n", 3, "row index -2 is out of range [1, 3]; Matrix Market indices are 1-based"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 -99999999999999999999 1\n", 3, "is out of range [1, 3]"));
}

TEST(MatrixMarketErrors, IndexDoesNotFitIndexType) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n3000000000 1 1\n", 3, "row index 3000000000 does not fit the index type (32-bit)"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 99999999999999999999 1\n", 3,
                    "column index 99999999999999999999 does not fit the index type"));
}

TEST(MatrixMarketErrors, NonNumericIndex) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\na 1 1\n", 3, "row index 'a' is not an integer"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1.0 1\n", 3, "column index '1.0' is not an integer"));
}

// --- Values ------------------------------------------------------------------

TEST(MatrixMarketErrors, NonNumericValue) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 abc\n", 3, "value 'abc' is not a number"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 1.5x\n", 3, "value '1.5x' is not a number"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 0x10\n", 3, "value '0x10' is not a number"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 +-1\n", 3, "value '+-1' is not a number"));
}

TEST(MatrixMarketErrors, NonNumericComplexParts) {
  const std::string h = "%%MatrixMarket matrix coordinate complex general\n2 2 1\n";
  EXPECT_TRUE(fails<std::complex<double>>(h + "1 1 x 1\n", 3, "real part 'x' is not a number"));
  EXPECT_TRUE(fails<std::complex<double>>(h + "1 1 1 y\n", 3, "imaginary part 'y' is not a number"));
}

TEST(MatrixMarketErrors, NonIntegerInIntegerField) {
  const std::string h = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n";
  EXPECT_TRUE(fails<double>(h + "1 1 1.5\n", 3, "value '1.5' is not an integer"));
  EXPECT_TRUE(fails<int>(h + "1 1 1e3\n", 3, "value '1e3' is not an integer"));
}

TEST(MatrixMarketErrors, IntegerValueDoesNotFitValueType) {
  const std::string h = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n";
  EXPECT_TRUE(fails<std::int32_t>(h + "1 1 3000000000\n", 3, "value '3000000000' does not fit the value type"));
  EXPECT_TRUE(fails<double>(h + "1 1 99999999999999999999\n", 3, "out of range of a 64-bit integer"));
}

TEST(MatrixMarketErrors, RealValueAboveLargestFinite) {
  EXPECT_TRUE(fails<double>(kGeneral + "3 3 1\n1 1 1e400\n", 3, "value '1e400' is out of range for double"));
  EXPECT_TRUE(fails<float>(kGeneral + "3 3 1\n1 1 -1e39\n", 3, "value '-1e39' is out of range for float"));
  EXPECT_TRUE(fails<double>(kGeneral + "3 3 1\n1 1 1e99999999999999999999\n", 3, "out of range for double"));
}

TEST(MatrixMarketErrors, UnprintableBytesAreEscapedInMessages) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 \x01\xff\n", 3, "value '\\x01\\xff' is not a number"));
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1 " + std::string(100, '9') + "z\n", 3, "...' is not a number"));
}

// --- Field counts ------------------------------------------------------------

TEST(MatrixMarketErrors, TooFewFieldsOnEntryLine) {
  EXPECT_TRUE(fails(kGeneral + "3 3 1\n1 1\n", 3, "entry has 2 fields, expected 3 (row column value)"));
}

TEST(MatrixMarketErrors, TooManyFieldsOnEntryLine) {
  EXPECT_TRUE(fails(kGeneral + "3 3 2\n1 1 1\n2 2 2 2\n", 4, "entry has 4 fields, expected 3 (row column value)"));
}

TEST(MatrixMarketErrors, PatternEntryWithValue) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3,
                    "entry has 3 fields, expected 2 (row column)"));
}

TEST(MatrixMarketErrors, ComplexEntryWithOneValue) {
  EXPECT_TRUE(fails<std::complex<double>>("%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1\n", 3,
                                          "entry has 3 fields, expected 4 (row column real imaginary)"));
}

TEST(MatrixMarketErrors, ArrayEntryWithTwoValues) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix array real general\n2 1\n1\n2 3\n", 4, "entry has 2 fields, expected 1 (value)"));
}

// --- Symmetry ----------------------------------------------------------------

TEST(MatrixMarketErrors, SkewSymmetricWithDiagonalEntry) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n2 2 1\n", 4,
                    "skew-symmetric matrix has a diagonal entry (2, 2)"));
}

TEST(MatrixMarketErrors, SymmetricEntryAboveDiagonal) {
  EXPECT_TRUE(fails("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 5\n1 3 1\n", 4,
                    "entry (1, 3) is above the diagonal: a symmetric file stores only the lower triangle"));
  EXPECT_TRUE(fails<std::complex<double>>("%%MatrixMarket matrix coordinate complex hermitian\n3 3 1\n1 2 1 1\n", 3,
                                          "entry (1, 2) is above the diagonal: a hermitian file"));
}

// --- Line numbers ------------------------------------------------------------

TEST(MatrixMarketErrors, LineNumbersCountCommentsBlankLinesAndCrLf) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\r\n"
      "% comment 1\r\n"
      "\r\n"
      "% comment 2\r\n"
      "3 3 3\r\n"
      "1 1 1\r\n"
      "\r\n"
      "% a comment among the entries\r\n"
      "2 2 2\r\n"
      "3 3 x\r\n";
  EXPECT_TRUE(fails(text, 10, "value 'x' is not a number"));
}

TEST(MatrixMarketErrors, PathOverloadNamesThePath) {
  tensorlev_test::temp_file f(".mtx");
  {
    std::ofstream out(f.path(), std::ios::binary);
    out << kGeneral << "2 2 1\n1 3 1\n";
  }
  EXPECT_TRUE(throws_io_error([&] { (void)read_matrix_market<double>(f.path()); }, f.path(), 3,
                              "column index 3 is out of range [1, 2]"));
}

// --- Robustness --------------------------------------------------------------

// Random byte edits of valid files either read or throw io_error: never
// another exception, a crash or undefined behaviour (run under the sanitizers).
TEST(MatrixMarketErrors, MutatedFilesThrowOnlyIoError) {
  const std::string seeds[] = {
      "%%MatrixMarket matrix coordinate real general\n% c\n3 4 3\n1 1 1.5\n3 4 -2e-3\n2 2 7\n",
      "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n1 1 1 0\n2 1 1 2\n3 2 -1 4\n",
      "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n1 1\n4 1\n3 2\n",
      "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
      "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 4\n3 1 -5\n",
      "%%MatrixMarket vector coordinate real general\n5 2\n1 3\n5 4\n",
  };
  const char alphabet[] = "0123456789 -+.eE\n%x\t";
  std::mt19937 rng(12345);
  int read_ok = 0, threw = 0;
  for (const std::string& seed : seeds) {
    for (int trial = 0; trial < 400; ++trial) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits; ++k) {
        const std::size_t pos = rng() % text.size();
        switch (rng() % 3) {
          case 0:
            text[pos] = alphabet[rng() % (sizeof(alphabet) - 1)];
            break;
          case 1:
            text.erase(pos, 1 + rng() % 3);
            break;
          default:
            text.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
            break;
        }
        if (text.empty()) text = "x";
      }
      try {
        std::istringstream s(text);
        auto a = read_matrix_market<std::complex<double>>(s, kName);
        for (std::size_t e = 0; e < a.size(); ++e)
          for (std::size_t d = 0; d < a.order(); ++d) ASSERT_LT(a.coords(e)[d], a.dims()[d]);
        ++read_ok;
      } catch (const tensorlev::io_error& e) {
        ASSERT_EQ(std::string(e.what()).rfind(kName + ":", 0), 0u) << e.what();
        ++threw;
      } catch (const std::exception& e) {
        FAIL() << "unexpected " << typeid(e).name() << ": " << e.what() << "\ninput:\n" << text;
      }
    }
  }
  EXPECT_GT(read_ok, 0);
  EXPECT_GT(threw, 0);
}

}  // namespace
