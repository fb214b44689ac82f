// Raw-array interop (interop/raw.hpp): CSR, CSC and COO views over arrays
// built here by plain loops (not by tensorlev), with every combination of
// position and coordinate types (32/64-bit, signed and unsigned offsets),
// sorted or not, unique or not, extents 0 and 1; SpMV and sums against a
// dense reference computed from the same arrays; zero-copy by pointer
// identity; lengths that disagree, bad extents and bad contents rejected
// with a message naming what and where.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tensorlev/interop/raw.hpp"
#include "tensorlev/tensorlev.hpp"

namespace {
using namespace tensorlev::indices;
namespace tl = tensorlev;

// A random matrix as triplets, its dense row-major form (duplicates
// summed), and CSR/CSC/COO arrays of stored types P (offsets) and C
// (indices). Entries of a row come sorted unless `shuffle`.
template <class P, class C>
struct raw_matrix {
  long long m = 0, n = 0;
  std::vector<double> dense;
  std::vector<P> ptr;  // CSR row offsets
  std::vector<C> idx;  // CSR columns
  std::vector<double> val;
  std::vector<P> cptr;  // CSC column offsets
  std::vector<C> cidx;  // CSC rows
  std::vector<double> cval;
  std::vector<C> rows, cols;  // COO (row-major order unless shuffled)
  std::vector<double> coo_val;
};

template <class P, class C>
raw_matrix<P, C> make_matrix(long long m, long long n, double fill, bool dups, bool shuffle, std::mt19937_64& rng) {
  raw_matrix<P, C> a;
  a.m = m, a.n = n;
  a.dense.assign(static_cast<std::size_t>(m * n), 0.0);
  std::vector<std::vector<std::pair<long long, double>>> by_row(static_cast<std::size_t>(m));
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> val(-4, 5);
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j)
      if (u(rng) < fill) {
        const int times = dups && u(rng) < 0.3 ? 2 : 1;
        for (int t = 0; t < times; ++t) {
          const double v = val(rng);
          by_row[static_cast<std::size_t>(i)].emplace_back(j, v);
          a.dense[static_cast<std::size_t>(i * n + j)] += v;
        }
      }
  if (shuffle)
    for (auto& r : by_row) std::shuffle(r.begin(), r.end(), rng);
  a.ptr.push_back(0);
  for (long long i = 0; i < m; ++i) {
    for (auto [j, v] : by_row[static_cast<std::size_t>(i)]) {
      a.idx.push_back(static_cast<C>(j));
      a.val.push_back(v);
      a.rows.push_back(static_cast<C>(i));
      a.cols.push_back(static_cast<C>(j));
      a.coo_val.push_back(v);
    }
    a.ptr.push_back(static_cast<P>(a.idx.size()));
  }
  // CSC by a counting pass over the rows (sorted rows within a column).
  a.cptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (C j : a.idx) ++a.cptr[static_cast<std::size_t>(j) + 1];
  for (std::size_t j = 1; j < a.cptr.size(); ++j) a.cptr[j] += a.cptr[j - 1];
  a.cidx.resize(a.idx.size());
  a.cval.resize(a.idx.size());
  std::vector<P> next(a.cptr.begin(), a.cptr.end() - 1);
  for (long long i = 0; i < m; ++i)
    for (P p = a.ptr[static_cast<std::size_t>(i)]; p < a.ptr[static_cast<std::size_t>(i) + 1]; ++p) {
      const auto j = static_cast<std::size_t>(a.idx[static_cast<std::size_t>(p)]);
      a.cidx[static_cast<std::size_t>(next[j])] = static_cast<C>(i);
      a.cval[static_cast<std::size_t>(next[j]++)] = a.val[static_cast<std::size_t>(p)];
    }
  return a;
}

std::vector<double> dense_spmv(const std::vector<double>& d, long long m, long long n, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m), 0.0);
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) y[static_cast<std::size_t>(i)] += d[static_cast<std::size_t>(i * n + j)] * x[static_cast<std::size_t>(j)];
  return y;
}

template <class T>
std::vector<double> values_of(const T& t) {
  return std::vector<double>(t.values().begin(), t.values().end());
}

