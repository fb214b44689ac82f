// The innermost loop's context (kernel::leaf_loop, docs/design.md "The
// innermost loop's context"): a workspace output (Gustavson rows into CSR,
// unsorted CSR or CSC) keeps its row in locals in the innermost loop, and
// the operands bound above that loop are read once before it. Every
// expression shape that reaches the context (negation, scaling, a union
// above the loop with absent operands, a difference in the loop, a second
// term reached through the loop's union (A(i,k)*(B(k,j) + g(j))), a
// scalar, a repeated operand), operands in the formats whose plan is the
// workspace (and the others, which run another plan: checked all the
// same), zero and one extents, one thread (with the sampled capacity:
// 64 chunks of loop 0 or more) and chunks, the recomputed values
// (compute_numeric), against dense references; += runs the statement into
// a temporary and adds it (no context of its own). A value read once where
// it changes per entry, an absent operand's value read at a stale
// position (ASan), or a row count not written back shows here. And the
// precompute depth: each term runs its own loops under the context
// (unsorted operands merged without copies; before the fix the context
// bypassed the split, which no longer compiled there).
#include <map>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

enum class shape { product, negated, scaled, sum_left, diff_right, plus_term, scalar_factor, repeated };

constexpr const char* shape_name(shape s) {
  switch (s) {
    case shape::product: return "A(i,k)*B(k,j)";
    case shape::negated: return "-(A(i,k)*B(k,j))";
    case shape::scaled: return "2.5*A(i,k)*B(k,j)";
    case shape::sum_left: return "(A(i,k)+D(i,k))*B(k,j)";
    case shape::diff_right: return "A(i,k)*(B(k,j)-E(k,j))";
    case shape::plus_term: return "A(i,k)*B(k,j)+A(i,k)*g(j)";
    case shape::scalar_factor: return "s*A(i,k)*B(k,j)*s";
    case shape::repeated: return "Q(i,k)*Q(k,j)";
  }
  return "?";
}

// Operands: A, D (m x n), B, E (n x p), g (p), Q (n x n; repeated takes
// m = p = n), a scalar s.
template <class FA, class FB>
struct operands {
  operand<FA> a, d;
  operand<FB> b, e;
  operand<dense_vector> g;
  operand<FA> q;
  scalar<double> s{-1.5};
};

template <shape Sh, class FC, class FA, class FB>
void run(tensor<double, FC>& C, operands<FA, FB>& o, bool add, std::size_t chunks) {
  auto go = [&](const auto& e) { run_in_chunks(chunks, add, C(i, j), e); };
  if constexpr (Sh == shape::product) go(o.a.t(i, k) * o.b.t(k, j));
  if constexpr (Sh == shape::negated) go(-(o.a.t(i, k) * o.b.t(k, j)));
  if constexpr (Sh == shape::scaled) go(2.5 * o.a.t(i, k) * o.b.t(k, j));
  if constexpr (Sh == shape::sum_left) go((o.a.t(i, k) + o.d.t(i, k)) * o.b.t(k, j));
  if constexpr (Sh == shape::diff_right) go(o.a.t(i, k) * (o.b.t(k, j) - o.e.t(k, j)));
  if constexpr (Sh == shape::plus_term) go(o.a.t(i, k) * o.b.t(k, j) + o.a.t(i, k) * o.g.t(j));
  if constexpr (Sh == shape::scalar_factor) go(o.s() * o.a.t(i, k) * o.b.t(k, j) * o.s());
  if constexpr (Sh == shape::repeated) go(o.q.t(i, k) * o.q.t(k, j));
}

