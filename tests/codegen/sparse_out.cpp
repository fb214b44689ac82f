// Sparse outputs: sums, element-wise products, SpGEMM, SDDMM and
// third-order kernels into sparse formats, checked component by component
// against dense references, with the stored pattern checked exactly
// (union for +, intersection for *).
#include <algorithm>
#include <map>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

#if TL_PART == 0
template <class FC, class FA, class FB, int Op>
std::size_t ew_case(int m, int n, double fa, double fb, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, fa, rng);
  auto B = random_operand<FB>(std::array<int, 2>{m, n}, fb, rng);
  std::vector<double> ref(A.d.size());
  std::size_t pattern = 0;
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, n}));
  const auto pa = stored_pattern(A.t), pb = stored_pattern(B.t);
  if constexpr (Op == 0) {
    C(i, j) = A.t(i, j) + B.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x], pattern += pa[x] || pb[x];
  } else {
    C(i, j) = A.t(i, j) * B.t(i, j);
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] * B.d[x], pattern += pa[x] && pb[x];
  }
  const std::string what = fname<FA>() + (Op == 0 ? " + " : " * ") + fname<FB>() + " -> " + fname<FC>() + " " +
                           std::to_string(m) + "x" + std::to_string(n);
  std::size_t bad = mismatches(C, ref, what);
  // The result stores exactly the union (intersection) of the operands'
  // patterns, with no duplicates.
  if (!all_dense<FC> && components(C) != pattern)
    ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, expected " << pattern;
  return bad;
}

template <class FC, class FA, class FB, int Op>
std::size_t ew_sweep(std::mt19937_64& rng) {
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double fa : {0.0, 0.4, 1.0})
        for (double fb : {0.0, 0.4, 1.0}) bad += ew_case<FC, FA, FB, Op>(m, n, fa, fb, rng);
  bad += ew_case<FC, FA, FB, Op>(120, 90, 0.05, 0.08, rng);
  return bad;
}

TEST(CodegenSparseOut, Sums) {
  std::mt19937_64 rng(40);
  std::size_t bad = 0;
  bad += ew_sweep<coo, coo, coo, 0>(rng);
  bad += ew_sweep<csr, csr, csr, 0>(rng);
  bad += ew_sweep<dense_row_major, csr, coo, 0>(rng);
  bad += ew_sweep<dcsr, csr, dcsr, 0>(rng);
  bad += ew_sweep<csr, hash_rows, coo_aos, 0>(rng);
  bad += ew_sweep<hash_rows, csr, dense_row_major, 0>(rng);
  bad += ew_sweep<csc, csc, dense_col_major, 0>(rng);
  // Rows that need not be sorted, as the output and as operands.
  bad += ew_sweep<csr_unsorted, csr_unsorted, csr, 0>(rng);
  bad += ew_sweep<csr_unsorted, coo, csr_unsorted, 0>(rng);
  // Derived level maps (ELL's slot, DIA's diagonal, BCSR's blocks) loop
  // over private variables above the rows: a CSR result cannot be appended
  // row by row then, and must be assembled another way.
  bad += ew_sweep<csr, ell, csr, 0>(rng);
  bad += ew_sweep<csr, dia, coo, 0>(rng);
  bad += ew_sweep<dcsr, ell, dia, 0>(rng);
  bad += ew_sweep<dense_row_major, dia, bcsr<2>, 0>(rng);
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, ElementwiseProducts) {
  std::mt19937_64 rng(41);
  std::size_t bad = 0;
  bad += ew_sweep<csr, csr, dense_row_major, 1>(rng);
  bad += ew_sweep<csr, csr, coo, 1>(rng);
  bad += ew_sweep<coo, coo, coo, 1>(rng);
  bad += ew_sweep<dcsr, dcsr, hash_rows, 1>(rng);
  bad += ew_sweep<csr, bcsr<2>, dense_row_major, 1>(rng);
  bad += ew_sweep<csr, csb<2>, dense_row_major, 1>(rng);
  bad += ew_sweep<hash_rows, ell, csr, 1>(rng);
  bad += ew_sweep<csr_unsorted, csr_unsorted, dense_row_major, 1>(rng);
  bad += ew_sweep<csr_unsorted, csr, csr_unsorted, 1>(rng);
  EXPECT_EQ(bad, 0u);
}

// compute_numeric: after C = A B, A's and B's values change (patterns
// kept) and compute_numeric writes the new product's values into C's
// pattern, in place: every output format a workspace assembles, operands
// in several formats, zero and one extents, one thread and chunks; with
// `thin`, the operands lose about half their entries first, so that C's
// pattern is larger than the product's (the entries no product reaches
// hold zero); a product with an entry outside the pattern is an error
// naming a row; an operand reading C's values is an error.
template <class FC, class FA, class FB>
std::size_t numeric_case(int m, int n, int p, double f, bool chunked, std::mt19937_64& rng, bool thin = false) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, f, rng);
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, p}));
  C(i, j) = A.t(i, k) * B.t(k, j);
  const auto pattern = stored_pattern(C);
  const double* values = C.values().data();
  if (thin) {
    // Each nonzero kept with probability 1/2: the patterns shrink.
    auto drop = [&](auto& op, int rows, int cols) {
      using F = typename std::remove_cvref_t<decltype(op.t)>::format_type;
      coordinate_list<double, int> l({rows, cols});
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          double& x = op.d[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)];
          if (x != 0.0 && rng() % 2 == 0)
            l.push_back(std::array<int, 2>{r, c}, x);
          else
            x = 0.0;
        }
      op.t = pack<F>(l);
    };
    drop(A, m, n);
    drop(B, n, p);
  }
  // New values, same patterns (the dense references follow).
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  auto revalue = [&](auto& op) {
    for (double& v : op.t.values()) v = u(rng);
    op.d = to_dense(op.t);
  };
  revalue(A);
  revalue(B);
  const auto reference = [&] {
    std::vector<double> r(static_cast<std::size_t>(m) * p, 0.0);
    for (int x = 0; x < m; ++x)
      for (int q = 0; q < n; ++q)
        for (int c = 0; c < p; ++c) r[x * p + c] += A.d[x * n + q] * B.d[q * p + c];
    return r;
  };
  const std::vector<double> ref = reference();
  if (chunked)
    compute_numeric(chunked_serial_executor{}, C(i, j), A.t(i, k) * B.t(k, j));
  else
    compute_numeric(C(i, j), A.t(i, k) * B.t(k, j));
  const std::string what = "compute_numeric " + fname<FA>() + " x " + fname<FB>() + " -> " + fname<FC>() + " " +
                           std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(p) +
                           (chunked ? " (chunked)" : "") + (thin ? " (thinned operands)" : "");
  std::size_t bad = mismatches(C, ref, what);
  if (stored_pattern(C) != pattern || C.values().data() != values)
    ++bad, ADD_FAILURE() << what << ": the pattern or the values array changed";
  // The same through a numeric_plan (every output format compute_numeric
  // takes): checked, then, with new values over the same patterns, trusted.
  numeric_plan plan(C(i, j), A.t(i, k) * B.t(k, j));
  const auto run_plan = [&] {
    if (chunked)
      plan.run(chunked_serial_executor{});
    else
      plan.run();
  };
  run_plan();
  bad += mismatches(C, ref, what + ", numeric_plan checked");
  revalue(A);
  revalue(B);
  run_plan();
  bad += mismatches(C, reference(), what + ", numeric_plan trusted");
  if (!plan.trusted()) ++bad, ADD_FAILURE() << what << ": numeric_plan's second run was not trusted";
  // The third run through the slot table the second recorded (where its
  // rule kept one), with new values again.
  revalue(A);
  revalue(B);
  run_plan();
  bad += mismatches(C, reference(), what + ", numeric_plan trusted again");
  if (!plan.trusted()) ++bad, ADD_FAILURE() << what << ": numeric_plan's third run was not trusted";
  if (stored_pattern(C) != pattern || C.values().data() != values)
    ++bad, ADD_FAILURE() << what << ": numeric_plan changed the pattern or the values array";
  return bad;
}

