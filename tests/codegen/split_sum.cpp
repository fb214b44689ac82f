// Split sums (plan.hpp split_sum; kernel `point`): an innermost reduction
// driven by the extent alone (dense operands) or by a level with the
// long_ranges hint (csr_long_rows) runs as W / 2 partial sums over groups
// of W / 2 (W = split_sum_ways = 8) when the range holds W / 2 (dense) or W
// (long_ranges) or more positions, and as W sums over groups of W, then
// one group of W / 2 if that many remain, when it holds L = split_sum_long
// (32) or more.
// Which statements split (static_asserts on the plans), the printed nest,
// the summation order bit for bit (dense vectors, a scalar sum over the
// rows of a matrix, csr_long_rows rows), and generated cases against dense
// references: every row length from 0 to 41 (below, at and above the
// thresholds below L, every remainder of W and of W / 2), extents 0 and 1, `=` and
// `+=`, negations, constants, a scalar operand, a repeated operand (x
// twice; A twice merges two iterators and does not split), a transposed
// operand, an operand located at every entry that may miss (a hash
// vector), a scalar output (the split loop adds into the same sum across
// rows), a matrix output with the reduction innermost, csr_long_rows as an
// output (pack, convert, an element-wise sum into it), float and double,
// 64-bit indices, NaN and infinity in groups, half groups and remainders,
// serial and in chunks. Values are small integers (every sum exact) except
// in the order and rounding cases.
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tensorlev/execution.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class Out, class E>
constexpr bool splits() {
  constexpr auto d = tensorlev::cg::describe<Out, E, false>();
  constexpr auto o = tensorlev::cg::make_order(d, 0);
  static_assert(o.n > 0);
  constexpr auto p = tensorlev::cg::plan_loop(d, o, o.n - 1, 0);
  return tensorlev::cg::split_sum(d, o, p, o.n - 1, 0);
}

constexpr int W = tensorlev::cg::split_sum_ways;
constexpr int L = tensorlev::cg::split_sum_long;
static_assert(W == 8 && L >= 2 * W);  // one 64-byte vector of double sums, on ranges of several groups

template <class T>
T& lval();
using vec_t = tensor<double, dense_vector>;
template <class F>
using spmv_t = decltype(lval<const tensor<double, F>>()(i, j) * lval<const vec_t>()(j));
using y_i = decltype(lval<vec_t>()(i));

// ---- which statements split -----------------------------------------------------

static_assert(tensorlev::csr_long_rows::order == 2);
static_assert(splits<y_i, spmv_t<csr_long_rows>>());
static_assert(!splits<y_i, spmv_t<csr>>());  // no hint: rows of mixed short lengths lose (bench/README)
static_assert(splits<y_i, spmv_t<dense_row_major>>());  // the extent drives: every row the same length
static_assert(!splits<y_i, spmv_t<dense_col_major>>());  // loops j, i (its storage order): i innermost
static_assert(!splits<y_i, spmv_t<csc>>());
static_assert(!splits<y_i, spmv_t<coo>>());
static_assert(!splits<y_i, spmv_t<dcsr>>());
static_assert(!splits<y_i, spmv_t<hash_rows>>());
// Two sparse operands merged (a union or an intersection): not split.
using long_t = tensor<double, csr_long_rows>;
static_assert(!splits<y_i, decltype(lval<const long_t>()(i, j) * lval<const vec_t>()(j) +
                                    lval<const long_t>()(i, j) * lval<const long_t>()(i, j))>());
static_assert(!splits<y_i, decltype(lval<const long_t>()(i, j) * lval<const tensor<double, sparse_vector>>()(j))>());
static_assert(!splits<y_i, decltype(lval<const long_t>()(i, j) * lval<const long_t>()(i, j))>());
// Operands located at each entry do not stop it: x twice, a hash vector.
static_assert(splits<y_i, decltype(lval<const long_t>()(i, j) * lval<const vec_t>()(j) * lval<const vec_t>()(j))>());
static_assert(splits<y_i, decltype(lval<const long_t>()(i, j) * lval<const tensor<double, hash_vector>>()(j))>());
// The hint on an output level changes nothing: an element-wise sum.
static_assert(!splits<decltype(lval<long_t>()(i, j)), decltype(lval<const long_t>()(i, j) + lval<const long_t>()(i, j))>());