template <shape Sh, class FA, class FB>
std::vector<double> reference(const operands<FA, FB>& o, int m, int n, int p) {
  if constexpr (Sh == shape::repeated) m = p = n;
  std::vector<double> r(static_cast<std::size_t>(m) * static_cast<std::size_t>(p), 0.0);
  const double s = o.s.value();
  for (int x = 0; x < m; ++x)
    for (int c = 0; c < p; ++c) {
      double sum = 0;
      for (int q = 0; q < n; ++q) {
        if constexpr (Sh == shape::repeated) {  // Q is n x n (A and B are not read: m, p changed)
          sum += o.q.d[x * n + q] * o.q.d[q * n + c];
        } else {
          const double a = o.a.d[x * n + q], b = o.b.d[q * p + c];
          if constexpr (Sh == shape::product) sum += a * b;
          if constexpr (Sh == shape::plus_term) sum += a * b + a * o.g.d[c];
          if constexpr (Sh == shape::negated) sum += -(a * b);
          if constexpr (Sh == shape::scaled) sum += 2.5 * a * b;
          if constexpr (Sh == shape::sum_left) sum += (a + o.d.d[x * n + q]) * b;
          if constexpr (Sh == shape::diff_right) sum += a * (b - o.e.d[q * p + c]);
          if constexpr (Sh == shape::scalar_factor) sum += s * a * b * s;
        }
      }
      r[static_cast<std::size_t>(x * p + c)] = sum;
    }
  return r;
}

template <class F, class... G>
constexpr bool one_of = (std::is_same_v<F, G> || ...);

// Cases whose numeric_plan added through a slot table (its third run), by
// output format.
std::map<std::string, std::size_t> slot_table_cases;

template <shape Sh, class FC, class FA, class FB>
std::size_t leaf_case(int m, int n, int p, double fill, bool add, std::size_t chunks, std::mt19937_64& rng) {
  operands<FA, FB> o{random_operand<FA>(std::array<int, 2>{m, n}, fill, rng),
                     random_operand<FA>(std::array<int, 2>{m, n}, fill, rng),
                     random_operand<FB>(std::array<int, 2>{n, p}, fill, rng),
                     random_operand<FB>(std::array<int, 2>{n, p}, fill, rng),
                     random_operand<dense_vector>(std::array<int, 1>{p}, 1.0, rng),
                     random_operand<FA>(std::array<int, 2>{n, n}, fill, rng)};
  const int rows = Sh == shape::repeated ? n : m, cols = Sh == shape::repeated ? n : p;
  const std::string what = std::string(shape_name(Sh)) + " " + fname<FA>() + " x " + fname<FB>() + " -> " +
                           fname<FC>() + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(p) +
                           (add ? " +=" : " =") + (chunks ? " in " + std::to_string(chunks) + " chunks" : "");
  // += adds to an output that holds a random pattern already.
  auto start = random_operand<FC>(std::array<int, 2>{rows, cols}, add ? fill : 0.0, rng);
  tensor<double, FC> C = std::move(start.t);
  std::vector<double> ref = reference<Sh>(o, m, n, p);
  if (add)
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] += start.d[x];
  run<Sh>(C, o, add, chunks);
  std::size_t bad = mismatches(C, ref, what);
  if (!add) {
    // Twice more: into the same C (its arrays recycled), then new values
    // with the same patterns through compute_numeric where the shape is a
    // single product into a workspace output (compute_numeric takes
    // those).
    run<Sh>(C, o, false, chunks);
    bad += mismatches(C, ref, what + ", recomputed");
    // (Products the workspace assembles: row-major operands with ordered
    // rows, or all three in CSC (the workspace over columns); other operand
    // formats take another plan.)
    constexpr bool numeric = (one_of<FC, csr, csr_unsorted> && one_of<FA, csr, coo, coo_aos, dcsr, dense_row_major> &&
                              one_of<FB, csr, dcsr, coo>) ||
                             (one_of<FC, csc> && one_of<FA, csc> && one_of<FB, csc>);
    if constexpr (numeric && (Sh == shape::product || Sh == shape::scaled || Sh == shape::negated ||
                              Sh == shape::repeated)) {
      for (double& v : o.a.t.values()) v = 3.0 * v - 1.0;
      o.a.d = to_dense(o.a.t);
      for (double& v : o.q.t.values()) v = 1.0 - 2.0 * v;
      o.q.d = to_dense(o.q.t);
      auto e = [&] {
        if constexpr (Sh == shape::product) return o.a.t(i, k) * o.b.t(k, j);
        if constexpr (Sh == shape::negated) return -(o.a.t(i, k) * o.b.t(k, j));
        if constexpr (Sh == shape::scaled) return 2.5 * o.a.t(i, k) * o.b.t(k, j);
        if constexpr (Sh == shape::repeated) return o.q.t(i, k) * o.q.t(k, j);  // one tensor twice
      }();
      if (chunks == 0)
        compute_numeric(C(i, j), e);
      else
        compute_numeric(tensorlev::chunked_serial_executor(chunks), C(i, j), e);
      bad += mismatches(C, reference<Sh>(o, m, n, p), what + ", compute_numeric");
      // numeric_plan: its first run checks every product; B's values
      // change, and the second run, over the same patterns, adds without
      // the check (where every operand's levels let the plan copy their
      // patterns: not COO-AoS's).
      tensorlev::numeric_plan plan(C(i, j), e);
      const auto run_plan = [&] {
        if (chunks == 0)
          plan.run();
        else
          plan.run(tensorlev::chunked_serial_executor(chunks));
      };
      run_plan();
      bad += mismatches(C, reference<Sh>(o, m, n, p), what + ", numeric_plan, checked run");
      for (double& v : o.b.t.values()) v = 0.5 * v + 2.0;
      o.b.d = to_dense(o.b.t);
      for (double& v : o.q.t.values()) v = 0.5 * v + 2.0;
      o.q.d = to_dense(o.q.t);
      run_plan();
      bad += mismatches(C, reference<Sh>(o, m, n, p), what + ", numeric_plan, second run");
      constexpr bool copies = !std::is_same_v<FA, coo_aos>;
      if (plan.trusted() != copies || plan.holds_patterns() != copies) {
        ++bad;
        ADD_FAILURE() << what << ": numeric_plan's second run trusted " << plan.trusted() << ", holds patterns "
                      << plan.holds_patterns() << " (expected " << copies << ")";
      }
      // The second run recorded the slot table where the products are few
      // enough per entry; the third adds through it (docs/design.md, "Slot
      // tables"), with A's values changed again.
      for (double& v : o.a.t.values()) v = 1.5 - v;
      o.a.d = to_dense(o.a.t);
      for (double& v : o.q.t.values()) v = v - 0.75;
      o.q.d = to_dense(o.q.t);
      run_plan();
      bad += mismatches(C, reference<Sh>(o, m, n, p), what + ", numeric_plan, third run");
      if (plan.trusted() != copies) ++bad, ADD_FAILURE() << what << ": numeric_plan's third run not trusted";
      if (plan.slot_table_bytes() != 0) ++slot_table_cases[fname<FC>()];
      // The table off: the same values through the workspace row.
      plan.use_slot_table(false);
      run_plan();
      if (plan.slot_table_bytes() != 0) ++bad, ADD_FAILURE() << what << ": a slot table after use_slot_table(false)";
      bad += mismatches(C, reference<Sh>(o, m, n, p), what + ", numeric_plan, without the slot table");
    }
  }
  return bad;
}

