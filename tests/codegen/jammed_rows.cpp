// numeric_plan's jammed innermost loop (kernel::jam_scan, docs/design.md
// "Jammed rows"): in a trusted run, consecutive iterations of the loop
// above the innermost one whose innermost segments hold the same
// coordinates (B's rows with identical columns in A(i,k) * B(k,j)) add
// their products in one pass over the segment. Operands of finite-element
// shape (nodes of 1 to 6 degrees of freedom, every edge between two nodes
// a full block, some entries dropped so that a node's rows differ): runs of
// 1 to 6 identical rows (longer than jam_max, 4), runs that A's row enters
// in the middle or leaves early, empty rows. Every shape compute_numeric
// takes (product, negated, scaled, a tensor named twice), into CSR,
// unsorted CSR and CSC, on one thread and in chunks, each trusted run
// against a dense reference; the table (which rows are identical) checked
// exactly, and shown to be what the trusted loop reads; a pattern change
// that breaks a run of identical rows with every array's length kept.
#include "common.hpp"
#include "small_products.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

// An n x n matrix over `nodes` nodes of 1 to max_dof degrees of freedom
// each (n their sum): node pairs joined with probability `edge` (and
// every node to itself) hold a full block, each entry then dropped with
// probability `drop`. Values are small integers (the sums are exact).
struct node_matrix {
  coordinate_list<double, int> list;
  std::vector<double> dense;
  int n = 0;
};

// Node boundaries: nodes of 1 to max_dof degrees of freedom each.
std::vector<int> draw_nodes(int nodes, int max_dof, std::mt19937_64& rng) {
  std::vector<int> first{0};
  std::uniform_int_distribution<int> dof(1, max_dof);
  for (int x = 0; x < nodes; ++x) first.push_back(first.back() + dof(rng));
  return first;
}