TEST(SplitSum, PrintedLoopNest) {
  const long_t A = pack<csr_long_rows>(coordinate_list<double, int>(std::vector<int>{3, 4}));
  const tensor<double, csr> B = pack<csr>(coordinate_list<double, int>(std::vector<int>{3, 4}));
  vec_t x({4}), y({3});
  const std::string s = loop_nest(y(i), A(i, j) * x(j), std::vector<std::string>{"y", "A", "x"});
  const std::string w = std::to_string(W), half = std::to_string(W / 2);
  const std::string groups = half + " partial sums over groups of " + half + "; of " + std::to_string(L) + " or more, " +
                             w + " (vector) partial sums over groups of " + w + ", then one group of " + half +
                             " if that many remain; added into acc";
  EXPECT_NE(s.find("// a range of " + w + " or more positions: " + groups + ", the rest in order"), std::string::npos)
      << s;
  EXPECT_EQ(loop_nest(y(i), B(i, j) * x(j)).find("partial sums"), std::string::npos);
  // Dense operands: the ranges all have the extent's length.
  scalar<double> dot;
  EXPECT_NE(loop_nest(dot(), x(i) * x(i)).find(groups), std::string::npos);
  const tensor<double, dense_row_major> D({3, 4});
  EXPECT_NE(loop_nest(y(i), D(i, j) * x(j)).find(groups), std::string::npos);
  // Dense ranges split from a half group (every range has the same
  // length); long_ranges rows from a whole group (their lengths vary: the
  // test mispredicts).
  EXPECT_NE(loop_nest(y(i), D(i, j) * x(j)).find("// a range of " + half + " or more positions"), std::string::npos);
  // Integers are summed in order (no latency to hide, no rounding either way).
  const tensor<int, csr_long_rows> Ai = pack<csr_long_rows>(coordinate_list<int, int>(std::vector<int>{3, 4}));
  tensor<int, dense_vector> xi({4}), yi({3});
  EXPECT_EQ(loop_nest(yi(i), Ai(i, j) * xi(j)).find("partial sums"), std::string::npos);
}

// ---- generated cases --------------------------------------------------------------

// Rows of the given lengths (distinct random columns in [0, n), n >= the
// longest), values small nonzero integers.
template <class V>
coordinate_list<V, int> rows_of(const std::vector<int>& len, int n, std::mt19937_64& rng) {
  coordinate_list<V, int> c(std::vector<int>{static_cast<int>(len.size()), n});
  std::vector<int> cols(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < len.size(); ++r) {
    for (int q = 0; q < n; ++q) cols[static_cast<std::size_t>(q)] = q;
    std::shuffle(cols.begin(), cols.end(), rng);
    for (int e = 0; e < len[r]; ++e) {
      const int v = static_cast<int>(rng() % 7) - 3;
      c.push_back({static_cast<int>(r), cols[static_cast<std::size_t>(e)]}, static_cast<V>(v == 0 ? 4 : v));
    }
  }
  return c;
}

template <class V>
std::vector<V> dense_of(const coordinate_list<V, int>& c) {
  const auto& dims = c.dims();
  std::vector<V> d(static_cast<std::size_t>(dims[0]) * static_cast<std::size_t>(dims[1]), V{});
  const int* x = c.raw_coords().data();
  for (std::size_t e = 0; e < c.size(); ++e)
    d[static_cast<std::size_t>(x[2 * e]) * static_cast<std::size_t>(dims[1]) + static_cast<std::size_t>(x[2 * e + 1])] +=
        c.raw_values()[e];
  return d;
}

template <class Out, class E>
void run(int chunks, bool add, const Out& out, const E& e) {
  run_in_chunks(static_cast<std::size_t>(chunks), add, out, e);
}