template <shape Sh, class FC, class FA, class FB>
std::size_t sweep(std::mt19937_64& rng) {
  std::size_t bad = 0;
  for (const std::size_t chunks : {std::size_t{0}, std::size_t{3}})
    for (const bool add : {false, true}) {
      for (int m : {0, 1, 9})
        for (int n : {0, 1, 7})
          for (int p : {1, 13}) bad += leaf_case<Sh, FC, FA, FB>(m, n, p, 0.4, add, chunks, rng);
      bad += leaf_case<Sh, FC, FA, FB>(40, 30, 50, 0.15, add, chunks, rng);
    }
  // One thread over 200 rows: the one-thread run samples its capacity
  // (64 chunks of loop 0 or more) before the loops.
  bad += leaf_case<Sh, FC, FA, FB>(200, 30, 40, 0.05, false, 0, rng);
  return bad;
}

template <shape Sh>
std::size_t every_output(std::mt19937_64& rng) {
  std::size_t bad = 0;
  bad += sweep<Sh, csr, csr, csr>(rng);
  bad += sweep<Sh, csr_unsorted, csr, csr>(rng);
  bad += sweep<Sh, csc, csc, csc>(rng);  // columns: the workspace over rows i
  bad += sweep<Sh, csr_unsorted, coo, dcsr>(rng);
  return bad;
}

