// Real matrices (SuiteSparse, shipped in tests/data) and a real FROSTT
// tensor: read, pack into every format, compare with the dense reference,
// write and read back; the exact byte counts of CSR, COO, DIA and ELL.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <sstream>

#include "../support/format_lists.hpp"
#include "../support/reference.hpp"
#include "tensorlev/io/frostt.hpp"
#include "tensorlev/io/matrix_market.hpp"

using namespace tensorlev;

namespace {

std::string data(const std::string& name) { return std::string(TENSORLEV_TEST_DATA_DIR) + "/" + name; }

template <class V, std::size_t N>
std::vector<V> dense_of(const coordinate_list<V, int>& l) {
  std::array<int, N> dims{};
  for (std::size_t d = 0; d < N; ++d) dims[d] = l.dims()[d];
  std::vector<V> out(dense_size(dims), V{});
  for (std::size_t e = 0; e < l.size(); ++e) out[tltest::linear(dims, l.coords(e))] += l.value(e);
  return out;
}

// Every format of the list: pack, compare, write its components as Matrix
// Market / FROSTT, read them back, compare again.
template <class V, std::size_t N, class Formats>
void check_all_formats(const coordinate_list<V, int>& list, const std::string& name) {
  const auto ref = dense_of<V, N>(list);
  std::apply(
      [&]<class... F>(F...) {
        (
            [&] {
              const auto t = pack<F>(list);
              EXPECT_EQ(tltest::mismatches(t, ref, name + " in " + to_string<F>()), 0u);
              std::stringstream text;
              if constexpr (N == 2)
                io::write_matrix_market(text, to_coordinate_list(t));
              else
                io::write_frostt(text, to_coordinate_list(t));
              coordinate_list<V, int> back = [&] {
                if constexpr (N == 2)
                  return io::read_matrix_market<V, int>(text, name + " (written back)");
                else
                  return io::read_frostt<V, int>(text, name + " (written back)", list.dims());
              }();
              EXPECT_EQ(tltest::mismatches(pack<F>(back), ref, name + " round trip " + to_string<F>()), 0u);
            }(),
            ...);
      },
      Formats{});
}

}  // namespace

TEST(RealData, SuiteSparseMatricesInEveryFormat) {
  for (const char* f : {"impcol_a.mtx", "LFAT5.mtx", "can___24.mtx", "Ragusa16.mtx"})
    check_all_formats<double, 2, tltest::matrix_formats>(io::read_matrix_market<double, int>(data(f)), f);
}

TEST(RealData, ComplexSuiteSparseMatrixInEveryFormat) {
  using C = std::complex<double>;
  check_all_formats<C, 2, tltest::matrix_formats>(io::read_matrix_market<C, int>(data("young1c.mtx")), "young1c");
}

TEST(RealData, FrosttTensorInEveryThirdOrderFormat) {
  const auto list = io::read_frostt<double, int>(data("nations.tns"));
  ASSERT_EQ(list.dims(), (std::vector<int>{14, 55, 14}));
  check_all_formats<double, 3, tltest::order3_formats>(list, "nations.tns");
}

// The bytes a format holds are its level arrays and values, nothing more:
// expected counts computed from the definitions of the formats.
TEST(RealData, StorageBytesAreExactlyTheLevelArraysAndValues) {
  const auto list = io::read_matrix_market<double, int>(data("impcol_a.mtx"));
  const auto csr_t = pack<csr>(list);
  const std::size_t rows = 207, nnz = csr_t.stored(), I = sizeof(int), V = sizeof(double);
  ASSERT_EQ(nnz, 572u);  // no duplicates in impcol_a
  EXPECT_EQ(csr_t.storage_bytes(), (rows + 1) * I + nnz * I + nnz * V);  // pos, crd, values
  EXPECT_EQ(pack<coo>(list).storage_bytes(), 2 * I + nnz * I + nnz * I + nnz * V);  // pos{0,nnz}, rows, cols, vals
  EXPECT_EQ(pack<coo_aos>(list).storage_bytes(), 2 * I + 2 * nnz * I + nnz * V);  // pos, (row,col) pairs, vals

  // DIA: one offset per stored diagonal (shared by the range and offset
  // levels) and one value per row of each diagonal.
  const auto dia_t = pack<dia>(list);
  const std::size_t diagonals = dia_t.level<1>().offsets().size();
  {
    std::vector<char> seen(2 * rows, 0);
    std::size_t count = 0;
    for (std::size_t e = 0; e < list.size(); ++e) {
      const auto x = list.coords(e);
      char& s = seen[static_cast<std::size_t>(x[1] - x[0] + static_cast<int>(rows))];
      count += !s, s = 1;
    }
    EXPECT_EQ(diagonals, count);
  }
  EXPECT_EQ(dia_t.storage_bytes(), diagonals * I + diagonals * rows * V);

  // ELL: K = longest row; K * rows column indices and values.
  std::vector<std::size_t> row_len(rows, 0);
  for (std::size_t e = 0; e < list.size(); ++e) ++row_len[static_cast<std::size_t>(list.coords(e)[0])];
  const std::size_t k = *std::max_element(row_len.begin(), row_len.end());
  EXPECT_EQ(pack<ell>(list).storage_bytes(), k * rows * I + k * rows * V);
}