// Runs f, which must throw tensorlev::error with `message` in its text.
template <class F>
void expect_error(F&& f, const std::string& message, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << " was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(CodegenSparseOut, NumericRecomputation) {
  std::mt19937_64 rng(17);
  std::size_t bad = 0;
  for (const bool chunked : {false, true})
    for (int m = 0; m <= 3; ++m)
      for (int n = 0; n <= 2; ++n)
        for (int p = 0; p <= 3; ++p)
          for (double f : {0.0, 0.5, 1.0}) {
            bad += numeric_case<csr, csr, csr>(m, n, p, f, chunked, rng);
            bad += numeric_case<csr_unsorted, dcsr, csr>(m, n, p, f, chunked, rng);
            bad += numeric_case<csc, csc, csc>(m, n, p, f, chunked, rng);
          }
  for (const bool chunked : {false, true}) {
    bad += numeric_case<csr, csr, csr>(150, 90, 120, 0.04, chunked, rng);
    bad += numeric_case<csr_unsorted, csr, coo>(150, 90, 120, 0.04, chunked, rng);
    bad += numeric_case<csc, csc, csc>(150, 90, 120, 0.04, chunked, rng);
  }
  // Patterns larger than the product's: every output kind, DCSR's rows
  // (loop 0 over stored rows: rows that empty are never reached).
  for (const bool chunked : {false, true})
    for (int m = 0; m <= 3; ++m)
      for (int n : {1, 2})
        for (int p : {1, 3})
          for (double f : {0.5, 1.0}) {
            bad += numeric_case<csr, csr, csr>(m, n, p, f, chunked, rng, true);
            bad += numeric_case<csr_unsorted, dcsr, csr>(m, n, p, f, chunked, rng, true);
            bad += numeric_case<csc, csc, csc>(m, n, p, f, chunked, rng, true);
          }
  for (const bool chunked : {false, true}) {
    bad += numeric_case<csr, csr, csr>(150, 90, 120, 0.04, chunked, rng, true);
    bad += numeric_case<csr, dcsr, csr>(150, 90, 120, 0.01, chunked, rng, true);
    bad += numeric_case<csr_unsorted, csr, coo>(150, 90, 120, 0.04, chunked, rng, true);
    bad += numeric_case<csc, csc, csc>(150, 90, 120, 0.04, chunked, rng, true);
  }
  // A row-wise sum through the workspace (precompute(j)) recomputed.
  for (const bool chunked : {false, true}) {
    auto A = random_operand<csr>(std::array<int, 2>{30, 20}, 0.2, rng);
    auto B = random_operand<dcsr>(std::array<int, 2>{30, 20}, 0.2, rng);
    tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({30, 20}));
    compute(C(i, j), A.t(i, j) + B.t(i, j), precompute(j));
    for (double& x : A.t.values()) x = 2.0 * x - 1.0;
    for (double& x : B.t.values()) x *= 0.5;
    A.d = to_dense(A.t), B.d = to_dense(B.t);
    std::vector<double> ref(A.d.size());
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x];
    if (chunked)
      compute_numeric(chunked_serial_executor{}, C(i, j), A.t(i, j) + B.t(i, j), precompute(j));
    else
      compute_numeric(tensorlev::serial, C(i, j), A.t(i, j) + B.t(i, j), precompute(j));
    bad += mismatches(C, ref, std::string("compute_numeric C = A + B, precompute(j)") + (chunked ? " (chunked)" : ""));
  }
  // A sparse vector result (one row): w = v A.
  {
    auto v = random_operand<sparse_vector>(std::array<int, 1>{40}, 0.3, rng);
    auto A = random_operand<csr>(std::array<int, 2>{40, 30}, 0.1, rng);
    auto w = pack<sparse_vector>(coordinate_list<double, int>({30}));
    w(j) = v.t(i) * A.t(i, j);
    for (double& x : A.t.values()) x *= -3.0;
    A.d = to_dense(A.t);
    std::vector<double> ref(30, 0.0);
    for (int r = 0; r < 40; ++r)
      for (int c = 0; c < 30; ++c) ref[c] += v.d[r] * A.d[r * 30 + c];
    compute_numeric(w(j), v.t(i) * A.t(i, j));
    bad += mismatches(w, ref, "compute_numeric w = v A");
    // Through a numeric_plan: checked, then trusted with new values.
    numeric_plan plan(w(j), v.t(i) * A.t(i, j));
    plan.run();
    bad += mismatches(w, ref, "numeric_plan w = v A, checked");
    for (double& x : A.t.values()) x = 0.5 - x;
    A.d = to_dense(A.t);
    std::vector<double> ref2(30, 0.0);
    for (int r = 0; r < 40; ++r)
      for (int c = 0; c < 30; ++c) ref2[c] += v.d[r] * A.d[r * 30 + c];
    plan.run();
    EXPECT_TRUE(plan.trusted());
    bad += mismatches(w, ref2, "numeric_plan w = v A, trusted");
    // A product outside the vector's pattern: v gains every entry, A a
    // full row 0 (so some product reaches a column w does not store, unless
    // w stores all 30).
    if (w.stored() < 30) {
      coordinate_list<double, int> vl({40}), al({40, 30});
      for (int r = 0; r < 40; ++r) vl.push_back(std::array<int, 1>{r}, 1.0);
      for (int c = 0; c < 30; ++c) al.push_back(std::array<int, 2>{0, c}, 1.0);
      const auto v2 = pack<sparse_vector>(vl);
      const auto A2 = pack<csr>(al);
      expect_error([&] { compute_numeric(w(j), v2(i) * A2(i, j)); }, "outside the output's pattern in 1 row(s)",
                   "a vector product outside the pattern");
    } else {
      ADD_FAILURE() << "w stores every column: the case tests nothing";
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, NumericRecomputationChecksThePattern) {
  coordinate_list<double, int> al({4, 4}), bl({4, 4});
  for (int r = 0; r < 4; ++r) al.push_back(std::array<int, 2>{r, r}, 1.0 + r);
  bl.push_back(std::array<int, 2>{0, 1}, 2.0);
  bl.push_back(std::array<int, 2>{2, 3}, 3.0);
  const auto A = pack<csr>(al);
  const auto B = pack<csr>(bl);
  for (const bool chunked : {false, true}) {
    auto run = [&](auto& C, const auto& X) {
      if (chunked)
        compute_numeric(chunked_serial_executor{}, C(i, j), A(i, k) * X(k, j));
      else
        compute_numeric(C(i, j), A(i, k) * X(k, j));
    };
    tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({4, 4}));
    C(i, j) = A(i, k) * B(k, j);  // entries (0,1) and (2,3)
    auto more = bl;
    more.push_back(std::array<int, 2>{3, 0}, 1.0);  // row 3 gains an entry
    const auto Bmore = pack<csr>(more);
    expect_error([&] { run(C, Bmore); }, "outside the output's pattern in 1 row(s), the first at position 3",
                 "a product with an entry outside the pattern");
    // A pattern larger than the product's: the entry no product reaches
    // holds zero, the pattern stays.
    C(i, j) = A(i, k) * B(k, j);
    coordinate_list<double, int> fewer({4, 4});
    fewer.push_back(std::array<int, 2>{2, 3}, 3.0);  // row 0 loses its entry
    C.values()[0] = 5.0;                               // (0,1): an old value, to be overwritten
    run(C, pack<csr>(fewer));
    EXPECT_EQ(C.stored(), 2u);
    EXPECT_EQ(C.values()[0], 0.0) << "(0,1), which no product reaches";
    EXPECT_EQ(C.values()[1], 9.0) << "(2,3)";
    // Same number of entries in a row, another column: (0,1) -> (0,2).
    C(i, j) = A(i, k) * B(k, j);
    coordinate_list<double, int> moved({4, 4});
    moved.push_back(std::array<int, 2>{0, 2}, 2.0);
    moved.push_back(std::array<int, 2>{2, 3}, 3.0);
    EXPECT_THROW(run(C, pack<csr>(moved)), error);
    // The same with position marks (unsorted rows): a product outside the
    // pattern takes a slot past the pattern's.
    {
      tensor<double, csr_unsorted> U = pack<csr_unsorted>(coordinate_list<double, int>({4, 4}));
      U(i, j) = A(i, k) * B(k, j);
      expect_error([&] { run(U, Bmore); }, "outside the output's pattern in 1 row(s), the first at position 3",
                   "csr_unsorted: a product with an entry outside the pattern");
      U(i, j) = A(i, k) * B(k, j);
      EXPECT_THROW(run(U, pack<csr>(moved)), error);
      U(i, j) = A(i, k) * B(k, j);
      run(U, pack<csr>(fewer));  // a larger pattern: (0,1) holds zero
      EXPECT_EQ(to_dense(U), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0}));
      EXPECT_EQ(U.stored(), 2u);
    }
    // Rows the product no longer reaches: loop 0 walks A's stored rows
    // (DCSR), and row 1 of A empties: its pattern entry holds zero.
    {
      coordinate_list<double, int> dl({4, 4}), d2({4, 4});
      dl.push_back(std::array<int, 2>{0, 0}, 1.0);
      dl.push_back(std::array<int, 2>{1, 0}, 1.0);
      d2.push_back(std::array<int, 2>{0, 0}, 3.0);
      const auto D = pack<dcsr>(dl);
      const auto D2 = pack<dcsr>(d2);
      tensor<double, csr> E = pack<csr>(coordinate_list<double, int>({4, 4}));
      E(i, j) = D(i, k) * B(k, j);  // (0,1) and (1,1)
      if (chunked)
        compute_numeric(chunked_serial_executor{}, E(i, j), D2(i, k) * B(k, j));
      else
        compute_numeric(E(i, j), D2(i, k) * B(k, j));
      EXPECT_EQ(E.stored(), 2u);
      EXPECT_EQ(E.values()[0], 6.0) << "(0,1)";
      EXPECT_EQ(E.values()[1], 0.0) << "(1,1), in a row the product no longer reaches";
    }
    // A corrupt pattern: row bounds that start below 0 or decrease (row 0
    // claiming three of two coordinates, so row 1's bounds decrease) are
    // an error naming the entry, not a row read or written outside the
    // arrays.
    {
      tensor<double, csr> G = pack<csr>(coordinate_list<double, int>({4, 4}));
      G(i, j) = A(i, k) * B(k, j);  // row bounds {0, 1, 1, 2, 2}, columns {1, 3}
      using L1 = std::remove_cvref_t<decltype(G.level<1>())>;
      const std::vector<int> cols(G.level<1>().crd().begin(), G.level<1>().crd().end());
      const std::pair<std::vector<int>, std::string> corrupt[] = {
          {{0, 3, 1, 2, 2}, "the position array decreases at entry 2 (3 then 1)"},
          {{-1, 1, 1, 2, 2}, "the position array starts at -1, not 0"},
          {{0, 1, 1, 2, 2}, ""}};  // the valid bounds, as a check of the construction
      for (const auto& [pos, message] : corrupt) {
        auto lv = G.levels();
        std::get<1>(lv) = L1(4, typename L1::pos_array(pos.begin(), pos.end()),
                             typename L1::crd_array(cols.begin(), cols.end()));
        tensor<double, csr> bad(G.dims(), lv, std::vector<double>{7.0, 7.0});
        if (message.empty()) {
          run(bad, B);
          EXPECT_EQ(to_dense(bad), to_dense(G));
        } else {
          expect_error([&] { run(bad, B); }, message, "a corrupt pattern");
        }
      }
    }
    // Still usable afterwards: the right operands give the right values.
    C(i, j) = A(i, k) * B(k, j);
    run(C, B);
    const std::vector<double> want = to_dense(C);
    EXPECT_EQ(want[0 * 4 + 1], 2.0);
    EXPECT_EQ(want[2 * 4 + 3], 9.0);
    // An operand reading C's values.
    EXPECT_THROW(run(C, view(C)), error);
  }
}

