// Generated kernels over non-owning views (view.hpp, borrowed storage):
// operands viewed from tensors of every format and built over borrowed
// arrays (positions and coordinates of different types included), dense
// outputs written through a view, serial and chunked; every result against
// the same statement on the owning tensors. Zero-copy is checked by pointer
// identity; copies of tensors whose levels share arrays (AoS, DIA) need no
// relinking.
#include <cstdint>
#include <optional>
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
static_assert(std::is_trivially_copy_constructible_v<tensor_view<const double, coo_aos>> &&
              std::is_trivially_copy_constructible_v<tensor_view<const double, dia>> &&
              std::is_trivially_copy_constructible_v<tensor_view<const double, hash_rows>>);
// One level definition over any storage: a borrowed level is a level, keeps
// its iteration capabilities and loses assembly.
using borrowed_compressed = tensorlev::compressed_level<int, tensorlev::sparse_options{}, tensorlev::borrowed<>>;
static_assert(tensorlev::pos_iterable_level<borrowed_compressed>);
static_assert(!tensorlev::appendable_level<borrowed_compressed>);
static_assert(tensorlev::appendable_level<tensorlev::compressed_level<int>>);
using borrowed_hashed = tensorlev::hashed_level<int, tensorlev::hash_options{}, tensorlev::borrowed<>>;
static_assert(tensorlev::locatable_level<borrowed_hashed>);
static_assert(!tensorlev::insertable_level<borrowed_hashed>);
static_assert(std::is_same_v<decltype(view(std::declval<const tensor<double, csr>&>())),
                             tensor<const double, csr, int, tensorlev::borrowed<>>>);
// Stored types apart from the index type: 64-bit row offsets, 32-bit columns.
using mixed =
    tensorlev::compressed_level<std::int64_t, tensorlev::sparse_options{}, tensorlev::owning<std::int64_t, std::int32_t>>;
static_assert(std::is_same_v<mixed::pos_array, std::vector<std::int64_t>> &&
              std::is_same_v<mixed::crd_array, std::vector<std::int32_t>>);

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

