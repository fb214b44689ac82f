// Rank-2 Kokkos Views (kokkos.hpp, dense_view) and mdspans
// (interop/mdspan.hpp) as dense matrix operands without copying: the factor
// matrices of SpMM, SDDMM and MTTKRP, LayoutRight and LayoutLeft, read in
// place and written in place as outputs, against the same statements on
// owning tensors. mdspan is tested with Kokkos 4's Kokkos::mdspan (Kokkos
// 3.4 has none) and with std::mdspan where the standard library has it.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../support/reference.hpp"
#include "tensorlev/interop/mdspan.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/tensorlev.hpp"
#if defined(__cpp_lib_mdspan) || __has_include(<mdspan>)
#include <mdspan>
#endif

namespace {
using namespace tensorlev::indices;
namespace tl = tensorlev;
using host = Kokkos::HostSpace;

template <class L>
using view2 = Kokkos::View<double**, L, host>;

static_assert(std::is_same_v<decltype(tl::dense_view(std::declval<const view2<Kokkos::LayoutRight>&>())),
                             tl::tensor<double, tl::dense_row_major, int, tl::borrowed<>>>);
static_assert(std::is_same_v<decltype(tl::dense_view(std::declval<const Kokkos::View<const double**, Kokkos::LayoutLeft>&>())),
                             tl::tensor<const double, tl::dense_col_major, int, tl::borrowed<>>>);

// Views of host memory are plain borrowed tensors; views of memory the host
// cannot read are marked so, with their memory space (host executors refuse
// them at compile time: tests/fail/device_memory_on_host_executor.cpp; the
// device form runs them on a space that reaches that memory).
static_assert(std::is_same_v<tl::detail::borrowed_in<Kokkos::HostSpace>, tl::borrowed<>>);
using marked_device = tl::detail::device_borrowed<tl::borrowed<>, Kokkos::HostSpace>;
static_assert(!marked_device::host_accessible && !marked_device::growable &&
              std::is_same_v<tl::detail::memory_space_of<marked_device>::type, Kokkos::HostSpace>);

// A random m x n View of layout L and its row-major dense copy.
template <class L>
view2<L> random_view(int m, int n, std::mt19937_64& rng, std::vector<double>& dense) {
  view2<L> v("v", static_cast<std::size_t>(m), static_cast<std::size_t>(n));
  std::uniform_int_distribution<int> d(-3, 3);
  dense.assign(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) v(r, c) = dense[static_cast<std::size_t>(r * n + c)] = d(rng);
  return v;
}

template <class V>
std::vector<double> row_major_of(const V& v) {
  std::vector<double> out;
  for (std::size_t r = 0; r < v.extent(0); ++r)
    for (std::size_t c = 0; c < v.extent(1); ++c) out.push_back(v(r, c));
  return out;
}

tl::tensor<double, tl::dense_row_major> owning_of(const std::vector<double>& d, int m, int n) {
  tl::tensor<double, tl::dense_row_major> t({m, n});
  for (std::size_t q = 0; q < d.size(); ++q) t.values()[q] = d[q];
  return t;
}

template <class F, class LB, class LC>
void spmm_sddmm_case(int m, int n, int r, double fill, std::mt19937_64& rng) {
  const std::string what = std::string(F::name) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(r);
  auto c = tltest::make_case<double, int, 2>({m, n}, static_cast<std::size_t>(fill * m * n), 2, rng);
  const auto A = tl::pack<F>(c.list);
  std::vector<double> bd, ud, vd;
  const auto B = random_view<LB>(n, r, rng, bd);
  const auto Bv = tl::dense_view(B);
  EXPECT_EQ(Bv.values().data(), B.data()) << what;
  // SpMM into a View (written in place) against owning tensors.
  view2<LC> C("C", static_cast<std::size_t>(m), static_cast<std::size_t>(r));
  auto Cv = tl::dense_view(C);
  Cv(i, k) = A(i, j) * Bv(j, k);
  tl::tensor<double, tl::dense_row_major> want({m, r});
  want(i, k) = A(i, j) * owning_of(bd, n, r)(j, k);
  EXPECT_EQ(row_major_of(C), tl::to_dense(want)) << "SpMM " << what;
  // += into the View, on the Kokkos executor.
  tl::compute_add(tl::kokkos_executor<>{}, Cv(i, k), A(i, j) * Bv(j, k));
  std::vector<double> twice = tl::to_dense(want);
  for (double& x : twice) x *= 2;
  EXPECT_EQ(row_major_of(C), twice) << "SpMM += " << what;
  // SDDMM: S = A .* (U V^T), U and V Views of different layouts.
  const auto U = random_view<LB>(m, r, rng, ud);
  const auto V = random_view<LC>(n, r, rng, vd);
  auto S = tl::pack<tl::csr>(tl::coordinate_list<double, int>({m, n}));
  S(i, j) = A(i, j) * tl::dense_view(U)(i, k) * tl::dense_view(V)(j, k);
  auto Sw = tl::pack<tl::csr>(tl::coordinate_list<double, int>({m, n}));
  Sw(i, j) = A(i, j) * owning_of(ud, m, r)(i, k) * owning_of(vd, n, r)(j, k);
  EXPECT_EQ(tl::to_dense(S), tl::to_dense(Sw)) << "SDDMM " << what;
}

template <class F, class L>
void mttkrp_case(std::array<int, 3> d, int r, double fill, std::mt19937_64& rng) {
  const std::string what = std::string(F::name) + " " + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" +
                           std::to_string(d[2]);
  auto c = tltest::make_case<double, int, 3>(d, static_cast<std::size_t>(fill * d[0] * d[1] * d[2]), 2, rng);
  const auto B = tl::pack<F>(c.list);
  std::vector<double> cd, dd;
  const auto C = random_view<L>(d[1], r, rng, cd);
  const auto D = random_view<L>(d[2], r, rng, dd);
  view2<L> A("A", static_cast<std::size_t>(d[0]), static_cast<std::size_t>(r));
  auto Av = tl::dense_view(A);
  Av(i, l) = B(i, j, k) * tl::dense_view(C)(j, l) * tl::dense_view(D)(k, l);
  tl::tensor<double, tl::dense_row_major> want({d[0], r});
  want(i, l) = B(i, j, k) * owning_of(cd, d[1], r)(j, l) * owning_of(dd, d[2], r)(k, l);
  EXPECT_EQ(row_major_of(A), tl::to_dense(want)) << "MTTKRP " << what;
}

TEST(DenseViews, RankTwoKokkosViewsAsFactorsAndOutputs) {
  std::mt19937_64 rng(2201);
  for (std::array<int, 3> s : {std::array<int, 3>{0, 0, 0}, {1, 1, 1}, {4, 0, 3}, {7, 5, 3}, {40, 30, 8}})
    for (double fill : {0.0, 0.3}) {
      spmm_sddmm_case<tl::csr, Kokkos::LayoutRight, Kokkos::LayoutLeft>(s[0], s[1], s[2], fill, rng);
      spmm_sddmm_case<tl::coo, Kokkos::LayoutLeft, Kokkos::LayoutRight>(s[0], s[1], s[2], fill, rng);
      spmm_sddmm_case<tl::dcsr, Kokkos::LayoutRight, Kokkos::LayoutRight>(s[0], s[1], s[2], fill, rng);
    }
  for (std::array<int, 3> d : {std::array<int, 3>{0, 0, 0}, {1, 1, 1}, {5, 4, 3}, {12, 9, 10}})
    for (double fill : {0.0, 0.3}) {
      mttkrp_case<tl::csf, Kokkos::LayoutRight>(d, 4, fill, rng);
      mttkrp_case<tl::coo_tensor<3>, Kokkos::LayoutLeft>(d, 4, fill, rng);
    }
}

// An extent the index type cannot hold is an overflow_error, not a wrap.
TEST(DenseViews, ExtentsAreChecked) {
  // Never read: only the extents matter (an unmanaged View over one double).
  static double cell = 0;
  Kokkos::View<double**, Kokkos::LayoutRight, host, Kokkos::MemoryTraits<Kokkos::Unmanaged>> big(&cell, 70000, 70000);
  ASSERT_EQ(big.size(), std::size_t{70000} * 70000);
  EXPECT_THROW((void)tl::dense_view<int>(big), tl::overflow_error);
  EXPECT_NO_THROW((void)tl::dense_view<std::int64_t>(big));
}

// Subviews of larger Views (LayoutRight, LayoutLeft, and LayoutStride read
// either way) as strided views: SpMM's factor and output in place, against
// owning tensors; the coefficients outside the subviews are never written.
template <class L, tl::dense_layout As, bool Stride>
void strided_subviews(std::mt19937_64& rng) {
  for (std::array<int, 3> s : {std::array<int, 3>{0, 0, 0}, {1, 1, 1}, {6, 5, 3}, {20, 9, 4}}) {
    const int m = s[0], n = s[1], r = s[2];
    auto c = tltest::make_case<double, int, 2>({m, n}, static_cast<std::size_t>(0.3 * m * n), 2, rng);
    const auto A = tl::pack<tl::csr>(c.list);
    view2<L> bigB("bigB", n + 3, r + 4), bigC("bigC", m + 2, r + 5);
    std::uniform_int_distribution<int> dist(-3, 3);
    for (int a = 0; a < n + 3; ++a)
      for (int b = 0; b < r + 4; ++b) bigB(a, b) = dist(rng);
    for (int a = 0; a < m + 2; ++a)
      for (int b = 0; b < r + 5; ++b) bigC(a, b) = -9.5;
    using S = Kokkos::View<double**, Kokkos::LayoutStride, host>;
    const auto subB = Kokkos::subview(bigB, std::make_pair(2, 2 + n), std::make_pair(1, 1 + r));
    const auto subC = Kokkos::subview(bigC, std::make_pair(1, 1 + m), std::make_pair(3, 3 + r));
    const std::conditional_t<Stride, S, std::remove_const_t<decltype(subB)>> B = subB;
    const std::conditional_t<Stride, S, std::remove_const_t<decltype(subC)>> C = subC;
    const auto Bv = tl::strided_view<As>(B);
    auto Cv = tl::strided_view<As>(C);
    Cv(i, k) = A(i, j) * Bv(j, k);
    std::vector<double> bd(static_cast<std::size_t>(n * r));
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < r; ++b) bd[static_cast<std::size_t>(a * r + b)] = B(a, b);
    tl::tensor<double, tl::dense_row_major> want({m, r});
    want(i, k) = A(i, j) * owning_of(bd, n, r)(j, k);
    const auto w = tl::to_dense(want);
    for (int a = 0; a < m + 2; ++a)
      for (int b = 0; b < r + 5; ++b) {
        const bool in = a >= 1 && a < 1 + m && b >= 3 && b < 3 + r;
        EXPECT_EQ(bigC(a, b), in ? w[static_cast<std::size_t>((a - 1) * r + (b - 3))] : -9.5) << a << "," << b;
      }
  }
}