node_matrix make_nodes(const std::vector<int>& first, double edge, double drop, std::mt19937_64& rng) {
  const int nodes = static_cast<int>(first.size()) - 1;
  node_matrix m;
  m.n = first.back();
  m.list = coordinate_list<double, int>(std::vector<int>{m.n, m.n});
  m.dense.assign(static_cast<std::size_t>(m.n) * static_cast<std::size_t>(m.n), 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> val(-3, 4);
  for (int a = 0; a < nodes; ++a)
    for (int b = 0; b < nodes; ++b) {
      if (a != b && u(rng) >= edge) continue;
      for (int r = first[a]; r < first[a + 1]; ++r)
        for (int c = first[b]; c < first[b + 1]; ++c) {
          if (u(rng) < drop) continue;
          const double v = val(rng);
          m.list.push_back({r, c}, v);
          m.dense[static_cast<std::size_t>(r) * static_cast<std::size_t>(m.n) + static_cast<std::size_t>(c)] += v;
        }
    }
  return m;
}

// vectors: d(i) * A(i,k) * x(k) * B(k,j), factors bound in the loops above
// the innermost one, read per jammed iteration (x at each k).
enum class shape { product, negated, scaled, repeated, vectors };

std::vector<double> reference(shape sh, const std::vector<double>& a, const std::vector<double>& b, int n,
                              const std::vector<double>& d, const std::vector<double>& xv) {
  std::vector<double> r(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
  const double f = sh == shape::negated ? -1.0 : sh == shape::scaled ? 2.5 : 1.0;
  for (int x = 0; x < n; ++x)
    for (int q = 0; q < n; ++q) {
      double av = a[static_cast<std::size_t>(x * n + q)];
      if (sh == shape::vectors) av *= d[static_cast<std::size_t>(x)] * xv[static_cast<std::size_t>(q)];
      if (av == 0.0) continue;
      for (int c = 0; c < n; ++c) r[static_cast<std::size_t>(x * n + c)] += f * av * b[static_cast<std::size_t>(q * n + c)];
    }
  return r;
}

template <shape Sh, class FC, class FA, class FB>
std::size_t jam_case(int nodes, int max_dof, double edge, double drop, std::size_t chunks, std::mt19937_64& rng,
                     bool slots) {
  // A and B over the same nodes, each with its own edges and drops.
  const std::vector<int> first = draw_nodes(nodes, max_dof, rng);
  const node_matrix ma = make_nodes(first, edge, drop, rng);
  const node_matrix mb = make_nodes(first, edge, drop, rng);
  const int n = ma.n;
  tensor<double, FA> A = pack<FA>(ma.list);
  tensor<double, FB> B = pack<FB>(mb.list);
  std::vector<double> a = ma.dense, b = mb.dense;
  auto dv = random_operand<dense_vector>(std::array<int, 1>{n}, 1.0, rng);
  auto xv = random_operand<dense_vector>(std::array<int, 1>{n}, 1.0, rng);
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({n, n}));
  const std::string what = std::string(fname<FA>()) + " x " + fname<FB>() + " -> " + fname<FC>() + " n " +
                           std::to_string(n) + " (" + std::to_string(nodes) + " nodes, up to " +
                           std::to_string(max_dof) + " each, drop " + std::to_string(drop) + ")" +
                           (chunks ? " in " + std::to_string(chunks) + " chunks" : "") +
                           (slots ? " (slot table allowed)" : "") + " shape " +
                           std::to_string(static_cast<int>(Sh));
  auto e = [&] {
    if constexpr (Sh == shape::product) return A(i, k) * B(k, j);
    if constexpr (Sh == shape::negated) return -(A(i, k) * B(k, j));
    if constexpr (Sh == shape::scaled) return 2.5 * A(i, k) * B(k, j);
    if constexpr (Sh == shape::repeated) return A(i, k) * A(k, j);
    if constexpr (Sh == shape::vectors) return dv.t(i) * A(i, k) * xv.t(k) * B(k, j);
  }();
  const auto ref = [&] { return reference(Sh, a, Sh == shape::repeated ? a : b, n, dv.d, xv.d); };
  C(i, j) = e;
  std::size_t bad = mismatches(C, ref(), what + ", assembled");
  tensorlev::numeric_plan plan(C(i, j), e);
  // slots: the trusted runs through the slot table where its rule keeps
  // one, else the jammed loop (the table off).
  plan.use_slot_table(slots);
  const auto run_plan = [&] {
    if (chunks == 0)
      plan.run();
    else
      plan.run(tensorlev::chunked_serial_executor(chunks));
  };
  run_plan();
  bad += mismatches(C, ref(), what + ", checked run");
  // New values, the same patterns: trusted runs (the first builds the
  // table, the second reads it again).
  for (int round = 0; round < 2; ++round) {
    for (double& v : A.values()) v = round == 0 ? 2.0 * v - 1.0 : 3.0 - v;
    for (double& v : B.values()) v = round == 0 ? v + 1.0 : -2.0 * v;
    for (double& v : xv.t.values()) v = 1.0 - v;
    a = to_dense(A), b = to_dense(B), xv.d = to_dense(xv.t);
    run_plan();
    if (!plan.trusted()) {
      ++bad;
      ADD_FAILURE() << what << ": run " << round << " not trusted";
    }
    bad += mismatches(C, ref(), what + ", trusted run " + std::to_string(round));
  }
  return bad;
}

template <shape Sh, class FC, class FA, class FB>
std::size_t sweep(std::mt19937_64& rng) {
  std::size_t bad = 0;
  for (const std::size_t chunks : {std::size_t{0}, std::size_t{3}}) {
    for (const bool slots : {false, true}) {
      for (const int nodes : {0, 1, 2, 5})
        for (const int dof : {1, 3, 6}) bad += jam_case<Sh, FC, FA, FB>(nodes, dof, 0.6, 0.0, chunks, rng, slots);
      for (const double drop : {0.0, 0.05, 0.3})
        for (const int dof : {2, 4, 6}) bad += jam_case<Sh, FC, FA, FB>(30, dof, 0.15, drop, chunks, rng, slots);
    }
  }
  return bad;
}

template <shape Sh>
std::size_t every_output(std::mt19937_64& rng) {
  std::size_t bad = 0;
  bad += sweep<Sh, csr, csr, csr>(rng);
  bad += sweep<Sh, csr_unsorted, csr, csr>(rng);
  bad += sweep<Sh, csc, csc, csc>(rng);
  return bad;
}

TEST(JammedRows, Product) {
  std::mt19937_64 rng(5101);
  std::size_t bad = every_output<shape::product>(rng);
  // A in other formats (COO, DCSR: the loop above the innermost one walks
  // them); B in DCSR locates its rows with a miss possible: no jam, the
  // same results.
  bad += sweep<shape::product, csr, coo, csr>(rng);
  bad += sweep<shape::product, csr_unsorted, dcsr, csr>(rng);
  bad += sweep<shape::product, csr, csr, dcsr>(rng);
  EXPECT_EQ(bad, 0u);
}

TEST(JammedRows, Shapes) {
  std::mt19937_64 rng(5102);
  std::size_t bad = 0;
  bad += every_output<shape::negated>(rng);
  bad += every_output<shape::scaled>(rng);
  bad += every_output<shape::repeated>(rng);
  bad += every_output<shape::vectors>(rng);
  EXPECT_EQ(bad, 0u);
}

using out_t = decltype(std::declval<tensor<double, csr>&>()(i, j));
using A_ref = const tensor<double, csr>&;
using gemm = cg::kernel<out_t, decltype(std::declval<A_ref>()(i, k) * std::declval<A_ref>()(k, j)), false, 0>;
using gemm_u = cg::kernel<decltype(std::declval<tensor<double, csr_unsorted>&>()(i, j)),
                          decltype(std::declval<A_ref>()(i, k) * std::declval<A_ref>()(k, j)), false, 0>;

// Where it is planned: SpGEMM into CSR jams loop k over B's rows (access
// 2, level 1); B in DCSR (rows located with a miss possible) and SpMV do
// not; nor does a sum in the innermost loop.
TEST(JammedRows, Plan) {
  static_assert(gemm::jam_target.ok && gemm::jam_target.acc == 2 && gemm::jam_target.lev == 1);
  static_assert(gemm::jam_loop<1, 0>() && !gemm::jam_loop<0, 0>() && !gemm::jam_loop<2, 0>());
  // Unsorted rows (position marks) and CSC (columns: the loop over k jams
  // A's columns, access 1).
  static_assert(gemm_u::jam_target.ok && gemm_u::jam_target.acc == 2 && gemm_u::jam_loop<1, 0>());
  using C_ref = const tensor<double, csc>&;
  using gemm_c = cg::kernel<decltype(std::declval<tensor<double, csc>&>()(i, j)),
                            decltype(std::declval<C_ref>()(i, k) * std::declval<C_ref>()(k, j)), false, 0>;
  static_assert(gemm_c::jam_target.ok && gemm_c::jam_target.acc == 1 && gemm_c::jam_loop<1, 0>());
  // Factors bound above the innermost loop (d(i), x(k)) keep the jam.
  using V_ref = const tensor<double, dense_vector>&;
  using gemm_v = cg::kernel<out_t,
                            decltype(std::declval<V_ref>()(i) * std::declval<A_ref>()(i, k) * std::declval<V_ref>()(k) *
                                     std::declval<A_ref>()(k, j)),
                            false, 0>;
  static_assert(gemm_v::jam_target.ok);
  using D_ref = const tensor<double, dcsr>&;
  using gemm_d = cg::kernel<out_t, decltype(std::declval<A_ref>()(i, k) * std::declval<D_ref>()(k, j)), false, 0>;
  static_assert(!gemm_d::jam_target.ok);
  using sum = cg::kernel<out_t,
                         decltype(std::declval<A_ref>()(i, k) * (std::declval<A_ref>()(k, j) + std::declval<A_ref>()(k, j))),
                         false, 0>;
  static_assert(!sum::jam_target.ok);
  using spmv = cg::kernel<decltype(std::declval<tensor<double, dense_vector>&>()(i)),
                          decltype(std::declval<A_ref>()(i, j) * std::declval<const tensor<double, dense_vector>&>()(j)),
                          false, 0>;
  static_assert(!spmv::jam_target.ok);
  SUCCEED();
}

// The table: for each row, how many rows from it on hold the same columns
// (rows 0-2 equal, 3 alone, 4 and 5 empty, 6 like 3 but not next to it);
// the jam pays where the repeated rows hold an eighth of the entries or
// more (here 4 of 8), and not where no row repeats the one before it.
TEST(JammedRows, Table) {
  const tensor<double, csr> A = square(7, {0, 0, 1, 1, 2, 2, 3, 3, 6, 6});
  const tensor<double, csr> B =
      square(7, {0, 1, 0, 4, 1, 1, 1, 4, 2, 1, 2, 4, 3, 0, 6, 0});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({7, 7}));
  C(i, j) = A(i, k) * B(k, j);
  cg::numeric_tables tables;
  tables.slots.state = 2;  // the jam's table alone (no slot table)
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, false, &tables);
  EXPECT_FALSE(tables.built);  // only trusted runs read it
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &tables);
  EXPECT_TRUE(tables.built);
  EXPECT_TRUE(tables.jam);
  EXPECT_EQ(tables.jam_span, (std::vector<std::uint8_t>{3, 2, 1, 1, 2, 1, 1}));
  // A run longer than a byte counts: 300 identical rows (from the right:
  // 1 .. 255, then the first 45 rows again 1 .. 45 from row 44 down).
  std::vector<int> coords;
  for (int r = 0; r < 300; ++r) coords.insert(coords.end(), {r, 0, r, 2});
  const tensor<double, csr> L = square(300, coords);
  std::vector<int> diag;
  for (int r = 0; r < 300; ++r) diag.insert(diag.end(), {r, r});
  const tensor<double, csr> D = square(300, diag);
  tensor<double, csr> CL = pack<csr>(coordinate_list<double, int>({300, 300}));
  CL(i, j) = D(i, k) * L(k, j);
  cg::numeric_tables long_run;
  long_run.slots.state = 2;  // the jam's table alone (no slot table)
  gemm::run_numeric(CL(i, j), D(i, k) * L(k, j), tensorlev::serial, true, &long_run);
  ASSERT_EQ(long_run.jam_span.size(), 300u);
  EXPECT_EQ(long_run.jam_span[0], 45);
  EXPECT_EQ(long_run.jam_span[44], 1);
  EXPECT_EQ(long_run.jam_span[45], 255);
  EXPECT_EQ(long_run.jam_span[299], 1);
  EXPECT_EQ(long_run.jam_span[298], 2);
  // No row like the one before it: no jam.
  const tensor<double, csr> E = square(7, {0, 1, 1, 2, 2, 3});
  tensor<double, csr> CE = pack<csr>(coordinate_list<double, int>({7, 7}));
  CE(i, j) = A(i, k) * E(k, j);
  tables = {};
  tables.slots.state = 2;
  gemm::run_numeric(CE(i, j), A(i, k) * E(k, j), tensorlev::serial, true, &tables);
  EXPECT_TRUE(tables.built);
  EXPECT_FALSE(tables.jam);
}

