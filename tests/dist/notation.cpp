// Tensor distribution notation (dist/notation.hpp): the examples of DISTAL
// §3.2 with their exact P and F sets, the validity rules at compile time,
// blocked, non-uniform and nonzero-balanced splits, and the errors for
// extents that do not fit a statement.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tensorlev/dist/notation.hpp"

namespace {
using namespace tensorlev::dist;
using pset = std::set<std::vector<long long>>;

// Compile-time facts: orders, kinds, and the rules (the must-not-compile
// cases in tests/fail/dist_*.cpp check the messages).
using rows = distribution<"xy->x">;
using cols = distribution<"xy->y">;
using tiles = distribution<"xy->xy">;
using face = distribution<"xy->xy0">;
using repl = distribution<"xy->xy*">;
using hier = distribution<"[xy->xy, zw->z]">;
static_assert(rows::tensor_order == 2 && rows::machine_order() == 1 && rows::levels == 1);
static_assert(cols::statement().machine[0].tensor_dim == 1);
static_assert(face::machine_order() == 3 && face::statement().machine[2].kind == machine_dim_kind::fixed &&
              face::statement().machine[2].fixed == 0);
static_assert(repl::statement().machine[2].kind == machine_dim_kind::broadcast);
static_assert(hier::levels == 2 && hier::machine_order(0) == 2 && hier::machine_order(1) == 1);
static_assert(parse_notation("xy->yx").error == notation_error::none);
static_assert(parse_notation("xy->z").error == notation_error::unknown_machine_name);
static_assert(parse_notation("xx->x").error == notation_error::duplicate_tensor_name);
static_assert(parse_notation("xy->xx").error == notation_error::duplicate_machine_name);
static_assert(parse_notation("xy").error == notation_error::no_arrow);
static_assert(parse_notation("->x").error == notation_error::empty_tensor_side);
static_assert(parse_notation("xy->").error == notation_error::empty_machine_side);
static_assert(parse_notation("x1->x").error == notation_error::bad_tensor_name);
static_assert(parse_notation("xy->x+").error == notation_error::bad_machine_name);
static_assert(parse_notation("[xy->x, z->z]").error == notation_error::orders_differ);
static_assert(parse_notation("xy->x, y->y").error == notation_error::bad_list);
static_assert(parse_notation("x->x(12)*").level[0].machine[1].fixed == 12 &&
              parse_notation("x->x(12)*").level[0].machine_order == 3);
static_assert(parse_notation("xy->x00").level[0].machine_order == 3);  // one digit per machine dimension
static_assert(parse_notation("x->x(1").error == notation_error::bad_machine_name);
static_assert(parse_notation("x->x()").error == notation_error::bad_machine_name);
static_assert(block_bounds(100, 10, 3) == std::array<long long, 2>{30, 40});
static_assert(block_bounds(10, 4, 0) == std::array<long long, 2>{0, 3} &&
              block_bounds(10, 4, 3) == std::array<long long, 2>{8, 10});

// Every tensor coordinate of a box-shaped tensor.
template <class F>
void for_each_coord(const std::vector<long long>& dims, F f) {
  std::vector<long long> x(dims.size(), 0);
  for (long long d : dims)
    if (d == 0) return;
  while (true) {
    f(std::span<const long long>(x));
    std::size_t d = dims.size();
    while (d-- > 0) {
      if (++x[d] < dims[d]) break;
      x[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

TEST(DistNotation, VectorOf100On10Processors) {
  const distribution_map<distribution<"x->x">> m({100}, {10});
  std::map<std::vector<long long>, int> per_processor;
  for_each_coord({100}, [&](std::span<const long long> x) {
    const auto procs = m.processors_of(m.color_of(x));
    ASSERT_EQ(procs.size(), 1u);
    EXPECT_EQ(procs[0], std::vector<long long>{x[0] / 10});
    ++per_processor[procs[0]];
  });
  ASSERT_EQ(per_processor.size(), 10u);
  for (const auto& [p, n] : per_processor) EXPECT_EQ(n, 10) << "processor " << p[0];
  for (long long p = 0; p < 10; ++p) {
    const std::vector<long long> pc{p};
    EXPECT_EQ(m.box_of(pc), (block_box{{p * 10}, {p * 10 + 10}}));
  }
}

// P and F of the running example, 2x2 tensor on a 2x2x2 machine, exactly as
// printed in §3.2; then rows, columns, tiles and the fixed face.
TEST(DistNotation, RunningExampleXyToXyStar) {
  const distribution_map<repl> m({2, 2}, {2, 2, 2});
  std::map<std::vector<long long>, std::vector<long long>> P;
  for_each_coord({2, 2}, [&](std::span<const long long> x) { P[{x.begin(), x.end()}] = m.color_of(x); });
  const std::map<std::vector<long long>, std::vector<long long>> P_want{
      {{0, 0}, {0, 0}}, {{0, 1}, {0, 1}}, {{1, 0}, {1, 0}}, {{1, 1}, {1, 1}}};
  EXPECT_EQ(P, P_want);
  std::map<std::vector<long long>, pset> F;
  for (const auto& [x, c] : P) {
    const auto procs = m.processors_of(c);
    F[c] = pset(procs.begin(), procs.end());
  }
  const std::map<std::vector<long long>, pset> F_want{{{0, 0}, {{0, 0, 0}, {0, 0, 1}}},
                                                      {{0, 1}, {{0, 1, 0}, {0, 1, 1}}},
                                                      {{1, 0}, {{1, 0, 0}, {1, 0, 1}}},
                                                      {{1, 1}, {{1, 1, 0}, {1, 1, 1}}}};
  EXPECT_EQ(F, F_want);
  const std::vector<long long> p011{0, 1, 1}, p010{0, 1, 0};
  EXPECT_EQ(m.box_of(p011), (block_box{{0, 1}, {1, 2}}));
  EXPECT_FALSE(m.is_owner(p011));
  EXPECT_TRUE(m.is_owner(p010));
}

TEST(DistNotation, RowsColumnsTilesAndFace) {
  // 6x4 tensor. Rows over 3 processors: processor k holds rows 2k..2k+1, all columns.
  const distribution_map<rows> r({6, 4}, {3});
  const distribution_map<cols> c({6, 4}, {2});
  const distribution_map<tiles> t({6, 4}, {3, 2});
  const distribution_map<face> f({6, 4}, {3, 2, 2});
  for_each_coord({6, 4}, [&](std::span<const long long> x) {
    EXPECT_EQ(r.processors_of(r.color_of(x)), std::vector<std::vector<long long>>{{x[0] / 2}});
    EXPECT_EQ(c.processors_of(c.color_of(x)), std::vector<std::vector<long long>>{{x[1] / 2}});
    EXPECT_EQ(t.processors_of(t.color_of(x)), (std::vector<std::vector<long long>>{{x[0] / 2, x[1] / 2}}));
    EXPECT_EQ(f.processors_of(f.color_of(x)), (std::vector<std::vector<long long>>{{x[0] / 2, x[1] / 2, 0}}));
  });
  const std::vector<long long> r1{1}, c1{1}, t21{2, 1}, f211{2, 1, 1}, f210{2, 1, 0};
  EXPECT_EQ(r.box_of(r1), (block_box{{2, 0}, {4, 4}}));
  EXPECT_EQ(c.box_of(c1), (block_box{{0, 2}, {6, 4}}));
  EXPECT_EQ(t.box_of(t21), (block_box{{4, 2}, {6, 4}}));
  EXPECT_FALSE(f.box_of(f211).has_value());  // off the z = 0 face: holds nothing
  EXPECT_EQ(f.box_of(f210), (block_box{{4, 2}, {6, 4}}));
  // A 3-tensor onto a 2D grid, dimensions swapped (Figure 8c style): z over
  // the first machine dimension, x over the second; y spans its extent.
  const distribution_map<distribution<"xyz->zx">> s({4, 3, 6}, {3, 2});
  const std::vector<long long> s10{1, 0};
  EXPECT_EQ(s.box_of(s10), (block_box{{0, 0, 2}, {2, 3, 4}}));
}

// Every coordinate lands in the box of each processor its color maps to,
// and in no other, for non-divisible extents and every statement.
template <class D>
void check_consistent(std::vector<long long> dims, std::vector<long long> machine) {
  const distribution_map<D> m(dims, machine);
  std::vector<std::vector<long long>> all_procs;
  for_each_coord(machine, [&](std::span<const long long> p) { all_procs.emplace_back(p.begin(), p.end()); });
  for_each_coord(dims, [&](std::span<const long long> x) {
    const auto procs = m.processors_of(m.color_of(x));
    const pset holders(procs.begin(), procs.end());
    std::size_t owners = 0;
    for (const auto& p : all_procs) {
      const auto box = m.box_of(p);
      EXPECT_EQ(box.has_value() && box->contains(x), holders.count(p) == 1) << D::text;
      owners += holders.count(p) == 1 && m.is_owner(p) ? 1 : 0;
    }
    EXPECT_EQ(owners, 1u) << D::text;
  });
}

TEST(DistNotation, BoxesAgreeWithPAndF) {
  check_consistent<distribution<"x->x">>({7}, {3});
  check_consistent<distribution<"x->x">>({2}, {5});  // more processors than components: empty pieces
  check_consistent<rows>({7, 3}, {4});
  check_consistent<tiles>({7, 5}, {3, 2});
  check_consistent<face>({5, 5}, {2, 2, 3});
  check_consistent<distribution<"xy->x2*">>({5, 3}, {2, 3, 2});
  check_consistent<distribution<"xyz->yx*">>({3, 4, 2}, {2, 3, 2});
}

TEST(DistNotation, Hierarchical) {
  // [xy->xy, zw->z]: 8x6 tiles over a 2x2 grid of nodes, then each tile's
  // rows over 2 devices of its node.
  const distribution_map<hier> nodes({8, 6}, {2, 2});
  const std::vector<long long> node{1, 0};
  const auto tile = nodes.box_of(node);
  ASSERT_TRUE(tile.has_value());
  EXPECT_EQ(*tile, (block_box{{4, 0}, {8, 3}}));
  const distribution_map<hier> inner({tile->extent(0), tile->extent(1)}, {2}, 1);
  const std::vector<long long> dev1{1};
  EXPECT_EQ(inner.box_of(dev1), (block_box{{2, 0}, {4, 3}}));  // rows 6..7 of the tensor, local to the tile
  EXPECT_THROW((distribution_map<hier>({8, 6}, {2, 2}, 2)), tensorlev::shape_error);
}

TEST(DistNotation, SplitPoints) {
  distribution_map<rows> m({10, 4}, {3});
  EXPECT_EQ(m.splits(0), (std::vector<long long>{0, 4, 7, 10}));
  m.set_splits(0, {0, 1, 1, 10});
  const std::vector<long long> x5{5, 0}, x0{0, 3};
  EXPECT_EQ(m.color_of(x5), std::vector<long long>{2});
  EXPECT_EQ(m.color_of(x0), std::vector<long long>{0});
  const std::vector<long long> p1{1};
  EXPECT_EQ(m.box_of(p1), (block_box{{1, 0}, {1, 4}}));  // an empty piece
  EXPECT_THROW(m.set_splits(0, {0, 5, 10}), tensorlev::shape_error);
  EXPECT_THROW(m.set_splits(0, {0, 6, 5, 10}), tensorlev::shape_error);
  EXPECT_THROW(m.set_splits(0, {1, 2, 3, 10}), tensorlev::shape_error);
  EXPECT_THROW(m.set_splits(1, {0, 1, 2, 4}), tensorlev::shape_error);  // columns are not partitioned
  // Balanced by nonzeros: rows of 1, 1, 1, 9, 1, 1, 1, 1 entries over 3 pieces.
  const std::vector<int> row_ptr{0, 1, 2, 3, 12, 13, 14, 15, 16};
  EXPECT_EQ(balanced_splits<int>(row_ptr, 3), (std::vector<long long>{0, 3, 4, 8}));
  EXPECT_EQ(balanced_splits<int>(row_ptr, 1), (std::vector<long long>{0, 8}));
  const std::vector<int> empty_rows{0, 0, 0};
  EXPECT_EQ(balanced_splits<int>(empty_rows, 2), (std::vector<long long>{0, 0, 2}));
  EXPECT_THROW((void)balanced_splits<int>(row_ptr, 0), tensorlev::shape_error);
}

TEST(DistNotation, ExtentsThatDoNotFit) {
  using M = distribution_map<face>;
  EXPECT_THROW(M({4}, {2, 2, 2}), tensorlev::shape_error);        // order 1 for xy
  EXPECT_THROW(M({4, 4}, {2, 2}), tensorlev::shape_error);        // 2 machine dims for 3 entries
  EXPECT_THROW(M({4, 4}, {2, 2, 0}), tensorlev::shape_error);     // no processors
  EXPECT_THROW(M({4, -1}, {2, 2, 2}), tensorlev::shape_error);    // negative extent
  EXPECT_THROW((distribution_map<distribution<"xy->xy3">>({4, 4}, {2, 2, 2})), tensorlev::shape_error);
  try {
    (void)distribution_map<distribution<"xy->xy3">>({4, 4}, {2, 2, 2});
  } catch (const tensorlev::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("fixed index 3 is outside machine dimension 2"), std::string::npos) << e.what();
  }
}

}  // namespace
