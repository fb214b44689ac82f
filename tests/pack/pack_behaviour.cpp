// Duplicate policies, bad input, printing and index-type limits of pack.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <map>
#include <tuple>
#include <sstream>

#include "../support/format_lists.hpp"
#include "../support/reference.hpp"

using namespace tensorlev;

namespace {
coordinate_list<double> with_duplicates() {
  coordinate_list<double> l({3, 4});
  l.push_back({1, 2}, 1.0);
  l.push_back({0, 3}, 5.0);
  l.push_back({1, 2}, 2.0);
  l.push_back({1, 2}, 4.0);
  return l;
}
double at(const tensor<double, csr>& t, int i, int j) { return to_dense(t)[static_cast<std::size_t>(i * 4 + j)]; }
}  // namespace

TEST(Duplicates, SumIsTheDefault) { EXPECT_EQ(at(pack<csr>(with_duplicates()), 1, 2), 7.0); }
TEST(Duplicates, FirstKeepsTheFirstInInputOrder) {
  EXPECT_EQ(at(pack<csr>(with_duplicates(), duplicates::first), 1, 2), 1.0);
}
TEST(Duplicates, LastKeepsTheLastInInputOrder) {
  EXPECT_EQ(at(pack<csr>(with_duplicates(), duplicates::last), 1, 2), 4.0);
}
TEST(Duplicates, ErrorNamesTheCoordinates) {
  try {
    (void)pack<csr>(with_duplicates(), duplicates::error);
    FAIL() << "no exception";
  } catch (const duplicate_error& e) {
    EXPECT_NE(std::string(e.what()).find("(1,2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CSR"), std::string::npos) << e.what();
  }
}
TEST(Duplicates, PoliciesHoldInEveryFormat) {
  // The same policy gives the same tensor whatever the format.
  const auto ref = to_dense(pack<csr>(with_duplicates(), duplicates::last));
  EXPECT_EQ(to_dense(pack<coo>(with_duplicates(), duplicates::last)), ref);
  EXPECT_EQ(to_dense(pack<dia>(with_duplicates(), duplicates::last)), ref);
  EXPECT_EQ(to_dense(pack<ell>(with_duplicates(), duplicates::last)), ref);
  EXPECT_EQ(to_dense(pack<bcsr<2>>(with_duplicates(), duplicates::last)), ref);
  EXPECT_EQ(to_dense(pack<tltest::hash_rows>(with_duplicates(), duplicates::last)), ref);
}

TEST(BadInput, OrderMismatchNamesBothOrders) {
  coordinate_list<double> l({3, 4, 5});
  try {
    (void)pack<csr>(l);
    FAIL();
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "pack: the coordinate list has order 3 but format CSR has order 2");
  }
}
TEST(BadInput, CoordinateOutOfRangeIsRejectedWhenAdded) {
  coordinate_list<double> l({3, 4});
  EXPECT_THROW(l.push_back({3, 0}, 1.0), shape_error);
  EXPECT_THROW(l.push_back({0, -1}, 1.0), shape_error);
  EXPECT_THROW(l.push_back({0, 1, 2}, 1.0), shape_error);
  EXPECT_THROW(coordinate_list<double>({-1, 2}), shape_error);
  EXPECT_EQ(l.size(), 0u);
}
TEST(BadInput, DataThatDoesNotFitABranchlessLevel) {
  // (compressed, singleton) with unique rows: two entries in a row cannot
  // hang under one singleton parent.
  using bad_coo = format<levels<compressed<>, singleton<>>>;
  coordinate_list<double> l({3, 4});
  l.push_back({1, 0}, 1.0);
  l.push_back({1, 3}, 1.0);
  try {
    (void)pack<bad_coo>(l);
    FAIL();
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("level 1 (singleton) is branchless"), std::string::npos) << e.what();
  }
  // One entry per row fits.
  coordinate_list<double> ok({3, 4});
  ok.push_back({1, 3}, 1.0);
  ok.push_back({2, 0}, 1.0);
  EXPECT_EQ(pack<bad_coo>(ok).stored(), 2u);
}
TEST(BadInput, IndexTypeOverflowInADenseLevel) {
  // 100000 x 100000 dense positions do not fit a 32-bit index.
  coordinate_list<double, std::int32_t> l({100000, 100000});
  l.push_back({5, 7}, 1.0);
  EXPECT_THROW((void)pack<dense_row_major>(l), overflow_error);
  EXPECT_EQ(pack<csr>(l).stored(), 1u);  // CSR needs no product of sizes
  coordinate_list<double, std::int64_t> l64({3000000000LL, 3000000000LL});
  l64.push_back({2999999999LL, 7}, 1.0);
  const auto a = pack<dcsr>(l64);  // DCSR: no array proportional to the 3e9 rows
  EXPECT_THROW((void)pack<csr>(coordinate_list<double, std::int32_t>({-5, 2})), shape_error);
  EXPECT_EQ(a.dimension(0), 3000000000LL);
  std::size_t seen = 0;
  for_each_component(a, [&](const auto& x, double) { seen += (x[0] == 2999999999LL && x[1] == 7); });
  EXPECT_EQ(seen, 1u);
}
TEST(BadInput, CheckedIndexNamesTheValue) {
  try {
    (void)checked_index<std::int32_t>(3000000000LL, "dimension");
    FAIL();
  } catch (const overflow_error& e) {
    EXPECT_STREQ(e.what(), "dimension 3000000000 does not fit the index type (32-bit)");
  }
}
TEST(BadInput, FromDenseChecksTheSize) {
  std::vector<double> a(5, 1.0);
  EXPECT_THROW((void)(from_dense<csr, double, int>({2, 3}, a)), shape_error);
  a.push_back(0.0);
  EXPECT_EQ((from_dense<csr, double, int>({2, 3}, a).stored()), 5u);  // the zero is not stored
}