// y(i) (=|+=) f(A(i,j), x(j)) for A in format F with rows of lengths `len`.
template <class F, class V>
std::size_t vector_cases(const std::vector<int>& len, int n, std::mt19937_64& rng, int chunks) {
  std::size_t bad = 0;
  const int m = static_cast<int>(len.size());
  const auto list = rows_of<V>(len, n, rng);
  const std::vector<V> a = dense_of(list);
  const tensor<V, F> A = pack<F>(list);
  tensor<V, dense_vector> x({n});
  for (int q = 0; q < n; ++q) x.values()[static_cast<std::size_t>(q)] = static_cast<V>(q % 5 - 2);
  scalar<V> s;
  s.value() = V(-2);
  auto at = [&](int r, int q) { return a[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(q)]; };
  auto xv = [&](int q) { return x.values()[static_cast<std::size_t>(q)]; };
  const std::string tag = fname<F>() + " rows " + std::to_string(m) + " n " + std::to_string(n) + " chunks " +
                          std::to_string(chunks);
  auto check = [&](auto&& stmt, auto&& term, const std::string& what) {
    for (const bool add : {false, true}) {
      tensor<V, dense_vector> y({m});
      std::vector<V> ref(static_cast<std::size_t>(m));
      for (int r = 0; r < m; ++r) {
        y.values()[static_cast<std::size_t>(r)] = static_cast<V>(r % 3 - 1);
        ref[static_cast<std::size_t>(r)] = add ? static_cast<V>(r % 3 - 1) : V{};
        for (int q = 0; q < n; ++q) ref[static_cast<std::size_t>(r)] += term(r, q);
      }
      stmt(y, add);
      bad += count_mismatches<V>(y.values(), ref, what + (add ? " += " : " = ") + tag);
    }
  };
  check([&](auto& y, bool add) { run(chunks, add, y(i), A(i, j) * x(j)); },
        [&](int r, int q) { return at(r, q) * xv(q); }, "A*x");
  check([&](auto& y, bool add) { run(chunks, add, y(i), -(A(i, j) * x(j) * V(3))); },
        [&](int r, int q) { return -(at(r, q) * xv(q) * V(3)); }, "-(A*x*3)");
  check([&](auto& y, bool add) { run(chunks, add, y(i), s() * A(i, j) * -x(j)); },
        [&](int r, int q) { return V(-2) * at(r, q) * -xv(q); }, "s*A*-x");
  check([&](auto& y, bool add) { run(chunks, add, y(i), A(i, j) * A(i, j)); },
        [&](int r, int q) { return at(r, q) * at(r, q); }, "A*A");
  check([&](auto& y, bool add) { run(chunks, add, y(i), A(i, j) * x(j) * x(j)); },
        [&](int r, int q) { return at(r, q) * xv(q) * xv(q); }, "A*x*x");
  // A hash vector holding every third coordinate: located at each entry,
  // missing at the others.
  coordinate_list<V, int> hl(std::vector<int>{n});
  for (int q = 0; q < n; q += 3) hl.push_back({q}, static_cast<V>(q % 4 + 1));
  const tensor<V, hash_vector> h = pack<hash_vector>(hl);
  check([&](auto& y, bool add) { run(chunks, add, y(i), A(i, j) * h(j)); },
        [&](int r, int q) { return q % 3 == 0 ? at(r, q) * static_cast<V>(q % 4 + 1) : V{}; }, "A*h");
  // A scalar output: one sum across every row (the split loop starts from
  // the rows before).
  for (const bool add : {false, true}) {
    scalar<V> total;
    total.value() = V(7);
    V ref = add ? V(7) : V{};
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < n; ++q) ref += at(r, q) * xv(q);
    run(chunks, add, total(), A(i, j) * x(j));
    if (total.value() != ref) {
      ++bad;
      ADD_FAILURE() << "s = sum A*x" << (add ? " += " : " = ") << tag << ": " << total.value() << ", expected " << ref;
    }
  }
  if constexpr (std::is_same_v<F, dense_row_major>) {  // random access: any order
    if (m == n)
      check([&](auto& y, bool add) { run(chunks, add, y(i), A(i, j) * A(j, i)); },
            [&](int r, int q) { return at(r, q) * at(q, r); }, "A*A^T");
  }
  // A matrix output with the reduction innermost: C(i,k) = A(i,j) * B(j,k)
  // in loop order i, k, j (B column-major dense, located at (j, k)).
  const int K = 3;
  tensor<V, dense_col_major> B({n, K});
  for (std::size_t q = 0; q < B.values().size(); ++q) B.values()[q] = static_cast<V>(static_cast<int>(q % 7) - 3);
  for (const bool add : {false, true}) {
    tensor<V, dense_row_major> C({m, K});
    std::vector<V> ref(static_cast<std::size_t>(m * K), V{});
    for (std::size_t q = 0; q < ref.size(); ++q) {
      C.values()[q] = V(1);
      if (add) ref[q] = V(1);
    }
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < K; ++c)
        for (int q = 0; q < n; ++q)
          ref[static_cast<std::size_t>(r * K + c)] += at(r, q) * B.values()[static_cast<std::size_t>(c * n + q)];
    if (add)
      compute_add(C(i, k), A(i, j) * B(j, k), tensorlev::loop_order<'i', 'k', 'j'>{});
    else
      compute(C(i, k), A(i, j) * B(j, k), tensorlev::loop_order<'i', 'k', 'j'>{});
    bad += count_mismatches<V>(C.values(), ref, std::string("C(i,k) = A*B order ikj") + (add ? " += " : " = ") + tag);
  }
  return bad;
}