TEST(LeafLoop, ProductOperandFormats) {
  std::mt19937_64 rng(41);
  std::size_t bad = every_output<shape::product>(rng);
  // Every mode format as A: row-major ones plan the workspace and its
  // context; column-major and hashed ones another plan (the same checks).
  for_each_format<mode_matrix_formats>([&](auto fa) {
    using FA = typename decltype(fa)::type;
    bad += sweep<shape::product, csr_unsorted, FA, csr>(rng);
  });
  bad += sweep<shape::product, csr, dense_row_major, dcsr>(rng);
  bad += sweep<shape::product, csr, csr, hash_rows>(rng);  // another plan
  EXPECT_EQ(bad, 0u);
  // Some plans added through a slot table into each output: sorted and
  // unsorted rows, CSC.
  for (const std::string& f : {fname<csr>(), fname<csr_unsorted>(), fname<csc>()})
    EXPECT_GT(slot_table_cases[f], 0u) << "no numeric_plan into " << f << " ran through a slot table";
}

// The precompute depth is the innermost loop of a row-wise sum: each term
// runs its own loops there (kernel::loop at O.scatter), each under the
// context. Unsorted rows are merged without ordered copies, and a hashed
// operand is iterated, not located at every column (before the fix the
// context bypassed the split: the first no longer compiled, the second
// ran a counter over all of j).
TEST(LeafLoop, PrecomputeTermsKeepTheirLoops) {
  std::mt19937_64 rng(43);
  std::size_t bad = 0;
  for (int m : {0, 1, 7, 40})
    for (int n : {1, 9, 300}) {
      auto A = random_operand<csr_unsorted>(std::array<int, 2>{m, n}, 0.1, rng);
      auto B = random_operand<csr_unsorted>(std::array<int, 2>{m, n}, 0.1, rng);
      auto H = random_operand<hash_rows>(std::array<int, 2>{m, n}, 0.1, rng);
      std::vector<double> ab(A.d.size()), ah(A.d.size());
      for (std::size_t x = 0; x < ab.size(); ++x) ab[x] = A.d[x] + B.d[x], ah[x] = A.d[x] - H.d[x];
      tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, n}));
      compute(C(i, j), A.t(i, j) + B.t(i, j), precompute(j));
      bad += mismatches(C, ab, "unsorted + unsorted, precompute(j), " + std::to_string(m) + "x" + std::to_string(n));
      compute(tensorlev::chunked_serial_executor(3), C(i, j), A.t(i, j) - H.t(i, j), precompute(j));
      bad += mismatches(C, ah, "unsorted - hash_rows, precompute(j), chunks, " + std::to_string(m) + "x" +
                                   std::to_string(n));
    }
  EXPECT_EQ(bad, 0u);
}

