// Kernels run on an executor against the same kernels run serially. The
// including file defines tltest::test_executor() (the executor under test)
// and tltest::chunks_run() (how many chunks it has run so far, or -1 when
// it does not count). Values are small integers, so every sum is exact and
// the parallel results must equal the serial ones bit for bit, reductions
// included.
#pragma once

#include "common.hpp"
#include "tensorlev/execution.hpp"

namespace tltest {
tensorlev::executor test_executor();
long chunks_run();
}  // namespace tltest

namespace {
using namespace tltest;
using namespace tensorlev::indices;
using tensorlev::compute;
using tensorlev::compute_add;
using tensorlev::splits_outer_loop_v;
constexpr tensorlev::index_var<'r'> r{};

// Mismatches against the serial result (count_mismatches, common.hpp).
template <class V>
std::size_t differ(std::span<const V> got, std::span<const V> serial, const std::string& what) {
  return count_mismatches<V>(got, std::vector<V>(serial.begin(), serial.end()), what + " (vs serial)");
}

// Shapes: empty, a single row or column, small, and larger than the
// executor's chunk count (1024) so that chunks hold several iterations.
constexpr std::array<std::array<int, 2>, 6> shapes{{{0, 0}, {1, 7}, {7, 1}, {5, 6}, {300, 41}, {2500, 13}}};

// The statement's outer loop is split for these formats (and not for CSC,
// whose outer loop scatters into y).
static_assert(splits_outer_loop_v<tensorlev::access<tensor<double, dense_vector>, 'i'>,
                                  mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'j'>,
                                           tensorlev::access<const tensor<double, dense_vector>, 'j'>>>);
static_assert(splits_outer_loop_v<tensorlev::access<tensor<double, dense_vector>, 'i'>,
                                  mul_expr<tensorlev::access<const tensor<double, coo>, 'i', 'j'>,
                                           tensorlev::access<const tensor<double, dense_vector>, 'j'>>>);
static_assert(!splits_outer_loop_v<tensorlev::access<tensor<double, dense_vector>, 'i'>,
                                   mul_expr<tensorlev::access<const tensor<double, csc>, 'i', 'j'>,
                                            tensorlev::access<const tensor<double, dense_vector>, 'j'>>>);
static_assert(splits_outer_loop_v<tensorlev::access<scalar<double>>,
                                  mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'j'>,
                                           tensorlev::access<const tensor<double, csr>, 'i', 'j'>>>);

template <class F>
std::size_t spmv_case(std::array<int, 2> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(dims, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{dims[1]}, 1.0, rng);
  auto z = random_operand<dense_vector>(std::array<int, 1>{dims[0]}, 0.5, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]);
  tensor<double, dense_vector> want({dims[0]}), got({dims[0]});
  want(i) = A.t(i, j) * x.t(j);
  compute(test_executor(), got(i), A.t(i, j) * x.t(j));
  std::size_t bad = differ<double>(got.values(), want.values(), "y = A x, " + what);
  // += keeps what was there
  want(i) += A.t(i, j) * x.t(j);
  compute_add(test_executor(), got(i), A.t(i, j) * x.t(j));
  bad += differ<double>(got.values(), want.values(), "y += A x, " + what);
  // a sum with a vector: the outer loop merges A's rows with z
  want(i) = A.t(i, j) * x.t(j) + z.t(i);
  compute(test_executor(), got(i), A.t(i, j) * x.t(j) + z.t(i));
  bad += differ<double>(got.values(), want.values(), "y = A x + z, " + what);
  // a scalar: y^T A x, reduced over chunks
  scalar<double> s_want, s_got;
  s_want() = z.t(i) * A.t(i, j) * x.t(j);
  compute(test_executor(), s_got(), z.t(i) * A.t(i, j) * x.t(j));
  if (s_got.value() != s_want.value()) {
    ++bad;
    ADD_FAILURE() << "z^T A x, " << what << ": " << s_got.value() << " vs serial " << s_want.value();
  }
  return bad;
}

TEST(Parallel, SpmvEveryMatrixFormat) {
  std::mt19937_64 rng(501);
  std::size_t bad = 0;
  const long before = chunks_run();
  for_each_format<std::tuple<csr, coo, coo_aos, csc, dcsr, dense_row_major, dense_col_major, hash_rows, ell, dia,
                             bcsr<2>>>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : shapes)
      for (double fill : {0.0, 0.05, 0.5}) bad += spmv_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 1000) << "the outer loops were not split into chunks";
  }
}