#endif

#if TL_PART == 1
template <class FC, class FA, class FB>
std::size_t spgemm_case(int m, int n, int p, double f, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, f, rng);
  std::vector<double> ref(static_cast<std::size_t>(m * p), 0.0);
  std::vector<char> pat(ref.size(), 0);
  const auto pa = stored_pattern(A.t), pb = stored_pattern(B.t);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c) {
        ref[r * p + c] += A.d[r * n + q] * B.d[q * p + c];
        if (pa[r * n + q] && pb[q * p + c]) pat[r * p + c] = 1;
      }
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, p}));
  C(i, j) = A.t(i, k) * B.t(k, j);
  const std::string what = "SpGEMM " + fname<FA>() + " x " + fname<FB>() + " -> " + fname<FC>();
  std::size_t bad = mismatches(C, ref, what);
  std::size_t pattern = 0;
  for (char c : pat) pattern += c;
  if constexpr (std::is_same_v<FC, dense_row_major>) pattern = ref.size();  // a dense output stores every entry
  if (components(C) != pattern) ++bad, ADD_FAILURE() << what << ": " << components(C) << " stored, expected " << pattern;
  try {
    validate(C);  // ordered, unique rows where the format promises them
  } catch (const tensorlev::error& e) {
    ++bad, ADD_FAILURE() << what << ": " << e.what();
  }
  return bad;
}

// Banded operands (bandwidth w) with a few entries far off the band: the
// product's rows lie within a narrow span (ordered by a scan of the row's
// marks) except those an outlier widens (ordered by a sort), in one
// product; rows of 0, 1 and 2 entries too.
std::size_t spgemm_banded(int m, int w, int outliers, std::mt19937_64& rng) {
  coordinate_list<double, int> a({m, m});
  std::vector<double> d(static_cast<std::size_t>(m) * static_cast<std::size_t>(m), 0.0);
  std::uniform_int_distribution<int> val(-3, 3), col(0, m > 0 ? m - 1 : 0);
  auto put = [&](int r, int c) {
    const double v = val(rng);
    a.push_back({r, c}, v);
    d[static_cast<std::size_t>(r) * static_cast<std::size_t>(m) + static_cast<std::size_t>(c)] += v;
  };
  for (int r = 0; r < m; ++r)
    for (int c = std::max(0, r - w); c <= std::min(m - 1, r + w); ++c)
      if ((r + 2 * c) % 5 != 0) put(r, c);  // holes in the band
  for (int q = 0; q < outliers && m > 0; ++q) put(col(rng), col(rng));
  const auto A = pack<csr>(a);
  std::vector<double> ref(d.size(), 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < m; ++q)
      for (int c = 0; c < m; ++c)
        ref[static_cast<std::size_t>(r * m + c)] += d[static_cast<std::size_t>(r * m + q)] * d[static_cast<std::size_t>(q * m + c)];
  const std::string what = "banded SpGEMM " + std::to_string(m) + " w=" + std::to_string(w) + " outliers " +
                           std::to_string(outliers);
  std::size_t bad = 0;
  for (const bool chunked : {false, true}) {
    tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, m}));
    if (chunked)
      compute(chunked_serial_executor{}, C(i, j), A(i, k) * A(k, j));
    else
      C(i, j) = A(i, k) * A(k, j);
    bad += mismatches(C, ref, what + (chunked ? " (chunked)" : ""));
    try {
      validate(C);
    } catch (const tensorlev::error& e) {
      ++bad, ADD_FAILURE() << what << ": " << e.what();
    }
  }
  return bad;
}

