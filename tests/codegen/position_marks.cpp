// Position marks (the unsorted workspace rows of csr_unsorted outputs,
// docs/design.md "Position marks") narrowed to 8 bits
// (TENSORLEV_TEST_MARK_TYPE), so that the restart that a real run reaches
// after 2^32 - n entries happens every few rows, and a restart missing or
// one row late lets a mark wrap (stale marks read as valid: wrong sums or
// writes past the row, which ASan reports); rows stay under 255
// coordinates, what 8-bit marks can hold: SpGEMM, a sum through the
// workspace, compute_numeric, numeric_plan (its slot table recorded from
// the marks) and a row-wise sum, serial and
// chunked, against dense references, rows shorter and longer than the limit.
#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

// product_case's numeric_plans whose last runs went through a slot table.
std::size_t plans_through_slot_tables = 0;

template <class FA, class FB>
std::size_t product_case(int m, int n, int p, double f, bool chunked, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{m, n}, f, rng);
  auto B = random_operand<FB>(std::array<int, 2>{n, p}, f, rng);
  auto reference = [&] {
    std::vector<double> ref(static_cast<std::size_t>(m) * static_cast<std::size_t>(p), 0.0);
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < n; ++q)
        for (int c = 0; c < p; ++c)
          ref[static_cast<std::size_t>(r * p + c)] += A.d[static_cast<std::size_t>(r * n + q)] * B.d[static_cast<std::size_t>(q * p + c)];
    return ref;
  };
  const std::string what = "SpGEMM " + fname<FA>() + " x " + fname<FB>() + " -> csr_unsorted " + std::to_string(m) +
                           "x" + std::to_string(n) + "x" + std::to_string(p) + (chunked ? " (chunked)" : "");
  tensor<double, csr_unsorted> C = pack<csr_unsorted>(coordinate_list<double, int>({m, p}));
  if (chunked)
    compute(chunked_serial_executor{}, C(i, j), A.t(i, k) * B.t(k, j));
  else
    C(i, j) = A.t(i, k) * B.t(k, j);
  std::size_t bad = mismatches(C, reference(), what);
  try {
    validate(C);  // unique coordinates in every row
  } catch (const tensorlev::error& e) {
    ++bad, ADD_FAILURE() << what << ": " << e.what();
  }
  // Twice more into the same C (its arrays recycled, the marks of the
  // previous run long stale), then the values alone.
  C(i, j) = A.t(i, k) * B.t(k, j);
  bad += mismatches(C, reference(), what + ", recomputed");
  for (double& x : A.t.values()) x = 2.0 * x + 1.0;
  A.d = to_dense(A.t);
  if (chunked)
    compute_numeric(chunked_serial_executor{}, C(i, j), A.t(i, k) * B.t(k, j));
  else
    compute_numeric(C(i, j), A.t(i, k) * B.t(k, j));
  bad += mismatches(C, reference(), what + ", compute_numeric");
  // numeric_plan: checked, then trusted (the slot table recorded from the
  // marks: a product's slot is its mark less the base, which restarts
  // every few rows here), then through the table, B's values changed
  // before each run.
  tensorlev::numeric_plan plan(C(i, j), A.t(i, k) * B.t(k, j));
  for (int run = 0; run < 4; ++run) {
    for (double& x : B.t.values()) x = run % 2 == 0 ? 3.0 - x : 0.5 * x;
    B.d = to_dense(B.t);
    if (chunked)
      plan.run(chunked_serial_executor{});
    else
      plan.run();
    bad += mismatches(C, reference(), what + ", numeric_plan run " + std::to_string(run));
  }
  if (plan.slot_table_bytes() != 0) ++plans_through_slot_tables;
  return bad;
}

