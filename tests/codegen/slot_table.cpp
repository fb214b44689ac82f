// numeric_plan's slot table (docs/design.md, "Slot tables"): the first
// trusted run over a pattern records, for every product in the order the
// loops reach it, its slot in its row's pattern; later trusted runs add each
// product straight into the output's values at that slot, without the
// workspace row. Where it is planned (static_asserts); its rule (kept where
// the products are few per output entry, dropped where the table would pass
// the output's values' bytes or a row is too long for a 16-bit slot), every
// run against a dense reference; the trusted loop shown to read it (a
// made-up table moves the values); sorted and unsorted rows, CSC, one
// thread and chunks; runs that throw part-way. leaf_loop.cpp,
// sparse_out.cpp and jammed_rows.cpp run their plans' sweeps through it
// too, parallel_cases.hpp on threads (Kokkos) and position_marks.cpp under
// 8-bit marks.
#include <stdexcept>

#include "common.hpp"
#include "small_products.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

using out_t = decltype(std::declval<tensor<double, csr>&>()(i, j));
using A_ref = const tensor<double, csr>&;
using gemm = cg::kernel<out_t, decltype(std::declval<A_ref>()(i, k) * std::declval<A_ref>()(k, j)), false, 0>;

// Where it is planned: the rows the workspace opens (loop 0), whose
// products all reach the row through the innermost loop's leaf.
TEST(SlotTable, Plan) {
  static_assert(gemm::slot_planned() && gemm::slot_rows<0, 0>() && !gemm::slot_rows<1, 0>());
  static_assert(!gemm::slot_rows<0, cg::slots_bit>() && !gemm::slot_rows<0, cg::trusted_bit>());
  using gemm_u = cg::kernel<decltype(std::declval<tensor<double, csr_unsorted>&>()(i, j)),
                            decltype(std::declval<A_ref>()(i, k) * std::declval<A_ref>()(k, j)), false, 0>;
  static_assert(gemm_u::slot_planned());
  using C_ref = const tensor<double, csc>&;
  using gemm_c = cg::kernel<decltype(std::declval<tensor<double, csc>&>()(i, j)),
                            decltype(std::declval<C_ref>()(i, k) * std::declval<C_ref>()(k, j)), false, 0>;
  static_assert(gemm_c::slot_planned());
  // B in DCSR (rows located, a miss possible): still one leaf per product.
  using D_ref = const tensor<double, dcsr>&;
  using gemm_d = cg::kernel<out_t, decltype(std::declval<A_ref>()(i, k) * std::declval<D_ref>()(k, j)), false, 0>;
  static_assert(gemm_d::slot_planned());
  // A sparse vector output (one row, no loop opens it) and SpMV (no
  // workspace row) do not.
  using V_ref = const tensor<double, dense_vector>&;
  using vecmat = cg::kernel<decltype(std::declval<tensor<double, sparse_vector>&>()(j)),
                            decltype(std::declval<V_ref>()(i) * std::declval<A_ref>()(i, j)), false, 0>;
  static_assert(!vecmat::slot_planned());
  using spmv = cg::kernel<decltype(std::declval<tensor<double, dense_vector>&>()(i)),
                          decltype(std::declval<A_ref>()(i, j) * std::declval<V_ref>()(j)), false, 0>;
  static_assert(!spmv::slot_planned());
  SUCCEED();
}