TEST(Printing, Formats) {
  EXPECT_EQ(to_string<csr>(), "CSR = (dense d0, compressed d1)");
  EXPECT_EQ(to_string<csc>(), "CSC = (dense d1, compressed d0)");
  EXPECT_EQ(to_string<coo>(), "COO = (compressed{non-unique} d0, singleton d1)");
  EXPECT_EQ(to_string<coo_aos>(), "COO-AoS = (compressed-aos{non-unique} d0, singleton-aos d1)");
  EXPECT_EQ(to_string<dcsr>(), "DCSR = (compressed d0, compressed d1)");
  EXPECT_EQ(to_string<ell>(), "ELL = (dense slot(d0), dense d0, singleton d1)");
  EXPECT_EQ(to_string<dia>(), "DIA = (dense diag(d1-d0), range d0, offset d1)");
  EXPECT_EQ(to_string<bcsr<4>>(), "BCSR = (dense d0/4, compressed d1/4, dense d0%4, dense d1%4)");
  EXPECT_EQ(to_string<csb<8>>(), "CSB = (dense d0/8, dense d1/8, compressed{non-unique} d0%8, singleton d1%8)");
  EXPECT_EQ(to_string<csf>(), "CSF = (compressed d0, compressed d1, compressed d2)");
  EXPECT_EQ(to_string<coo_tensor<3>>(),
            "COO = (compressed{non-unique} d0, singleton{non-unique} d1, singleton d2)");
  EXPECT_EQ(to_string<mode_generic>(), "mode-generic = (compressed{non-unique} d0, singleton d1, dense d2)");
  EXPECT_EQ(to_string<hash_vector>(), "hash vector = (hashed{unordered} d0)");
  EXPECT_EQ(to_string<dense_col_major>(), "dense column-major = (dense d1, dense d0)");
  EXPECT_EQ((to_string<format<levels<dense<>, compressed<>>, modes<1, 0>>>()), "(dense d1, compressed d0)");
}
TEST(Printing, Tensors) {
  coordinate_list<double> l({3, 4});
  l.push_back({2, 3}, 1.5);
  l.push_back({0, 1}, 2.0);
  EXPECT_EQ(to_string(pack<csr>(l)),
            "tensor 3x4 CSR = (dense d0, compressed d1), 2 stored\n"
            "  (0,1): 2\n"
            "  (2,3): 1.5\n");
  // DIA stores whole diagonals: the in-range zero on diagonal +1 shows.
  EXPECT_EQ(to_string(pack<dia>(l)),
            "tensor 3x4 DIA = (dense diag(d1-d0), range d0, offset d1), 3 stored\n"
            "  (0,1): 2\n"
            "  (1,2): 0\n"
            "  (2,3): 1.5\n");
}

