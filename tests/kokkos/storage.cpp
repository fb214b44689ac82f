// Kokkos-View storage (kokkos.hpp, kokkos_storage): tensors whose level
// arrays and values are Views in a host memory space, packed, computed on
// the Kokkos executor and assembled as outputs, with results identical to
// owning storage; Views adopted without copying and handed back as Views
// (pointer identity); copies share Views and a structural write moves to a
// new one.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "../support/format_lists.hpp"
#include "../support/reference.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/tensorlev.hpp"

namespace {
using namespace tensorlev::indices;
namespace tl = tensorlev;
using kstore = tl::kokkos_storage<Kokkos::HostSpace>;
using kwide = tl::kokkos_storage<Kokkos::HostSpace, std::size_t, int>;

static_assert(tl::growable_storage<kstore> && tl::growable_storage<kwide>);
static_assert(!tl::kokkos_storage<Kokkos::HostSpace, const std::size_t, const int>::growable);
static_assert(std::is_same_v<std::tuple_element_t<1, tl::tensor<double, tl::csr, int, kstore>::level_tuple>::pos_array,
                             tl::kokkos_array<int, Kokkos::HostSpace>>);

template <class F, class S, class I, std::size_t N>
tl::tensor<double, F, I, S> pack_as(const tl::coordinate_list<double, int>& l) {
  tl::coordinate_list<double, I> w(std::vector<I>(l.dims().begin(), l.dims().end()));
  for (std::size_t e = 0; e < l.size(); ++e) {
    std::array<I, N> x{};
    for (std::size_t d = 0; d < N; ++d) x[d] = l.coords(e)[d];
    w.push_back(std::span<const I>(x), l.value(e));
  }
  return tl::pack<F, S>(w);
}

template <class F, class S, class I>
void kernels_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  const std::size_t nnz = static_cast<std::size_t>(fill * d[0] * d[1]);
  auto c = tltest::make_case<double, int, 2>(d, nnz, nnz / 3, rng);
  auto x = tltest::make_case<double, int, 1>(std::array<int, 1>{d[1]}, static_cast<std::size_t>(d[1]), 0, rng);
  const auto A = pack_as<F, S, I, 2>(c.list);
  const auto xv = pack_as<tl::dense_vector, S, I, 1>(x.list);
  const auto Ao = tl::pack<F>(c.list);
  const auto xo = tl::pack<tl::dense_vector>(x.list);
  const tl::kokkos_executor<> ex;
  // SpMV into a Kokkos-stored dense vector, on the executor.
  tl::tensor<double, tl::dense_vector, I, S> y({static_cast<I>(d[0])});
  tl::compute(ex, y(i), A(i, j) * xv(j));
  tl::tensor<double, tl::dense_vector> yo({d[0]});
  yo(i) = Ao(i, j) * xo(j);
  EXPECT_EQ(tl::to_dense(y), tl::to_dense(yo)) << F::name;
  // A sparse output assembled into Kokkos storage: C = A + A - A.
  auto C = tl::pack<tl::csr, S>(tl::coordinate_list<double, I>({static_cast<I>(d[0]), static_cast<I>(d[1])}));
  tl::compute(ex, C(i, j), A(i, j) + A(i, j) - A(i, j));
  EXPECT_EQ(tl::to_dense(C), c.dense) << F::name;
  auto Cs = tl::pack<tl::coo, S>(tl::coordinate_list<double, I>({static_cast<I>(d[0]), static_cast<I>(d[1])}));
  Cs(i, j) = A(i, j);
  EXPECT_EQ(tl::to_dense(Cs), c.dense) << F::name;
}

TEST(KokkosStorage, KernelsOverKokkosStoredTensors) {
  std::mt19937_64 rng(1901);
  for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 1}, {7, 5}, {80, 60}})
    for (double fill : {0.0, 0.2, 0.9}) {
      kernels_case<tl::csr, kstore, int>(d, fill, rng);
      kernels_case<tl::coo, kstore, int>(d, fill, rng);
      kernels_case<tl::coo_aos, kstore, int>(d, fill, rng);
      kernels_case<tl::dia, kstore, int>(d, fill, rng);
      kernels_case<tltest::hash_rows, kstore, int>(d, fill, rng);
      kernels_case<tl::csr, kwide, std::int64_t>(d, fill, rng);
    }
}

