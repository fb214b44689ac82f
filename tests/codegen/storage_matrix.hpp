#pragma once
// The kernel matrix over every storage (storage.hpp): SpMV, sparse add,
// SpGEMM, SDDMM and MTTKRP with operands in owning storage, in borrowed
// views of it, and in a third storage with 64-bit positions and 32-bit
// coordinates (index type int64), in every format the other tests cover;
// sparse outputs assembled into owning and the third storage. Results must
// be identical to the owning<> run and to a dense reference. The including
// file defines `wide` (the third storage) and TL_STORAGE_SUITE (the test
// suite's name): tests/codegen/storage.cpp (owning int64/int32) and
// tests/kokkos/storage_matrix.cpp (Kokkos Views).
#include <cstdint>
#include <string>
#include <type_traits>

#include "common.hpp"
#include "tensorlev/view.hpp"

namespace tlstorage {
using namespace tltest;
using namespace tensorlev::indices;
namespace tl = tensorlev;

// The same tensor three ways: owning (int), a view of it, and in the
// storage under test with an int64 index type (`wide`, defined by the
// including file: owning int64 positions / int32 coordinates, or Kokkos
// Views of them).
template <class F, std::size_t N>
struct three {
  tensor<double, F> own;
  tensor<double, F, std::int64_t, wide> wide_t;
  std::vector<double> dense;
  auto v() const { return tl::view(own); }
};
template <class F, std::size_t N>
three<F, N> make3(const std::array<int, N>& d, double fill, std::mt19937_64& rng) {
  auto c = make_case<double, int, N>(d, static_cast<std::size_t>(fill * static_cast<double>(dense_size(d))),
                                     static_cast<std::size_t>(fill * static_cast<double>(dense_size(d)) / 3), rng);
  coordinate_list<double, std::int64_t> wide_list(std::vector<std::int64_t>(d.begin(), d.end()));
  for (std::size_t e = 0; e < c.list.size(); ++e) {
    std::array<std::int64_t, N> y{};
    for (std::size_t q = 0; q < N; ++q) y[q] = c.list.coords(e)[q];
    wide_list.push_back(std::span<const std::int64_t>(y), c.list.value(e));
  }
  return {tl::pack<F>(c.list), tl::pack<F, wide>(wide_list), std::move(c.dense)};
}

template <class T>
std::vector<double> dense_of(const T& t) {
  return tl::to_dense(t);
}

template <class F>
std::size_t spmv_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = make3<F, 2>(d, fill, rng);
  auto x = make3<dense_vector, 1>(std::array<int, 1>{d[1]}, 1.0, rng);
  std::vector<double> ref(static_cast<std::size_t>(d[0]), 0.0);
  for (int r = 0; r < d[0]; ++r)
    for (int c = 0; c < d[1]; ++c) ref[static_cast<std::size_t>(r)] += A.dense[static_cast<std::size_t>(r * d[1] + c)] * x.dense[static_cast<std::size_t>(c)];
  tensor<double, dense_vector> y1({d[0]}), y2({d[0]});
  tensor<double, dense_vector, std::int64_t> y3({d[0]});
  y1(i) = A.own(i, j) * x.own(j);
  y2(i) = A.v()(i, j) * x.v()(j);
  y3(i) = A.wide_t(i, j) * x.wide_t(j);
  const std::string what = "SpMV " + fname<F>();
  return count_mismatches<double>(y1.values(), ref, what) + count_mismatches<double>(y2.values(), ref, what + " (view)") +
         count_mismatches<double>(y3.values(), ref, what + " (" + std::string(wide::name) + " int64/int32)");
}

// C = A + B - A, assembled into format G in both owning storages.
template <class F, class G>
std::size_t add_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = make3<F, 2>(d, fill, rng);
  auto B = make3<F, 2>(d, fill, rng);
  auto C1 = tl::pack<G>(coordinate_list<double, int>({d[0], d[1]}));
  auto C3 = tl::pack<G, wide>(coordinate_list<double, std::int64_t>({d[0], d[1]}));
  C1(i, j) = A.v()(i, j) + B.own(i, j) - A.v()(i, j);
  C3(i, j) = A.wide_t(i, j) + B.wide_t(i, j) - A.wide_t(i, j);
  const std::string what = "add " + fname<F>() + " into " + fname<G>();
  const auto want = B.dense;
  return count_mismatches<double>(std::span<const double>(dense_of(C1)), want, what) +
         count_mismatches<double>(std::span<const double>(dense_of(C3)), want, what + " (" + std::string(wide::name) + " int64/int32)");
}

template <class F>
std::size_t spgemm_case(int m, int n, int p, double fill, std::mt19937_64& rng) {
  auto A = make3<F, 2>(std::array<int, 2>{m, n}, fill, rng);
  auto B = make3<F, 2>(std::array<int, 2>{n, p}, fill, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * p), 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c)
        ref[static_cast<std::size_t>(r * p + c)] += A.dense[static_cast<std::size_t>(r * n + q)] * B.dense[static_cast<std::size_t>(q * p + c)];
  auto C1 = tl::pack<csr>(coordinate_list<double, int>({m, p}));
  auto C3 = tl::pack<csr, wide>(coordinate_list<double, std::int64_t>({m, p}));
  C1(i, k) = A.v()(i, j) * B.v()(j, k);
  C3(i, k) = A.wide_t(i, j) * B.wide_t(j, k);
  const std::string what = "SpGEMM " + fname<F>();
  return count_mismatches<double>(std::span<const double>(dense_of(C1)), ref, what) +
         count_mismatches<double>(std::span<const double>(dense_of(C3)), ref, what + " (" + std::string(wide::name) + " int64/int32)");
}

