// Kernels run on an executor against the same kernels run serially
// (parallel_common.hpp: the executor under test). Values are small
// integers, so every sum is exact and the parallel results must equal the
// serial ones bit for bit, reductions included. Compiled once, as
// parallel_cases.cpp, into every binary that runs the cases.
#pragma once

#include <algorithm>

#include "parallel_common.hpp"

namespace {
// Shapes: empty, a single row or column, small, and larger than the
// executor's chunk count (1024) so that chunks hold several iterations.
constexpr std::array<std::array<int, 2>, 6> shapes{{{0, 0}, {1, 7}, {7, 1}, {5, 6}, {300, 41}, {2500, 13}}};

// How each statement's outer loop is split (kernel.hpp, "parallel outer
// loop"): rows for CSR and COO (cut between rows) and for blocks of rows
// (SELL, BCSR, CSB, grouped rows), a private copy of y per running chunk for CSC, partial sums for a scalar, count, scan and fill
// for CSR outputs (chunk-local entries and a scan for SpGEMM's workspace);
// DCSR outputs (assembled level by level) stay serial.
template <class Out, class E>
constexpr auto par_of = tensorlev::cg::kernel<Out, E, false, 0>::converted::par;
template <class F>
using mat = tensorlev::access<const tensor<double, F>, 'i', 'j'>;
template <class F>
using mat_jk = tensorlev::access<const tensor<double, F>, 'j', 'k'>;
using vec_i = tensorlev::access<tensor<double, dense_vector>, 'i'>;
using vec_j = tensorlev::access<const tensor<double, dense_vector>, 'j'>;
using cvec_i = tensorlev::access<const tensor<double, dense_vector>, 'i'>;
using out_vec_j = tensorlev::access<tensor<double, dense_vector>, 'j'>;
template <class F>
using out_ik = tensorlev::access<tensor<double, F>, 'i', 'k'>;
template <class F>
using out_ij = tensorlev::access<tensor<double, F>, 'i', 'j'>;
using tensorlev::cg::par_kind;
static_assert(par_of<vec_i, mul_expr<mat<csr>, vec_j>> == par_kind::rows);
static_assert(par_of<vec_i, mul_expr<mat<coo>, vec_j>> == par_kind::rows);
static_assert(par_of<vec_i, mul_expr<mat<csc>, vec_j>> == par_kind::scatter);
static_assert(par_of<out_vec_j, mul_expr<mat<csr>, cvec_i>> == par_kind::scatter);
// Loop 0 over blocks of rows whose rows the output's first level binds
// (i = b * B + inner): chunks own their blocks' rows. The transposes (rows
// of another block pair, or not blocked) and ELL (loop 0 binds slots) scatter.
static_assert(par_of<vec_i, mul_expr<mat<sell<4>>, vec_j>> == par_kind::rows);
static_assert(par_of<vec_i, mul_expr<mat<sell_sigma<4, 8>>, vec_j>> == par_kind::rows);  // rows through a permutation
static_assert(par_of<vec_i, mul_expr<mat<bcsr<2>>, vec_j>> == par_kind::rows);
static_assert(par_of<vec_i, mul_expr<mat<grouped_rows<3>>, vec_j>> == par_kind::rows);
static_assert(par_of<vec_i, mul_expr<mat<csb<2>>, vec_j>> == par_kind::rows);
static_assert(par_of<out_vec_j, mul_expr<mat<bcsr<2>>, cvec_i>> == par_kind::scatter);
static_assert(par_of<out_vec_j, mul_expr<mat<grouped_rows<3>>, cvec_i>> == par_kind::scatter);
static_assert(par_of<vec_i, mul_expr<mat<ell>, vec_j>> == par_kind::scatter);
static_assert(par_of<tensorlev::access<scalar<double>>, mul_expr<mat<csr>, mat<csr>>> == par_kind::scalar);
static_assert(par_of<out_ij<csr>, add_expr<mat<csr>, mat<csr>>> == par_kind::append);
static_assert(par_of<out_ik<csr>, mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'j'>, mat_jk<csr>>> ==
              par_kind::append);
// SDDMM into CSR: a reduction (k) below the appended level, which the
// counting pass of count, scan, fill skips.
static_assert(par_of<out_ij<csr>, mul_expr<mul_expr<mat<csr>, tensorlev::access<const tensor<double, dense_row_major>,
                                                                                  'i', 'k'>>,
                                           tensorlev::access<const tensor<double, dense_row_major>, 'j', 'k'>>> ==
              par_kind::append);
// DCSR and COO outputs (assembled level by level in order): chunks count
// their positions per level, a scan places them.
static_assert(par_of<out_ij<dcsr>, add_expr<mat<csr>, mat<csr>>> == par_kind::assemble);
static_assert(par_of<out_ij<coo>, add_expr<mat<csr>, mat<csr>>> == par_kind::assemble);
static_assert(par_of<out_ij<dcsr>, add_expr<mat<dcsr>, mat<coo>>> == par_kind::assemble);
static_assert(par_of<out_ij<coo_aos>, add_expr<mat<csr>, mat<csr>>> == par_kind::assemble);
// Streamed outputs (derived level maps; SpGEMM i, j, k into DCSR): a list
// per chunk, joined in chunk order, packed.
static_assert(par_of<out_ij<ell>, add_expr<mat<csr>, mat<csr>>> == par_kind::stream);
static_assert(par_of<out_ik<dcsr>, mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'j'>, mat_jk<csr>>> ==
              par_kind::stream);
// Hashed rows: chunks own their rows' buckets.
static_assert(par_of<out_ij<hash_rows>, add_expr<mat<csr>, mat<csr>>> == par_kind::insert);
static_assert(par_of<out_ij<hash_rows>, mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'k'>,
                                                tensorlev::access<const tensor<double, csr>, 'k', 'j'>>> ==
              par_kind::insert);
// A hash vector's one level has a single parent: chunks collect their own
// (coordinate, value) lists, inserted in chunk order.
static_assert(par_of<tensorlev::access<tensor<double, hash_vector>, 'i'>,
                     add_expr<tensorlev::access<const tensor<double, sparse_vector>, 'i'>,
                              tensorlev::access<const tensor<double, sparse_vector>, 'i'>>> == par_kind::collect);
static_assert(par_of<tensorlev::access<tensor<double, hash_vector>, 'j'>, mul_expr<mat<csr>, cvec_i>> ==
              par_kind::collect);
static_assert(splits_outer_loop_v<vec_i, mul_expr<mat<csc>, vec_j>>);
static_assert(splits_outer_loop_v<out_ij<dcsr>, add_expr<mat<csr>, mat<csr>>>);

// Sparse results must match the serial ones in storage, not only in value:
// the same positions, coordinates and values.
template <class T>
std::size_t differ_stored(const T& got, const T& want, const std::string& what) {
  std::size_t bad = differ<double>(std::span<const double>(to_dense(got)), std::span<const double>(to_dense(want)),
                                   what);
  if (got.values().size() != want.values().size()) {
    ADD_FAILURE() << what << ": " << got.values().size() << " stored vs serial " << want.values().size();
    return bad + 1;
  }
  bad += differ<double>(got.values(), want.values(), what + ", stored values");
  // every level's arrays (pos and crd where the level has them)
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          const auto& g = std::get<K>(got.levels());
          const auto& w = std::get<K>(want.levels());
          if constexpr (requires { g.pos(); }) {
            if (!std::ranges::equal(g.pos(), w.pos()))
              ++bad, ADD_FAILURE() << what << ": level " << K << " pos differs from serial";
          }
          if constexpr (requires { g.seg(); }) {
            if (!std::ranges::equal(g.seg(), w.seg()))
              ++bad, ADD_FAILURE() << what << ": level " << K << " segments differ from serial";
          }
          if constexpr (requires { g.crd(); }) {
            if (!std::ranges::equal(g.crd(), w.crd()))
              ++bad, ADD_FAILURE() << what << ": level " << K << " crd differs from serial";
          }
        }(),
        ...);
  }(std::make_index_sequence<T::num_levels>{});
  return bad;
}

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
                             bcsr<2>, sell<4>, sell_sigma<4, 8>, grouped_rows<3>, csb<2>>>([&]<class F>(std::type_identity<F>) {
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

// Transposed access: y(j) = A(i,j) x(i) scatters into y from every row.
TEST(Parallel, TransposedSpmvScatters) {
  std::mt19937_64 rng(505);
  std::size_t bad = 0;
  const long before = chunks_run();
  for_each_format<std::tuple<csr, coo, dcsr, dense_row_major>>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : shapes)
      for (double fill : {0.0, 0.05, 0.5}) {
        auto A = random_operand<F>(d, fill, rng);
        auto x = random_operand<dense_vector>(std::array<int, 1>{d[0]}, 1.0, rng);
        tensor<double, dense_vector> want({d[1]}), got({d[1]});
        want(j) = A.t(i, j) * x.t(i);
        compute(test_executor(), got(j), A.t(i, j) * x.t(i));
        bad += differ<double>(got.values(), want.values(), "A^T x, " + fname<F>() + " " + std::to_string(d[0]));
        want(j) += A.t(i, j) * x.t(i);
        compute_add(test_executor(), got(j), A.t(i, j) * x.t(i));
        bad += differ<double>(got.values(), want.values(), "y += A^T x, " + fname<F>());
      }
  });
  EXPECT_EQ(bad, 0u);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 1000) << "the outer loops were not split into chunks";
  }
}