// The trusted loop reads the table: told that B's rows 0 and 1 are
// identical when they are not (row 1 has (1, 2) where row 0 has (0, 2)),
// it adds row 1's products at row 0's columns. (numeric_plan builds the
// table itself and rebuilds it when a pattern changes; this is the
// kernel's run with a table made up.)
TEST(JammedRows, TrustedLoopReadsTheTable) {
  const tensor<double, csr> A = square(3, {0, 0, 0, 1});
  const tensor<double, csr> B = square(3, {0, 2, 1, 1});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}, {0, 1, 0, 2}, {0.0, 0.0}));
  cg::numeric_tables honest;
  honest.slots.state = 2;  // the jam's table alone (no slot table)
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &honest);
  EXPECT_EQ(honest.jam_span, (std::vector<std::uint8_t>{1, 1, 1}));
  EXPECT_FALSE(honest.jam);
  std::vector<double> c = to_dense(C);
  EXPECT_EQ(c[1], 2.0 * 2.0);  // A(0,1) * B(1,1)
  EXPECT_EQ(c[2], 1.0 * 1.0);  // A(0,0) * B(0,2)
  cg::numeric_tables wrong;
  wrong.slots.state = 2;  // the jam's table alone (no slot table)
  wrong.jam_span = {2, 1, 1};
  wrong.built = true;
  wrong.jam = true;
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &wrong);
  c = to_dense(C);
  EXPECT_EQ(c[1], 0.0);
  EXPECT_EQ(c[2], 1.0 + 2.0 * 2.0);  // both rows' products at row 0's column
}