TEST(Levels, ArraysOfASmallCsrAreTheTextbookOnes) {
  // The CSR of Figure 2 in seed 003 style: check pos/crd directly.
  coordinate_list<double> l({4, 6});
  l.push_back({0, 0}, 5);
  l.push_back({0, 1}, 1);
  l.push_back({1, 0}, 7);
  l.push_back({1, 1}, 3);
  l.push_back({3, 0}, 8);
  l.push_back({3, 3}, 4);
  l.push_back({3, 4}, 9);
  const auto a = pack<csr>(l);
  EXPECT_EQ(a.level<1>().pos(), (std::vector<int>{0, 2, 4, 4, 7}));
  EXPECT_EQ(a.level<1>().crd(), (std::vector<int>{0, 1, 0, 1, 0, 3, 4}));
  const auto d = pack<dia>(l);
  EXPECT_EQ(d.level<1>().offsets(), (std::vector<int>{-3, -1, 0, 1}));
  const auto e = pack<ell>(l);
  EXPECT_EQ(e.level<0>().dimension(), 3);  // longest row has 3 entries
  coordinate_list<double> v({10});
  v.push_back({7}, 1.0);
  v.push_back({3}, 2.0);
  const auto h = pack<hash_vector>(v);
  EXPECT_EQ(h.level<0>().buckets(0), 4);  // bit_ceil(2 * 2)
  EXPECT_EQ(h.level<0>().seg(), (std::vector<int>{0, 4}));
  EXPECT_EQ(h.stored(), 4u);
}

// Issue 15, item 6: a hashed level sizes each parent's bucket segment by
// that parent's own children, so one long row does not make every row as
// long. 10,000 rows, one of 2,000 entries, the others 0, 1 or 2 entries:
// with one width for all rows this took ~491 MB against CSR's ~184 KB.
TEST(Levels, HashRowsStorageIsProportionalToTheNonzeros) {
  constexpr int rows = 10000, cols = 10000, long_row = 4321, long_len = 2000;
  coordinate_list<double> l({rows, cols});
  for (int r = 0; r < rows; ++r) {
    const int len = r == long_row ? long_len : r % 3;
    for (int k = 0; k < len; ++k) l.push_back({r, (r * 7 + k * 5) % cols}, 1.0 + r + 0.5 * k);
  }
  const auto a = pack<csr>(l);
  const auto h = pack<tltest::hash_rows>(l);
  const std::size_t csr_bytes = a.storage_bytes(), hash_bytes = h.storage_bytes();
  EXPECT_LE(hash_bytes, 4 * csr_bytes) << "hash rows " << hash_bytes << " B, CSR " << csr_bytes << " B";
  // Every entry is found under its row, with CSR's value; absent ones are not.
  const auto& cl = a.level<1>();
  const auto& hl = h.level<1>();
  std::size_t bad = 0, stored = 0;
  for (int r = 0; r < rows; ++r) {
    const ancestor_coord<int> anc_coords[2] = {r, 0};
    const ancestors<int> anc(anc_coords, 1);
    const bounds<int> b = cl.pos_bounds(r);
    stored += static_cast<std::size_t>(b.end - b.begin);
    for (int p = b.begin; p < b.end; ++p) {
      const located<int> f = hl.locate(r, anc, cl.crd()[static_cast<std::size_t>(p)]);
      if (!f.found || h.values()[static_cast<std::size_t>(f.pos)] != a.values()[static_cast<std::size_t>(p)]) ++bad;
    }
    const int absent = (r * 7 + 1) % cols;  // the row holds (7r + 5k) % cols only
    if (hl.locate(r, anc, absent).found) ++bad;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(tltest::components(h), stored);
}

// A parent without children has no buckets: locate says not found (and
// reads nothing), insert refuses it; adopted segments are checked.
TEST(Levels, HashedParentsWithoutBucketsAndAdoptedSegments) {
  const std::vector<int> children{2, 0, 1};
  hashed_level<int> h(level_shape<int>{10, 0, 2, {}, std::span<const int>(children)});
  EXPECT_EQ(h.size(3), 4 + 0 + 2);
  EXPECT_THROW((void)h.size(2), error);
  h.insert_init(3, 6);
  const ancestor_coord<int> anc_coords[1] = {0};
  const ancestors<int> anc(anc_coords, 0);
  for (int c : {3, 9}) h.insert_coord(h.locate(0, anc, c).pos, c);
  h.insert_coord(h.locate(2, anc, 9).pos, 9);
  EXPECT_EQ(h.buckets(1), 0);
  EXPECT_EQ(h.pos_bounds(1).begin, h.pos_bounds(1).end);
  const located<int> none = h.locate(1, anc, 3);
  EXPECT_FALSE(none.found);
  EXPECT_THROW(h.insert_coord(none.pos, 3), error);
  EXPECT_TRUE(h.locate(0, anc, 9).found && h.locate(2, anc, 9).found && !h.locate(2, anc, 3).found);
  h.insert_coord(h.locate(2, anc, 5).pos, 5);  // parent 2's second bucket
  const located<int> full = h.locate(2, anc, 7);
  EXPECT_FALSE(full.found);
  EXPECT_THROW(h.insert_coord(full.pos, 7), error);
  EXPECT_EQ(h.bytes(), (4 + 6) * sizeof(int));  // seg and crd
  // Adopted arrays: seg must start at 0, end at crd.size() and grow by 0
  // or a power of two.
  const hashed_level<int> a(10, {0, 2, 2, 3}, {4, -1, 7});
  EXPECT_TRUE(a.locate(2, anc, 7).found && !a.locate(1, anc, 7).found);
  EXPECT_THROW(hashed_level<int>(10, {0, 3}, {1, 2, -1}), error);
  EXPECT_THROW(hashed_level<int>(10, {0, 2}, {1, 2, -1}), error);
  EXPECT_THROW(hashed_level<int>(10, {1, 3}, {1, 2, -1}), error);
  EXPECT_THROW(hashed_level<int>(10, {}, {}), error);
}

TEST(Tensors, CopyAndMoveKeepArrayOfStructsLinked) {
  auto c = [] {
    std::mt19937_64 rng(5);
    return tltest::make_case<double, int, 2>({7, 9}, 20, 3, rng);
  }();
  auto a = pack<coo_aos>(c.list);
  auto b = a;                 // copy: b's singleton lane must read b's tuples
  a = pack<coo_aos>(coordinate_list<double>({7, 9}));  // a now empty; old buffer freed
  EXPECT_EQ(tltest::mismatches(b, c.dense, "copy"), 0u);
  auto m = std::move(b);
  EXPECT_EQ(tltest::mismatches(m, c.dense, "move"), 0u);
  tensor<double, coo_aos> assigned = pack<coo_aos>(coordinate_list<double>({7, 9}));
  assigned = m;
  EXPECT_EQ(tltest::mismatches(assigned, c.dense, "assign"), 0u);
}

TEST(CoordinateList, FromArraysChecksEveryCoordinate) {
  const coordinate_list<double> ok({2, 3}, {0, 1, 1, 2}, {5.0, 6.0});
  EXPECT_EQ(ok.size(), 2u);
  EXPECT_EQ(to_dense(pack<csr>(ok)), (std::vector<double>{0, 5, 0, 0, 0, 6}));
  try {
    (void)coordinate_list<double>({2, 3}, {0, 1, 1, 3}, {5.0, 6.0});
    FAIL();
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "coordinate_list: entry 1: coordinate 3 of dimension 1 is outside [0, 3)");
  }
  EXPECT_THROW((coordinate_list<double>({2, 3}, {0, 1, 1}, {5.0, 6.0})), shape_error);
}