// Row lengths: each of 0..41 once, shuffled, and each alone; extents 0 and 1.
template <class V>
std::size_t all_lengths(int chunks) {
  std::mt19937_64 rng(20261127 + static_cast<unsigned>(chunks));
  std::size_t bad = 0;
  std::vector<int> len(42);
  for (int l = 0; l <= 41; ++l) len[static_cast<std::size_t>(l)] = l;
  std::shuffle(len.begin(), len.end(), rng);
  for_each_format<std::tuple<csr_long_rows, csr, dense_row_major>>([&](auto f) {
    using F = typename decltype(f)::type;
    bad += vector_cases<F, V>(len, 42, rng, chunks);
    bad += vector_cases<F, V>({}, 0, rng, chunks);
    bad += vector_cases<F, V>({}, 5, rng, chunks);
    bad += vector_cases<F, V>({0}, 0, rng, chunks);
    for (int l = 0; l <= 13; ++l) bad += vector_cases<F, V>({l}, l == 0 ? 1 : l, rng, chunks);
    bad += vector_cases<F, V>({41, 3, 17, 0, 8}, 41, rng, chunks);
  });
  return bad;
}

TEST(SplitSum, EveryRowLengthDouble) { EXPECT_EQ(all_lengths<double>(0), 0U); }
TEST(SplitSum, EveryRowLengthFloat) { EXPECT_EQ(all_lengths<float>(0), 0U); }
TEST(SplitSum, EveryRowLengthChunked) { EXPECT_EQ(all_lengths<double>(3), 0U); }

// A dense dot product into a scalar (the extent drives), lengths 0..40,
// serial and in chunks (one partial result per chunk).
TEST(SplitSum, DenseDotProduct) {
  std::size_t bad = 0;
  for (int n = 0; n <= 40; ++n)
    for (const int chunks : {0, 2, 3})
      for (const bool add : {false, true}) {
        vec_t a({n}), b({n});
        double ref = add ? 5.0 : 0.0;
        for (int q = 0; q < n; ++q) {
          a.values()[static_cast<std::size_t>(q)] = q % 4 - 1;
          b.values()[static_cast<std::size_t>(q)] = q % 3 + 1;
          ref += (q % 4 - 1) * (q % 3 + 1);
        }
        scalar<double> s;
        s.value() = 5.0;
        run(chunks, add, s(), a(i) * -b(i) * -1.0);
        if (s.value() != ref) {
          ++bad;
          ADD_FAILURE() << "dot n=" << n << " chunks " << chunks << (add ? " +=" : " =") << ": " << s.value()
                        << ", expected " << ref;
        }
      }
  EXPECT_EQ(bad, 0U);
}