// A pattern change that keeps every array's length but breaks a run: B's
// rows 0 and 1 identical at first (the table jams them), then row 1's
// second column moves. The plan checks again, drops the table and builds
// a new one on its next trusted run; a stale table would add row 1's
// products at row 0's columns.
// With the slot table allowed, the same for it: a stale one would add row
// 1's moved product at its old slot.
TEST(JammedRows, PatternChangeRebuildsTheTable) {
  for (const bool slots : {false, true}) {
    const tensor<double, csr> A = square(4, {0, 0, 0, 1, 1, 0, 1, 1, 2, 2, 3, 3});
    tensor<double, csr> B = square(4, {0, 0, 0, 2, 1, 0, 1, 2, 2, 2, 3, 3});
    tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({4, 4}));
    // C's pattern: rows 0 and 1 at every column either B reaches.
    C(i, j) = A(i, k) * square(4, {0, 0, 0, 2, 0, 3, 1, 0, 1, 2, 1, 3, 2, 2, 3, 3})(k, j);
    const auto reference = [&] { return dense_product(A, B, 4, 4, 4); };
    tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
    plan.use_slot_table(slots);
    plan.run();
    EXPECT_FALSE(plan.trusted());
    std::size_t bad = mismatches(C, reference(), "first run");
    plan.run();
    EXPECT_TRUE(plan.trusted());
    bad += mismatches(C, reference(), "trusted, rows 0 and 1 jammed");
    B = square(4, {0, 0, 0, 2, 1, 0, 1, 3, 2, 2, 3, 3}, 2.0);
    plan.run();
    EXPECT_FALSE(plan.trusted());
    bad += mismatches(C, reference(), "B's row 1 changed: checked");
    plan.run();
    EXPECT_TRUE(plan.trusted());
    bad += mismatches(C, reference(), "B's row 1 changed: trusted, a new table");
    for (double& v : B.values()) v -= 0.5;
    plan.run();  // (through the slot table when allowed)
    EXPECT_TRUE(plan.trusted());
    EXPECT_EQ(plan.slot_table_bytes() != 0, slots);
    bad += mismatches(C, reference(), "B's row 1 changed: trusted again");
    EXPECT_EQ(bad, 0u) << "slot table allowed: " << slots;
  }
}