namespace {
// Sorted (coordinates, value) listing of a tensor, for formats too large
// for a dense reference.
template <class T>
std::vector<std::pair<std::vector<std::int64_t>, double>> listing(const T& t) {
  std::vector<std::pair<std::vector<std::int64_t>, double>> out;
  for_each_component(t, [&](const auto& x, double v) { out.push_back({{x.begin(), x.end()}, v}); });
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST(PackPaths, ExtentsBeyond64BitKeysUseTheComparisonSort) {
  // 3e9^3 positions do not fit a 64-bit key: the general path sorts.
  const std::int64_t big = 3000000000LL;
  coordinate_list<double, std::int64_t> l({big, big, big});
  l.push_back({big - 1, 5, 7}, 1.0);
  l.push_back({2, big - 1, 0}, 2.0);
  l.push_back({big - 1, 5, 7}, 4.0);  // duplicate
  l.push_back({2, 0, big - 1}, 8.0);
  const std::vector<std::pair<std::vector<std::int64_t>, double>> expected{
      {{2, 0, big - 1}, 8.0}, {{2, big - 1, 0}, 2.0}, {{big - 1, 5, 7}, 5.0}};
  EXPECT_EQ(listing(pack<coo_tensor<3>>(l)), expected);
  EXPECT_EQ(listing(pack<csf>(l)), expected);
  EXPECT_EQ(listing(pack<coo_tensor<3>>(l, duplicates::last)).back().second, 4.0);
  EXPECT_THROW((void)pack<csf>(l, duplicates::error), duplicate_error);
}

TEST(PackPaths, InnerKeyOfExactly64BitsFallsBack) {
  // Top extent 1 and an inner range above 2^63: the 64-bit key would need a
  // shift by 64, so pack takes the general path.
  const std::int64_t wide = std::int64_t{1} << 62;
  coordinate_list<double, std::int64_t> l({1, wide, 3});
  l.push_back({0, wide - 1, 2}, 1.0);
  l.push_back({0, 5, 1}, 2.0);
  const std::vector<std::pair<std::vector<std::int64_t>, double>> expected{{{0, 5, 1}, 2.0},
                                                                           {{0, wide - 1, 2}, 1.0}};
  EXPECT_EQ(listing(pack<csf>(l)), expected);
}

TEST(PackPaths, BlockPaddingThatOverflowsTheIndexTypeIsRejected) {
  // Rows rounded up to whole 3-row blocks exceed INT32_MAX.
  coordinate_list<double, std::int32_t> l({2147483647, 1});
  EXPECT_THROW((void)pack<bcsr<3>>(l), overflow_error);
}

TEST(Tensors, DiaCopiesKeepTheirOwnSharedOffsets) {
  coordinate_list<double> l({5, 6});
  l.push_back({0, 3}, 1.0);
  l.push_back({4, 0}, 2.0);
  l.push_back({2, 2}, 3.0);
  const auto ref = to_dense(pack<csr>(l));
  tensor<double, dia> copy = pack<dia>(coordinate_list<double>({5, 6}));
  {
    const auto src = pack<dia>(l);
    copy = src;
  }  // src destroyed: copy's offset level must read copy's range offsets
  EXPECT_EQ(to_dense(copy), ref);
  auto moved = std::move(copy);
  EXPECT_EQ(to_dense(moved), ref);
  tensor<double, dia> again(moved);
  moved = pack<dia>(coordinate_list<double>({5, 6}));
  EXPECT_EQ(to_dense(again), ref);
  auto& same = again;  // through a reference, so that compilers do not warn of the self-move
  again = std::move(same);  // self-move leaves it intact
  EXPECT_EQ(to_dense(again), ref);
}

TEST(CoordinateList, PushBackOfItsOwnCoordinates) {
  coordinate_list<double> l({3, 3});
  l.push_back({1, 2}, 1.0);
  for (int k = 0; k < 100; ++k) l.push_back(l.coords(0), 1.0);  // forces reallocation while aliased
  EXPECT_EQ(to_dense(pack<csr>(l))[5], 101.0);
}

TEST(Convert, DropsStoredZerosOnRequest) {
  coordinate_list<double> l({1000, 1000});
  l.push_back({0, 0}, 1.0);
  l.push_back({999, 999}, 2.0);
  const auto d = pack<dia>(l);  // one diagonal: 1000 stored values
  EXPECT_EQ(d.stored(), 1000u);
  EXPECT_EQ(convert<csr>(d).stored(), 1000u);                       // kept: lossless
  EXPECT_EQ(convert<csr>(d, stored_zeros::drop).stored(), 2u);      // dropped
  EXPECT_EQ(to_dense(convert<csr>(d, stored_zeros::drop)), to_dense(d));
}

TEST(PackPaths, StableOrderOfDuplicatesInLongAndShortBuckets) {
  // first/last must follow input order whatever sort path pack takes:
  // a skewed matrix (one row of 3000 entries among short rows: bucket
  // merge sort) and a wide one (hundreds per row: LSD counting passes).
  for (auto [rows, cols, heavy] : {std::tuple{1000, 700, true}, std::tuple{40, 5000, false}}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(rows));
    coordinate_list<double> l({rows, cols});
    std::map<std::pair<int, int>, std::array<double, 3>> ref;  // first, last, sum
    for (int e = 0; e < 20000; ++e) {
      const int i = heavy && e % 4 != 0 ? 0 : static_cast<int>(rng() % static_cast<unsigned>(rows));
      const int j = static_cast<int>(rng() % static_cast<unsigned>(heavy ? 50 : cols));  // many duplicates
      const double v = static_cast<double>(e % 97) - 48.0;
      l.push_back({i, j}, v);
      auto [it, fresh] = ref.try_emplace({i, j}, std::array<double, 3>{v, v, 0.0});
      it->second[1] = v;
      it->second[2] += v;
    }
    for (int p = 0; p < 3; ++p) {
      const auto policy = p == 0 ? duplicates::first : p == 1 ? duplicates::last : duplicates::sum;
      const auto a = pack<csr>(l, policy);
      std::size_t bad = 0, seen = 0;
      for_each_component(a, [&](const auto& x, double v) {
        ++seen;
        bad += ref.at({x[0], x[1]})[static_cast<std::size_t>(p)] != v;
      });
      EXPECT_EQ(seen, ref.size());
      EXPECT_EQ(bad, 0u) << "policy " << p << " rows " << rows;
    }
  }
}