TEST(Parallel, SpmmSddmmAndMixedTerms) {
  std::mt19937_64 rng(503);
  std::size_t bad = 0;
  for (const auto& d : shapes) {
    auto A = random_operand<csr>(d, 0.1, rng);
    auto B = random_operand<dense_row_major>(std::array<int, 2>{d[1], 5}, 1.0, rng);
    tensor<double, dense_row_major> want({d[0], 5}), got({d[0], 5});
    want(i, k) = A.t(i, j) * B.t(j, k);
    compute(test_executor(), got(i, k), A.t(i, j) * B.t(j, k));
    bad += differ<double>(got.values(), want.values(), "SpMM " + std::to_string(d[0]));
    // SDDMM into a dense and into a CSR output
    auto C = random_operand<dense_row_major>(std::array<int, 2>{d[0], 4}, 1.0, rng);
    auto D = random_operand<dense_row_major>(std::array<int, 2>{d[1], 4}, 1.0, rng);
    tensor<double, dense_row_major> s_want({d[0], d[1]}), s_got({d[0], d[1]});
    s_want(i, j) = A.t(i, j) * C.t(i, k) * D.t(j, k);
    compute(test_executor(), s_got(i, j), A.t(i, j) * C.t(i, k) * D.t(j, k));
    bad += differ<double>(s_got.values(), s_want.values(), "SDDMM " + std::to_string(d[0]));
    tensor<double, csr> c_want = pack<csr>(coordinate_list<double, int>({d[0], d[1]})), c_got = c_want;
    c_want(i, j) = A.t(i, j) * C.t(i, k) * D.t(j, k);
    compute(test_executor(), c_got(i, j), A.t(i, j) * C.t(i, k) * D.t(j, k));
    bad += differ_stored(c_got, c_want, "SDDMM into CSR " + std::to_string(d[0]));
    // Einstein: terms with different reductions run as separate nests
    auto E = random_operand<csr>(std::array<int, 2>{d[0], 5}, 0.2, rng);
    auto G = random_operand<dense_row_major>(std::array<int, 2>{5, d[1]}, 1.0, rng);
    s_want(i, j) = A.t(i, j) + E.t(i, k) * G.t(k, j);
    compute(test_executor(), s_got(i, j), A.t(i, j) + E.t(i, k) * G.t(k, j));
    bad += differ<double>(s_got.values(), s_want.values(), "A + E G " + std::to_string(d[0]));
  }
  EXPECT_EQ(bad, 0u);
}