// SpMV through a view, with x viewed from a vector and y written in place
// through a dense view; also y = A x into an owning vector.
template <class A>
void check_spmv(const A& Av, const std::vector<double>& dense, long long m, long long n, const std::string& what) {
  using I = typename A::index_type;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (long long j = 0; j < n; ++j) x[static_cast<std::size_t>(j)] = static_cast<double>(j % 7 - 3);
  const auto want = dense_spmv(dense, m, n, x);
  const auto xv = tl::vector_view<I>(n, std::as_const(x));
  std::vector<double> y(static_cast<std::size_t>(m), -99.0);
  auto yv = tl::vector_view<I>(m, y);
  yv(i) = Av(i, j) * xv(j);
  EXPECT_EQ(y, want) << what;
  tl::tensor<double, tl::dense_vector, I> y2({static_cast<I>(m)});
  y2(i) = Av(i, j) * xv(j) + Av(i, j) * xv(j) - Av(i, j) * xv(j);
  EXPECT_EQ(values_of(y2), want) << what << " (sum of three SpMVs)";
  EXPECT_NO_THROW(tl::validate(Av)) << what;
}

template <class P, class C>
void spmv_over_types(std::mt19937_64& rng) {
  const std::string types = std::to_string(sizeof(P) * 8) + (std::is_signed_v<P> ? "s" : "u") + "/" +
                            std::to_string(sizeof(C) * 8) + (std::is_signed_v<C> ? "s" : "u");
  for (auto [m, n] : {std::pair<long long, long long>{0, 0}, {0, 3}, {3, 0}, {1, 1}, {1, 6}, {7, 1}, {13, 9}, {40, 33}})
    for (double fill : {0.0, 0.2, 0.8}) {
      const std::string what = types + " " + std::to_string(m) + "x" + std::to_string(n) + " fill " + std::to_string(fill);
      // Sorted and unique: csr, csc, coo.
      auto a = make_matrix<P, C>(m, n, fill, false, false, rng);
      const auto A = tl::csr_view(m, n, std::as_const(a.ptr), std::as_const(a.idx), std::as_const(a.val));
      EXPECT_EQ(A.template level<1>().pos().data(), a.ptr.data()) << what;
      EXPECT_EQ(A.template level<1>().crd().data(), a.idx.data()) << what;
      EXPECT_EQ(A.values().data(), a.val.data()) << what;
      check_spmv(A, a.dense, m, n, "csr " + what);
      const auto B = tl::csc_view(m, n, std::as_const(a.cptr), std::as_const(a.cidx), std::as_const(a.cval));
      EXPECT_EQ(B.template level<1>().crd().data(), a.cidx.data()) << what;
      check_spmv(B, a.dense, m, n, "csc " + what);
      if constexpr (std::is_same_v<P, C>) {
        const auto K = tl::coo_view(m, n, static_cast<long long>(a.rows.size()), std::as_const(a.rows),
                                    std::as_const(a.cols), std::as_const(a.coo_val));
        EXPECT_EQ(K.template level<0>().crd().data(), a.rows.data()) << what;
        EXPECT_EQ(K.template level<1>().crd().data(), a.cols.data()) << what;
        check_spmv(K, a.dense, m, n, "coo " + what);
      }
      // Unsorted with duplicates: promised as such, still right.
      auto u = make_matrix<P, C>(m, n, fill, true, true, rng);
      constexpr tl::array_props loose{.sorted = false, .unique = false};
      const auto U = tl::csr_view<loose>(m, n, std::as_const(u.ptr), std::as_const(u.idx), std::as_const(u.val));
      check_spmv(U, u.dense, m, n, "unsorted non-unique csr " + what);
      if constexpr (std::is_same_v<P, C>) {
        const auto UK = tl::coo_view<loose>(m, n, static_cast<long long>(u.rows.size()), u.rows.data(), u.cols.data(),
                                            u.coo_val.data());
        check_spmv(UK, u.dense, m, n, "unsorted non-unique coo " + what);
      }
    }
}