TEST(CodegenSparseOut, SpGEMM) {
  std::mt19937_64 rng(42);
  std::size_t bad = 0;
  for (int m = 0; m <= 3; ++m)
    for (int n = 0; n <= 3; ++n)
      for (int p = 0; p <= 3; ++p)
        for (double f : {0.0, 0.4, 1.0}) {
          bad += spgemm_case<csr, csr, csr>(m, n, p, f, rng);
          bad += spgemm_case<coo, coo, csr>(m, n, p, f, rng);
          bad += spgemm_case<dcsr, dcsr, dcsr>(m, n, p, f, rng);
          bad += spgemm_case<csr_unsorted, csr, csr_unsorted>(m, n, p, f, rng);
        }
  bad += spgemm_case<csr, csr, csr>(80, 70, 90, 0.05, rng);
  bad += spgemm_case<csr_unsorted, csr_unsorted, csr>(80, 70, 90, 0.05, rng);
  // B's rows averaging more than 12 entries (no prefetch) and fewer (A's
  // columns prefetch B's rows 8 and 16 positions ahead, across A's rows,
  // up to the end of A's coordinates), into every kind of output; A with
  // 0 and 1 rows, and an inner extent of 1.
  for (double f : {0.02, 0.1, 0.3})
    for (int m : {0, 1, 17, 40})
      for (int n : {1, 60}) {
        bad += spgemm_case<csr, csr, csr>(m, n, 50, f, rng);
        bad += spgemm_case<csr_unsorted, csr, csr_unsorted>(m, n, 50, f, rng);
        bad += spgemm_case<dcsr, csr, csr>(m, n, 50, f, rng);
        bad += spgemm_case<coo, csr, csr>(m, n, 50, f, rng);
        bad += spgemm_case<hash_rows, csr, csr>(m, n, 50, f, rng);
        bad += spgemm_case<dense_row_major, csr, csr>(m, n, 50, f, rng);
      }
  EXPECT_EQ(bad, 0u);
}

// Gustavson's loop over A's columns prefetches B's rows (kernel.hpp,
// prefetch_ahead); SpMV's x has no children to prefetch, nor has a dense B.
TEST(CodegenSparseOut, SpGEMMPrefetchPlan) {
  using A_t = const tensor<double, csr>&;
  using gemm = cg::kernel<decltype(std::declval<tensor<double, csr>&>()(i, k)),
                          decltype(std::declval<A_t>()(i, j) * std::declval<A_t>()(j, k)), false, 0>;
  static_assert(gemm::prefetches<1, 0, 0>() && !gemm::prefetches<0, 0, 0>() && !gemm::prefetches<2, 0, 0>());
  using spmv = cg::kernel<decltype(std::declval<tensor<double, dense_vector>&>()(i)),
                          decltype(std::declval<A_t>()(i, j) * std::declval<const tensor<double, dense_vector>&>()(j)),
                          false, 0>;
  static_assert(!spmv::prefetches<1, 0, 0>());
  using spmm = cg::kernel<decltype(std::declval<tensor<double, dense_row_major>&>()(i, k)),
                          decltype(std::declval<A_t>()(i, j) * std::declval<const tensor<double, dense_row_major>&>()(j, k)),
                          false, 0>;
  static_assert(!spmm::prefetches<1, 0, 0>());
  SUCCEED();
}

// Rows of 24, 72 and 144 coordinates spread over 250 to 120000 columns:
// put in order by a scan of the marks, a bitmap (72 and 144 over 6000
// columns), a radix sort of two byte passes (72 and 144 over 40000) or
// three (144 over 120000), or std::sort (24 anywhere, 72 over 120000). Reference: the triplets multiplied row by row into
// ordered maps, independently of the packed arrays.
TEST(CodegenSparseOut, SpGEMMRowsOrderedByRadixSort) {
  std::mt19937_64 rng(44);
  std::size_t bad = 0;
  for (const int p : {250, 6000, 40000, 120000})
    for (const int per_row : {4, 12, 24}) {
      const int m = 40, n = 50;
      coordinate_list<double, int> a({m, n}), b({n, p});
      std::uniform_int_distribution<int> val(-4, 4), ca(0, n - 1), cb(0, p - 1);
      for (int r = 0; r < m; ++r)
        for (int q = 0; q < 6; ++q) a.push_back({r, ca(rng)}, val(rng));
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < per_row; ++q) b.push_back({r, cb(rng)}, val(rng));
      std::vector<std::map<int, double>> ra(static_cast<std::size_t>(m)), rb(static_cast<std::size_t>(n)),
          ref(static_cast<std::size_t>(m));
      for (std::size_t e = 0; e < a.size(); ++e) ra[static_cast<std::size_t>(a.coords(e)[0])][a.coords(e)[1]] += a.value(e);
      for (std::size_t e = 0; e < b.size(); ++e) rb[static_cast<std::size_t>(b.coords(e)[0])][b.coords(e)[1]] += b.value(e);
      for (int r = 0; r < m; ++r)
        for (const auto& [k, av] : ra[static_cast<std::size_t>(r)])
          for (const auto& [c, bv] : rb[static_cast<std::size_t>(k)]) ref[static_cast<std::size_t>(r)][c] += av * bv;
      const auto A = pack<csr>(a);
      const auto B = pack<csr>(b);
      for (const bool chunked : {false, true}) {
        tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, p}));
        if (chunked)
          compute(chunked_serial_executor{}, C(i, j), A(i, k) * B(k, j));
        else
          C(i, j) = A(i, k) * B(k, j);
        const std::string what = "SpGEMM into " + std::to_string(p) + " columns, " + std::to_string(per_row) +
                                 " per row of B" + (chunked ? " (chunked)" : "");
        try {
          validate(C);
        } catch (const tensorlev::error& e) {
          ++bad, ADD_FAILURE() << what << ": " << e.what();
        }
        const auto& pos = C.level<1>().pos();
        const auto& crd = C.level<1>().crd();
        for (int r = 0; r < m; ++r) {
          auto it = ref[static_cast<std::size_t>(r)].begin();
          const auto end = ref[static_cast<std::size_t>(r)].end();
          for (int q = pos[static_cast<std::size_t>(r)]; q < pos[static_cast<std::size_t>(r) + 1]; ++q, ++it)
            if (it == end || it->first != crd[static_cast<std::size_t>(q)] ||
                it->second != C.values()[static_cast<std::size_t>(q)]) {
              ++bad, ADD_FAILURE() << what << ": row " << r << " differs at position " << q;
              break;
            }
          if (pos[static_cast<std::size_t>(r) + 1] - pos[static_cast<std::size_t>(r)] !=
              static_cast<int>(ref[static_cast<std::size_t>(r)].size()))
            ++bad, ADD_FAILURE() << what << ": row " << r << " holds " << pos[static_cast<std::size_t>(r) + 1] - pos[static_cast<std::size_t>(r)]
                                 << " entries, expected " << ref[static_cast<std::size_t>(r)].size();
        }
      }
    }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenSparseOut, SpGEMMRowsOrderedByScanOrSort) {
  std::mt19937_64 rng(43);
  std::size_t bad = 0;
  for (int m : {0, 1, 2, 7, 40, 150})
    for (int w : {0, 1, 3, 12})
      for (int outliers : {0, 3, 40}) bad += spgemm_banded(m, w, outliers, rng);
  EXPECT_EQ(bad, 0u);
}