// numeric_plans (sparse_out_case into CSR) whose last runs went through a
// slot table.
std::size_t plans_through_slot_tables = 0;

// Sparse outputs: CSR outputs assemble in parallel (count, scan, fill;
// SpGEMM: chunk-local entries, a scan, a copy); the others run serially on
// any executor. Every result equals the serial one in storage.
template <class FC>
std::size_t sparse_out_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = random_operand<csr>(d, fill, rng);
  auto C = random_operand<csr>(d, fill, rng);
  auto Ac = random_operand<coo>(d, fill, rng);
  auto B = random_operand<csr>(std::array<int, 2>{d[1], 9}, fill, rng);
  const std::string what = " into " + fname<FC>() + " " + std::to_string(d[0]) + "x" + std::to_string(d[1]);
  const tensor<double, FC> empty = pack<FC>(coordinate_list<double, int>({d[0], d[1]}));
  std::size_t bad = 0;
  tensor<double, FC> want = empty, got = empty;
  want(i, j) = A.t(i, j) + C.t(i, j);
  compute(test_executor(), got(i, j), A.t(i, j) + C.t(i, j));
  bad += differ_stored(got, want, "A + C" + what);
  want(i, j) = A.t(i, j) * C.t(i, j) - Ac.t(i, j);
  compute(test_executor(), got(i, j), A.t(i, j) * C.t(i, j) - Ac.t(i, j));
  bad += differ_stored(got, want, "A .* C - Acoo" + what);
  want(i, j) += A.t(i, j);
  compute_add(test_executor(), got(i, j), A.t(i, j));
  bad += differ_stored(got, want, "+= A" + what);
  // A broadcast vector fills whole rows: more entries than the operands
  // store, so sized appends run again sized by their count. Checked against
  // a dense result as well.
  auto b = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
  want(i, j) = A.t(i, j) + b.t(j);
  compute(test_executor(), got(i, j), A.t(i, j) + b.t(j));
  bad += differ_stored(got, want, "A + broadcast b" + what);
  tensor<double, dense_row_major> dense({d[0], d[1]});
  dense(i, j) = A.t(i, j) + b.t(j);
  bad += differ<double>(std::span<const double>(to_dense(want)), dense.values(), "A + broadcast b, dense" + what);
  tensor<double, FC> p_want = pack<FC>(coordinate_list<double, int>({d[0], 9})), p_got = p_want;
  p_want(i, k) = A.t(i, j) * B.t(j, k);
  compute(test_executor(), p_got(i, k), A.t(i, j) * B.t(j, k));
  bad += differ_stored(p_got, p_want, "SpGEMM" + what);
  p_want(i, k) = Ac.t(i, j) * B.t(j, k);
  compute(test_executor(), p_got(i, k), Ac.t(i, j) * B.t(j, k));
  bad += differ_stored(p_got, p_want, "SpGEMM COO x CSR" + what);
  if constexpr (std::is_same_v<FC, csr>) {
    // compute_numeric after A's and B's values change: rows in chunks,
    // each written into the pattern in place; equal to a full product.
    compute(test_executor(), p_got(i, k), A.t(i, j) * B.t(j, k));
    for (double& v : A.t.values()) v = -1.5 * v + 0.25;
    for (double& v : B.t.values()) v += 1.0;
    p_want(i, k) = A.t(i, j) * B.t(j, k);
    compute_numeric(test_executor(), p_got(i, k), A.t(i, j) * B.t(j, k));
    bad += differ_stored(p_got, p_want, "compute_numeric" + what);
    // numeric_plan on the executor: checked (rows in chunks), trusted (the
    // slot table recorded on one thread), then through the table (rows in
    // chunks) where it was kept; B's values change before each run.
    tensorlev::numeric_plan plan(p_got(i, k), A.t(i, j) * B.t(j, k));
    for (int run = 0; run < 4; ++run) {
      for (double& v : B.t.values()) v = run % 2 == 0 ? 2.0 - v : 0.5 * v;
      p_want(i, k) = A.t(i, j) * B.t(j, k);
      plan.run(test_executor());
      bad += differ_stored(p_got, p_want, "numeric_plan, run " + std::to_string(run) + what);
      if (plan.trusted() != (run > 0))
        ++bad, ADD_FAILURE() << "numeric_plan, run " << run << what << ": trusted " << plan.trusted();
    }
    if (plan.slot_table_bytes() != 0) ++plans_through_slot_tables;
  }
  return bad;
}

