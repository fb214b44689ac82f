// Eigen interop (interop/eigen.hpp): Eigen sparse matrices (row- and
// column-major, int and int64 StorageIndex, Map) and dense matrices,
// vectors, Maps, Refs and contiguous Blocks viewed in place and computed
// through tensorlev, checked against Eigen's own products; tensorlev
// results handed back as Eigen Maps. Zero-copy both ways by pointer
// identity; uncompressed or strided input rejected with a message.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cstdint>
#include <random>
#include <vector>

#include "tensorlev/interop/eigen.hpp"
#include "tensorlev/tensorlev.hpp"

namespace {
using namespace tensorlev::indices;
namespace tl = tensorlev;

template <int Opt, class SI>
Eigen::SparseMatrix<double, Opt, SI> random_sparse(long m, long n, double fill, std::mt19937_64& rng) {
  std::vector<Eigen::Triplet<double, SI>> trip;
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> v(-3, 4);
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j)
      if (u(rng) < fill) trip.emplace_back(static_cast<SI>(i), static_cast<SI>(j), v(rng));
  Eigen::SparseMatrix<double, Opt, SI> a(m, n);
  a.setFromTriplets(trip.begin(), trip.end());
  a.makeCompressed();
  return a;
}

Eigen::MatrixXd random_dense(long m, long n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> v(-3, 4);
  Eigen::MatrixXd b(m, n);
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) b(i, j) = v(rng);
  return b;
}

template <int Opt, class SI>
void sparse_case(long m, long n, long nk, double fill, std::mt19937_64& rng) {
  const auto a = random_sparse<Opt, SI>(m, n, fill, rng);
  const auto Av = tl::eigen_view(a);
  static_assert(std::is_same_v<typename decltype(Av)::format_type, std::conditional_t<Opt == Eigen::RowMajor, tl::csr, tl::csc>>);
  EXPECT_EQ(Av.template level<1>().pos().data(), a.outerIndexPtr());
  EXPECT_EQ(Av.template level<1>().crd().data(), a.innerIndexPtr());
  EXPECT_EQ(Av.values().data(), a.valuePtr());
  EXPECT_NO_THROW(tl::validate(Av));
  // SpMV: y (an Eigen vector, written in place) = A x.
  const Eigen::VectorXd x = random_dense(n, 1, rng);
  Eigen::VectorXd y = Eigen::VectorXd::Constant(m, -5.0);
  auto yv = tl::eigen_view<SI>(y);
  yv(i) = Av(i, j) * tl::eigen_view<SI>(x)(j);
  EXPECT_TRUE(y == a * x) << m << "x" << n;
  // SpMM into a column-major Eigen matrix: C = A B.
  const Eigen::MatrixXd b = random_dense(n, nk, rng);
  Eigen::MatrixXd c = Eigen::MatrixXd::Constant(m, nk, 3.0);
  auto cv = tl::eigen_view<SI>(c);
  const auto bv = tl::eigen_view<SI>(b);
  cv(i, k) = Av(i, j) * bv(j, k);
  EXPECT_TRUE(c == a * b) << m << "x" << n << "x" << nk;
  // A sparse result handed back to Eigen: S = A + A, as a Map.
  auto s = tl::pack<typename decltype(Av)::format_type>(
      tl::coordinate_list<double, SI>({static_cast<SI>(m), static_cast<SI>(n)}));
  s(i, j) = Av(i, j) + Av(i, j);
  const auto sm = tl::eigen_map(s);
  EXPECT_EQ(sm.outerIndexPtr(), s.template level<1>().pos().data());
  EXPECT_EQ(sm.innerIndexPtr(), s.template level<1>().crd().data());
  EXPECT_EQ(sm.valuePtr(), s.values().data());
  const Eigen::SparseMatrix<double, Opt, SI> twice = a + a;
  EXPECT_TRUE(sm.toDense() == twice.toDense()) << m << "x" << n;
}

TEST(EigenInterop, SparseMatricesInAndOut) {
  std::mt19937_64 rng(1701);
  for (auto [m, n, k] : {std::array<long, 3>{0, 0, 0}, {1, 1, 1}, {0, 4, 2}, {5, 0, 3}, {7, 9, 4}, {40, 31, 5}})
    for (double fill : {0.0, 0.15, 0.6}) {
      sparse_case<Eigen::RowMajor, int>(m, n, k, fill, rng);
      sparse_case<Eigen::ColMajor, int>(m, n, k, fill, rng);
      sparse_case<Eigen::RowMajor, std::int64_t>(m, n, k, fill, rng);
      sparse_case<Eigen::ColMajor, std::int64_t>(m, n, k, fill, rng);
    }
}