// Runs a plan over C = A * B four times (checked; trusted, recording the
// table; trusted through it twice), the values changed before each, each
// run against the dense reference; returns whether the plan kept a table.
template <class FC, class FA, class FB>
bool plan_runs(tensor<double, FA>& A, tensor<double, FB>& B, int m, int n, int p, std::size_t chunks,
               std::size_t& bad, const std::string& what) {
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({m, p}));
  C(i, j) = A(i, k) * B(k, j);
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  bool kept = false;
  for (int run = 0; run < 4; ++run) {
    for (double& v : A.values()) v = run % 2 == 0 ? 2.0 * v - 1.0 : 3.0 - v;
    for (double& v : B.values()) v = run % 2 == 0 ? v + 0.5 : -2.0 * v;
    if (chunks == 0)
      plan.run();
    else
      plan.run(tensorlev::chunked_serial_executor(chunks));
    if (plan.trusted() != (run > 0)) ++bad, ADD_FAILURE() << what << ": run " << run << " trusted " << plan.trusted();
    if (run == 1) kept = plan.slot_table_bytes() != 0;
    if (run > 1 && (plan.slot_table_bytes() != 0) != kept)
      ++bad, ADD_FAILURE() << what << ": the table came or went at run " << run;
    bad += mismatches(C, dense_product(A, B, m, n, p), what + ", run " + std::to_string(run));
  }
  return kept;
}

// The rule: a product with one term per output entry (A diagonal) keeps
// the table; a dense 8 x 8 product (8 per entry: 16 bytes of slots against
// 8 of value) does not; both right in every run, into sorted and unsorted
// rows and CSC, one thread and chunks.
template <class FC>
std::size_t rule_cases(std::mt19937_64& rng) {
  // (CSC's workspace runs over columns: column-major operands.)
  using FO = std::conditional_t<std::is_same_v<FC, csc>, csc, csr>;
  std::size_t bad = 0;
  for (const std::size_t chunks : {std::size_t{0}, std::size_t{3}}) {
    for (const int n : {1, 5, 40}) {
      std::vector<int> diag;
      for (int r = 0; r < n; ++r) diag.insert(diag.end(), {r, r});
      auto D = square<FO>(n, diag);
      auto B = random_operand<FO>(std::array<int, 2>{n, n}, 0.3, rng).t;
      const std::string what =
          std::string(fname<FC>()) + " diagonal x random n " + std::to_string(n) + (chunks ? " in chunks" : "");
      if (!plan_runs<FC>(D, B, n, n, n, chunks, bad, what) && B.stored() > 0)
        ++bad, ADD_FAILURE() << what << ": no slot table";
    }
    auto A = random_operand<FO>(std::array<int, 2>{8, 8}, 1.0, rng).t;
    auto B = random_operand<FO>(std::array<int, 2>{8, 8}, 1.0, rng).t;
    const std::string what = std::string(fname<FC>()) + " dense 8 x 8" + (chunks ? " in chunks" : "");
    if (plan_runs<FC>(A, B, 8, 8, 8, chunks, bad, what)) ++bad, ADD_FAILURE() << what << ": a slot table";
  }
  return bad;
}

TEST(SlotTable, Rule) {
  std::mt19937_64 rng(7301);
  std::size_t bad = rule_cases<csr>(rng);
  bad += rule_cases<csr_unsorted>(rng);
  bad += rule_cases<csc>(rng);
  EXPECT_EQ(bad, 0u);
}

// A row of 65536 entries (slots 0 .. 65535) keeps the table, one of 65537
// (past a 16-bit slot) drops it; the values stay right.
TEST(SlotTable, LongRow) {
  for (const int p : {65536, 65537}) {
    std::vector<int> coords;
    for (int c = 0; c < p; ++c) coords.insert(coords.end(), {0, c});
    std::vector<double> vals(static_cast<std::size_t>(p), 1.0);
    auto B = pack<csr>(coordinate_list<double, int>({1, p}, std::move(coords), std::move(vals)));
    auto A = square(1, {0, 0});
    std::size_t bad = 0;
    const bool kept = plan_runs<csr>(A, B, 1, 1, p, 0, bad, "one row of " + std::to_string(p));
    EXPECT_EQ(kept, p == 65536) << p;
    EXPECT_EQ(bad, 0u);
  }
}