// COO rows are runs of equal coordinates: a chunk boundary inside a run
// would let two chunks write the same y(i). One long row among short ones.
TEST(Parallel, CooRowsAreNeverSplit) {
  std::mt19937_64 rng(502);
  for (int heavy : {0, 1, 517, 1999}) {
    coordinate_list<double> l({2000, 3000});
    for (int e = 0; e < 40000; ++e) {
      const int r = e % 3 == 0 ? static_cast<int>(rng() % 2000) : heavy;
      l.push_back({r, static_cast<int>(rng() % 3000)}, static_cast<double>(e % 7) - 3.0);
    }
    const auto A = pack<coo>(l);
    tensor<double, dense_vector> x({3000}), want({2000}), got({2000});
    for (int c = 0; c < 3000; ++c) x.values()[static_cast<std::size_t>(c)] = static_cast<double>(c % 5) - 2.0;
    want(i) = A(i, j) * x(j);
    compute(test_executor(), got(i), A(i, j) * x(j));
    EXPECT_EQ(differ<double>(got.values(), want.values(), "heavy row " + std::to_string(heavy)), 0u);
    // Every inner chunk boundary (a position of COO's first level) starts a
    // new row: the coordinate before it differs.
    using K = tensorlev::cg::kernel<decltype(got(i)), decltype(A(i, j) * x(j)), false, 0>;
    const auto b = K::outer_chunks(got(i), A(i, j) * x(j));
    const auto& rows = std::get<0>(A.levels()).crd();
    ASSERT_GT(b.size(), 100u);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(static_cast<std::size_t>(b.back()), rows.size());
    std::size_t inside = 0;
    for (std::size_t c = 1; c + 1 < b.size(); ++c) {
      const auto p = static_cast<std::size_t>(b[c]);
      if (b[c] < b[c - 1]) ++inside;
      if (p > 0 && p < rows.size() && rows[p - 1] == rows[p]) ++inside;
    }
    EXPECT_EQ(inside, 0u) << "chunk boundaries inside a row, heavy row " << heavy;
  }
}

TEST(Parallel, SpmmAndSparseOutputs) {
  std::mt19937_64 rng(503);
  std::size_t bad = 0;
  for (const auto& d : shapes) {
    auto A = random_operand<csr>(d, 0.1, rng);
    auto B = random_operand<dense_row_major>(std::array<int, 2>{d[1], 5}, 1.0, rng);
    tensor<double, dense_row_major> want({d[0], 5}), got({d[0], 5});
    want(i, k) = A.t(i, j) * B.t(j, k);
    compute(test_executor(), got(i, k), A.t(i, j) * B.t(j, k));
    bad += differ<double>(got.values(), want.values(), "SpMM " + std::to_string(d[0]));
    // sparse outputs run serially on any executor: same result
    auto C = random_operand<csr>(d, 0.1, rng);
    tensor<double, csr> s_want = pack<csr>(coordinate_list<double, int>({d[0], d[1]}));
    tensor<double, csr> s_got = s_want;
    s_want(i, j) = A.t(i, j) + C.t(i, j);
    compute(test_executor(), s_got(i, j), A.t(i, j) + C.t(i, j));
    bad += differ<double>(std::span<const double>(to_dense(s_got)), std::span<const double>(to_dense(s_want)),
                          "A + C into CSR");
  }
  EXPECT_EQ(bad, 0u);
}

template <class F>
std::size_t mttkrp_case(std::array<int, 3> dims, double fill, std::mt19937_64& rng) {
  auto B = random_operand<F>(dims, fill, rng);
  auto C = random_operand<dense_row_major>(std::array<int, 2>{dims[1], 4}, 1.0, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{dims[2], 4}, 1.0, rng);
  tensor<double, dense_row_major> want({dims[0], 4}), got({dims[0], 4});
  want(i, r) = B.t(i, k, l) * C.t(k, r) * D.t(l, r);
  compute(test_executor(), got(i, r), B.t(i, k, l) * C.t(k, r) * D.t(l, r));
  scalar<double> n_want, n_got;
  n_want() = B.t(i, k, l) * B.t(i, k, l);
  compute(test_executor(), n_got(), B.t(i, k, l) * B.t(i, k, l));
  std::size_t bad = differ<double>(got.values(), want.values(), "MTTKRP " + fname<F>());
  if (n_got.value() != n_want.value()) ++bad, ADD_FAILURE() << "<B, B> " << fname<F>();
  return bad;
}

TEST(Parallel, MttkrpAndInnerProductOverOrder3Formats) {
  std::mt19937_64 rng(504);
  std::size_t bad = 0;
  for_each_format<std::tuple<csf, coo_tensor<3>, dense_tensor<3>, mode_generic>>(
      [&]<class F>(std::type_identity<F>) {
        for (std::array<int, 3> d : {std::array<int, 3>{0, 2, 2}, {3, 4, 5}, {1100, 9, 7}})
          for (double fill : {0.0, 0.1, 0.6}) bad += mttkrp_case<F>(d, fill, rng);
      });
  EXPECT_EQ(bad, 0u);
}

}  // namespace