// The same made-up table into unsorted rows (position marks: the trusted
// add goes through the column's slot).
TEST(JammedRows, TrustedLoopReadsTheTableUnsortedRows) {
  const tensor<double, csr> A = square(3, {0, 0, 0, 1});
  const tensor<double, csr> B = square(3, {0, 2, 1, 1});
  tensor<double, csr_unsorted> C = pack<csr_unsorted>(coordinate_list<double, int>({3, 3}, {0, 1, 0, 2}, {0.0, 0.0}));
  cg::numeric_tables wrong;
  wrong.slots.state = 2;  // the jam's table alone (no slot table)
  wrong.jam_span = {2, 1, 1};
  wrong.built = true;
  wrong.jam = true;
  gemm_u::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &wrong);
  const std::vector<double> c = to_dense(C);
  EXPECT_EQ(c[1], 0.0);
  EXPECT_EQ(c[2], 1.0 + 2.0 * 2.0);
  cg::numeric_tables honest;
  honest.slots.state = 2;  // the jam's table alone (no slot table)
  gemm_u::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &honest);
  const std::vector<double> h = to_dense(C);
  EXPECT_EQ(h[1], 4.0);
  EXPECT_EQ(h[2], 1.0);
}

// The rule at its edge: one repeated entry among eight jams, among nine
// does not.
TEST(JammedRows, TableRuleAtTheEdge) {
  for (const int rows : {8, 9}) {
    std::vector<int> coords{0, 0, 1, 0};  // rows 0 and 1 alike
    for (int r = 2; r < rows; ++r) coords.insert(coords.end(), {r, r});
    const tensor<double, csr> B = square(rows, coords);
    std::vector<int> diag;
    for (int r = 0; r < rows; ++r) diag.insert(diag.end(), {r, r});
    const tensor<double, csr> A = square(rows, diag);
    tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({rows, rows}));
    C(i, j) = A(i, k) * B(k, j);
    cg::numeric_tables t;
    t.slots.state = 2;  // the jam's table alone (no slot table)
    gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &t);
    EXPECT_EQ(t.jam, rows == 8) << rows << " entries";
  }
}