template <class F>
std::size_t sddmm_case(int m, int n, int r, double fill, std::mt19937_64& rng) {
  auto B = make3<F, 2>(std::array<int, 2>{m, n}, fill, rng);
  auto C = make3<dense_row_major, 2>(std::array<int, 2>{m, r}, 1.0, rng);
  auto D = make3<dense_row_major, 2>(std::array<int, 2>{n, r}, 1.0, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < r; ++c)
        ref[static_cast<std::size_t>(a * n + b)] += B.dense[static_cast<std::size_t>(a * n + b)] *
                                                    C.dense[static_cast<std::size_t>(a * r + c)] *
                                                    D.dense[static_cast<std::size_t>(b * r + c)];
  tensor<double, dense_row_major> A1({m, n});
  tensor<double, dense_row_major, std::int64_t> A3({m, n});
  A1(i, j) = B.v()(i, j) * C.v()(i, k) * D.v()(j, k);
  A3(i, j) = B.wide_t(i, j) * C.wide_t(i, k) * D.wide_t(j, k);
  const std::string what = "SDDMM " + fname<F>();
  return count_mismatches<double>(A1.values(), ref, what) + count_mismatches<double>(A3.values(), ref, what + " (" + std::string(wide::name) + " int64/int32)");
}

template <class F>
std::size_t mttkrp_case(std::array<int, 3> d, int r, double fill, std::mt19937_64& rng) {
  auto B = make3<F, 3>(d, fill, rng);
  auto C = make3<dense_row_major, 2>(std::array<int, 2>{d[1], r}, 1.0, rng);
  auto D = make3<dense_row_major, 2>(std::array<int, 2>{d[2], r}, 1.0, rng);
  std::vector<double> ref(static_cast<std::size_t>(d[0] * r), 0.0);
  for (int a = 0; a < d[0]; ++a)
    for (int b = 0; b < d[1]; ++b)
      for (int c = 0; c < d[2]; ++c)
        for (int q = 0; q < r; ++q)
          ref[static_cast<std::size_t>(a * r + q)] += B.dense[static_cast<std::size_t>((a * d[1] + b) * d[2] + c)] *
                                                      C.dense[static_cast<std::size_t>(b * r + q)] *
                                                      D.dense[static_cast<std::size_t>(c * r + q)];
  tensor<double, dense_row_major> A1({d[0], r});
  tensor<double, dense_row_major, std::int64_t> A3({d[0], r});
  A1(i, l) = B.v()(i, j, k) * C.v()(j, l) * D.v()(k, l);
  A3(i, l) = B.wide_t(i, j, k) * C.wide_t(j, l) * D.wide_t(k, l);
  const std::string what = "MTTKRP " + fname<F>();
  return count_mismatches<double>(A1.values(), ref, what) + count_mismatches<double>(A3.values(), ref, what + " (" + std::string(wide::name) + " int64/int32)");
}

TEST(TL_STORAGE_SUITE, SpmvInEveryFormatAndStorage) {
  std::mt19937_64 rng(1801);
  std::size_t bad = 0;
  auto each = [&]<class F>(std::type_identity<F>) {
    for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 1}, {0, 5}, {4, 0}, {9, 7}, {60, 45}})
      for (double fill : {0.0, 0.3, 1.0}) bad += spmv_case<F>(d, fill, rng);
  };
  for_each_format<mode_matrix_formats>(each);
  for_each_format<derived_matrix_formats>(each);
  EXPECT_EQ(bad, 0u);
}

TEST(TL_STORAGE_SUITE, SparseAddIntoEveryOutputFormat) {
  std::mt19937_64 rng(1802);
  std::size_t bad = 0;
  for_each_format<std::tuple<csr, coo, coo_aos, dcsr, hash_rows, ell, dia, bcsr<2>, csb<2>>>([&]<class G>(std::type_identity<G>) {
    for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 1}, {6, 5}, {23, 17}})
      for (double fill : {0.0, 0.4}) {
        bad += add_case<csr, G>(d, fill, rng);
        bad += add_case<coo, G>(d, fill, rng);
      }
  });
  EXPECT_EQ(bad, 0u);
}

TEST(TL_STORAGE_SUITE, SpgemmSddmmMttkrp) {
  std::mt19937_64 rng(1803);
  std::size_t bad = 0;
  for_each_format<std::tuple<csr, dcsr, coo>>([&]<class F>(std::type_identity<F>) {
    for (int m : {0, 1, 7})
      for (double fill : {0.0, 0.3}) {
        bad += spgemm_case<F>(m, 5, 6, fill, rng);
        bad += sddmm_case<F>(m, 6, 3, fill, rng);
      }
    bad += spgemm_case<F>(30, 25, 20, 0.1, rng);
    bad += sddmm_case<F>(30, 25, 4, 0.1, rng);
  });
  for_each_format<std::tuple<csf, coo_tensor<3>, coo_aos_tensor<3>, mode_generic>>([&]<class F>(std::type_identity<F>) {
    for (std::array<int, 3> d : {std::array<int, 3>{0, 0, 0}, {1, 1, 1}, {4, 3, 5}, {12, 9, 10}})
      for (double fill : {0.0, 0.3}) bad += mttkrp_case<F>(d, 3, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

}  // namespace tlstorage