TEST(RawInterop, SpmvOverEveryPositionAndCoordinateType) {
  std::mt19937_64 rng(1601);
  spmv_over_types<int, int>(rng);
  spmv_over_types<std::int64_t, int>(rng);
  spmv_over_types<std::size_t, int>(rng);
  spmv_over_types<std::uint32_t, int>(rng);
  spmv_over_types<std::int64_t, std::int64_t>(rng);
  spmv_over_types<int, std::int64_t>(rng);
}

// Views as operands of statements with sparse results, and a dense output
// viewed in place: C = A + B (CSR view + CSC view) into CSR, D = A * B^T.
TEST(RawInterop, SparseResultsFromViews) {
  std::mt19937_64 rng(1602);
  for (auto [m, n] : {std::pair<long long, long long>{0, 0}, {1, 1}, {5, 8}, {17, 11}}) {
    auto a = make_matrix<int, int>(m, n, 0.3, false, false, rng);
    auto b = make_matrix<int, int>(m, n, 0.3, false, false, rng);
    const auto A = tl::csr_view(m, n, a.ptr, a.idx, std::as_const(a.val));
    const auto Bv = tl::csc_view(m, n, b.cptr, b.cidx, std::as_const(b.cval));
    const auto Bi = tl::to_owning(Bv);  // a deep copy, with owned vectors
    if (!b.cidx.empty()) {
      EXPECT_NE(Bi.level<1>().crd().data(), b.cidx.data());
    }
    tl::tensor<double, tl::csr> C;
    C = tl::pack<tl::csr>(tl::coordinate_list<double, int>({static_cast<int>(m), static_cast<int>(n)}));
    const auto Bk = tl::coo_view(m, n, static_cast<long long>(b.rows.size()), b.rows, b.cols, std::as_const(b.coo_val));
    C(i, j) = A(i, j) + -Bk(i, j);
    std::vector<double> want(a.dense.size());
    for (std::size_t x = 0; x < want.size(); ++x) want[x] = a.dense[x] - b.dense[x];
    EXPECT_EQ(tl::to_dense(C), want) << m << "x" << n;
    // The owning copy and the view it came from, in one statement, into CSC.
    auto E = tl::pack<tl::csc>(tl::coordinate_list<double, int>({static_cast<int>(m), static_cast<int>(n)}));
    E(i, j) = Bi(i, j) + Bv(i, j);
    for (std::size_t x = 0; x < want.size(); ++x) want[x] = 2 * b.dense[x];
    EXPECT_EQ(tl::to_dense(E), want) << m << "x" << n;
    // Dense output in place: D(i, k) = sum_j A(i, j) * A(k, j), row-major.
    std::vector<double> d(static_cast<std::size_t>(m * m), 7.0);
    auto D = tl::dense_view(m, m, d);
    auto Ad = tl::dense_view<tl::dense_layout::col_major>(n, m, std::as_const(a.dense));  // A^T as n x m column-major
    D(i, k) = A(i, j) * Ad(j, k);
    std::vector<double> dwant(static_cast<std::size_t>(m * m), 0.0);
    for (long long r = 0; r < m; ++r)
      for (long long s = 0; s < m; ++s)
        for (long long j2 = 0; j2 < n; ++j2)
          dwant[static_cast<std::size_t>(r * m + s)] +=
              a.dense[static_cast<std::size_t>(r * n + j2)] * a.dense[static_cast<std::size_t>(s * n + j2)];
    EXPECT_EQ(d, dwant) << m << "x" << n;
  }
}