// numeric_plan over patterns that change between runs, into sorted and
// unsorted rows (dense row, position marks): an operand that lost an
// entry (checked again, then trusted again), one whose product leaves the
// output's pattern with every array's length unchanged (only the bytes
// tell) or with a longer one (throws; the plan keeps its copy), the
// output's pattern alone made larger (checked again), and each run's
// values against a dense reference.
template <class FC>
void pattern_changes() {
  const std::string out = std::string(fname<FC>()) + ": ";
  const auto square = [](std::vector<int> coords) {
    std::vector<double> vals;
    for (std::size_t x = 0; x < coords.size() / 2; ++x) vals.push_back(1.0 + 0.25 * static_cast<double>(x));
    return pack<csr>(coordinate_list<double, int>({6, 6}, std::move(coords), std::move(vals)));
  };
  const std::vector<int> diag{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  std::vector<int> b_coords = diag;
  b_coords.insert(b_coords.end(), {3, 5, 4, 1});
  tensor<double, csr> A = square(diag);
  const tensor<double, csr> B = square(b_coords);
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({6, 6}));
  C(i, j) = A(i, k) * B(k, j);
  const auto reference = [&] {
    const auto a = to_dense(A), b = to_dense(B);
    std::vector<double> r(36, 0.0);
    for (int x = 0; x < 6; ++x)
      for (int c = 0; c < 6; ++c)
        for (int q = 0; q < 6; ++q) r[static_cast<std::size_t>(x * 6 + c)] += a[x * 6 + q] * b[q * 6 + c];
    return r;
  };
  std::size_t bad = 0;
  tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
  EXPECT_FALSE(plan.holds_patterns());
  plan.run();
  EXPECT_FALSE(plan.trusted());
  EXPECT_TRUE(plan.holds_patterns());
  // C, A and B: dimensions, level extents, and CSR's bounds and
  // coordinates (C: 7 and 8, A: 7 and 6, B: 7 and 8), each array with its
  // length.
  const std::size_t arrays = (7 + 8 + 7 + 6 + 7 + 8) * sizeof(int), extra = 3 * (2 + 2) * sizeof(int) + 6 * 8;
  EXPECT_EQ(plan.pattern_bytes(), arrays + extra) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, first run");
  for (double& v : A.values()) v = -v;
  plan.run();
  EXPECT_TRUE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, values changed");
  // A's row 0 moves its entry from column 0 to column 3: every array keeps
  // its length, and row 0 of the product now reaches columns 3 and 5,
  // outside C's row 0. Trusting the copy here would lose those products
  // (sorted rows) or write before the row's slots (position marks).
  std::vector<int> moved = diag;
  moved[1] = 3;
  A = square(moved);
  EXPECT_THROW(plan.run(), tensorlev::error) << out;
  EXPECT_FALSE(plan.trusted()) << out;
  A = square(diag);
  plan.run();
  EXPECT_TRUE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, A back");
  // A loses row 2's entry: checked again (C's (2,2) gets zero), then trusted.
  std::vector<int> fewer = diag;
  fewer.erase(fewer.begin() + 4, fewer.begin() + 6);
  A = square(fewer);
  plan.run();
  EXPECT_FALSE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, A lost an entry");
  plan.run();
  EXPECT_TRUE(plan.trusted()) << out;
  // A gains (0, 3): the product leaves C's row 0; the run throws and the
  // copy stays A's last checked pattern.
  std::vector<int> more = fewer;
  more.insert(more.begin() + 2, {0, 3});
  A = square(more);
  EXPECT_THROW(plan.run(), tensorlev::error) << out;
  EXPECT_FALSE(plan.trusted()) << out;
  A = square(fewer);
  plan.run();
  EXPECT_TRUE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, A back to the checked pattern");
  // C alone reassembled larger (from another tensor): the operands are as
  // the copy has them, C's pattern is not; checked again, then trusted.
  {
    const tensor<double, csr> A2 = square(more);
    C(i, j) = A2(i, k) * B(k, j);
  }
  plan.run();
  EXPECT_FALSE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, C reassembled larger");
  plan.run();
  EXPECT_TRUE(plan.trusted()) << out;
  bad += mismatches(C, reference(), out + "numeric_plan, C reassembled, second run");
  EXPECT_EQ(bad, 0u);
}

TEST(NumericPlan, PatternChanges) {
  pattern_changes<csr>();
  pattern_changes<csr_unsorted>();
}

// The trusted loop skips the check (it is the loop the plan runs when the
// patterns equal its copy): the kernel's numeric run, told to trust a
// product that leaves the pattern of sorted rows, does not throw (those
// products are lost), where the checked run throws.
TEST(NumericPlan, TrustedLoopSkipsTheCheck) {
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({3, 3}, {0, 0, 1, 1, 2, 2}, {1.0, 2.0, 3.0}));
  const tensor<double, csr> B = pack<csr>(coordinate_list<double, int>({3, 3}, {0, 0, 1, 1, 2, 2, 1, 2}, {1.0, 1.0, 1.0, 5.0}));
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}));
  C(i, j) = A(i, k) * B(k, j);  // diagonal and (1, 2)
  A = pack<csr>(coordinate_list<double, int>({3, 3}, {0, 1, 1, 1, 2, 2}, {1.0, 2.0, 3.0}));  // row 0 reaches (0, 2)
  using gemm = cg::kernel<decltype(C(i, j)), decltype(A(i, k) * B(k, j)), false, 0>;
  static_assert(gemm::numeric_leaf);
  EXPECT_THROW(gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, false), tensorlev::error);
  EXPECT_NO_THROW(gemm::run_numeric(C(i, j), A(i, k) * B(k, j), tensorlev::serial, true));
  // Products inside the pattern are right in the trusted loop.
  const std::vector<double> c = to_dense(C);
  EXPECT_EQ(c[1 * 3 + 1], 2.0);
  EXPECT_EQ(c[1 * 3 + 2], 10.0);
  EXPECT_EQ(c[2 * 3 + 2], 3.0);
}