// The documented order, bit for bit (docs/design.md, "Split sums"): a
// range of n >= `from` positions (W / 2 for a dense driver, W for
// long_ranges) puts position q of its first n - n % W into partial sum
// q % W, the first continuing the running sum (zero at a row's start; for
// a scalar output, the sum of the rows before); then, if W / 2 positions
// remain, they go into sums 0 to W / 2 - 1; the sums are added pairwise
// ((s0 + s1) + (s2 + s3)) + ...; then the rest in order. `+=` adds the
// result to the old value. Values of mixed magnitudes, so that another
// order rounds differently (checked: the plain order differs somewhere);
// products with 1 stay exact whether or not the compiler fuses multiply
// and add. Serial.
// The partial sums of that order over x[0, n): eight (and the half group)
// when `eight`, else four, the first starting from running, combined;
// q ends at the first position left over.
template <class V>
V partial_sums(const V* x, int n, V running, bool eight, int& q) {
  q = 0;
  if (eight) {
    V part[W]{};
    part[0] = running;
    for (; n - q >= W; q += W)
      for (int k = 0; k < W; ++k) part[k] += x[q + k];
    if (n - q >= W / 2) {
      for (int k = 0; k < W / 2; ++k) part[k] += x[q + k];
      q += W / 2;
    }
    return tensorlev::cg::split_sum_combine(part);
  }
  V part[W / 2]{};
  part[0] = running;
  for (; n - q >= W / 2; q += W / 2)
    for (int k = 0; k < W / 2; ++k) part[k] += x[q + k];
  return tensorlev::cg::split_sum_combine(part);
}

template <class V>
V documented_sum(const V* x, int n, V running, int from) {
  int q = 0;
  if (n >= from) running = partial_sums(x, n, running, n >= L, q);
  for (; q < n; ++q) running += x[q];
  return running;
}

// The sum of n positions by the path a range of n does not take near L:
// eight sums (and the half group) when `eight`, else four.
template <class V>
V four_sums(const V* x, int n, bool eight) {
  int q = 0;
  V running = partial_sums(x, n, V{}, eight, q);
  for (; q < n; ++q) running += x[q];
  return running;
}

template <class V>
V mixed_magnitude(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double mant = u(rng);
  const int ex = static_cast<int>(rng() % 40);
  return static_cast<V>(std::ldexp(mant, ex));
}

template <class V>
struct order_check {
  std::size_t bad = 0, order_matters = 0;
  void operator()(V got, V ref, V plain, const std::string& what) {
    order_matters += plain != ref;
    if (got != ref) {
      ++bad;
      ADD_FAILURE() << what << ": " << got << ", the documented order gives " << ref;
    }
  }
  std::size_t done() const {
    EXPECT_GT(order_matters, 0U) << "no case where the order changes the rounding: the test cannot fail";
    return bad;
  }
};

// s() (=|+=) a(i) * 1: a dense driver, lengths 0 to 2L + W + 5.
template <class V>
std::size_t documented_order_dot() {
  std::mt19937_64 rng(41);
  order_check<V> check;
  for (int n = 0; n <= 2 * L + W + 5; ++n)
    for (const bool add : {false, true}) {
      tensor<V, dense_vector> a({n}), one({n});
      for (int q = 0; q < n; ++q) {
        a.values()[static_cast<std::size_t>(q)] = mixed_magnitude<V>(rng);
        one.values()[static_cast<std::size_t>(q)] = V{1};
      }
      V ref = documented_sum(a.values().data(), n, V{}, W / 2), plain{};
      for (int p = 0; p < n; ++p) plain += a.values()[static_cast<std::size_t>(p)];
      if (add) ref = static_cast<V>(0.1) + ref, plain = static_cast<V>(0.1) + plain;
      scalar<V> s;
      s.value() = static_cast<V>(0.1);
      if (add)
        s() += a(i) * one(i);
      else
        s() = a(i) * one(i);
      check(s.value(), ref, plain, "dot n=" + std::to_string(n) + (add ? " +=" : " ="));
    }
  return check.done();
}

// s() = M(i,j) * 1 over a dense m x n matrix: each row's split sum
// continues the sum of the rows before.
template <class V>
std::size_t documented_order_matrix_sum() {
  std::mt19937_64 rng(43);
  order_check<V> check;
  for (const int m : {1, 2, 3, 5})
    for (int n = 0; n <= L + W + 5; ++n) {
      tensor<V, dense_row_major> M({m, n}), one({m, n});
      for (std::size_t q = 0; q < M.values().size(); ++q) M.values()[q] = mixed_magnitude<V>(rng), one.values()[q] = V{1};
      V ref{}, plain{};
      for (int r = 0; r < m; ++r) ref = documented_sum(M.values().data() + static_cast<std::ptrdiff_t>(r) * n, n, ref, W / 2);
      for (const V v : M.values()) plain += v;
      scalar<V> s;
      s() = M(i, j) * one(i, j);
      check(s.value(), ref, plain, "matrix sum " + std::to_string(m) + "x" + std::to_string(n));
    }
  return check.done();
}

