// Kokkos Kernels interop (interop/kokkos_kernels.hpp) against Debian's Kokkos
// Kernels: a KokkosSparse::CrsMatrix, with its default template arguments
// (unsigned size_t row offsets, int columns) and with other offset/ordinal
// types, is viewed as CSR without copying and computed on by tensorlev;
// tensorlev results stored in Views become CrsMatrix objects without copying.
// Every product is checked against KokkosSparse::spmv on the same matrix and
// against a dense reference built from the raw arrays.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorlev/interop/kokkos_kernels.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/tensorlev.hpp"

namespace {
using namespace tensorlev::indices;
namespace tl = tensorlev;

using host = Kokkos::HostSpace;
using kk_default = KokkosSparse::CrsMatrix<double, int, Kokkos::DefaultExecutionSpace>;  // as users write it
using kk_int_offsets = KokkosSparse::CrsMatrix<double, int, Kokkos::Serial, void, int>;
using kk_wide = KokkosSparse::CrsMatrix<double, std::int64_t, Kokkos::Serial, void, std::int64_t>;

// What the view's types are, per matrix type.
static_assert(std::is_same_v<kk_default::size_type, std::size_t>, "Kokkos Kernels' default row offsets are size_t");
static_assert(std::is_same_v<decltype(tl::kk_view(std::declval<const kk_default&>())),
                             tl::tensor<const double, tl::csr, std::int64_t, tl::kk_view_storage<kk_default>>>,
              "size_t offsets and int columns compute in int64");
static_assert(std::is_same_v<decltype(tl::kk_view(std::declval<const kk_int_offsets&>()))::index_type, int>);
static_assert(std::is_same_v<decltype(tl::kk_view(std::declval<const kk_wide&>()))::index_type, std::int64_t>);
static_assert(!tl::kk_view_storage<kk_default>::growable && tl::kk_result_storage<kk_default>::growable);

// A random m x n CSR matrix (sorted columns, some empty rows) as raw arrays.
struct raw_csr {
  int m = 0, n = 0;
  std::vector<std::size_t> rows;
  std::vector<int> cols;
  std::vector<double> vals;
  std::vector<double> dense;  // row-major reference
};

raw_csr random_csr(int m, int n, double fill, std::mt19937_64& rng) {
  raw_csr r{m, n, {0}, {}, {}, std::vector<double>(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0)};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> v(-4, 4);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j)
      if (u(rng) < fill) {
        const double x = v(rng);  // explicit zeros too
        r.cols.push_back(j);
        r.vals.push_back(x);
        r.dense[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)] = x;
      }
    r.rows.push_back(r.cols.size());
  }
  return r;
}

// The matrix as a CrsMatrix of type M (its own Views, filled on the host).
template <class M>
M to_kk(const raw_csr& r) {
  using size_type = typename M::size_type;
  using ordinal = typename M::ordinal_type;
  typename M::row_map_type::non_const_type rows("rows", r.rows.size());
  typename M::index_type cols("cols", r.cols.size());
  typename M::values_type vals("vals", r.vals.size());
  for (std::size_t p = 0; p < r.rows.size(); ++p) rows(p) = static_cast<size_type>(r.rows[p]);
  for (std::size_t p = 0; p < r.cols.size(); ++p) cols(p) = static_cast<ordinal>(r.cols[p]), vals(p) = r.vals[p];
  return M("A", static_cast<ordinal>(r.m), static_cast<ordinal>(r.n), static_cast<size_type>(r.cols.size()), vals, rows,
           cols);
}

template <class I>
using kvec = tl::tensor<double, tl::dense_vector, I, tl::kokkos_storage<host>>;

template <class I>
kvec<I> random_vector(int n, std::mt19937_64& rng) {
  kvec<I> x({static_cast<I>(n)});
  std::uniform_int_distribution<int> v(-3, 3);
  for (int k = 0; k < n; ++k) x.values()[static_cast<std::size_t>(k)] = v(rng);
  return x;
}

std::vector<double> dense_matvec(const raw_csr& r, const std::vector<double>& x, bool transpose) {
  std::vector<double> y(static_cast<std::size_t>(transpose ? r.n : r.m), 0.0);
  for (int i = 0; i < r.m; ++i)
    for (int j = 0; j < r.n; ++j) {
      const double a = r.dense[static_cast<std::size_t>(i) * static_cast<std::size_t>(r.n) + static_cast<std::size_t>(j)];
      if (transpose)
        y[static_cast<std::size_t>(j)] += a * x[static_cast<std::size_t>(i)];
      else
        y[static_cast<std::size_t>(i)] += a * x[static_cast<std::size_t>(j)];
    }
  return y;
}

template <class View>
std::vector<double> to_vector(const View& v) {
  std::vector<double> out(v.extent(0));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = v(k);
  return out;
}