TEST(DenseViews, SubviewsAsStridedViews) {
  std::mt19937_64 rng(2203);
  static_assert(std::is_same_v<decltype(tl::strided_view(std::declval<const view2<Kokkos::LayoutLeft>&>())),
                               tl::tensor<double, tl::strided_col_major, int, tl::borrowed<>>>);
  strided_subviews<Kokkos::LayoutRight, tl::dense_layout::row_major, false>(rng);
  strided_subviews<Kokkos::LayoutLeft, tl::dense_layout::col_major, false>(rng);
  strided_subviews<Kokkos::LayoutRight, tl::dense_layout::row_major, true>(rng);
  strided_subviews<Kokkos::LayoutLeft, tl::dense_layout::col_major, true>(rng);
  // Read the wrong way, a LayoutStride View's rows are not unit-stride.
  view2<Kokkos::LayoutLeft> left("left", 4, 3);
  const Kokkos::View<double**, Kokkos::LayoutStride, host> any = left;
  EXPECT_THROW((void)tl::strided_view<tl::dense_layout::row_major>(any), tl::shape_error);
  EXPECT_NO_THROW((void)tl::strided_view<tl::dense_layout::col_major>(any));
}

// An mdspan of implementation M (layout_right and layout_left) as SpMM's
// dense factor and output.
template <template <class, class, class> class MD, class E, class LR, class LL>
void mdspan_spmm(std::mt19937_64& rng) {
  for (std::array<int, 3> s : {std::array<int, 3>{0, 0, 0}, {1, 1, 1}, {6, 5, 3}, {30, 20, 7}}) {
    const int m = s[0], n = s[1], r = s[2];
    auto c = tltest::make_case<double, int, 2>({m, n}, static_cast<std::size_t>(0.3 * m * n), 2, rng);
    const auto A = tl::pack<tl::csr>(c.list);
    std::vector<double> bd(static_cast<std::size_t>(n * r)), out(static_cast<std::size_t>(m * r), -1.0);
    std::uniform_int_distribution<int> dist(-3, 3);
    for (double& x : bd) x = dist(rng);
    const MD<const double, E, LR> B(bd.data(), n, r);  // row-major
    MD<double, E, LL> C(out.data(), m, r);             // column-major
    const auto Bv = tl::mdspan_view(B);
    static_assert(std::is_same_v<std::remove_const_t<decltype(Bv)>, tl::tensor<const double, tl::dense_row_major, int, tl::borrowed<>>>);
    EXPECT_EQ(Bv.values().data(), bd.data());
    auto Cv = tl::mdspan_view(C);
    static_assert(std::is_same_v<decltype(Cv), tl::tensor<double, tl::dense_col_major, int, tl::borrowed<>>>);
    Cv(i, k) = A(i, j) * Bv(j, k);
    tl::tensor<double, tl::dense_row_major> want({m, r});
    want(i, k) = A(i, j) * owning_of(bd, n, r)(j, k);
    const auto w = tl::to_dense(want);
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < r; ++b)
        EXPECT_EQ(out[static_cast<std::size_t>(b * m + a)], w[static_cast<std::size_t>(a * r + b)]) << a << "," << b;
  }
}

#if KOKKOS_VERSION >= 40000 && defined(KOKKOS_ENABLE_IMPL_MDSPAN)
template <class T, class E, class L>
using kokkos_mdspan = Kokkos::mdspan<T, E, L>;
TEST(DenseViews, KokkosMdspanAsDenseOperands) {
  std::mt19937_64 rng(2202);
  mdspan_spmm<kokkos_mdspan, Kokkos::dextents<int, 2>, Kokkos::layout_right, Kokkos::layout_left>(rng);
}
#endif
#if defined(__cpp_lib_mdspan)
template <class T, class E, class L>
using std_mdspan = std::mdspan<T, E, L>;
TEST(DenseViews, StdMdspanAsDenseOperands) {
  std::mt19937_64 rng(2203);
  mdspan_spmm<std_mdspan, std::dextents<int, 2>, std::layout_right, std::layout_left>(rng);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