// Into CSR with unsorted rows (csr_unsorted): SpGEMM keeps each row in
// the order its columns were first reached, a sum appends; the values,
// the stored pattern and the level's own checks (unique columns per row)
// hold, and the unsorted rows read back as operands of the next statement.
TEST(CodegenSparseOut, IntoUnsortedRows) {
  std::mt19937_64 rng(11);
  std::size_t bad = 0;
  for (const int m : {0, 1, 5, 90})
    for (const double f : {0.0, 0.3, 1.0}) {
      const int n = m == 0 ? 3 : m + 2, p = m == 0 ? 2 : m + 1;
      auto A = random_operand<csr>(std::array<int, 2>{m, n}, f, rng);
      auto B = random_operand<csr>(std::array<int, 2>{n, p}, f, rng);
      auto D = random_operand<csr>(std::array<int, 2>{m, p}, f, rng);
      std::vector<double> ref(static_cast<std::size_t>(m) * p, 0.0);
      for (int r = 0; r < m; ++r)
        for (int q = 0; q < n; ++q)
          for (int c = 0; c < p; ++c) ref[static_cast<std::size_t>(r) * p + c] += A.d[r * n + q] * B.d[q * p + c];
      const std::string what = "SpGEMM into unsorted rows " + std::to_string(m) + "x" + std::to_string(p);
      tensor<double, csr_unsorted> C = pack<csr_unsorted>(coordinate_list<double, int>({m, p}));
      C(i, j) = A.t(i, k) * B.t(k, j);
      bad += mismatches(C, ref, what);
      validate(C);  // throws on a repeated column in a row
      // Each row holds its columns in the order they were first reached:
      // A's row in order, each of its columns' rows of B in order (unsorted).
      for (int r = 0; r < m; ++r) {
        std::vector<int> first;
        std::vector<char> seen(static_cast<std::size_t>(p), 0);
        const auto& ap = A.t.level<1>().pos();
        const auto& ac = A.t.level<1>().crd();
        for (int a = ap[r]; a < ap[r + 1]; ++a)
          for (int b = B.t.level<1>().pos()[ac[a]]; b < B.t.level<1>().pos()[ac[a] + 1]; ++b) {
            const int c = B.t.level<1>().crd()[b];
            if (!seen[c]) seen[c] = 1, first.push_back(c);
          }
        const auto& cp = C.level<1>().pos();
        const std::vector<int> got(C.level<1>().crd().begin() + cp[r], C.level<1>().crd().begin() + cp[r + 1]);
        if (got != first) ++bad, ADD_FAILURE() << what << ": row " << r << " is not in first-reached order";
      }
      // The same product on the chunking executor (rows in parallel chunks).
      tensor<double, csr_unsorted> Cp = pack<csr_unsorted>(coordinate_list<double, int>({m, p}));
      compute(chunked_serial_executor{}, Cp(i, j), A.t(i, k) * B.t(k, j));
      bad += mismatches(Cp, ref, what + " (chunked)");
      // The unsorted result as an operand: E = C + D (sorted CSR), y = C x.
      std::vector<double> eref(ref.size());
      for (std::size_t x = 0; x < ref.size(); ++x) eref[x] = ref[x] + D.d[x];
      tensor<double, csr> E = pack<csr>(coordinate_list<double, int>({m, p}));
      E(i, j) = C(i, j) + D.t(i, j);
      bad += mismatches(E, eref, what + ", then + D");
      tensor<double, csr_unsorted> S = pack<csr_unsorted>(coordinate_list<double, int>({m, p}));
      S(i, j) = A.t(i, k) * B.t(k, j) + D.t(i, j);
      bad += mismatches(S, eref, what + ", + D in one statement");
      // += on unsorted rows: old + product (the product into a temporary
      // first), and old + a sum with no reduction; a difference of negated
      // unsorted operands.
      std::vector<double> twice(ref.size()), diff(ref.size());
      for (std::size_t x = 0; x < ref.size(); ++x) twice[x] = 2 * ref[x], diff[x] = -2 * ref[x] - eref[x];
      S(i, j) = A.t(i, k) * B.t(k, j);
      S(i, j) += A.t(i, k) * B.t(k, j);
      bad += mismatches(S, twice, what + ", += product");
      validate(S);
      S(i, j) = A.t(i, k) * B.t(k, j);
      S(i, j) += D.t(i, j);
      bad += mismatches(S, eref, what + ", += D");
      validate(S);
      tensor<double, csr_unsorted> U = pack<csr_unsorted>(coordinate_list<double, int>({m, p}));
      U(i, j) = -C(i, j) - S(i, j) - Cp(i, j);
      bad += mismatches(U, diff, what + ", -C - S - Cp");
      validate(U);
    }
  EXPECT_EQ(bad, 0u);
}

// Runs `run` (a statement into C) once, then three more times, each
// result checked against ref and required to sit in the arrays the first
// left in C. Returns the mismatches and rounds that took new arrays.
template <class T, class Run>
std::size_t recomputed_in_place(T& C, const Run& run, const std::vector<double>& ref, const std::string& what) {
  std::size_t bad = 0;
  run();
  const double* values = C.values().data();
  const int* columns = C.template level<1>().crd().data();
  for (int round = 0; round < 3; ++round) {
    run();
    bad += mismatches(C, ref, what);
    validate(C);
    if (C.stored() > 0 && (C.values().data() != values || C.template level<1>().crd().data() != columns))
      ++bad, ADD_FAILURE() << what << ": round " << round << " did not reuse the output's arrays";
  }
  return bad;
}