TEST(LeafLoop, ExpressionShapes) {
  std::mt19937_64 rng(42);
  std::size_t bad = 0;
  bad += every_output<shape::negated>(rng);
  bad += every_output<shape::scaled>(rng);
  bad += every_output<shape::sum_left>(rng);
  bad += every_output<shape::diff_right>(rng);
  bad += every_output<shape::plus_term>(rng);
  bad += every_output<shape::scalar_factor>(rng);
  bad += every_output<shape::repeated>(rng);
  EXPECT_EQ(bad, 0u);
}

// Where the context is planned: the innermost loop of SpGEMM into CSR and
// unsorted CSR (binding the output's last coordinate), with A's value read
// once there (access 1) and B's per entry (access 2); not the loops above
// it, not SpMV (a located output keeps no row), not a product whose
// innermost loop is a reduction (the output's last coordinate is bound
// above it). (Device code never plans it: leaf_loop is false under
// __CUDA_ARCH__, compiled by tests/device.)
TEST(LeafLoop, Plan) {
  using A_t = const tensor<double, csr>&;
  using gemm = cg::kernel<decltype(std::declval<tensor<double, csr>&>()(i, k)),
                          decltype(std::declval<A_t>()(i, j) * std::declval<A_t>()(j, k)), false, 0>;
  static_assert(gemm::leaf_loop<2, 0>() && !gemm::leaf_loop<1, 0>() && !gemm::leaf_loop<0, 0>());
  static_assert(gemm::leaf_invariant<2, 0>() == cg::mask_t{1} << 1);
  using gemm_u = cg::kernel<decltype(std::declval<tensor<double, csr_unsorted>&>()(i, k)),
                            decltype(std::declval<A_t>()(i, j) * std::declval<A_t>()(j, k)), false, 0>;
  static_assert(gemm_u::leaf_loop<2, 0>());
  // (A(i,j) + D(i,j)) * B(j,k): where D is absent (bit 2), only A is read once.
  using sum = cg::kernel<decltype(std::declval<tensor<double, csr>&>()(i, k)),
                         decltype((std::declval<A_t>()(i, j) + std::declval<A_t>()(i, j)) * std::declval<A_t>()(j, k)),
                         false, 0>;
  static_assert(sum::leaf_invariant<2, 0>() == ((cg::mask_t{1} << 1) | (cg::mask_t{1} << 2)));
  static_assert(sum::leaf_invariant<2, cg::mask_t{1} << 2>() == cg::mask_t{1} << 1);
  using spmv = cg::kernel<decltype(std::declval<tensor<double, dense_vector>&>()(i)),
                          decltype(std::declval<A_t>()(i, j) * std::declval<const tensor<double, dense_vector>&>()(j)),
                          false, 0>;
  static_assert(!spmv::out_leaf && !spmv::leaf_loop<1, 0>());
  // C(i,k) = T(i,j,k,l) * U(j,l): a workspace output whose innermost loop
  // (l) is a reduction below the output's last coordinate (k).
  using reduce = cg::kernel<decltype(std::declval<tensor<double, csr>&>()(i, k)),
                            decltype(std::declval<const tensor<double, csf_tensor<4>>&>()(i, j, k, l) *
                                     std::declval<const tensor<double, dense_row_major>&>()(j, l)),
                            false, 0>;
  static_assert(reduce::out_leaf && !reduce::leaf_loop<3, 0>() && !reduce::leaf_loop<2, 0>());
  // CSC: columns are the workspace's rows; the innermost loop binds i.
  using A_c = const tensor<double, csc>&;
  using gemm_c = cg::kernel<decltype(std::declval<tensor<double, csc>&>()(i, k)),
                            decltype(std::declval<A_c>()(i, j) * std::declval<A_c>()(j, k)), false, 0>;
  static_assert(gemm_c::leaf_loop<2, 0>());
  SUCCEED();
}

}  // namespace