// The cap holds to the last row: only A's last row holds entries (all n),
// B is dense, so C's last row takes n products for each of its n entries
// (a table of 2 n^2 bytes against 8 n of values). The cap is checked as
// rows open, so these products come after the last check; the table must
// still be dropped. The same with the heavy row first (caught as the next
// row opens).
TEST(SlotTable, CapHoldsToTheLastRow) {
  const int n = 30;
  for (const int heavy : {n - 1, 0}) {
    std::vector<int> ca, cb;
    for (int c = 0; c < n; ++c) ca.insert(ca.end(), {heavy, c});
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) cb.insert(cb.end(), {r, c});
    auto A = square(n, ca);
    auto B = square(n, cb);  // (small integers and halves: sums exact in any order, as the jam adds them)
    std::size_t bad = 0;
    if (plan_runs<csr>(A, B, n, n, n, 0, bad, "heavy row " + std::to_string(heavy)))
      ++bad, ADD_FAILURE() << "a slot table past the cap (heavy row " << heavy << ")";
    EXPECT_EQ(bad, 0u);
  }
}

// use_slot_table(false) drops the table and the runs go on without it;
// (true) records it again on the next trusted run.
TEST(SlotTable, OffAndOnAgain) {
  const tensor<double, csr> A = square(3, {0, 0, 0, 1, 2, 2});
  tensor<double, csr> B = square(3, {0, 2, 1, 1, 2, 0});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}));
  C(i, j) = A(i, k) * B(k, j);
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  std::size_t bad = 0;
  const auto step = [&](bool table, const std::string& what) {
    for (double& v : B.values()) v = 1.0 - 2.0 * v;
    plan.run();
    EXPECT_TRUE(plan.trusted()) << what;
    EXPECT_EQ(plan.slot_table_bytes() != 0, table) << what;
    bad += mismatches(C, dense_product(A, B, 3, 3, 3), what);
  };
  plan.run();  // checked
  step(true, "recorded");
  step(true, "through the table");
  plan.use_slot_table(false);
  step(false, "off");
  step(false, "off again");
  plan.use_slot_table(true);
  step(true, "on: recorded again");
  step(true, "on: through the table");
  EXPECT_EQ(bad, 0u);
}

// The trusted loop reads the table: row 0 of C = A * B has columns 1 and 2
// (A(0,1) * B(1,1) at slot 0, A(0,0) * B(0,2) at slot 1, reached in the
// order k = 0, 1); a made-up table with the two slots swapped puts each
// product in the other's entry. (numeric_plan records the table itself;
// this is the kernel's run with a table made up.)
TEST(SlotTable, TrustedLoopReadsTheTable) {
  const tensor<double, csr> A = square(3, {0, 0, 0, 1});
  const tensor<double, csr> B = square(3, {0, 2, 1, 1});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}, {0, 1, 0, 2}, {0.0, 0.0}));
  cg::numeric_tables honest;
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &honest);
  ASSERT_EQ(honest.slots.state, 1);
  EXPECT_EQ(honest.slots.slots, (std::vector<std::uint16_t>{1, 0}));
  EXPECT_EQ(honest.slots.first, (std::vector<std::uint64_t>{0, 2, 2}));
  std::vector<double> c = to_dense(C);
  EXPECT_EQ(c[1], 2.0 * 2.0);  // A(0,1) * B(1,1)
  EXPECT_EQ(c[2], 1.0 * 1.0);  // A(0,0) * B(0,2)
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &honest);  // through it
  c = to_dense(C);
  EXPECT_EQ(c[1], 4.0);
  EXPECT_EQ(c[2], 1.0);
  cg::numeric_tables wrong;
  wrong.slots.slots = {0, 1};
  wrong.slots.first = {0, 2, 2};
  wrong.slots.state = 1;
  gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true, &wrong);
  c = to_dense(C);
  EXPECT_EQ(c[1], 1.0);
  EXPECT_EQ(c[2], 4.0);
}