// A product recomputed into the same tensor assembles into the arrays it
// already holds (no fresh pages: release_arrays), unless an operand reads
// them (a view of the output: the loops would overwrite what they read);
// an index type's overflow leaves the output empty, never half-written.
TEST(CodegenSparseOut, RecomputedIntoItsOwnArrays) {
  std::mt19937_64 rng(13);
  std::size_t bad = 0;
  for (const int m : {12, 40, 300}) {
    auto A = random_operand<csr>(std::array<int, 2>{m, m}, m < 20 ? 0.3 : 0.05, rng);
    auto B = random_operand<csr>(std::array<int, 2>{m, m}, m < 20 ? 0.3 : 0.05, rng);
    std::vector<double> ref(static_cast<std::size_t>(m) * m, 0.0), ref2(ref.size(), 0.0);
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < m; ++q)
        for (int c = 0; c < m; ++c) ref[r * m + c] += A.d[r * m + q] * B.d[q * m + c];
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < m; ++q)
        for (int c = 0; c < m; ++c) ref2[r * m + c] += ref[r * m + q] * B.d[q * m + c];
    const std::string what = "recomputed " + std::to_string(m) + "x" + std::to_string(m);
    for (const bool chunked : {false, true}) {
      tensor<double, csr_unsorted> C = pack<csr_unsorted>(coordinate_list<double, int>({m, m}));
      auto product = [&] {
        if (chunked)
          compute(chunked_serial_executor{}, C(i, j), A.t(i, k) * B.t(k, j));
        else
          C(i, j) = A.t(i, k) * B.t(k, j);
      };
      bad += recomputed_in_place(C, product, ref, what + (chunked ? " (chunked)" : ""));
      // C through a view as an operand of its own recomputation: C = C B.
      const auto Cv = view(C);
      if (chunked)
        compute(chunked_serial_executor{}, C(i, j), Cv(i, k) * B.t(k, j));
      else
        C(i, j) = Cv(i, k) * B.t(k, j);
      bad += mismatches(C, ref2, what + ", C = view(C) B" + (chunked ? " (chunked)" : ""));
      // A view of C in a statement of two kernels (terms with different
      // reductions): the first would replace what the second reads.
      const auto Cw = view(C);
      EXPECT_THROW(C(i, j) = A.t(i, k) * B.t(k, j) + Cw(i, j), error);
    }
  }
  // Past 16-bit positions: the run throws, and C, whose arrays it had
  // taken, is left empty and valid.
  using short_pos = tensorlev::owning<std::int16_t>;
  const int m = 200;
  coordinate_list<double, int> dl({m, m}), pl({m, 1}), ql({1, m});
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < 150; ++c) dl.push_back(std::array<int, 2>{r, c}, 1.0);
    pl.push_back(std::array<int, 2>{r, 0}, 1.0);
    ql.push_back(std::array<int, 2>{0, r}, 1.0);
  }
  const auto D = pack<csr>(dl);
  const auto P = pack<csr>(pl);
  const auto Q = pack<csr>(ql);
  for (const bool chunked : {false, true}) {
    auto C16 = pack<csr_unsorted, short_pos>(coordinate_list<double, int>({m, m}));
    C16(i, j) = D(i, k) * D(k, j);  // 200 x 150 entries: fits
    EXPECT_EQ(C16.stored(), 30000u);
    EXPECT_THROW(chunked ? compute(chunked_serial_executor{}, C16(i, j), P(i, k) * Q(k, j))
                         : (void)(C16(i, j) = P(i, k) * Q(k, j)),
                 overflow_error);  // 40000 entries
    EXPECT_EQ(C16.stored(), 0u);
    validate(C16);
    C16(i, j) = D(i, k) * D(k, j);
    EXPECT_EQ(C16.stored(), 30000u);
  }
  EXPECT_EQ(bad, 0u);
}

// A sum recomputed into the same tensor (the append output: CSR, no
// reduction) assembles into the arrays it already holds, serially and in
// chunks, unless an operand reads them; an index type's overflow leaves the
// output empty and valid.
TEST(CodegenSparseOut, SumRecomputedIntoItsOwnArrays) {
  std::mt19937_64 rng(17);
  std::size_t bad = 0;
  for (const int m : {0, 1, 12, 40, 300}) {
    auto A = random_operand<csr>(std::array<int, 2>{m, m}, m < 20 ? 0.3 : 0.05, rng);
    auto B = random_operand<csr>(std::array<int, 2>{m, m}, m < 20 ? 0.3 : 0.05, rng);
    std::vector<double> ref(static_cast<std::size_t>(m) * m), ref2(ref.size());
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] - B.d[x], ref2[x] = ref[x] + B.d[x];
    const std::string what = "sum recomputed " + std::to_string(m) + "x" + std::to_string(m);
    for (const bool chunked : {false, true}) {
      tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, m}));
      auto sum = [&] {
        if (chunked)
          compute(chunked_serial_executor{}, C(i, j), A.t(i, j) - B.t(i, j));
        else
          C(i, j) = A.t(i, j) - B.t(i, j);
      };
      bad += recomputed_in_place(C, sum, ref, what + (chunked ? " (chunked)" : ""));
      // C through a view as an operand of its own recomputation: C = C + B.
      const auto Cv = view(C);
      if (chunked)
        compute(chunked_serial_executor{}, C(i, j), Cv(i, j) + B.t(i, j));
      else
        C(i, j) = Cv(i, j) + B.t(i, j);
      bad += mismatches(C, ref2, what + ", C = view(C) + B" + (chunked ? " (chunked)" : ""));
      validate(C);
    }
  }
  // Past 16-bit positions: the run throws, and C, whose arrays it had
  // taken, is left empty and valid.
  using short_pos = tensorlev::owning<std::int16_t>;
  const int m = 200;
  coordinate_list<double, int> dl({m, m}), el({m, m});
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c) {
      if (c < 100) dl.push_back(std::array<int, 2>{r, c}, 1.0);
      el.push_back(std::array<int, 2>{r, c}, 1.0);
    }
  const auto Dm = pack<csr>(dl);
  const auto E = pack<csr>(el);
  for (const bool chunked : {false, true}) {
    auto C16 = pack<csr, short_pos>(coordinate_list<double, int>({m, m}));
    // 20000 entries: fits (the bound, A's entries plus B's, does not)
    chunked ? compute(chunked_serial_executor{}, C16(i, j), Dm(i, j) + Dm(i, j)) : (void)(C16(i, j) = Dm(i, j) + Dm(i, j));
    EXPECT_EQ(C16.stored(), 20000u);
    EXPECT_THROW(chunked ? compute(chunked_serial_executor{}, C16(i, j), E(i, j) + E(i, j))
                         : (void)(C16(i, j) = E(i, j) + E(i, j)),
                 overflow_error);  // 40000 entries
    EXPECT_EQ(C16.stored(), 0u);
    validate(C16);
    C16(i, j) = Dm(i, j) + Dm(i, j);
    EXPECT_EQ(C16.stored(), 20000u);
  }
  EXPECT_EQ(bad, 0u);
}

// The one-thread Gustavson run reserves what a sample of its rows (every
// 32nd of loop 0's chunks, rows at least 64) predicts: products whose
// sampled rows are empty (nothing reserved), are the only non-empty ones
// (reserved far more than needed, up to the dense size), or are like the
// rest, with one column or fifty, into every output the sampled run serves
// (CSR; CSC, whose outer loop runs over columns, so there the skew falls on
// the other side), and into a sparse vector (no rows: nothing sampled),
// each checked against the dense product, every stored entry included.
template <class F>
std::size_t sampled_spgemm_case(int m, int p, int kind, std::mt19937_64& rng) {
  const int n = 40;
  // Row r of A is non-empty: kind 0 every row, 1 the first tenth only,
  // 2 every 32nd row from 16, 3 all but those.
  const auto keep = [&](int r) {
    return kind == 0 || (kind == 1 && r < m / 10) || (kind == 2 && r % 32 == 16) || (kind == 3 && r % 32 != 16);
  };
  coordinate_list<double, int> la({m, n});
  std::vector<double> da(static_cast<std::size_t>(m) * n, 0.0);
  std::uniform_int_distribution<int> col(0, n - 1), val(1, 4);
  for (int r = 0; r < m; ++r)
    if (keep(r))
      for (int e = 0; e < 6; ++e) {
        const int c = col(rng), v = val(rng);
        la.push_back({r, c}, v);
        da[static_cast<std::size_t>(r) * n + c] += v;
      }
  const tensor<double, F> A = pack<F>(la);
  auto B = random_operand<F>(std::array<int, 2>{n, p}, 0.3, rng);
  std::vector<double> ref(static_cast<std::size_t>(m) * p, 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; ++q)
      for (int c = 0; c < p; ++c) ref[static_cast<std::size_t>(r) * p + c] += da[r * n + q] * B.d[q * p + c];
  tensor<double, F> C = pack<F>(coordinate_list<double, int>({m, p}));
  C(i, j) = A(i, k) * B.t(k, j);
  const std::string what = "SpGEMM into " + fname<F>() + " " + std::to_string(m) + "x" + std::to_string(p) +
                           ", kind " + std::to_string(kind);
  std::size_t bad = mismatches(C, ref, what);
  // Every stored entry is a product's (no stale reserved slot shows).
  if (C.template level<1>().crd().size() != C.values().size() ||
      C.values().size() != static_cast<std::size_t>(C.template level<1>().pos().back()))
    ++bad, ADD_FAILURE() << what << ": " << C.values().size() << " values for "
                         << C.template level<1>().pos().back() << " positions";
  // y(j) = x(k) * B(k, j) into a sparse vector: one row, nothing sampled.
  tensor<double, sparse_vector> y = pack<sparse_vector>(coordinate_list<double, int>({p}));
  const tensor<double, sparse_vector> x = pack<sparse_vector>(coordinate_list<double, int>({n}, {3, 7}, {2.0, 5.0}));
  y(j) = x(k) * B.t(k, j);
  std::vector<double> yref(static_cast<std::size_t>(p), 0.0);
  for (int c = 0; c < p; ++c) yref[c] = 2.0 * B.d[3 * p + c] + 5.0 * B.d[7 * p + c];
  bad += mismatches(y, yref, what + " (sparse vector)");
  return bad;
}