// Views in, Views out, no copies: a CSR tensor over a row map (size_t) and
// entries (int) the program holds, and a result whose arrays are handed back.
TEST(KokkosStorage, ViewsAdoptedAndHandedBack) {
  Kokkos::View<std::size_t*, Kokkos::HostSpace> row_map("row_map", 4);
  Kokkos::View<int*, Kokkos::HostSpace> entries("entries", 4);
  Kokkos::View<double*, Kokkos::HostSpace> vals("vals", 4);
  const std::size_t rm[] = {0, 2, 2, 4};
  const int en[] = {1, 3, 0, 2};
  for (int p = 0; p < 4; ++p) row_map(p) = rm[p], entries(p) = en[p], vals(p) = p + 1;
  using S = tl::kokkos_storage<Kokkos::HostSpace, const std::size_t, const int>;
  using T = tl::tensor<const double, tl::csr, std::int64_t, S>;
  using comp = std::tuple_element_t<1, T::level_tuple>;
  const T A({3, 4}, T::level_tuple(tl::dense_level<std::int64_t>(3), comp(4, comp::pos_array(row_map), comp::crd_array(entries))),
            T::values_array(vals));
  EXPECT_EQ(A.level<1>().pos().data(), row_map.data());
  EXPECT_EQ(A.level<1>().crd().data(), entries.data());
  EXPECT_EQ(A.values().data(), vals.data());
  EXPECT_NO_THROW(tl::validate(A));
  // B = 2 A assembled into Kokkos storage; its arrays handed out as Views.
  auto B = tl::pack<tl::csr, tl::kokkos_storage<Kokkos::HostSpace, std::size_t, int>>(
      tl::coordinate_list<double, std::int64_t>({3, 4}));
  B(i, j) = A(i, j) + A(i, j);
  const auto b_rows = B.level<1>().pos().view();
  const auto b_cols = B.level<1>().crd().view();
  const auto b_vals = B.value_array().view();
  static_assert(std::is_same_v<std::remove_const_t<decltype(b_rows)>, Kokkos::View<std::size_t*, Kokkos::HostSpace>>);
  EXPECT_EQ(b_rows.data(), B.level<1>().pos().data());
  EXPECT_EQ(b_cols.extent(0), 4u);
  EXPECT_EQ(b_vals.extent(0), 4u);
  EXPECT_EQ(b_vals(3), 8.0);
  EXPECT_EQ(b_cols(0), 1);
  EXPECT_EQ(b_rows(3), 4u);
}

// Copies share Views (Kokkos semantics); reassembling one never changes
// the other's structure.
TEST(KokkosStorage, CopiesShareViewsAndAssemblyMovesToNewOnes) {
  tl::coordinate_list<double, int> l({4, 4});
  l.push_back({0, 1}, 1.0);
  l.push_back({3, 2}, 2.0);
  auto A = tl::pack<tl::csr, kstore>(l);
  const auto copy = A;
  EXPECT_EQ(copy.level<1>().crd().data(), A.level<1>().crd().data());
  const auto want = tl::to_dense(A);
  A(i, j) = copy(i, j) + copy(i, j) + copy(i, j);  // reassembles A's levels
  EXPECT_EQ(tl::to_dense(copy), want);
  std::vector<double> thrice = want;
  for (double& v : thrice) v *= 3;
  EXPECT_EQ(tl::to_dense(A), thrice);
}

// The device form's uploads (the operands' views and the expression) reuse
// buffers between statements instead of allocating one per statement; a
// buffer is handed out again only after its launcher gave it back, and one
// too small is not handed out. Kokkos::finalize releases the kept buffers
// (a View freed after finalize would be reported when this program ends).
TEST(KokkosStorage, UploadBuffersAreReused) {
  using pool = tl::detail::upload_pool<Kokkos::HostSpace>;
  auto a = pool::take(100);
  ASSERT_GE(a.extent(0), 100u);
  const void* where = a.data();
  auto b = pool::take(100);  // a is still held: another buffer
  EXPECT_NE(b.data(), where);
  pool::give(std::move(a));
  auto c = pool::take(50);
  EXPECT_EQ(c.data(), where);
  auto big = pool::take(c.extent(0) + 1);  // larger than any kept buffer
  EXPECT_GE(big.extent(0), c.extent(0) + 1);
  EXPECT_NE(big.data(), where);
  pool::give(std::move(b));
  pool::give(std::move(c));
  pool::give(std::move(big));
  // Statements in the device form, one after another, each checked.
  tl::coordinate_list<double, int> l({3, 3});
  l.push_back({0, 1}, 2.0);
  l.push_back({2, 0}, -1.0);
  const auto A = tl::pack<tl::csr, kstore>(l);
  tl::tensor<double, tl::dense_vector, int, kstore> x({3}), y({3});
  for (int k = 0; k < 3; ++k) x.values()[static_cast<std::size_t>(k)] = k + 1.0;
  for (int r = 0; r < 5; ++r) {
    tl::compute(tl::kokkos_device_executor<Kokkos::DefaultHostExecutionSpace>{}, y(i), A(i, j) * x(j));
    EXPECT_EQ(tl::to_dense(y), (std::vector<double>{4.0, 0.0, -1.0}));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