// Hash vector outputs (one table: chunks collect, then insert in chunk
// order): rows (y = A x), a merged outer loop (a - 2 b), a transposed
// product whose chunks all add into the same coordinates (y = A^T x), and
// +=; the stored table must equal serial's (insertion order decides it).
std::size_t hash_vector_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = random_operand<csr>(d, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
  auto xt = random_operand<dense_vector>(std::array<int, 1>{d[0]}, 1.0, rng);
  auto a = random_operand<sparse_vector>(std::array<int, 1>{d[0]}, fill, rng);
  auto b = random_operand<hash_vector>(std::array<int, 1>{d[0]}, fill, rng);
  const std::string what = " into a hash vector, " + std::to_string(d[0]) + "x" + std::to_string(d[1]) +
                           " fill " + std::to_string(fill);
  const auto empty_of = [](int n) { return pack<hash_vector>(coordinate_list<double, int>({n})); };
  std::size_t bad = 0;
  tensor<double, hash_vector> want = empty_of(d[0]), got = want;
  want(i) = A.t(i, j) * x.t(j);
  compute(test_executor(), got(i), A.t(i, j) * x.t(j));
  bad += differ_stored(got, want, "y = A x" + what);
  want(i) = a.t(i) - 2.0 * b.t(i);
  compute(test_executor(), got(i), a.t(i) - 2.0 * b.t(i));
  bad += differ_stored(got, want, "z = a - 2 b" + what);
  want(i) += -(A.t(i, j) * x.t(j));
  compute_add(test_executor(), got(i), -(A.t(i, j) * x.t(j)));
  bad += differ_stored(got, want, "z += -A x" + what);
  tensor<double, hash_vector> t_want = empty_of(d[1]), t_got = t_want;
  t_want(j) = A.t(i, j) * xt.t(i);
  compute(test_executor(), t_got(j), A.t(i, j) * xt.t(i));
  bad += differ_stored(t_got, t_want, "y = A^T x" + what);
  // and against a dense result
  tensor<double, dense_vector> dense({d[1]});
  dense(j) = A.t(i, j) * xt.t(i);
  bad += differ<double>(std::span<const double>(to_dense(t_want)), dense.values(), "y = A^T x, dense" + what);
  return bad;
}

// Schedules on an executor: an explicit loop order (j outer: a scatter) and
// precompute (cut above the loop where the terms split); element-wise sums
// and products over mixed format pairs into a dense output (merged outer
// loops for DCSR, cut by coordinate).
template <class Out, class E, char P>
constexpr auto par_pre = tensorlev::cg::kernel<Out, E, false, P>::converted::par;
static_assert(par_pre<out_ij<csr>, add_expr<mat<csr>, mat<coo>>, 'j'> == par_kind::append);
static_assert(par_pre<out_ij<dense_row_major>, add_expr<mat<csr>, mat<coo>>, 'j'> == par_kind::rows);
static_assert(par_pre<out_ik<csr>, mul_expr<tensorlev::access<const tensor<double, csr>, 'i', 'j'>, mat_jk<csr>>,
                      'k'> == par_kind::append);
// precompute over the outer variable: the terms split at loop 0 (serial)
static_assert(par_pre<vec_i, add_expr<tensorlev::access<const tensor<double, sparse_vector>, 'i'>,
                                      tensorlev::access<const tensor<double, sparse_vector>, 'i'>>,
                      'i'> == par_kind::none);