TEST(CodegenSparseOut, SpGEMMWhateverTheSampleSays) {
  std::mt19937_64 rng(7);
  std::size_t bad = 0;
  for (const int m : {64, 100, 700, 2100})
    for (const int p : {1, 50})
      for (const int kind : {0, 1, 2, 3}) bad += sampled_spgemm_case<csr>(m, p, kind, rng);
  // CSC: loop 0 runs over C's columns (p of them), so p >= 64 samples.
  for (const int p : {64, 700})
    for (const int m : {1, 90})
      for (const int kind : {0, 2}) bad += sampled_spgemm_case<csc>(m, p, kind, rng);
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 0
TEST(CodegenSparseOut, SDDMMIntoCSR) {
  std::mt19937_64 rng(43);
  std::size_t bad = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double f : {0.0, 0.5, 1.0}) {
        const int r = 3;
        auto B = random_operand<csr>(std::array<int, 2>{m, n}, f, rng);
        auto C = random_operand<dense_row_major>(std::array<int, 2>{m, r}, 1.0, rng);
        auto D = random_operand<dense_row_major>(std::array<int, 2>{n, r}, 1.0, rng);
        std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
        for (int a = 0; a < m; ++a)
          for (int b = 0; b < n; ++b)
            for (int c = 0; c < r; ++c) ref[a * n + b] += B.d[a * n + b] * C.d[a * r + c] * D.d[b * r + c];
        tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({m, n}));
        A(i, j) = B.t(i, j) * C.t(i, k) * D.t(j, k);
        bad += mismatches(A, ref, "SDDMM -> CSR");
        if (components(A) != components(B.t)) ++bad, ADD_FAILURE() << "SDDMM pattern";
      }
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 1
TEST(CodegenSparseOut, ThirdOrderIntoCOO) {
  std::mt19937_64 rng(44);
  std::size_t bad = 0;
  for (int I = 0; I <= 3; ++I)
    for (int J = 0; J <= 3; ++J)
      for (int K = 0; K <= 3; ++K)
        for (double f : {0.0, 0.4, 1.0}) {
          auto B = random_operand<coo_tensor<3>>(std::array<int, 3>{I, J, K}, f, rng);
          auto Cc = random_operand<csf>(std::array<int, 3>{I, J, K}, f, rng);
          auto c = random_operand<dense_vector>(std::array<int, 1>{K}, 1.0, rng);
          std::vector<double> ttv(static_cast<std::size_t>(I * J), 0.0), plus(B.d.size());
          for (int a = 0; a < I; ++a)
            for (int b = 0; b < J; ++b)
              for (int q = 0; q < K; ++q) ttv[a * J + b] += B.d[(a * J + b) * K + q] * c.d[q];
          for (std::size_t x = 0; x < plus.size(); ++x) plus[x] = B.d[x] + Cc.d[x];
          tensor<double, coo> A = pack<coo>(coordinate_list<double, int>({I, J}));
          A(i, j) = B.t(i, j, k) * c.t(k);
          bad += mismatches(A, ttv, "TTV -> COO");
          tensor<double, coo_tensor<3>> P = pack<coo_tensor<3>>(coordinate_list<double, int>({I, J, K}));
          P(i, j, k) = B.t(i, j, k) + Cc.t(i, j, k);
          bad += mismatches(P, plus, "PLUS COO + CSF -> COO");
          tensor<double, csf> Q = pack<csf>(coordinate_list<double, int>({I, J, K}));
          Q(i, j, k) = B.t(i, j, k) + Cc.t(i, j, k);
          bad += mismatches(Q, plus, "PLUS COO + CSF -> CSF");
          // A dense level above two compressed ones (assembled below the
          // dense prefix), and COO3 + CSF with products into it.
          using dcc = format<levels<dense<>, compressed<>, compressed<>>>;
          tensor<double, dcc> R = pack<dcc>(coordinate_list<double, int>({I, J, K}));
          R(i, j, k) = B.t(i, j, k) + Cc.t(i, j, k);
          bad += mismatches(R, plus, "PLUS COO + CSF -> (dense, compressed, compressed)");
          std::vector<double> had(B.d.size());
          for (std::size_t x = 0; x < had.size(); ++x) had[x] = B.d[x] * Cc.d[x] * c.d[x % static_cast<std::size_t>(K)];
          R(i, j, k) = B.t(i, j, k) * Cc.t(i, j, k) * c.t(k);
          bad += mismatches(R, had, "COO * CSF * c -> (dense, compressed, compressed)");
        }
  EXPECT_EQ(bad, 0u);
}

#endif

#if TL_PART == 0
TEST(CodegenSparseOut, PlusEqualsKeepsExistingEntries) {
  std::mt19937_64 rng(45);
  auto A = random_operand<csr>(std::array<int, 2>{6, 7}, 0.3, rng);
  auto B = random_operand<csr>(std::array<int, 2>{6, 7}, 0.3, rng);
  tensor<double, csr> C = A.t;
  C(i, j) += B.t(i, j);
  std::vector<double> ref(A.d.size());
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] + B.d[x];
  EXPECT_EQ(mismatches(C, ref, "C += B"), 0u);
}

#endif

#if TL_PART == 1

