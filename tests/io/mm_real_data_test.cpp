// Matrix Market reader on real SuiteSparse matrices (tests/data, see
// tests/data/README.md): header, dimensions, entry counts, known entries,
// and an exact round trip through the writer.

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <tensorlev/io/matrix_market.hpp>

#include "io_test_support.hpp"

namespace {

using tensorlev::io::mm_header;
using tensorlev::io::read_matrix_market;
using tensorlev::io::write_matrix_market;
using tensorlev_test::at;
using tensorlev_test::data_file;
using tensorlev_test::identical;
using cd = std::complex<double>;

/// Writes `a` as coordinate general and reads it back.
template <class V, class I>
void expect_round_trip(const tensorlev::coordinate_list<V, I>& a) {
  std::stringstream s;
  write_matrix_market(s, a);
  EXPECT_TRUE(identical(a, read_matrix_market<V, I>(s, "roundtrip.mtx")));
}

/// Every entry of a list is in range and each (i, j) pair appears at most once.
template <class V, class I>
void expect_no_duplicates(const tensorlev::coordinate_list<V, I>& a) {
  std::vector<std::pair<I, I>> c;
  for (std::size_t e = 0; e < a.size(); ++e) c.emplace_back(a.coords(e)[0], a.coords(e)[1]);
  std::sort(c.begin(), c.end());
  EXPECT_EQ(std::adjacent_find(c.begin(), c.end()), c.end());
}

TEST(MatrixMarketRealData, Impcol_a_RealGeneral) {
  mm_header h;
  const auto a = read_matrix_market<double>(data_file("impcol_a.mtx"), &h);
  EXPECT_EQ(tensorlev::io::to_string(h), "%%MatrixMarket matrix coordinate real general");
  EXPECT_EQ(h.rows, 207);
  EXPECT_EQ(h.cols, 207);
  EXPECT_EQ(h.entries, 572);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{207, 207}));
  EXPECT_EQ(a.size(), 572u);
  EXPECT_EQ(at(a, 4, 0), -1.0);           // "5 1 -1", the first entry
  EXPECT_EQ(at(a, 206, 206), -.589066);   // "207 207 -.589066", the last
  EXPECT_EQ(at(a, 194, 200), -.000781169);
  expect_no_duplicates(a);
  expect_round_trip(a);
}

TEST(MatrixMarketRealData, LFAT5_RealSymmetric) {
  mm_header h;
  const auto a = read_matrix_market<double>(data_file("LFAT5.mtx"), &h);
  EXPECT_EQ(h.symmetry, mm_header::symmetry_kind::symmetric);
  EXPECT_EQ(h.entries, 30);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{14, 14}));
  // 14 diagonal entries once, 16 off-diagonal entries twice.
  EXPECT_EQ(a.size(), 46u);
  EXPECT_EQ(at(a, 0, 0), 1.57088);
  EXPECT_EQ(at(a, 3, 0), -94.2528);
  EXPECT_EQ(at(a, 0, 3), -94.2528);
  EXPECT_EQ(at(a, 13, 12), .78544);
  EXPECT_EQ(at(a, 12, 13), .78544);
  EXPECT_EQ(at(a, 13, 13), 1.57088);
  expect_no_duplicates(a);
  expect_round_trip(a);
}

TEST(MatrixMarketRealData, Can24_PatternSymmetric) {
  mm_header h;
  const auto a = read_matrix_market<float>(data_file("can___24.mtx"), &h);
  EXPECT_EQ(h.field, mm_header::field_kind::pattern);
  EXPECT_EQ(h.symmetry, mm_header::symmetry_kind::symmetric);
  EXPECT_EQ(h.entries, 92);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{24, 24}));
  EXPECT_EQ(a.size(), 24u + 2u * (92u - 24u));
  EXPECT_EQ(at(a, 5, 0), 1.0f);
  EXPECT_EQ(at(a, 0, 5), 1.0f);
  EXPECT_EQ(at(a, 23, 23), 1.0f);
  for (std::size_t e = 0; e < a.size(); ++e) EXPECT_EQ(a.value(e), 1.0f);
  expect_no_duplicates(a);
  expect_round_trip(a);
}

TEST(MatrixMarketRealData, Ragusa16_IntegerGeneral) {
  mm_header h;
  const auto a = read_matrix_market<int>(data_file("Ragusa16.mtx"), &h);
  EXPECT_EQ(h.field, mm_header::field_kind::integer);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{24, 24}));
  EXPECT_EQ(a.size(), 81u);
  EXPECT_EQ(at(a, 13, 1), 1);  // "14 2 1"
  EXPECT_EQ(at(a, 4, 2), 2);   // "5 3 2"
  EXPECT_EQ(at(a, 7, 23), 1);  // "8 24 1"
  long long sum = 0;
  for (std::size_t e = 0; e < a.size(); ++e) sum += a.value(e);
  EXPECT_EQ(sum, 66 * 1 + 7 * 2 + 2 * 3 + 4 * 4 + 5 + 6);
  expect_round_trip(a);
  // The same file read as double.
  const auto d = read_matrix_market<double>(data_file("Ragusa16.mtx"));
  EXPECT_EQ(at(d, 4, 2), 2.0);
}

TEST(MatrixMarketRealData, Young1c_ComplexGeneral) {
  mm_header h;
  const auto a = read_matrix_market<cd>(data_file("young1c.mtx"), &h);
  EXPECT_EQ(h.field, mm_header::field_kind::complex);
  EXPECT_EQ(a.dims(), (std::vector<std::int32_t>{841, 841}));
  EXPECT_EQ(a.size(), 4089u);
  EXPECT_EQ(at(a, 0, 0), cd(-218.46, 0));
  EXPECT_EQ(at(a, 1, 0), cd(64, 0));
  EXPECT_EQ(at(a, 97, 97), cd(-63.965, -26.544));
  EXPECT_EQ(at(a, 840, 840), cd(-218.46, 0));
  std::size_t nonreal = 0;
  for (std::size_t e = 0; e < a.size(); ++e) nonreal += a.value(e).imag() != 0;
  EXPECT_EQ(nonreal, 190u);
  expect_no_duplicates(a);
  expect_round_trip(a);
  // Single precision and 64-bit indices read the same structure.
  const auto f = read_matrix_market<std::complex<float>, std::int64_t>(data_file("young1c.mtx"));
  EXPECT_EQ(f.size(), 4089u);
  EXPECT_EQ(f.dims(), (std::vector<std::int64_t>{841, 841}));
}

TEST(MatrixMarketRealData, ComplexFileIntoRealTypeIsRejected) {
  const std::string path = data_file("young1c.mtx");
  EXPECT_TRUE(tensorlev_test::throws_io_error([&] { (void)read_matrix_market<double>(path); }, path, 1,
                                              "complex values cannot be read into a real value type"));
}

}  // namespace