// A row of A whose k decrease (unsorted rows, iterated as stored): row 0
// reaches k = 3 first, then k = 0; B's rows 3 and 4 are alike, row 0 is
// not, so the run that starts at row 3 must not take row 0.
TEST(JammedRows, UnsortedOperandRows) {
  const tensor<double, csr_unsorted> P =
      pack<csr_unsorted>(coordinate_list<double, int>({2, 5}, {0, 0, 0, 3, 1, 4}, {1.0, 1.0, 1.0}));
  auto lv = P.levels();
  using L1 = std::remove_cvref_t<decltype(std::get<1>(lv))>;
  // Row 0: (0, 3) then (0, 0); row 1: (1, 4).
  std::get<1>(lv) = L1(5, typename L1::pos_array{0, 2, 3}, typename L1::crd_array{3, 0, 4});
  tensor<double, csr_unsorted> A({2, 5}, lv, std::vector<double>{2.0, 5.0, 3.0});
  const tensor<double, csr> B = square(5, {0, 0, 0, 2, 3, 1, 3, 4, 4, 1, 4, 4});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({2, 5}));
  using gemm_a = cg::kernel<out_t, decltype(A(i, k) * B(k, j)), false, 0>;
  static_assert(gemm_a::jam_target.ok);
  C(i, j) = A(i, k) * B(k, j);
  const auto reference = [&] { return dense_product(A, B, 2, 5, 5); };
  std::size_t bad = mismatches(C, reference(), "assembled");
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  plan.run();
  for (double& v : A.values()) v += 1.0;
  plan.run();
  EXPECT_TRUE(plan.trusted());
  bad += mismatches(C, reference(), "trusted");
  cg::numeric_tables t;
  t.slots.state = 2;  // the jam's table alone (no slot table)
  gemm_a::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &t);
  EXPECT_TRUE(t.jam);
  EXPECT_EQ(t.jam_span, (std::vector<std::uint8_t>{1, 2, 1, 2, 1}));  // (rows 1 and 2 empty, alike)
  bad += mismatches(C, reference(), "trusted, the kernel's run");
  EXPECT_EQ(bad, 0u);
}

}  // namespace