// y(i) = A(i,j) * 1 over csr_long_rows: 16 rows of each length 0 to
// L + 2W + 5 (thresholds W and L), each row's sum from zero. Rows of W / 2
// to W - 1 entries are summed in order (a split from W / 2 would differ),
// and rows of L - 1 and L + 1 entries take the other path's order than L
// (the neighbouring path would differ): both checked to round differently
// on some rows, so that a threshold off by one is seen.
template <class V>
std::size_t documented_order_long_rows() {
  std::mt19937_64 rng(47);
  order_check<V> check;
  const int per = 16, n = L + 2 * W + 5, m = per * (n + 1);
  coordinate_list<V, int> c(std::vector<int>{m, n});
  std::vector<std::vector<V>> rows(static_cast<std::size_t>(m));
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < r / per; ++q) {  // row r holds r / per entries, in columns 0, 1, ...
      const V v = mixed_magnitude<V>(rng);
      rows[static_cast<std::size_t>(r)].push_back(v);
      c.push_back({r, q}, v);
    }
  const tensor<V, csr_long_rows> A = pack<csr_long_rows>(c);
  tensor<V, dense_vector> one({n}), y({m});
  for (auto& v : one.values()) v = V{1};
  y(i) = A(i, j) * one(j);
  std::size_t short_rows_differ = 0, paths_differ = 0;
  for (int r = 0; r < m; ++r) {
    const auto& row = rows[static_cast<std::size_t>(r)];
    const int len = r / per;
    V plain{};
    for (const V v : row) plain += v;
    if (len >= W / 2 && len < W) short_rows_differ += documented_sum(row.data(), len, V{}, W / 2) != plain;
    if (len == L - 1 || len == L) paths_differ += documented_sum(row.data(), len, V{}, W) != four_sums(row.data(), len, len == L - 1);
    check(y.values()[static_cast<std::size_t>(r)], documented_sum(row.data(), len, V{}, W), plain,
          "csr_long_rows row of " + std::to_string(len));
  }
  EXPECT_GT(short_rows_differ, 0U) << "a split from W / 2 would not be seen";
  EXPECT_GT(paths_differ, 0U) << "a threshold L off by one would not be seen";
  return check.done();
}

TEST(SplitSum, DocumentedOrderDouble) {
  EXPECT_EQ(documented_order_dot<double>(), 0U);
  EXPECT_EQ(documented_order_matrix_sum<double>(), 0U);
  EXPECT_EQ(documented_order_long_rows<double>(), 0U);
}
TEST(SplitSum, DocumentedOrderFloat) {
  EXPECT_EQ(documented_order_dot<float>(), 0U);
  EXPECT_EQ(documented_order_matrix_sum<float>(), 0U);
  EXPECT_EQ(documented_order_long_rows<float>(), 0U);
}

// csr_long_rows as an output: pack, convert from and to CSR, and an
// element-wise sum into it (its arrays are CSR's; only the hint differs).
TEST(SplitSum, LongRowsAsOutput) {
  std::mt19937_64 rng(3);
  const std::vector<int> len{9, 0, 3, 20, 1};
  const auto l1 = rows_of<double>(len, 24, rng), l2 = rows_of<double>({0, 12, 3, 8, 16}, 24, rng);
  const auto a = dense_of(l1), b = dense_of(l2);
  const long_t A = pack<csr_long_rows>(l1);
  const tensor<double, csr> B = pack<csr>(l2);
  const long_t B2 = convert<csr_long_rows>(B);
  const tensor<double, csr> A2 = convert<csr>(A);
  EXPECT_EQ(A2.level<1>().pos(), A.level<1>().pos());
  EXPECT_EQ(A2.level<1>().crd(), A.level<1>().crd());
  long_t C = pack<csr_long_rows>(coordinate_list<double, int>(std::vector<int>{5, 24}));
  C(i, j) = A(i, j) + B2(i, j) * 2.0;
  std::vector<double> ref(a.size());
  for (std::size_t q = 0; q < a.size(); ++q) ref[q] = a[q] + b[q] * 2.0;
  const tensor<double, dense_row_major> Cd = convert<dense_row_major>(C);
  EXPECT_EQ(count_mismatches<double>(Cd.values(), ref, "C = A + 2 B into csr_long_rows"), 0U);
}