TEST(Parallel, SchedulesAndFormatPairs) {
  std::mt19937_64 rng(507);
  std::size_t bad = 0;
  for (const auto& d : shapes) {
    const std::string what = " " + std::to_string(d[0]) + "x" + std::to_string(d[1]);
    auto A = random_operand<csr>(d, 0.1, rng);
    auto B = random_operand<coo>(d, 0.1, rng);
    auto C = random_operand<dcsr>(d, 0.1, rng);
    auto Hc = random_operand<hash_rows>(d, 0.1, rng);
    auto x = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
    auto M = random_operand<dense_row_major>(d, 0.5, rng);
    tensor<double, dense_vector> y_want({d[0]}), y_got({d[0]});
    y_want(i) = M.t(i, j) * x.t(j);
    compute(test_executor(), y_got(i), M.t(i, j) * x.t(j), tensorlev::loop_order<'j', 'i'>{});
    bad += differ<double>(y_got.values(), y_want.values(), "dense MV with j outer" + what);
    tensor<double, csr> p_want = pack<csr>(coordinate_list<double, int>({d[0], d[1]})), p_got = p_want;
    p_want(i, j) = A.t(i, j) + B.t(i, j) - 2.0 * C.t(i, j);
    compute(test_executor(), p_got(i, j), A.t(i, j) + B.t(i, j) - 2.0 * C.t(i, j), tensorlev::precompute(j));
    bad += differ_stored(p_got, p_want, "precomputed A + B - 2C" + what);
    tensor<double, dense_row_major> q_want({d[0], d[1]}), q_got({d[0], d[1]});
    q_want(i, j) = A.t(i, j) - B.t(i, j) * 3.0 + C.t(i, j);
    compute(test_executor(), q_got(i, j), A.t(i, j) - B.t(i, j) * 3.0 + C.t(i, j), tensorlev::precompute(j));
    bad += differ<double>(q_got.values(), q_want.values(), "dense precomputed A - 3B + C" + what);
    auto Bt = random_operand<csr>(std::array<int, 2>{d[1], 5}, 0.3, rng);
    tensor<double, csr> g_want = pack<csr>(coordinate_list<double, int>({d[0], 5})), g_got = g_want;
    g_want(i, k) = A.t(i, j) * Bt.t(j, k);
    compute(test_executor(), g_got(i, k), A.t(i, j) * Bt.t(j, k), tensorlev::precompute(k));
    bad += differ_stored(g_got, g_want, "Gustavson SpGEMM" + what);
    tensor<double, dense_row_major> e_want({d[0], d[1]}), e_got({d[0], d[1]});
    e_want(i, j) = A.t(i, j) + B.t(i, j) * Hc.t(i, j) - C.t(i, j);
    compute(test_executor(), e_got(i, j), A.t(i, j) + B.t(i, j) * Hc.t(i, j) - C.t(i, j));
    bad += differ<double>(e_got.values(), e_want.values(), "CSR + COO .* hashed - DCSR" + what);
    e_want(i, j) = C.t(i, j) + C.t(i, j) * A.t(i, j);
    compute(test_executor(), e_got(i, j), C.t(i, j) + C.t(i, j) * A.t(i, j));
    bad += differ<double>(e_got.values(), e_want.values(), "DCSR + DCSR .* CSR" + what);
  }
  EXPECT_EQ(bad, 0u);
}

// Merged outer loops (A + B over sparse rows, a sparse vector plus a dense
// one) are cut by coordinate: each chunk owns a range of i and every
// iterator narrows to it by binary search (stmt::outer_cut_by_coord).
static_assert(par_of<out_ij<dense_row_major>, add_expr<mat<dcsr>, mat<dcsr>>> == par_kind::rows);
static_assert(par_of<out_ij<dense_row_major>, add_expr<mat<coo>, mat<dcsr>>> == par_kind::rows);
static_assert(par_of<out_ij<csr>, add_expr<mat<dcsr>, mat<coo>>> == par_kind::append);
static_assert(par_of<tensorlev::access<scalar<double>>, add_expr<mat<dcsr>, mat<dcsr>>> == par_kind::scalar);
static_assert(par_of<vec_i, add_expr<tensorlev::access<const tensor<double, sparse_vector>, 'i'>,
                                     tensorlev::access<const tensor<double, sparse_vector>, 'i'>>> == par_kind::rows);
static_assert(tensorlev::cg::kernel<out_ij<dense_row_major>, add_expr<mat<dcsr>, mat<dcsr>>, false, 0>::cut_by_coord);
static_assert(!tensorlev::cg::kernel<out_ij<dense_row_major>, add_expr<mat<csr>, mat<csr>>, false, 0>::cut_by_coord);
// A hashed operand is located, not merged (the loop merges a counter over
// i with the sparse vector): cut by coordinate too.
static_assert(par_of<vec_i, add_expr<tensorlev::access<const tensor<double, hash_vector>, 'i'>,
                                     tensorlev::access<const tensor<double, sparse_vector>, 'i'>>> == par_kind::rows);