TEST(PositionMarks, RestartsEveryFewRows) {
  std::mt19937_64 rng(29);
  std::size_t bad = 0;
  for (const bool chunked : {false, true}) {
    for (int m : {0, 1, 7, 60})
      for (int n : {0, 1, 6})
        for (int p : {0, 1, 5, 20, 31, 32, 33, 100, 200})  // 200: a restart after every row
          for (double f : {0.1, 0.5, 1.0}) bad += product_case<csr, csr>(m, n, p, f, chunked, rng);
    bad += product_case<coo, dcsr>(80, 40, 25, 0.2, chunked, rng);
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(plans_through_slot_tables, 0u) << "no numeric_plan ran through a slot table under narrow marks";
}

TEST(PositionMarks, SumThroughTheWorkspace) {
  std::mt19937_64 rng(31);
  std::size_t bad = 0;
  for (int n : {1, 20, 100}) {
    // A row-wise sum through the workspace.
    auto A = random_operand<csr>(std::array<int, 2>{40, n}, 0.3, rng);
    auto B = random_operand<dcsr>(std::array<int, 2>{40, n}, 0.3, rng);
    tensor<double, csr_unsorted> C = pack<csr_unsorted>(coordinate_list<double, int>({40, n}));
    compute(C(i, j), A.t(i, j) - B.t(i, j), precompute(j));
    std::vector<double> ref(A.d.size());
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = A.d[x] - B.d[x];
    bad += mismatches(C, ref, "A - B -> csr_unsorted, n = " + std::to_string(n));
  }
  EXPECT_EQ(bad, 0u);
}
// compute_numeric into a pattern whose row names one coordinate twice in
// place of another of the product's (as many entries as the product's
// row, each of them reached): the run must report the row, not write the
// duplicate twice and drop the other value. Both accumulators: position
// marks (csr_unsorted) and the dense row (csr).
template <class FC>
std::size_t duplicate_case(std::mt19937_64& rng) {
  auto A = random_operand<csr>(std::array<int, 2>{6, 8}, 1.0, rng);  // full: so is every row of the product
  auto B = random_operand<csr>(std::array<int, 2>{8, 5}, 1.0, rng);
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({6, 5}));
  C(i, j) = A.t(i, k) * B.t(k, j);
  using T = tensor<double, FC>;
  using L1 = std::tuple_element_t<1, typename T::level_tuple>;
  const auto& l1 = std::get<1>(C.levels());
  std::vector<int> pos(l1.pos().begin(), l1.pos().end()), crd(l1.crd().begin(), l1.crd().end());
  crd[static_cast<std::size_t>(pos[2]) + 1] = crd[static_cast<std::size_t>(pos[2])];  // row 2: a coordinate twice
  T D({6, 5}, typename T::level_tuple{std::get<0>(C.levels()), L1(5, std::move(pos), std::move(crd))},
      std::vector<double>(C.values().begin(), C.values().end()));
  try {
    compute_numeric(D(i, j), A.t(i, k) * B.t(k, j));
  } catch (const tensorlev::error& e) {
    if (std::string(e.what()).find("outside the output's pattern in 1 row(s), the first at position 2") != std::string::npos)
      return 0;
    ADD_FAILURE() << fname<FC>() << ": " << e.what();
    return 1;
  }
  ADD_FAILURE() << fname<FC>() << ": a pattern with a coordinate twice was taken";
  return 1;
}

// The same with the duplicate added to the pattern row rather than put in
// place of another coordinate: every coordinate the product reaches stays
// in the pattern, so only the marking of the pattern (a column named
// twice) can find it. Row 2 of A B reaches columns 0 and 2; its pattern
// becomes (c, c, d). One thread and chunks.
template <class FC>
std::size_t duplicate_added_case(bool chunked) {
  coordinate_list<double, int> al({3, 3}), bl({3, 3});
  for (int r = 0; r < 3; ++r) al.push_back(std::array<int, 2>{r, r}, 1.0 + r);
  bl.push_back(std::array<int, 2>{0, 0}, 1.0);
  bl.push_back(std::array<int, 2>{1, 1}, 1.0);
  bl.push_back(std::array<int, 2>{2, 0}, 2.0);
  bl.push_back(std::array<int, 2>{2, 2}, 3.0);
  const auto A = pack<csr>(al);
  const auto B = pack<csr>(bl);
  tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({3, 3}));
  C(i, j) = A(i, k) * B(k, j);
  using T = tensor<double, FC>;
  using L1 = std::tuple_element_t<1, typename T::level_tuple>;
  const auto& l1 = std::get<1>(C.levels());
  std::vector<int> pos(l1.pos().begin(), l1.pos().end()), crd(l1.crd().begin(), l1.crd().end());
  crd.insert(crd.begin() + pos[2] + 1, crd[static_cast<std::size_t>(pos[2])]);
  ++pos[3];
  std::vector<double> vals(C.values().begin(), C.values().end());
  vals.push_back(0.0);
  T D({3, 3}, typename T::level_tuple{std::get<0>(C.levels()), L1(3, std::move(pos), std::move(crd))}, std::move(vals));
  const std::string what = fname<FC>() + (chunked ? " (chunked)" : "");
  try {
    if (chunked)
      compute_numeric(chunked_serial_executor{}, D(i, j), A(i, k) * B(k, j));
    else
      compute_numeric(D(i, j), A(i, k) * B(k, j));
  } catch (const tensorlev::error& e) {
    if (std::string(e.what()).find("outside the output's pattern in 1 row(s), the first at position 2") !=
        std::string::npos)
      return 0;
    ADD_FAILURE() << what << ": " << e.what();
    return 1;
  }
  ADD_FAILURE() << what << ": a pattern row naming a column twice (no product missing) was taken";
  return 1;
}