// Hashed outputs are assembled by insert: a symbolic pass counts each row's
// distinct coordinates to size the buckets, then values are inserted in
// loop order (any order: SpGEMM's i,k,j reaches a row's j repeatedly).
TEST(CodegenSparseOut, InsertIntoHashedOutputs) {
  using HR = tensor<double, hash_rows>;
  using out_t = decltype(std::declval<HR&>()(i, j));
  using sum_t = decltype(std::declval<const tensor<double, csr>&>()(i, j) +
                         std::declval<const tensor<double, coo>&>()(i, j));
  static_assert(cg::kernel<out_t, sum_t, false, 0>::O.out == cg::out_kind::insert);
  std::mt19937_64 rng(45);
  std::size_t bad = 0;
  for (int m = 0; m <= 3; ++m)
    for (int n = 0; n <= 3; ++n)
      for (int p = 0; p <= 3; ++p)
        for (double f : {0.0, 0.4, 1.0}) {
          bad += spgemm_case<hash_rows, csr, csr>(m, n, p, f, rng);
          bad += spgemm_case<hash_rows, coo, hash_rows>(m, n, p, f, rng);
        }
  bad += spgemm_case<hash_rows, csr, csr>(60, 50, 70, 0.06, rng);
  for (int n = 0; n <= 6; ++n)
    for (double f : {0.0, 0.5, 1.0}) {
      auto x = random_operand<sparse_vector>(std::array<int, 1>{n}, f, rng);
      auto z = random_operand<hash_vector>(std::array<int, 1>{n}, f, rng);
      std::vector<double> ref(static_cast<std::size_t>(n));
      std::size_t pattern = 0;
      const auto px = stored_pattern(x.t), pz = stored_pattern(z.t);
      for (int q = 0; q < n; ++q) ref[q] = 2.0 * x.d[q] - z.d[q], pattern += px[q] || pz[q];
      tensor<double, hash_vector> y = pack<hash_vector>(coordinate_list<double, int>({n}));
      y(i) = 2.0 * x.t(i) - z.t(i);
      bad += mismatches(y, ref, "2x - z -> hash vector");
      if (components(y) != pattern) ++bad, ADD_FAILURE() << "hash vector pattern " << components(y);
      // += keeps the old entries.
      for (int q = 0; q < n; ++q) ref[q] += x.d[q];
      y(i) += x.t(i);
      bad += mismatches(y, ref, "y += x into a hash vector");
    }
  // The symbolic pass counts distinct coordinates, so the buckets are those
  // pack would choose for the result (not one per product reaching a row).
  {
    auto A = random_operand<csr>(std::array<int, 2>{40, 40}, 0.3, rng);
    HR C = pack<hash_rows>(coordinate_list<double, int>({40, 40}));
    C(i, j) = A.t(i, k) * A.t(k, j);
    const HR repacked = pack<hash_rows>(to_coordinate_list(C));
    EXPECT_EQ(C.level<1>().seg(), repacked.level<1>().seg());
  }
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({2, 2}));
  HR C = pack<hash_rows>(coordinate_list<double, int>({2, 2}));
  const std::string s = loop_nest(C(i, j), A(i, k) * A(k, j), {"C", "A", "B"});
  EXPECT_NE(s.find("output: insert"), std::string::npos) << s;
  EXPECT_NE(s.find("C_insert(i, j)"), std::string::npos) << s;
  EXPECT_EQ(bad, 0u);
}

// Issue 15, item 6: an inserted hashed output sizes each row by that row's
// count, so one long row does not widen every other row (and empty rows
// take no buckets); hashed operands with empty rows are located safely.
TEST(CodegenSparseOut, SkewedHashRowsOutputsAreSizedPerRow) {
  using HR = tensor<double, hash_rows>;
  constexpr int m = 1000, n = 1000, long_row = 321;
  // Row r holds (r % 3 + shift) % 3 entries (600 in the long row), columns
  // 7r + stride * k; a dense reference alongside.
  auto skewed = [&](int shift, int stride, std::vector<double>& d) {
    coordinate_list<double, int> l({m, n});
    d.assign(static_cast<std::size_t>(m) * n, 0.0);
    for (int r = 0; r < m; ++r) {
      const int len = r == long_row ? 600 : (r + shift) % 3;
      for (int k = 0; k < len; ++k) {
        const int c = (r * 7 + k * stride) % n;
        const double v = 1 + (r + k + shift) % 5;
        l.push_back({r, c}, v);
        d[static_cast<std::size_t>(r) * n + static_cast<std::size_t>(c)] += v;
      }
    }
    return l;
  };
  std::vector<double> da, db;
  const auto A = pack<csr>(skewed(0, 1, da));
  const auto B = pack<hash_rows>(skewed(2, 3, db));
  std::size_t bad = 0;
  HR C = pack<hash_rows>(coordinate_list<double, int>({m, n}));
  C(i, j) = A(i, j) + B(i, j);
  std::vector<double> ref(da.size());
  std::size_t pattern = 0;
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = da[x] + db[x], pattern += da[x] != 0 || db[x] != 0;
  bad += mismatches(C, ref, "CSR + hash rows -> hash rows");
  EXPECT_EQ(components(C), pattern);
  const auto as_csr = pack<csr>(to_coordinate_list(C));
  EXPECT_LE(C.storage_bytes(), 4 * as_csr.storage_bytes())
      << "hash rows " << C.storage_bytes() << " B, CSR " << as_csr.storage_bytes() << " B";
  C(i, j) += B(i, j);
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] += db[x];
  bad += mismatches(C, ref, "C += hash rows");
  HR P = pack<hash_rows>(coordinate_list<double, int>({m, n}));
  P(i, j) = A(i, j) * B(i, j);
  for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = da[x] * db[x];
  bad += mismatches(P, ref, "CSR .* hash rows -> hash rows");
  EXPECT_EQ(bad, 0u);
}

// Outputs with several appendable levels (COO, DCSR, CSF) whose coordinates
// the loops reach in order are assembled directly: a symbolic pass sizes
// every level, a numeric pass appends. When they are not reached in order
// (SpGEMM's i,k,j into DCSR) the entries are sorted and packed instead.
TEST(CodegenSparseOut, AssemblyKinds) {
  using COO = tensor<double, coo>;
  using DC = tensor<double, dcsr>;
  using coo_out = decltype(std::declval<COO&>()(i, j));
  using dcsr_out = decltype(std::declval<DC&>()(i, j));
  using coo_sum = decltype(std::declval<const COO&>()(i, j) + std::declval<const COO&>()(i, j));
  using dcsr_mul = decltype(std::declval<const DC&>()(i, j) * std::declval<const tensor<double, csr>&>()(i, j));
  using dcsr_gemm = decltype(std::declval<const DC&>()(i, k) * std::declval<const DC&>()(k, j));
  static_assert(cg::kernel<coo_out, coo_sum, false, 0>::O.out == cg::out_kind::assemble);
  static_assert(cg::kernel<dcsr_out, dcsr_mul, false, 0>::O.out == cg::out_kind::assemble);
  static_assert(cg::kernel<dcsr_out, dcsr_gemm, false, 0>::O.out == cg::out_kind::stream);
  std::mt19937_64 rng(46);
  std::size_t bad = 0;
  // += into an assembled output keeps the old entries; the result's levels
  // are exactly those pack builds from the same components.
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 4; ++n)
      for (double f : {0.0, 0.5, 1.0}) {
        auto A = random_operand<coo>(std::array<int, 2>{m, n}, f, rng);
        auto B = random_operand<dcsr>(std::array<int, 2>{m, n}, f, rng);
        std::vector<double> ref(A.d.size());
        for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] - B.d[x];
        DC C = pack<dcsr>(coordinate_list<double, int>({m, n}));
        C(i, j) = A.t(i, j) - B.t(i, j);
        bad += mismatches(C, ref, "COO - DCSR -> DCSR");
        const DC repacked = pack<dcsr>(to_coordinate_list(C));
        if (C.level<0>().pos() != repacked.level<0>().pos() || C.level<0>().crd() != repacked.level<0>().crd() ||
            C.level<1>().pos() != repacked.level<1>().pos() || C.level<1>().crd() != repacked.level<1>().crd())
          ++bad, ADD_FAILURE() << "DCSR levels differ from pack's";
        for (std::size_t x = 0; x < ref.size(); ++x) ref[x] += A.d[x];
        C(i, j) += A.t(i, j);
        bad += mismatches(C, ref, "C += COO into DCSR");
      }
  COO C = pack<coo>(coordinate_list<double, int>({2, 2}));
  const std::string s = loop_nest(C(i, j), C(i, j) + C(i, j), {"C", "A", "B"});
  EXPECT_NE(s.find("output: assemble in order"), std::string::npos) << s;
  EXPECT_EQ(bad, 0u);
}
#endif

}  // namespace