// A pattern change with every array's length kept (B's entry (1, 1) moves
// to (1, 0) and C's row 0 holds columns 0 and 2 instead): the plan checks
// again and records a new table; a stale one would put A(0,1) * B(1,0) at
// column 2.
TEST(SlotTable, PatternChangeRecordsItAgain) {
  const tensor<double, csr> A = square(3, {0, 0, 0, 1});
  tensor<double, csr> B = square(3, {0, 2, 1, 1});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}));
  C(i, j) = A(i, k) * B(k, j);
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  std::size_t bad = 0;
  for (int run = 0; run < 3; ++run) {
    plan.run();
    bad += mismatches(C, dense_product(A, B, 3, 3, 3), "first pattern, run " + std::to_string(run));
  }
  EXPECT_NE(plan.slot_table_bytes(), 0u);
  B = square(3, {0, 2, 1, 0}, 3.0);
  C(i, j) = A(i, k) * B(k, j);  // C's arrays keep their lengths
  for (int run = 0; run < 3; ++run) {
    plan.run();
    EXPECT_EQ(plan.trusted(), run > 0);
    bad += mismatches(C, dense_product(A, B, 3, 3, 3), "second pattern, run " + std::to_string(run));
  }
  EXPECT_NE(plan.slot_table_bytes(), 0u);
  EXPECT_EQ(bad, 0u);
}

// An executor that runs a run's first `after` chunks, then throws.
class throwing_executor {
 public:
  explicit throwing_executor(std::size_t after) noexcept : after_(after) {}
  // NOLINTNEXTLINE(google-explicit-constructor): converts where an executor is expected
  operator tensorlev::executor() const noexcept { return tensorlev::executor(this, &run, 4); }

 private:
  static void run(const void* self, std::size_t n, tensorlev::executor::chunk_fn fn, void* ctx) {
    const auto* me = static_cast<const throwing_executor*>(self);
    for (std::size_t c = 0; c < n; ++c) {
      if (c == me->after_) throw std::runtime_error("test executor: stopped");
      fn(ctx, c);
    }
  }
  std::size_t after_;
};

// A run that throws part-way (its executor stops after one chunk: some
// rows written, the rest not) is not trusted, and the plan goes on: the
// next run through the table is right in every row; after a pattern
// change, a checked run that throws leaves neither the old patterns nor
// the old table in use (the next run checks, the one after records a new
// table).
TEST(SlotTable, RunThatThrows) {
  std::mt19937_64 rng(7303);
  const int n = 200;
  auto A = random_operand<csr>(std::array<int, 2>{n, n}, 0.03, rng).t;
  auto B = random_operand<csr>(std::array<int, 2>{n, n}, 0.03, rng).t;
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({n, n}));
  C(i, j) = A(i, k) * B(k, j);
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  std::size_t bad = 0;
  int step = 0;
  const auto new_values = [&] {
    for (double& v : B.values()) v = step % 2 == 0 ? 2.0 - v : 0.5 * v;
    ++step;
  };
  const auto runs = [&](bool trusted, bool table, const std::string& what) {
    new_values();
    plan.run(tensorlev::chunked_serial_executor(3));
    EXPECT_EQ(plan.trusted(), trusted) << what;
    EXPECT_EQ(plan.slot_table_bytes() != 0, table) << what;
    bad += mismatches(C, dense_product(A, B, n, n, n), what);
  };
  const auto throws = [&](const std::string& what) {
    new_values();
    EXPECT_THROW(plan.run(throwing_executor(1)), std::runtime_error) << what;
    EXPECT_FALSE(plan.trusted()) << what;
  };
  runs(false, false, "checked");
  runs(true, true, "recorded");
  throws("through the table, thrown");
  runs(true, true, "through the table after the throw");
  B = random_operand<csr>(std::array<int, 2>{n, n}, 0.03, rng).t;
  C(i, j) = A(i, k) * B(k, j);
  throws("checked after a pattern change, thrown");
  runs(false, false, "checked after the throw");
  runs(true, true, "recorded again");
  runs(true, true, "through the new table");
  EXPECT_EQ(bad, 0u);
}

}  // namespace