TEST(PositionMarks, PatternWithACoordinateTwice) {
  std::mt19937_64 rng(37);
  EXPECT_EQ(duplicate_case<csr_unsorted>(rng) + duplicate_case<csr>(rng), 0u);
  for (const bool chunked : {false, true})
    EXPECT_EQ(duplicate_added_case<csr_unsorted>(chunked) + duplicate_added_case<csr>(chunked), 0u);
}
// A one-thread run keeps its row for the thread's next run (docs/design.md,
// "Kept rows"). A product overflows 16-bit positions (reported when the
// level is finalized, after the loops, so its row is kept); then products
// of other shapes on the same thread, shorter and longer rows than the
// kept one, both accumulators, are checked entry by entry. Not tested: a
// run that throws inside the loops (out of memory) destroys the row it
// took out of the slot.
template <class FC>
std::size_t after_a_throw(std::mt19937_64& rng) {
  using short_pos = tensorlev::owning<std::int16_t>;
  const int m = 200;
  coordinate_list<double, int> pl({m, 1}), ql({1, m});
  for (int r = 0; r < m; ++r) {
    pl.push_back(std::array<int, 2>{r, 0}, 1.0);
    ql.push_back(std::array<int, 2>{0, r}, 1.0);
  }
  const auto P = pack<csr>(pl);
  const auto Q = pack<csr>(ql);
  auto C16 = pack<FC, short_pos>(coordinate_list<double, int>({m, m}));
  std::size_t bad = 0;
  try {
    C16(i, j) = P(i, k) * Q(k, j);  // 40000 entries
    ++bad, ADD_FAILURE() << fname<FC>() << ": 40000 entries taken into 16-bit positions";
  } catch (const tensorlev::overflow_error&) {
  }
  for (int p : {m, 30, 250}) {
    auto A = random_operand<csr>(std::array<int, 2>{50, 40}, 0.2, rng);
    auto B = random_operand<csr>(std::array<int, 2>{40, p}, 0.2, rng);
    std::vector<double> ref(static_cast<std::size_t>(50 * p), 0.0);
    for (int r = 0; r < 50; ++r)
      for (int q = 0; q < 40; ++q)
        for (int c = 0; c < p; ++c)
          ref[static_cast<std::size_t>(r * p + c)] += A.d[static_cast<std::size_t>(r * 40 + q)] * B.d[static_cast<std::size_t>(q * p + c)];
    tensor<double, FC> C = pack<FC>(coordinate_list<double, int>({50, p}));
    C(i, j) = A.t(i, k) * B.t(k, j);
    bad += mismatches(C, ref, fname<FC>() + " after an overflow, p = " + std::to_string(p));
  }
  return bad;
}

TEST(PositionMarks, KeptRowAfterAnOverflow) {
  std::mt19937_64 rng(41);
  EXPECT_EQ(after_a_throw<csr_unsorted>(rng) + after_a_throw<csr>(rng), 0u);
}
}  // namespace