template <class FA, class FB>
std::size_t merged_outer_case(std::array<int, 2> d, double fill, std::mt19937_64& rng) {
  auto A = random_operand<FA>(d, fill, rng);
  auto B = random_operand<FB>(d, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{d[1]}, 1.0, rng);
  const std::string what = fname<FA>() + " and " + fname<FB>() + " " + std::to_string(d[0]) + "x" +
                           std::to_string(d[1]) + " fill " + std::to_string(fill);
  const auto n = static_cast<std::size_t>(d[0]) * static_cast<std::size_t>(d[1]);
  const auto cols = static_cast<std::size_t>(d[1]);
  // Dense references from the operands' expansions.
  std::vector<double> diff(n), sum2(n), mixed(n), y(static_cast<std::size_t>(d[0]));
  double total = 0;
  for (std::size_t p = 0; p < n; ++p) {
    diff[p] = A.d[p] - B.d[p];
    sum2[p] = A.d[p] + 2.0 * B.d[p];
    mixed[p] = -A.d[p] + B.d[p] * B.d[p];
    total += A.d[p] + B.d[p];
    y[p / cols] += (A.d[p] - B.d[p]) * x.d[p % cols];
  }
  std::size_t bad = 0;
  tensor<double, dense_row_major> O({d[0], d[1]});
  compute(test_executor(), O(i, j), A.t(i, j) - B.t(i, j));
  bad += count_mismatches<double>(O.values(), diff, "A - B, " + what);
  compute_add(test_executor(), O(i, j), A.t(i, j) + 3.0 * B.t(i, j));
  std::vector<double> acc = diff;
  for (std::size_t p = 0; p < n; ++p) acc[p] += A.d[p] + 3.0 * B.d[p];
  bad += count_mismatches<double>(O.values(), acc, "+= A + 3B, " + what);
  compute(test_executor(), O(i, j), -A.t(i, j) + B.t(i, j) * B.t(i, j));
  bad += count_mismatches<double>(O.values(), mixed, "-A + B .* B, " + what);
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({d[0], d[1]}));
  compute(test_executor(), C(i, j), A.t(i, j) + 2.0 * B.t(i, j));
  bad += count_mismatches<double>(std::span<const double>(to_dense(C)), sum2, "CSR = A + 2B, " + what);
  tensor<double, csr> C_serial = pack<csr>(coordinate_list<double, int>({d[0], d[1]}));
  C_serial(i, j) = A.t(i, j) + 2.0 * B.t(i, j);
  bad += differ_stored(C, C_serial, "CSR = A + 2B, " + what);
  tensor<double, dense_vector> yv({d[0]});
  compute(test_executor(), yv(i), A.t(i, j) * x.t(j) - B.t(i, j) * x.t(j));
  bad += count_mismatches<double>(yv.values(), y, "A x - B x, " + what);
  scalar<double> s;
  compute(test_executor(), s(), A.t(i, j) + B.t(i, j));
  if (s.value() != total) ++bad, ADD_FAILURE() << "sum(A + B), " << what << ": " << s.value() << " vs " << total;
  return bad;
}

TEST(Parallel, MergedOuterLoops) {
  std::mt19937_64 rng(508);
  std::size_t bad = 0;
  const long before = chunks_run();
  using outer_formats = std::tuple<dcsr, coo, csr, dense_row_major>;
  for_each_format<outer_formats>([&]<class FA>(std::type_identity<FA>) {
    for_each_format<outer_formats>([&]<class FB>(std::type_identity<FB>) {
      for (const auto& d : shapes)
        for (double fill : {0.0, 0.02, 0.3}) bad += merged_outer_case<FA, FB>(d, fill, rng);
    });
  });
  // Sparse vectors (and a hashed one): z = a - 2 b, dense and sparse z.
  for (int n : {0, 1, 7, 3000}) {
    for (double fill : {0.0, 0.01, 0.5}) {
      auto a = random_operand<sparse_vector>(std::array<int, 1>{n}, fill, rng);
      auto h = random_operand<hash_vector>(std::array<int, 1>{n}, fill, rng);
      auto b = random_operand<sparse_vector>(std::array<int, 1>{n}, fill, rng);
      const std::string what = "sparse vectors, n " + std::to_string(n) + " fill " + std::to_string(fill);
      std::vector<double> ref(static_cast<std::size_t>(n));
      for (std::size_t p = 0; p < ref.size(); ++p) ref[p] = a.d[p] - 2.0 * b.d[p];
      tensor<double, dense_vector> z({n});
      compute(test_executor(), z(i), a.t(i) - 2.0 * b.t(i));
      bad += count_mismatches<double>(z.values(), ref, "z = a - 2b, " + what);
      tensor<double, sparse_vector> zs = pack<sparse_vector>(coordinate_list<double, int>({n}));
      compute(test_executor(), zs(i), a.t(i) - 2.0 * b.t(i));
      bad += count_mismatches<double>(std::span<const double>(to_dense(zs)), ref, "sparse z = a - 2b, " + what);
      for (std::size_t p = 0; p < ref.size(); ++p) ref[p] = h.d[p] + b.d[p];
      compute(test_executor(), z(i), h.t(i) + b.t(i));
      bad += count_mismatches<double>(z.values(), ref, "z = hashed + b, " + what);
    }
  }
  EXPECT_EQ(bad, 0u);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 10000) << "merged outer loops were not split into chunks";
  }
}