// 64-bit indices: the same split over long rows (row 0 holds 24 entries:
// four sums; rows 1 and 2 hold 63: eight sums, a half group, 3 in order).
TEST(SplitSum, WideIndices) {
  using I = std::int64_t;
  constexpr I n = 150;
  coordinate_list<double, I> c(std::vector<I>{3, n});
  for (I q = 0; q < n; ++q) c.push_back({q < 40 ? q % 3 : q / 50, q}, static_cast<double>(q % 5 - 2));
  const tensor<double, csr_long_rows, I> A = pack<csr_long_rows>(c);
  tensor<double, dense_vector, I> x({n}), y({3});
  for (I q = 0; q < n; ++q) x.values()[static_cast<std::size_t>(q)] = static_cast<double>(q % 3 + 1);
  y(i) = A(i, j) * x(j);
  std::vector<double> ref(3, 0.0);
  for (I q = 0; q < n; ++q)
    ref[static_cast<std::size_t>(q < 40 ? q % 3 : q / 50)] +=
        static_cast<double>(q % 5 - 2) * static_cast<double>(q % 3 + 1);
  EXPECT_EQ(count_mismatches<double>(y.values(), ref, "int64 SpMV, csr_long_rows"), 0U);
}

// NaN and infinity reach exactly the rows that hold them, from a split
// group, a half group and the remainder alike; the other row stays exact.
TEST(SplitSum, NonFiniteValuesStayInTheirRows) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // Row lengths L + 4 (eight sums and a half group), L + 3 (eight sums, 3
  // in order), L + W + 4, 3 (in order only: below the threshold), 2W + 1
  // (four sums).
  const std::vector<int> len{L + 4, L + 3, L + W + 4, 3, 2 * W + 1};
  const int n = L + W + 4;
  coordinate_list<double, int> c(std::vector<int>{5, n});
  for (int r = 0; r < 5; ++r)
    for (int q = 0; q < len[static_cast<std::size_t>(r)]; ++q) {
      double v = static_cast<double>(q % 3 + 1);
      if (r == 0 && q == 5) v = nan;          // a split group
      if (r == 1 && q == L + 1) v = inf;      // the remainder
      if (r == 3 && q == 1) v = -inf;         // a short row
      if (r == 2 && q == L + W + 1) v = nan;  // the half group
      c.push_back({r, q}, v);
    }
  const long_t A = pack<csr_long_rows>(c);
  vec_t x({n}), y({5});
  for (auto& v : x.values()) v = 1.0;
  y(i) = A(i, j) * x(j);
  EXPECT_TRUE(std::isnan(y.values()[0]));
  EXPECT_EQ(y.values()[1], inf);
  EXPECT_EQ(y.values()[3], -inf);
  EXPECT_TRUE(std::isnan(y.values()[2]));
  double ref = 0;
  for (int q = 0; q < len[4]; ++q) ref += static_cast<double>(q % 3 + 1);
  EXPECT_EQ(y.values()[4], ref);
}

// Non-integer values: the partial sums reassociate, so the result is
// compared with a long double reference within a bound on the rounding.
TEST(SplitSum, RoundingWithinBound) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int m = 50, n = 200;
  coordinate_list<double, int> c(std::vector<int>{m, n});
  std::vector<long double> ref(m, 0.0L), mag(m, 0.0L);
  tensor<double, dense_vector> x({n});
  for (auto& v : x.values()) v = u(rng);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < n; q += 1 + r % 5) {
      const double v = u(rng);
      c.push_back({r, q}, v);
      ref[static_cast<std::size_t>(r)] += static_cast<long double>(v) * x.values()[static_cast<std::size_t>(q)];
      mag[static_cast<std::size_t>(r)] += std::fabs(static_cast<long double>(v) * x.values()[static_cast<std::size_t>(q)]);
    }
  const long_t A = pack<csr_long_rows>(c);
  vec_t y({m});
  y(i) = A(i, j) * x(j);
  for (int r = 0; r < m; ++r) {
    const long double err = std::fabs(static_cast<long double>(y.values()[static_cast<std::size_t>(r)]) - ref[r]);
    EXPECT_LE(static_cast<double>(err), 1e-14 * static_cast<double>(mag[r]) * n) << "row " << r;
  }
}

}  // namespace