template <class Fn>
std::string error_of(Fn&& f) {
  try {
    f();
  } catch (const tl::error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RawInterop, LengthsThatDisagreeAreRejected) {
  const std::vector<int> ptr{0, 2, 3}, idx{0, 1, 1};
  const std::vector<double> val{1, 2, 3}, short_val{1, 2};
  EXPECT_NO_THROW((void)tl::csr_view(2, 2, ptr, idx, val));
  EXPECT_EQ(error_of([&] { (void)tl::csr_view(2, 2, ptr, idx, short_val); }),
            "tensorlev::csr_view: the values has 2 entries, expected 3");
  EXPECT_EQ(error_of([&] { (void)tl::csr_view(3, 2, ptr, idx, val); }),
            "tensorlev::csr_view: the row offsets has 3 entries, expected 4");
  EXPECT_EQ(error_of([&] { (void)tl::csc_view(2, 2, ptr, std::vector<int>{0, 1}, val); }),
            "tensorlev::csc_view: the row indices has 2 entries, expected 3");
  EXPECT_EQ(error_of([&] { (void)tl::coo_view(2, 2, 3, idx, std::vector<int>{0, 1}, val); }),
            "tensorlev::coo_view: the column indices has 2 entries, expected 3");
  EXPECT_EQ(error_of([&] { (void)tl::csr_view(-1, 2, ptr, idx, val); }), "tensorlev::csr_view: negative rows (-1)");
  EXPECT_EQ(error_of([&] { (void)tl::csr_view(2, 2, std::vector<int>{1, 2, 3}, idx, val); }),
            "tensorlev::csr_view: the first offset is 1, not 0");
  EXPECT_EQ(error_of([&] { (void)tl::dense_view(2, 3, val); }), "tensorlev::dense_view: the values has 3 entries, expected 6");
  const int* null = nullptr;
  EXPECT_EQ(error_of([&] { (void)tl::vector_view(3, null); }), "tensorlev::vector_view: the values is a null pointer");
  // Extents that do not fit the index arrays' type.
  EXPECT_EQ(error_of([&] { (void)tl::csr_view<tl::array_props{}, std::int64_t>(2, 3'000'000'000LL, ptr, idx, val); }),
            "tensorlev::csr_view: 3000000000 columns do not fit the index array's type");
  EXPECT_NE(error_of([&] { (void)tl::csr_view(2, 3'000'000'000LL, ptr, idx, val); }).find("does not fit the index type"),
            std::string::npos);
}

TEST(RawInterop, ValidateNamesTheFirstViolation) {
  const std::vector<double> val{1, 2, 3, 4};
  auto msg = [&](std::vector<int> ptr, std::vector<int> idx, long long n = 4) {
    const auto A = tl::csr_view(static_cast<long long>(ptr.size()) - 1, n, ptr, idx,
                                std::span<const double>(val.data(), idx.size()));
    return error_of([&] { tl::validate(A); });
  };
  EXPECT_EQ(msg({0, 2, 4}, {0, 3, 1, 2}), "(no error)");
  EXPECT_EQ(msg({0, 2, 4}, {3, 0, 1, 2}),
            "validate: level 1 (compressed): compressed level: coordinate 0 at position 1 (parent position 0) does not "
            "follow 3 in increasing order (the level is ordered and unique)");
  EXPECT_EQ(msg({0, 2, 4}, {0, 0, 1, 2}),
            "validate: level 1 (compressed): compressed level: coordinate 0 at position 1 (parent position 0) does not "
            "follow 0 in increasing order (the level is ordered and unique)");
  EXPECT_EQ(msg({0, 2, 4}, {0, 4, 1, 2}),
            "validate: level 1 (compressed): compressed level: coordinate 4 at position 1 (parent position 0) is "
            "outside [0, 4)");
  // A decreasing offset is a content violation validate reports.
  {
    const std::vector<int> ptr{0, 3, 2, 4}, idx{0, 1, 2, 3};
    const auto A = tl::csr_view(3, 4, ptr, idx, val);
    EXPECT_EQ(error_of([&] { tl::validate(A); }),
              "validate: level 1 (compressed): compressed level: the position array decreases at entry 2 (3 then 2)");
  }
  // Promised unsorted but unique: a repeat is still caught.
  {
    const std::vector<int> ptr{0, 3}, idx{2, 0, 2};
    const auto A = tl::csr_view<tl::array_props{.sorted = false}>(1, 4, ptr, idx, std::span<const double>(val.data(), 3));
    EXPECT_EQ(error_of([&] { tl::validate(A); }),
              "validate: level 1 (compressed): compressed level: coordinate 2 at position 2 (parent position 0) "
              "repeats the one at position 0 (the level is unique)");
  }
}

}  // namespace
