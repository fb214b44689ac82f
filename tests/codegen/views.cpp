// Generated kernels over non-owning views (view.hpp): operands viewed from
// tensors and built over borrowed arrays, dense outputs written through a
// view, serial and chunked; every result against the same statement on the
// owning tensors (and a dense reference through them).
#include <type_traits>

#include "common.hpp"
#include "tensorlev/execution.hpp"
#include "tensorlev/view.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
using tensorlev::compute;
using tensorlev::tensor_view;
using tensorlev::view;

// Copied bytewise (into a device kernel's arguments): trivially copy
// constructible and destructible. (Not trivially copyable only because
// std::tuple's copy assignment is user-provided.)
static_assert(std::is_trivially_copy_constructible_v<tensor_view<const double, csr>> &&
              std::is_trivially_destructible_v<tensor_view<const double, csr>>);
static_assert(std::is_trivially_copy_constructible_v<tensor_view<double, dense_row_major>>);
static_assert(tensorlev::level<tensorlev::compressed_view<int>>);
static_assert(tensorlev::level<tensorlev::singleton_view<int>>);
static_assert(tensorlev::viewable_level<tensorlev::compressed_level<int>>);
static_assert(!tensorlev::viewable_level<tensorlev::hashed_level<int>>);

template <class F>
std::size_t spmv_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(d, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
  const std::string what = fname<F>() + " " + std::to_string(d[0]) + "x" + std::to_string(d[1]);
  tensor<double, dense_vector> want({d[0]}), got({d[0]}), got_par({d[0]});
  want(i) = A.t(i, j) * x.t(j);
  const auto Av = view(A.t);
  const auto xv = view(x.t);
  auto yv = tensorlev::mutable_view(got);
  yv(i) = Av(i, j) * xv(j);
  std::size_t bad = count_mismatches<double>(got.values(), std::vector<double>(want.values().begin(), want.values().end()),
                                             "view SpMV " + what);
  auto yp = tensorlev::mutable_view(got_par);
  compute(tensorlev::chunked_serial_executor{}, yp(i), Av(i, j) * xv(j));
  bad += count_mismatches<double>(got_par.values(), std::vector<double>(want.values().begin(), want.values().end()),
                                  "view SpMV, chunked, " + what);
  // A sparse result from views: C = A + A (a tensor output).
  tensor<double, csr> c_want = pack<csr>(coordinate_list<double, int>({d[0], d[1]})), c_got = c_want;
  c_want(i, j) = A.t(i, j) + A.t(i, j);
  c_got(i, j) = Av(i, j) + Av(i, j);
  bad += count_mismatches<double>(std::span<const double>(to_dense(c_got)), to_dense(c_want), "view A + A " + what);
  return bad;
}

TEST(Views, SpmvOverViewsOfEveryViewableFormat) {
  std::mt19937_64 rng(601);
  std::size_t bad = 0;
  for_each_format<std::tuple<csr, csc, coo, dcsr, ell, dense_row_major, dense_col_major>>(
      [&]<class F>(std::type_identity<F>) {
        for (std::array<int, 2> d : {std::array<int, 2>{0, 0}, {1, 5}, {6, 4}, {300, 200}})
          for (double fill : {0.0, 0.1, 0.7}) bad += spmv_case<F>(d, fill, rng);
      });
  EXPECT_EQ(bad, 0u);
}

// Arrays that no tensor owns (here std::vectors; a Kokkos View's data() the
// same way): a 3 x 4 CSR matrix, x, and y written in place.
TEST(Views, BorrowedArrays) {
  const std::vector<int> pos{0, 2, 2, 4}, crd{1, 3, 0, 2};
  const std::vector<double> vals{2, 3, 4, 5}, x{1, 10, 100, 1000};
  std::vector<double> y(3, -1.0);
  using L = tensor_view<const double, csr>::level_tuple;
  const tensor_view<const double, csr> A({3, 4}, L(tensorlev::dense_level<int>(3), tensorlev::compressed_view<int>(4, pos.data(), crd.data())),
                                         std::span<const double>(vals));
  const tensor_view<const double, dense_vector> xv({4}, {tensorlev::dense_level<int>(4)}, std::span<const double>(x));
  tensor_view<double, dense_vector> yv({3}, {tensorlev::dense_level<int>(3)}, std::span<double>(y));
  yv(i) = A(i, j) * xv(j);
  EXPECT_EQ(y, (std::vector<double>{2 * 10 + 3 * 1000, 0, 4 * 1 + 5 * 100}));
  // Order-3 CSF over a view, reduced to a scalar.
  std::mt19937_64 rng(602);
  auto B = random_operand<csf>(std::array<int, 3>{7, 5, 6}, 0.3, rng);
  scalar<double> s_want, s_got;
  s_want() = B.t(i, j, k) * B.t(i, j, k);
  const auto Bv = view(B.t);
  s_got() = Bv(i, j, k) * Bv(i, j, k);
  EXPECT_EQ(s_got.value(), s_want.value());
}

}  // namespace