TEST(Views, SpmvOverViewsOfEveryMatrixFormat) {
  std::mt19937_64 rng(601);
  std::size_t bad = 0;
  for_each_format<std::tuple<csr, csc, coo, coo_aos, dcsr, hash_rows, hashed_csr, ell, dia, bcsr<2>, csb<2>,
                             dense_row_major, dense_col_major>>(
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
  const tensor_view<const double, csr> A({3, 4}, L(tensorlev::dense_level<int>(3), borrowed_compressed(4, {pos.data(), pos.size()}, {crd.data(), crd.size()})),
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

// Row offsets as std::size_t (unsigned, as Kokkos Kernels' size_type) and
// columns as int: viewed in place, computed with a 64-bit index type.
TEST(Views, PositionsAndCoordinatesOfDifferentTypes) {
  const std::vector<std::size_t> pos{0, 2, 2, 4};
  const std::vector<int> crd{1, 3, 0, 2};
  const std::vector<double> vals{2, 3, 4, 5}, x{1, 10, 100, 1000};
  using S = tensorlev::borrowed<std::size_t, int>;
  using T = tensor<const double, csr, std::int64_t, S>;
  using comp = std::tuple_element_t<1, T::level_tuple>;
  static_assert(std::is_same_v<comp::pos_type, const std::size_t> && std::is_same_v<comp::crd_type, const int>);
  const T A({3, 4}, T::level_tuple(tensorlev::dense_level<std::int64_t>(3), comp(4, {pos.data(), pos.size()}, {crd.data(), crd.size()})),
            std::span<const double>(vals));
  EXPECT_EQ(A.level<1>().pos().data(), pos.data());
  EXPECT_EQ(A.level<1>().crd().data(), crd.data());
  EXPECT_EQ(A.values().data(), vals.data());
  tensor<double, dense_vector, std::int64_t> y({3});
  const auto xv = tensor_view<const double, dense_vector, std::int64_t>({4}, {tensorlev::dense_level<std::int64_t>(4)}, std::span<const double>(x));
  y(i) = A(i, j) * xv(j);
  EXPECT_EQ(std::vector<double>(y.values().begin(), y.values().end()), (std::vector<double>{3020, 0, 504}));
  // A deep copy into owned 32-bit arrays, range-checked.
  const auto B = tensorlev::to_owning(A);
  static_assert(std::is_same_v<std::remove_const_t<decltype(B)>, tensor<double, csr, std::int64_t>>);
  EXPECT_EQ(to_dense(B), to_dense(A));
  EXPECT_NE(B.level<1>().crd().data(), nullptr);
  // 3e9 does not fit an int32 column: the copy says so instead of wrapping.
  const std::vector<std::size_t> big_pos{0, 1};
  const std::vector<int> one_col{0};
  const std::vector<double> one_val{1};
  using T1 = tensor<const double, csr, std::int64_t, tensorlev::borrowed<std::size_t, int>>;
  using comp1 = std::tuple_element_t<1, T1::level_tuple>;
  const T1 C({1, 1}, T1::level_tuple(tensorlev::dense_level<std::int64_t>(1), comp1(1, {big_pos.data(), 2}, {one_col.data(), 1})),
             std::span<const double>(one_val));
  using owning32 = tensorlev::owning<std::int32_t, std::int32_t>;
  EXPECT_NO_THROW((void)tensorlev::to_owning<owning32>(C));
  const std::vector<std::size_t> huge_pos{0, std::size_t{3'000'000'000}};
  const T1 D({1, 1}, T1::level_tuple(tensorlev::dense_level<std::int64_t>(1), comp1(1, {huge_pos.data(), 2}, {one_col.data(), 1})),
             std::span<const double>(one_val));
  EXPECT_THROW((void)tensorlev::to_owning<owning32>(D), tensorlev::overflow_error);
}

// A view borrows every array of every format: pointer identity, level by
// level, and the values.
template <class F, std::size_t N>
void expect_zero_copy(const std::array<int, N>& d, std::mt19937_64& rng) {
  auto A = random_operand<F>(d, 0.3, rng);
  const auto Av = view(A.t);
  EXPECT_EQ(Av.values().data(), A.t.values().data()) << fname<F>();
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          const auto& lo = A.t.template level<K>();
          const auto& lv = Av.template level<K>();
          if constexpr (requires { lo.arrays(); }) {
            const auto ao = lo.arrays();
            const auto av = lv.arrays();
            auto same = [&](const void* v, const void* o, std::size_t r) {
              EXPECT_EQ(v, o) << fname<F>() << " level " << K << " array " << r;
            };
            [&]<std::size_t... R>(std::index_sequence<R...>) {
              (same(std::get<R>(av).data(), std::get<R>(ao).data(), R), ...);
            }(std::make_index_sequence<std::tuple_size_v<decltype(ao)>>{});
          }
        }(),
        ...);
  }(std::make_index_sequence<F::num_levels>{});
  EXPECT_EQ(to_dense(Av), to_dense(A.t)) << fname<F>();
  EXPECT_EQ(Av.storage_bytes(), 0u) << fname<F>();
}

TEST(Views, EveryFormatIsViewedWithoutCopying) {
  std::mt19937_64 rng(603);
  for_each_format<std::tuple<csr, csc, coo, coo_aos, dcsr, hash_rows, hashed_csr, ell, dia, bcsr<2>, csb<2>,
                             dense_row_major>>([&]<class F>(std::type_identity<F>) {
    expect_zero_copy<F>(std::array<int, 2>{9, 7}, rng);
  });
  for_each_format<std::tuple<coo_tensor<3>, coo_aos_tensor<3>, csf, mode_generic, dense_sparse_sparse,
                             dense_dense_hashed>>([&]<class F>(std::type_identity<F>) {
    expect_zero_copy<F>(std::array<int, 3>{4, 5, 3}, rng);
  });
}

// Levels that read another level's arrays (AoS lanes, DIA's offsets) share
// them by reference count: a copy outlives its original with no relinking
// (under ASan a dangling lane would show here).
TEST(Views, CopiesOfSharedArraysOutliveTheOriginal) {
  std::mt19937_64 rng(604);
  auto check = [&]<class F, std::size_t N>(std::type_identity<F>, std::array<int, N> d) {
    std::optional<operand<F>> A = random_operand<F>(d, 0.4, rng);
    const std::vector<double> want = A->d;
    tensor<double, F> copy = A->t;
    tensor<double, F> moved = tensor<double, F>(A->t);
    A.reset();
    EXPECT_EQ(to_dense(copy), want) << fname<F>();
    EXPECT_EQ(to_dense(moved), want) << fname<F>();
    // Reassembling the copy (a kernel output) leaves the other's arrays alone.
    copy(i, j) = moved(i, j) + moved(i, j);
    std::vector<double> twice = want;
    for (double& v : twice) v *= 2;
    EXPECT_EQ(to_dense(copy), twice) << fname<F>();
    EXPECT_EQ(to_dense(moved), want) << fname<F>();
  };
  check(std::type_identity<coo_aos>{}, std::array<int, 2>{8, 6});
  check(std::type_identity<dia>{}, std::array<int, 2>{7, 9});
}

}  // namespace