template <class M>
void interop_case(int m, int n, double fill, std::mt19937_64& rng) {
  using I = typename decltype(tl::kk_view(std::declval<const M&>()))::index_type;
  const std::string what = std::to_string(m) + "x" + std::to_string(n) + " fill " + std::to_string(fill);
  const raw_csr r = random_csr(m, n, fill, rng);
  const M A = to_kk<M>(r);
  const auto Av = tl::kk_view(A);
  // No copy: the tensor reads the matrix's own Views.
  EXPECT_EQ(Av.template level<1>().pos().data(), A.graph.row_map.data()) << what;
  EXPECT_EQ(Av.template level<1>().crd().data(), A.graph.entries.data()) << what;
  EXPECT_EQ(Av.values().data(), A.values.data()) << what;
  EXPECT_NO_THROW(tl::validate(Av)) << what;
  EXPECT_EQ(tl::to_dense(Av), r.dense) << what;

  // y = A x, tensorlev against Kokkos Kernels and the dense loops. x and y
  // are Kokkos-stored vectors, so Kokkos Kernels reads and writes the same
  // Views tensorlev does.
  const kvec<I> x = random_vector<I>(n, rng);
  kvec<I> y({static_cast<I>(m)});
  y(i) = Av(i, j) * x(j);
  Kokkos::View<double*, host> y_kk("y_kk", static_cast<std::size_t>(m));
  KokkosSparse::spmv("N", 1.0, A, x.value_array().view(), 0.0, y_kk);
  const std::vector<double> want = dense_matvec(r, tl::to_dense(x), false);
  EXPECT_EQ(tl::to_dense(y), want) << what;
  EXPECT_EQ(to_vector(y_kk), want) << what;

  // y += A x and a transposed access, z = A^T w, against spmv("T").
  y(i) += Av(i, j) * x(j);
  std::vector<double> twice = want;
  for (double& v : twice) v *= 2;
  EXPECT_EQ(tl::to_dense(y), twice) << what;
  const kvec<I> w = random_vector<I>(m, rng);
  kvec<I> z({static_cast<I>(n)});
  z(j) = Av(i, j) * w(i);
  Kokkos::View<double*, host> z_kk("z_kk", static_cast<std::size_t>(n));
  KokkosSparse::spmv("T", 1.0, A, w.value_array().view(), 0.0, z_kk);
  EXPECT_EQ(tl::to_dense(z), dense_matvec(r, tl::to_dense(w), true)) << what;
  EXPECT_EQ(to_vector(z_kk), tl::to_dense(z)) << what;

  // A result handed to Kokkos Kernels: C = 3A - A assembled into Views of
  // M's offset and ordinal types, wrapped as an M without copying, and
  // multiplied by Kokkos Kernels.
  auto C = tl::pack<tl::csr, tl::kk_result_storage<M>>(tl::coordinate_list<double, I>({static_cast<I>(m), static_cast<I>(n)}));
  C(i, j) = Av(i, j) + Av(i, j) + Av(i, j) - Av(i, j);
  const M B = tl::to_crs_matrix<M>(C, "C");
  EXPECT_EQ(B.values.data(), C.value_array().data()) << what;
  EXPECT_EQ(B.graph.row_map.data(), C.template level<1>().pos().data()) << what;
  EXPECT_EQ(B.graph.entries.data(), C.template level<1>().crd().data()) << what;
  EXPECT_EQ(static_cast<int>(B.numRows()), m) << what;
  EXPECT_EQ(static_cast<int>(B.numCols()), n) << what;
  Kokkos::View<double*, host> c_kk("c_kk", static_cast<std::size_t>(m));
  KokkosSparse::spmv("N", 1.0, B, x.value_array().view(), 0.0, c_kk);
  EXPECT_EQ(to_vector(c_kk), twice) << what;
  // And back: the matrix made from the result views as the same tensor.
  EXPECT_EQ(tl::to_dense(tl::kk_view(B)), tl::to_dense(C)) << what;
}

template <class M>
void all_shapes(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 1}, {0, 4}, {4, 0}, {1, 7}, {7, 5}, {60, 80}})
    for (double fill : {0.0, 0.15, 1.0}) interop_case<M>(d[0], d[1], fill, rng);
}

TEST(KokkosKernelsInterop, DefaultTemplateArguments) { all_shapes<kk_default>(1); }
TEST(KokkosKernelsInterop, IntOffsets) { all_shapes<kk_int_offsets>(2); }
TEST(KokkosKernelsInterop, SixtyFourBitOrdinals) { all_shapes<kk_wide>(3); }

// A default-constructed matrix (an empty row map) views as 0 x 0.
TEST(KokkosKernelsInterop, DefaultConstructedMatrix) {
  const kk_default A;
  const auto Av = tl::kk_view(A);
  EXPECT_EQ(Av.dims()[0], 0);
  EXPECT_EQ(Av.dims()[1], 0);
  EXPECT_EQ(Av.stored(), 0u);
  EXPECT_NO_THROW(tl::validate(Av));
}

// A matrix whose arrays break CSR is reported by validate, naming the level.
TEST(KokkosKernelsInterop, ValidateReportsBadColumns) {
  raw_csr r{2, 3, {0, 1, 2}, {1, 5}, {1.0, 2.0}, {}};
  const kk_default A = to_kk<kk_default>(r);
  const auto Av = tl::kk_view(A);
  try {
    tl::validate(Av);
    FAIL() << "a column index of 5 in a 2 x 3 matrix was accepted";
  } catch (const tl::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("level 1"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