TEST(Parallel, SparseOutputs) {
  std::mt19937_64 rng(506);
  std::size_t bad = 0;
  const long before = chunks_run();
  for (const auto& d : shapes)
    for (double fill : {0.0, 0.1, 0.6}) bad += sparse_out_case<csr>(d, fill, rng);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 1000) << "CSR outputs were not assembled in chunks";
  }
  EXPECT_GT(plans_through_slot_tables, 0u) << "no numeric_plan on the executor ran through a slot table";
  const long before_assembled = chunks_run();
  for (const auto& d : shapes)
    for (double fill : {0.0, 0.1}) {
      bad += sparse_out_case<dcsr>(d, fill, rng);
      bad += sparse_out_case<coo>(d, fill, rng);
      bad += sparse_out_case<coo_aos>(d, fill, rng);
    }
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before_assembled, 1000) << "DCSR and COO outputs were not assembled in chunks";
  }
  const long before_inserted = chunks_run();
  for (const auto& d : shapes)
    for (double fill : {0.0, 0.1, 0.6}) bad += sparse_out_case<hash_rows>(d, fill, rng);
  for (const auto& d : shapes)
    for (double fill : {0.0, 0.1, 0.6}) bad += hash_vector_case(d, fill, rng);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before_inserted, 1000) << "hashed-row and hash-vector outputs were not inserted in chunks";
  }
  const long before_streamed = chunks_run();
  for (const auto& d : shapes)
    for (double fill : {0.0, 0.1}) {
      bad += sparse_out_case<ell>(d, fill, rng);
      bad += sparse_out_case<bcsr<2>>(d, fill, rng);
    }
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before_streamed, 1000) << "ELL and BCSR outputs were not streamed in chunks";
  }
  EXPECT_EQ(bad, 0u);
}

// Order-3 outputs assembled level by level (CSF, COO), from pairs of
// order-3 formats, against the dense expansion and the serial storage.
template <class FO, class FA, class FB>
std::size_t order3_assembled_case(std::array<int, 3> d, double fill, std::mt19937_64& rng) {
  auto A = random_operand<FA>(d, fill, rng);
  auto B = random_operand<FB>(d, fill, rng);
  const std::string what = fname<FA>() + " and " + fname<FB>() + " into " + fname<FO>() + " " +
                           std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  const tensor<double, FO> empty = pack<FO>(coordinate_list<double, int>({d[0], d[1], d[2]}));
  tensor<double, FO> want = empty, got = empty;
  want(i, k, l) = A.t(i, k, l) - 2.0 * B.t(i, k, l);
  compute(test_executor(), got(i, k, l), A.t(i, k, l) - 2.0 * B.t(i, k, l));
  std::vector<double> ref(A.d.size());
  for (std::size_t p = 0; p < ref.size(); ++p) ref[p] = A.d[p] - 2.0 * B.d[p];
  std::size_t bad = count_mismatches<double>(std::span<const double>(to_dense(got)), ref, "A - 2B, " + what);
  bad += differ_stored(got, want, "A - 2B, " + what);
  want(i, k, l) = A.t(i, k, l) * B.t(i, k, l) + A.t(i, k, l);
  compute(test_executor(), got(i, k, l), A.t(i, k, l) * B.t(i, k, l) + A.t(i, k, l));
  bad += differ_stored(got, want, "A .* B + A, " + what);
  return bad;
}

TEST(Parallel, Order3AssembledOutputs) {
  std::mt19937_64 rng(509);
  std::size_t bad = 0;
  const long before = chunks_run();
  using in3 = std::tuple<csf, coo_tensor<3>, dense_sparse_sparse>;
  for_each_format<std::tuple<csf, coo_tensor<3>>>([&]<class FO>(std::type_identity<FO>) {
    for_each_format<in3>([&]<class FA>(std::type_identity<FA>) {
      for_each_format<in3>([&]<class FB>(std::type_identity<FB>) {
        for (const auto& d : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 1, 1}, std::array<int, 3>{1, 6, 5},
                              std::array<int, 3>{9, 1, 4}, std::array<int, 3>{1500, 3, 4}})
          for (double fill : {0.0, 0.1, 0.7}) bad += order3_assembled_case<FO, FA, FB>(d, fill, rng);
      });
    });
  });
  EXPECT_EQ(bad, 0u);
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 1000) << "CSF and COO outputs were not assembled in chunks";
  }
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
  // TTV and TTM
  auto c = random_operand<dense_vector>(std::array<int, 1>{dims[2]}, 1.0, rng);
  tensor<double, dense_row_major> v_want({dims[0], dims[1]}), v_got({dims[0], dims[1]});
  v_want(i, k) = B.t(i, k, l) * c.t(l);
  compute(test_executor(), v_got(i, k), B.t(i, k, l) * c.t(l));
  bad += differ<double>(v_got.values(), v_want.values(), "TTV " + fname<F>());
  auto M = random_operand<dense_row_major>(std::array<int, 2>{3, dims[2]}, 1.0, rng);
  tensor<double, dense_tensor<3>> m_want({dims[0], dims[1], 3}), m_got({dims[0], dims[1], 3});
  m_want(i, k, r) = B.t(i, k, l) * M.t(r, l);
  compute(test_executor(), m_got(i, k, r), B.t(i, k, l) * M.t(r, l));
  bad += differ<double>(m_got.values(), m_want.values(), "TTM " + fname<F>());
  return bad;
}