TEST(EigenInterop, MapsRefsAndBlocks) {
  std::mt19937_64 rng(1702);
  const auto a = random_sparse<Eigen::RowMajor, int>(12, 10, 0.3, rng);
  // A Map of someone else's CSR arrays, viewed again: the same pointers.
  const Eigen::Map<const Eigen::SparseMatrix<double, Eigen::RowMajor, int>> am(
      a.rows(), a.cols(), a.nonZeros(), a.outerIndexPtr(), a.innerIndexPtr(), a.valuePtr());
  const auto Av = tl::eigen_view(am);
  EXPECT_EQ(Av.level<1>().crd().data(), a.innerIndexPtr());
  // Row-major dense B, a contiguous block of rows of a bigger matrix, and a Ref.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> big = random_dense(14, 6, rng);
  auto rows = big.middleRows(2, 10);  // contiguous in a row-major matrix
  const auto bv = tl::eigen_view(rows);
  EXPECT_EQ(bv.values().data(), big.data() + 2 * 6);
  Eigen::MatrixXd c(12, 6);
  Eigen::Ref<Eigen::MatrixXd> cref(c);
  auto cv = tl::eigen_view(cref);
  cv(i, k) = Av(i, j) * bv(j, k);
  EXPECT_TRUE(c == a * Eigen::MatrixXd(rows));
  // The dense result as a Map, writable, over the tensor's values.
  tl::tensor<double, tl::dense_row_major> d({3, 2});
  auto dm = tl::eigen_map(d);
  dm(1, 1) = 7;
  EXPECT_EQ(d.values()[3], 7.0);
  EXPECT_EQ(dm.data(), d.values().data());
}

// Blocks that are not contiguous (columns of a column-major matrix, a
// corner of a row-major one) and a Map with an OuterStride, as strided
// views: operands and outputs in place, checked against Eigen's products;
// the coefficients outside the blocks are never written.
TEST(EigenInterop, StridedBlocksAndMaps) {
  std::mt19937_64 rng(1703);
  for (const long m : {0L, 1L, 5L, 9L}) {
    const auto a = random_sparse<Eigen::RowMajor, int>(m, 7, 0.4, rng);
    const auto Av = tl::eigen_view(a);
    Eigen::MatrixXd big = random_dense(11, 9, rng);  // column-major
    const Eigen::MatrixXd big0 = big;
    auto x = big.block(2, 1, 7, 4);  // 7 x 4, columns 11 apart
    const auto xv = tl::eigen_strided_view(x);
    EXPECT_EQ(xv.values().data(), x.data());
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> out = random_dense(m + 3, 8, rng);
    const auto out0 = out;
    auto y = out.block(1, 2, m, 4);  // m x 4 rows 8 apart
    auto yv = tl::eigen_strided_view(y);
    yv(i, k) = Av(i, j) * xv(j, k);
    EXPECT_TRUE(Eigen::MatrixXd(y) == a * Eigen::MatrixXd(x)) << m;
    yv(i, k) += Av(i, j) * xv(j, k);
    EXPECT_TRUE(Eigen::MatrixXd(y) == 2.0 * (a * Eigen::MatrixXd(x))) << m;
    for (long r = 0; r < out.rows(); ++r)
      for (long c = 0; c < out.cols(); ++c)
        if (r < 1 || r >= 1 + m || c < 2 || c >= 6) {
          EXPECT_EQ(out(r, c), out0(r, c)) << r << " " << c;
        }
    EXPECT_TRUE(big == big0);
    // A Map with an outer stride: every other column of a 7 x 8 array.
    std::vector<double> store(static_cast<std::size_t>(7 * 8), -1.0);
    Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>> z(store.data(), 7, 4, Eigen::OuterStride<>(14));
    auto zv = tl::eigen_strided_view(z);
    zv(j, k) = 3.0 * xv(j, k);
    EXPECT_TRUE(Eigen::MatrixXd(z) == 3.0 * Eigen::MatrixXd(x));
    for (std::size_t e = 0; e < store.size(); ++e)
      if (e % 14 >= 7) {
        EXPECT_EQ(store[e], -1.0) << e;
      }
  }
  // An inner stride other than 1.
  std::vector<double> w(40, 0.0);
  Eigen::Map<Eigen::MatrixXd, 0, Eigen::Stride<20, 2>> bad(w.data(), 3, 2);
  EXPECT_THROW((void)tl::eigen_strided_view(bad), tl::shape_error);
}

// A dense matrix whose rows * columns the index type cannot hold is an
// overflow_error, not positions that wrap (the map is never read).
TEST(EigenInterop, DenseExtentsAreChecked) {
  static double cell = 0;
  const Eigen::Map<const Eigen::MatrixXd> big(&cell, 70000, 70000);
  EXPECT_THROW((void)tl::eigen_view(big), tl::overflow_error);
  try {
    (void)tl::eigen_view(big);
  } catch (const tl::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("rows * columns"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)tl::eigen_view<std::int64_t>(big));
}

TEST(EigenInterop, BadInputIsRejected) {
  Eigen::SparseMatrix<double> a(3, 3);
  a.insert(0, 1) = 1;  // uncompressed mode
  EXPECT_THROW((void)tl::eigen_view(a), tl::shape_error);
  try {
    (void)tl::eigen_view(a);
  } catch (const tl::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("call makeCompressed() first"), std::string::npos);
  }
  a.makeCompressed();
  EXPECT_NO_THROW((void)tl::eigen_view(a));
  // A block of columns of a column-major matrix is contiguous; a block of rows is not.
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(6, 5);
  EXPECT_NO_THROW((void)tl::eigen_view(m.middleCols(1, 3)));
  try {
    (void)tl::eigen_view(m.middleRows(1, 3));
    ADD_FAILURE() << "a strided block was accepted";
  } catch (const tl::shape_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "tensorlev::eigen_view: the matrix's coefficients are not contiguous (inner stride 1, outer stride 6 "
              "for an inner size of 3)");
  }
}

}  // namespace