// Order-3 sparse outputs under a two-level dense prefix: the parents of
// the appended level are (i, k) positions, counted and filled per chunk of
// i; the second statement has a reduction (r) below the appended level.
struct dense_dense_compressed
    : tensorlev::format<tensorlev::levels<tensorlev::dense<>, tensorlev::dense<>, tensorlev::compressed<>>> {
  static constexpr std::string_view name = "dense-dense-compressed";
};
using out_ddc = tensorlev::access<tensor<double, dense_dense_compressed>, 'i', 'k', 'l'>;
template <class F>
using in_ikl = tensorlev::access<const tensor<double, F>, 'i', 'k', 'l'>;
static_assert(par_of<out_ddc, add_expr<in_ikl<dense_sparse_sparse>, in_ikl<dense_sparse_sparse>>> == par_kind::append);
// CSF + dense-CSF merges a compressed and a dense outer level: cut by
// coordinate (stmt::outer_cut_by_coord).
static_assert(par_of<out_ddc, add_expr<in_ikl<csf>, in_ikl<dense_sparse_sparse>>> == par_kind::append);
static_assert(par_of<out_ddc, mul_expr<mul_expr<in_ikl<csf>, tensorlev::access<const tensor<double, dense_row_major>,
                                                                                'i', 'r'>>,
                                       tensorlev::access<const tensor<double, dense_row_major>, 'l', 'r'>>> ==
              par_kind::append);

TEST(Parallel, Order3SparseOutputsUnderADensePrefix) {
  std::mt19937_64 rng(508);
  std::size_t bad = 0;
  const long before = chunks_run();
  for (std::array<int, 3> d : {std::array<int, 3>{0, 2, 2}, {1, 1, 1}, {2, 0, 3}, {3, 4, 0}, {3, 4, 5}, {1100, 9, 7}})
    for (double fill : {0.0, 0.1, 0.6}) {
      const std::string what = " " + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
      auto B = random_operand<csf>(d, fill, rng);
      auto G = random_operand<dense_sparse_sparse>(d, fill, rng);
      auto G2 = random_operand<dense_sparse_sparse>(d, fill, rng);
      auto C = random_operand<dense_row_major>(std::array<int, 2>{d[0], 4}, 1.0, rng);
      auto D = random_operand<dense_row_major>(std::array<int, 2>{d[2], 4}, 1.0, rng);
      const tensor<double, dense_dense_compressed> empty =
          pack<dense_dense_compressed>(coordinate_list<double, int>({d[0], d[1], d[2]}));
      tensor<double, dense_dense_compressed> want = empty, got = empty;
      want(i, k, l) = G.t(i, k, l) - G2.t(i, k, l);
      compute(test_executor(), got(i, k, l), G.t(i, k, l) - G2.t(i, k, l));
      bad += differ_stored(got, want, "dense-CSF - dense-CSF" + what);
      want(i, k, l) = B.t(i, k, l) + G.t(i, k, l);
      compute(test_executor(), got(i, k, l), B.t(i, k, l) + G.t(i, k, l));
      bad += differ_stored(got, want, "CSF + dense-CSF" + what);
      tensor<double, dense_tensor<3>> dense({d[0], d[1], d[2]});
      dense(i, k, l) = B.t(i, k, l) * C.t(i, r) * D.t(l, r);
      want(i, k, l) = B.t(i, k, l) * C.t(i, r) * D.t(l, r);
      compute(test_executor(), got(i, k, l), B.t(i, k, l) * C.t(i, r) * D.t(l, r));
      bad += differ_stored(got, want, "CSF .* (C D^T) with r reduced" + what);
      bad += differ<double>(std::span<const double>(to_dense(got)), dense.values(), "CSF .* (C D^T), dense" + what);
    }
  if (chunks_run() >= 0) {
    EXPECT_GT(chunks_run() - before, 1000) << "order-3 outputs were not assembled in chunks";
  }
  EXPECT_EQ(bad, 0u);
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
