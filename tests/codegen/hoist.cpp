// Factor hoisting (plan_hoist; SPLATT's fibre sums): which statements hoist
// (static_asserts on the plan), the printed loop nest, and generated cases
// against dense references: every third-order format as the sparse operand,
// signs, constants, scalars and repeated operands in the product, the output
// bound outside the root (a scatter output), `=` and `+=`, extents 0 and 1,
// and workspace extents at and above the stack capacity (256: the loops run
// unhoisted there), serially and in chunks.
#include "common.hpp"
#include <algorithm>
#include <complex>
#include <limits>

#include "tensorlev/execution.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
constexpr tensorlev::index_var<'r'> r{};

template <class Out, class E>
constexpr tensorlev::cg::order_plan plan_of() {
  return tensorlev::cg::make_order(tensorlev::cg::describe<Out, E, false>(), 0);
}

// ---- which statements hoist ---------------------------------------------------

using dense_t = tensor<double, dense_row_major>;
using A_ir = decltype(std::declval<dense_t&>()(i, r));
using C_kr = decltype(std::declval<const dense_t&>()(k, r));
using D_lr = decltype(std::declval<const dense_t&>()(l, r));
template <class F>
using B_ikl = decltype(std::declval<const tensor<double, F>&>()(i, k, l));
template <class F>
using mttkrp_t = decltype(std::declval<B_ikl<F>>() * std::declval<C_kr>() * std::declval<D_lr>());

// CSF MTTKRP: loops i, k, l, r; C(k,r) hoisted out of the l loop.
constexpr auto csf_plan = plan_of<A_ir, mttkrp_t<csf>>();
static_assert(csf_plan.hoist == 2 && csf_plan.hoist_outer == (tensorlev::cg::mask_t{1} << 2));
static_assert(!csf_plan.hoist_runs);
// Dense and hashed leaves hoist too. So does COO, whose loop l iterates a
// singleton level (one entry per position of loop k): loops i and k visit
// runs of equal coordinates (segments; hoist_runs), so that loop l spans
// the fibre.
static_assert(plan_of<A_ir, mttkrp_t<dense_tensor<3>>>().hoist == 2);
static_assert(plan_of<A_ir, mttkrp_t<dense_dense_hashed>>().hoist == 2);
static_assert(plan_of<A_ir, mttkrp_t<coo_tensor<3>>>().hoist == 2 && plan_of<A_ir, mttkrp_t<coo_tensor<3>>>().hoist_runs);
static_assert(plan_of<A_ir, mttkrp_t<coo_aos_tensor<3>>>().hoist == 2 &&
              plan_of<A_ir, mttkrp_t<coo_aos_tensor<3>>>().hoist_runs);
// The second-order analogue y(i,r) = B(i,l) C(i,r) D(l,r): C(i,r) hoisted
// out of the l loop, with COO over runs of equal i.
using y_ir = decltype(std::declval<dense_t&>()(i, r));
template <class F>
using mat_case = decltype(std::declval<const tensor<double, F>&>()(i, l) * std::declval<const dense_t&>()(i, r) *
                          std::declval<D_lr>());
static_assert(plan_of<y_ir, mat_case<csr>>().hoist == 1);
static_assert(plan_of<y_ir, mat_case<coo>>().hoist == 1 && plan_of<y_ir, mat_case<coo>>().hoist_runs);
// Nothing to hoist: SpMV, SpMM (loop n-2 binds no factor alone), a sum.
using csr_t = tensor<double, csr>;
static_assert(plan_of<decltype(std::declval<tensor<double, dense_vector>&>()(i)),
                      decltype(std::declval<const csr_t&>()(i, j) *
                               std::declval<const tensor<double, dense_vector>&>()(j))>()
                  .hoist == -1);
static_assert(plan_of<decltype(std::declval<dense_t&>()(i, j)),
                      decltype(std::declval<const csr_t&>()(i, k) * std::declval<const dense_t&>()(k, j))>()
                  .hoist == -1);
static_assert(plan_of<A_ir, decltype(std::declval<B_ikl<csf>>() * std::declval<C_kr>() +
                                     std::declval<B_ikl<csf>>() * std::declval<D_lr>())>()
                  .hoist == -1);
// D(r,l) transposed: the hoisted variable is not D's last level.
static_assert(plan_of<A_ir, decltype(std::declval<B_ikl<csf>>() * std::declval<C_kr>() *
                                     std::declval<const dense_t&>()(r, l))>()
                  .hoist == -1);
// A sparse output is not hoisted.
static_assert(plan_of<decltype(std::declval<csr_t&>()(i, r)), mttkrp_t<csf>>().hoist == -1);

TEST(Hoist, PrintedLoopNest) {
  const auto B = pack<csf>(coordinate_list<double, int>(std::vector<int>{3, 4, 5}));
  dense_t C({4, 2}), D({5, 2}), A({3, 2});
  const std::string s = loop_nest(A(i, r), B(i, k, l) * C(k, r) * -D(l, r), std::vector<std::string>{"A", "B", "C", "D"});
  EXPECT_NE(s.find("// hoisted: C multiplied once per k"), std::string::npos) << s;
  // The specializations are printed where they run (TENSORLEV_HOIST_SPECIALIZE: GCC by default).
  constexpr auto widths_at = [](const std::string& text, const std::string& line) {
    return (text.find(line) != std::string::npos) == (TENSORLEV_HOIST_SPECIALIZE != 0);
  };
  EXPECT_TRUE(widths_at(s, "// r_extent in {8, 16, 32}: the loops below with r_extent a constant, and A's row summed "
                           "over k in registers, added once (host code)"))
      << s;
  // Mode 2 (the output bound by loop k, the fibres' loop): constant widths, no buffered row.
  dense_t A2({4, 2}), E({3, 2});
  const std::string s2 = loop_nest(A2(k, r), B(i, k, l) * E(i, r) * D(l, r));
  EXPECT_TRUE(widths_at(s2, "// r_extent in {8, 16, 32}: the loops below with r_extent a constant (host code)\n")) << s2;
  EXPECT_TRUE(widths_at(s, "double t[r_extent];  // the first entry the loops below reach stores, the others add"))
      << s;
  EXPECT_EQ(s.find("double t[r_extent] = {};") != std::string::npos, TENSORLEV_HOIST_SPECIALIZE == 0) << s;
  EXPECT_NE(s.find("t[r] += B_vals[pB3] * -(D_vals[pD2]);"), std::string::npos) << s;
  EXPECT_NE(s.find("A_vals[pA2] += t[r] * C_vals[pC2];"), std::string::npos) << s;
  const auto Bc = pack<coo_tensor<3>>(coordinate_list<double, int>(std::vector<int>{3, 4, 5}));
  // COO: loops i and k over runs of equal coordinates, loop l over the run
  // of k; only with the specialized sub-nest (stmt::O), else as before.
  const std::string sc = loop_nest(A(i, r), Bc(i, k, l) * C(k, r) * D(l, r), std::vector<std::string>{"A", "B", "C", "D"});
  for (const char* line : {"// hoisted: C multiplied once per k",
                           "while (pB1_seg < pB1_end && B1_crd[pB1_seg] == i) pB1_seg++;",
                           "while (pB2_seg < pB2_end && B2_crd[pB2_seg] == k) pB2_seg++;",
                           "int pB3 = pB2, pB3_end = pB2_seg - 1 + 1;"})
    EXPECT_TRUE(widths_at(sc, line)) << line << "\n" << sc;
  dense_t Dt({2, 5});
  EXPECT_EQ(loop_nest(A(i, r), B(i, k, l) * C(k, r) * Dt(r, l)).find("hoisted"), std::string::npos);
}

// ---- generated cases ------------------------------------------------------------

// One executor per mode: serial, and chunks of loop 0 without threads.
template <class Out, class E>
void run(int mode, bool add, const Out& out, const E& e) {
  run_in_chunks(mode == 0 ? 0 : static_cast<std::size_t>(mode) + 1, add, out, e);
}

template <class FB>
std::size_t mttkrp_cases(int I, int K, int L, int R, std::mt19937_64& rng, int mode) {
  std::size_t bad = 0;
  const std::string tag = fname<FB>() + " " + std::to_string(I) + "x" + std::to_string(K) + "x" +
                          std::to_string(L) + " R=" + std::to_string(R) + " mode " + std::to_string(mode);
  auto B = random_operand<FB>(std::array<int, 3>{I, K, L}, 0.4, rng);
  auto C = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
  auto Q = random_operand<dense_row_major>(std::array<int, 2>{K, L}, 1.0, rng);  // for the square case
  auto b = [&](int x, int y, int z) { return B.d[static_cast<std::size_t>((x * K + y) * L + z)]; };
  auto c = [&](int y, int q) { return C.d[static_cast<std::size_t>(y * R + q)]; };
  auto d = [&](int z, int q) { return D.d[static_cast<std::size_t>(z * R + q)]; };
  scalar<double> s;
  s.value() = -3;
  // ref(x, q) for the output's row x, reduced over the other two modes.
  auto check = [&](auto&& stmt, auto&& term, int rows, const std::string& what, bool add) {
    std::vector<double> init(static_cast<std::size_t>(rows * R));
    for (std::size_t x = 0; x < init.size(); ++x) init[x] = static_cast<double>(x % 7) - 3;
    dense_t A({rows, R});
    std::copy(init.begin(), init.end(), A.values().begin());
    std::vector<double> ref(add ? init : std::vector<double>(init.size(), 0.0));
    for (int x = 0; x < I; ++x)
      for (int y = 0; y < K; ++y)
        for (int z = 0; z < L; ++z)
          for (int q = 0; q < R; ++q) term(ref, x, y, z, q);
    stmt(A, add);
    bad += count_mismatches<double>(A.values(), ref, what + (add ? " += " : " = ") + tag);
  };
  for (const bool add : {false, true}) {
    check([&](dense_t& A, bool a) { run(mode, a, A(i, r), B.t(i, k, l) * C.t(k, r) * D.t(l, r)); },
          [&](auto& ref, int x, int y, int z, int q) { ref[x * R + q] += b(x, y, z) * c(y, q) * d(z, q); }, I,
          "B*C*D", add);
    // Signs and a constant on either side of the hoist, the factors in
    // another order, a scalar operand (hoisted: bound above every loop).
    check([&](dense_t& A, bool a) { run(mode, a, A(i, r), -(C.t(k, r) * 2.0) * (-D.t(l, r) * s()) * B.t(i, k, l)); },
          [&](auto& ref, int x, int y, int z, int q) {
            ref[x * R + q] += -(c(y, q) * 2.0) * (-d(z, q) * -3.0) * b(x, y, z);
          },
          I, "-(C*2)*(-D*s)*B", add);
    // The same operand twice (C(k,r) hoisted, C(l,r) not) where K == L.
    if (K == L)
      check([&](dense_t& A, bool a) { run(mode, a, A(i, r), B.t(i, k, l) * C.t(k, r) * C.t(l, r)); },
            [&](auto& ref, int x, int y, int z, int q) { ref[x * R + q] += b(x, y, z) * c(y, q) * c(z, q); }, I,
            "B*C*C", add);
    // Output bound at loop 1 (mode-2 MTTKRP): A(k,r) = B(i,k,l) * C'(i,r) * D(l,r),
    // with C' = the first I rows of D's shape reused as an I x R factor.
    auto E = random_operand<dense_row_major>(std::array<int, 2>{I, R}, 1.0, rng);
    check([&](dense_t& A, bool a) { run(mode, a, A(k, r), B.t(i, k, l) * E.t(i, r) * D.t(l, r)); },
          [&](auto& ref, int x, int y, int z, int q) {
            ref[y * R + q] += b(x, y, z) * E.d[static_cast<std::size_t>(x * R + q)] * d(z, q);
          },
          K, "mode-2 B*E*D", add);
    // A factor without r hoisted beside one with it: Q(k,l) is not (bound
    // at l), so only C moves.
    check([&](dense_t& A, bool a) { run(mode, a, A(i, r), B.t(i, k, l) * Q.t(k, l) * C.t(k, r) * D.t(l, r)); },
          [&](auto& ref, int x, int y, int z, int q) {
            ref[x * R + q] += b(x, y, z) * Q.d[static_cast<std::size_t>(y * L + z)] * c(y, q) * d(z, q);
          },
          I, "B*Q*C*D", add);
  }
  return bad;
}

template <class Tuple>
void all_formats(int mode) {
  std::mt19937_64 rng(20261126 + static_cast<unsigned>(mode));
  std::size_t bad = 0;
  for_each_format<Tuple>([&](auto f) {
    using F = typename decltype(f)::type;
    for (const auto& e : std::vector<std::array<int, 4>>{
             {0, 3, 3, 4}, {3, 0, 3, 4}, {3, 3, 0, 4}, {3, 3, 3, 0}, {1, 1, 1, 1}, {4, 5, 5, 3}, {6, 2, 7, 16},
             {0, 2, 2, 8}, {3, 1, 4, 8}, {5, 4, 3, 32}, {1, 6, 1, 16}})
      bad += mttkrp_cases<F>(e[0], e[1], e[2], e[3], rng, mode);
  });
  EXPECT_EQ(bad, 0U);
}

TEST(Hoist, EveryOrder3FormatSerial) { all_formats<mode_order3_formats>(0); }
TEST(Hoist, EveryOrder3FormatChunked) {
  all_formats<std::tuple<csf, coo_tensor<3>, dense_sparse_sparse, dense_tensor<3>>>(2);
}

// Second order, every matrix format as B: y(i,r) = B(i,l) * C(i,r) * D(l,r)
// (hoisted where loops i,l,r run in that order), `=` and `+=`, serial and
// chunked.
TEST(Hoist, EveryMatrixFormat) {
  std::mt19937_64 rng(5);
  std::size_t bad = 0;
  for_each_format<mode_matrix_formats>([&](auto f) {
    using F = typename decltype(f)::type;
    for (const auto& e : std::vector<std::array<int, 3>>{{0, 3, 2}, {3, 0, 2}, {3, 3, 0}, {1, 1, 1}, {5, 7, 3}, {9, 4, 8}})
      for (const int mode : {0, 1})
        for (const bool add : {false, true}) {
          const int I = e[0], L = e[1], R = e[2];
          auto B = random_operand<F>(std::array<int, 2>{I, L}, 0.5, rng);
          auto C = random_operand<dense_row_major>(std::array<int, 2>{I, R}, 1.0, rng);
          auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
          dense_t Y({I, R});
          std::vector<double> ref(static_cast<std::size_t>(I * R), add ? 2.0 : 0.0);
          std::fill(Y.values().begin(), Y.values().end(), 2.0);
          for (int a = 0; a < I; ++a)
            for (int z = 0; z < L; ++z)
              for (int q = 0; q < R; ++q)
                ref[static_cast<std::size_t>(a * R + q)] -= B.d[static_cast<std::size_t>(a * L + z)] *
                                                             C.d[static_cast<std::size_t>(a * R + q)] *
                                                             D.d[static_cast<std::size_t>(z * R + q)];
          run(mode, add, Y(i, r), -B.t(i, l) * C.t(i, r) * D.t(l, r));
          bad += count_mismatches<double>(Y.values(), ref,
                                          fname<F>() + " " + std::to_string(I) + "x" + std::to_string(L) + " R=" +
                                              std::to_string(R) + (add ? " += " : " = ") + std::to_string(mode));
        }
  });
  EXPECT_EQ(bad, 0U);
}

// Fibres without entries add nothing: C's rows where B has no entries are
// NaN and infinite, and must not reach the output (0 * NaN would). Empty
// rows of B under a dense loop i (CSR, hash rows), empty k slices under a
// dense k loop (dense-dense-hashed) and under a sparse one (CSF), hoisted
// (R = 4) and not (R = 257).
template <class F, std::size_t N>
std::size_t empty_fibres(int R, int mode) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int n = 5;
  // Entries only where the coordinate before the last is odd (row or k);
  // the hoisted factor's even rows are not finite.
  coordinate_list<double, int> list(std::vector<int>(N, n));
  std::array<int, N> c{};
  for (int x = 0; x < n; ++x)
    for (int y = 1; y < n; y += 2)
      if ((x + y) % 3 != 0) {
        c[0] = x, c[N - 2] = y, c[N - 1] = (x * 7 + y) % n;
        list.push_back(c, 1.0 + x + y);
      }
  const auto B = pack<F>(list);
  dense_t H({n, R}), D({n, R});
  for (int x = 0; x < n; ++x)
    for (int q = 0; q < R; ++q) {
      H.values()[static_cast<std::size_t>(x * R + q)] = x % 2 == 0 ? (q % 2 == 0 ? nan : inf) : 1.0 + q;
      D.values()[static_cast<std::size_t>(x * R + q)] = 2.0 + x;
    }
  std::vector<double> ref(static_cast<std::size_t>(n * R), 0.0);
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto cc = list.coords(e);
    for (int q = 0; q < R; ++q)
      ref[static_cast<std::size_t>(cc[0] * R + q)] += list.value(e) * H.values()[static_cast<std::size_t>(cc[N - 2] * R + q)] *
                                                      D.values()[static_cast<std::size_t>(cc[N - 1] * R + q)];
  }
  dense_t A({n, R});
  if constexpr (N == 2)
    run(mode, false, A(i, r), B(i, l) * H(i, r) * D(l, r));
  else
    run(mode, false, A(i, r), B(i, k, l) * H(k, r) * D(l, r));
  return count_mismatches<double>(A.values(), ref, fname<F>() + " R=" + std::to_string(R) + " mode " + std::to_string(mode));
}

TEST(Hoist, EmptyFibresAddNothing) {
  static_assert(plan_of<y_ir, mat_case<hash_rows>>().hoist == 1);
  std::size_t bad = 0;
  for (const int R : {4, 8, 16, 32, 257})
    for (const int mode : {0, 1}) {
      bad += empty_fibres<csr, 2>(R, mode) + empty_fibres<hash_rows, 2>(R, mode);
      bad += empty_fibres<dense_dense_hashed, 3>(R, mode) + empty_fibres<csf, 3>(R, mode) +
             empty_fibres<dense_sparse_sparse, 3>(R, mode);
    }
  EXPECT_EQ(bad, 0U);
}

// A row of the output that no fibre reaches gets nothing under +=, not even
// +0.0 (which would turn its -0.0 into +0.0): the buffered row (R = 8, 16)
// is added only where some fibre of the slice ran (fibre_any), and the
// general loops (R = 4) never touch it. Rows 1 and 3 of B are empty; row
// 4's fibres hold entries, but none meets S (y + z odd).
TEST(Hoist, RowsNoFibreReachesKeepTheirValue) {
  std::size_t bad = 0;
  for (const int R : {4, 8, 16})
    for (const int mode : {0, 1}) {
      const int n = 5;
      coordinate_list<double, int> list(std::vector<int>{n, n, n});
      for (int x : {0, 2})
        for (int y = 0; y < n; ++y) list.push_back({x, y, (x + 2 * y) % n}, 1.0 + x + y);
      for (int y = 0; y < 4; ++y) list.push_back({4, y, y + 1}, 3.0 + y);
      const auto B = pack<csf>(list);
      // S(k, l): where k + l is even.
      coordinate_list<double, int> slist(std::vector<int>{n, n});
      for (int y = 0; y < n; ++y)
        for (int z = 0; z < n; ++z)
          if ((y + z) % 2 == 0) slist.push_back({y, z}, 1.0);
      const auto S = pack<csr>(slist);
      dense_t C({n, R}), D({n, R}), A({n, R});
      for (std::size_t e = 0; e < C.values().size(); ++e) C.values()[e] = 1.0 + static_cast<double>(e % 7);
      for (std::size_t e = 0; e < D.values().size(); ++e) D.values()[e] = 2.0 - static_cast<double>(e % 3);
      std::vector<double> ref(A.values().size(), 0.0);
      std::vector<bool> reached(static_cast<std::size_t>(n), false);
      for (std::size_t e = 0; e < list.size(); ++e) {
        const auto c = list.coords(e);
        if ((c[1] + c[2]) % 2 != 0) continue;
        reached[static_cast<std::size_t>(c[0])] = true;
        for (int q = 0; q < R; ++q)
          ref[static_cast<std::size_t>(c[0] * R + q)] += list.value(e) * C.values()[static_cast<std::size_t>(c[1] * R + q)] *
                                                         D.values()[static_cast<std::size_t>(c[2] * R + q)];
      }
      for (double& e : A.values()) e = -0.0;
      run(mode, true, A(i, r), B(i, k, l) * S(k, l) * C(k, r) * D(l, r));
      for (int x = 0; x < n; ++x)
        for (int q = 0; q < R; ++q) {
          const double got = A.values()[static_cast<std::size_t>(x * R + q)];
          const bool ok = reached[static_cast<std::size_t>(x)]
                              ? got == ref[static_cast<std::size_t>(x * R + q)]
                              : (got == 0.0 && std::signbit(got));
          if (!ok) {
            ++bad;
            ADD_FAILURE() << "R=" << R << " mode " << mode << " row " << x << " r " << q << ": " << got;
          }
        }
      EXPECT_TRUE(reached[0] && reached[2] && !reached[1] && !reached[3] && !reached[4]);
    }
  EXPECT_EQ(bad, 0U);
}

// A hoisted factor over v alone (x(r): located from the root), and value
// types other than double: float and int hoist; std::complex (a workspace
// that needs construction) does not.
void factor_over_v_alone_and_value_types(int R) {
  std::mt19937_64 rng(3);
  const int I = 4, K = 5, L = 6;
  auto B = random_operand<csf>(std::array<int, 3>{I, K, L}, 0.5, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{R}, 1.0, rng);
  using x_r = decltype(std::declval<const tensor<double, dense_vector>&>()(r));
  constexpr auto p = plan_of<A_ir, decltype(std::declval<B_ikl<csf>>() * std::declval<D_lr>() * std::declval<x_r>())>();
  static_assert(p.hoist == 2 && p.hoist_outer == (tensorlev::cg::mask_t{1} << 3));
  std::vector<double> ref(static_cast<std::size_t>(I * R), 0.0);
  for (int a = 0; a < I; ++a)
    for (int b = 0; b < K; ++b)
      for (int z = 0; z < L; ++z)
        for (int q = 0; q < R; ++q)
          ref[static_cast<std::size_t>(a * R + q)] += B.d[static_cast<std::size_t>((a * K + b) * L + z)] *
                                                      D.d[static_cast<std::size_t>(z * R + q)] * x.d[static_cast<std::size_t>(q)];
  dense_t A({I, R});
  A(i, r) = B.t(i, k, l) * D.t(l, r) * x.t(r);
  EXPECT_EQ(count_mismatches<double>(A.values(), ref, "B*D*x R=" + std::to_string(R)), 0U);

  // The same B and D as int and float (small integers: exact).
  auto typed = [&]<class V>(std::type_identity<V>) {
    coordinate_list<V, int> list(std::vector<int>{I, K, L});
    for (int a = 0; a < I; ++a)
      for (int b = 0; b < K; ++b)
        for (int z = 0; z < L; ++z)
          if (const double v = B.d[static_cast<std::size_t>((a * K + b) * L + z)]; v != 0)
            list.push_back(std::array<int, 3>{a, b, z}, static_cast<V>(v));
    const auto Bt = pack<csf>(list);
    tensor<V, dense_row_major> Dt({L, R}), Ct({K, R}), At({I, R});
    for (std::size_t q = 0; q < Dt.values().size(); ++q) Dt.values()[q] = static_cast<V>(D.d[q]);
    for (std::size_t q = 0; q < Ct.values().size(); ++q) Ct.values()[q] = static_cast<V>(q % 5) - V(2);
    std::vector<V> want(static_cast<std::size_t>(I * R), V(0));
    for (std::size_t e = 0; e < list.size(); ++e) {
      const auto cc = list.coords(e);
      for (int q = 0; q < R; ++q)
        want[static_cast<std::size_t>(cc[0] * R + q)] += list.value(e) * Ct.values()[static_cast<std::size_t>(cc[1] * R + q)] *
                                                          Dt.values()[static_cast<std::size_t>(cc[2] * R + q)];
    }
    At(i, r) = Bt(i, k, l) * Ct(k, r) * Dt(l, r);
    return count_mismatches<V>(At.values(), want, "value type");
  };
  EXPECT_EQ(typed(std::type_identity<int>{}) + typed(std::type_identity<float>{}), 0U);
  using cd = std::complex<double>;
  using ctensor = tensor<cd, dense_row_major>;
  using cstmt = tensorlev::cg::stmt<decltype(std::declval<ctensor&>()(i, r)),
                                    decltype(std::declval<const tensor<cd, csf>&>()(i, k, l) *
                                             std::declval<const ctensor&>()(k, r) * std::declval<const ctensor&>()(l, r)),
                                    false, 0>;
  static_assert(cstmt::O.hoist == -1);
  static_assert(tensorlev::cg::stmt<A_ir, mttkrp_t<csf>, false, 0>::O.hoist == 2);
  // COO hoists over runs only with the specialized sub-nest.
  static_assert(tensorlev::cg::stmt<A_ir, mttkrp_t<coo_tensor<3>>, false, 0>::O.hoist ==
                (TENSORLEV_HOIST_SPECIALIZE ? 2 : -1));
}
TEST(Hoist, FactorOverVAloneAndValueTypes) {
  for (const int R : {3, 16}) factor_over_v_alone_and_value_types(R);
}

// At the workspace's capacity (256) the loops hoist; above it they do not:
// both give the reference.
TEST(Hoist, WorkspaceCapacity) {
  std::mt19937_64 rng(7);
  std::size_t bad = 0;
  for (const int R : {255, 256, 257, 300})
    for (const int mode : {0, 1}) bad += mttkrp_cases<csf>(5, 4, 4, R, rng, mode);
  EXPECT_EQ(bad, 0U);
}

// The workspace is not zeroed per fibre: the first entry a fibre reaches
// stores into it, the later ones add. Under an intersection (B and a second
// sparse operand S at loop l) that first entry is often not the fibre's
// first position, and some fibres reach none (they add nothing, and the
// workspace keeps the last fibre's values, which must not leak into the
// next one).
template <class F>
std::size_t intersected_fibres(int I, int K, int L, int R, double fill_s, std::mt19937_64& rng, int mode) {
  auto B = random_operand<F>(std::array<int, 3>{I, K, L}, 0.6, rng);
  auto S = random_operand<F>(std::array<int, 3>{I, K, L}, fill_s, rng);
  auto C = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
  std::size_t bad = 0;
  for (const bool add : {false, true}) {
    dense_t A({I, R});
    std::vector<double> ref(static_cast<std::size_t>(I * R));
    for (std::size_t x = 0; x < ref.size(); ++x) A.values()[x] = add ? ref[x] = static_cast<double>(x % 5) - 2 : 7.0;
    for (int x = 0; x < I; ++x)
      for (int y = 0; y < K; ++y)
        for (int z = 0; z < L; ++z) {
          const auto e = static_cast<std::size_t>((x * K + y) * L + z);
          for (int q = 0; q < R; ++q)
            ref[static_cast<std::size_t>(x * R + q)] += B.d[e] * S.d[e] * C.d[static_cast<std::size_t>(y * R + q)] *
                                                        D.d[static_cast<std::size_t>(z * R + q)];
        }
    run(mode, add, A(i, r), B.t(i, k, l) * S.t(i, k, l) * C.t(k, r) * D.t(l, r));
    bad += count_mismatches<double>(A.values(), ref,
                                    "B*S*C*D " + fname<F>() + (add ? " += " : " = ") + "R=" + std::to_string(R) +
                                        " fill " + std::to_string(fill_s) + " mode " + std::to_string(mode));
  }
  return bad;
}

TEST(Hoist, FirstEntryStoresUnderAnIntersection) {
  using BS = decltype(std::declval<B_ikl<csf>>() * std::declval<B_ikl<csf>>() * std::declval<C_kr>() *
                      std::declval<D_lr>());
  static_assert(plan_of<A_ir, BS>().hoist == 2);
  std::mt19937_64 rng(29);
  std::size_t bad = 0;
  for (const double fill : {0.05, 0.3, 0.7})
    for (const int R : {1, 3, 8, 16, 32})
      for (const int mode : {0, 1, 2}) {
        bad += intersected_fibres<csf>(9, 7, 11, R, fill, rng, mode);
        bad += intersected_fibres<dense_sparse_sparse>(6, 5, 9, R, fill, rng, mode);
      }
  EXPECT_EQ(bad, 0U);
}

// An output without the fibres' variable, which is loop 0: A(r) = B(k,l) *
// C(k,r) * D(l,r) hoists C out of the l loop and, at the constant widths,
// sums A's row over all of loop 0 (or a chunk of it) before adding it.
TEST(Hoist, RowBufferedOverLoopZero) {
  using vec_t = tensor<double, dense_vector>;
  using E = decltype(std::declval<const tensor<double, csr>&>()(k, l) * std::declval<C_kr>() * std::declval<D_lr>());
  static_assert(plan_of<decltype(std::declval<vec_t&>()(r)), E>().hoist == 1);
  std::mt19937_64 rng(31);
  std::size_t bad = 0;
  for (const int R : {3, 8, 16, 32})
    for (const int mode : {0, 1, 2})
      for (const auto& kl : std::vector<std::array<int, 2>>{{0, 4}, {1, 1}, {9, 7}, {40, 13}}) {
        const int K = kl[0], L = kl[1];
        auto B = random_operand<csr>(std::array<int, 2>{K, L}, 0.4, rng);
        auto C = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
        auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
        for (const bool add : {false, true}) {
          vec_t A({R});
          std::vector<double> ref(static_cast<std::size_t>(R), 0.0);
          for (std::size_t q = 0; q < ref.size(); ++q) A.values()[q] = add ? ref[q] = static_cast<double>(q) - 1.5 : 9.0;
          for (int y = 0; y < K; ++y)
            for (int z = 0; z < L; ++z)
              for (int q = 0; q < R; ++q)
                ref[static_cast<std::size_t>(q)] += B.d[static_cast<std::size_t>(y * L + z)] *
                                                    C.d[static_cast<std::size_t>(y * R + q)] *
                                                    D.d[static_cast<std::size_t>(z * R + q)];
          run(mode, add, A(r), B.t(k, l) * C.t(k, r) * D.t(l, r));
          bad += count_mismatches<double>(A.values(), ref,
                                          "A(r) R=" + std::to_string(R) + " K=" + std::to_string(K) + " mode " +
                                              std::to_string(mode) + (add ? " +=" : " ="));
        }
      }
  EXPECT_EQ(bad, 0U);
}

// Fourth order: C and D both hoisted out of the l loop.
TEST(Hoist, Order4) {
  std::mt19937_64 rng(11);
  using B4 = tensor<double, csf_tensor<4>>;
  constexpr auto p = plan_of<A_ir, decltype(std::declval<const B4&>()(i, j, k, l) *
                                            std::declval<const dense_t&>()(j, r) * std::declval<C_kr>() *
                                            std::declval<D_lr>())>();
  static_assert(p.hoist == 3 && p.hoist_outer == ((tensorlev::cg::mask_t{1} << 2) | (tensorlev::cg::mask_t{1} << 3)));
  for (const auto& e : std::vector<std::array<int, 5>>{
           {3, 4, 2, 5, 6}, {1, 1, 1, 1, 1}, {4, 0, 3, 3, 2}, {3, 4, 2, 5, 16}, {2, 3, 3, 2, 8}, {2, 2, 3, 3, 32}}) {
    const int I = e[0], J = e[1], K = e[2], L = e[3], R = e[4];
    auto B = random_operand<csf_tensor<4>>(std::array<int, 4>{I, J, K, L}, 0.3, rng);
    auto C = random_operand<dense_row_major>(std::array<int, 2>{J, R}, 1.0, rng);
    auto D = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
    auto E = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
    std::vector<double> ref(static_cast<std::size_t>(I * R), 0.0);
    for (int a = 0; a < I; ++a)
      for (int b = 0; b < J; ++b)
        for (int c = 0; c < K; ++c)
          for (int d = 0; d < L; ++d)
            for (int q = 0; q < R; ++q)
              ref[static_cast<std::size_t>(a * R + q)] += B.d[static_cast<std::size_t>(((a * J + b) * K + c) * L + d)] *
                                                          C.d[static_cast<std::size_t>(b * R + q)] *
                                                          D.d[static_cast<std::size_t>(c * R + q)] *
                                                          E.d[static_cast<std::size_t>(d * R + q)];
    for (const int mode : {0, 1})
      for (const bool add : {false, true}) {
        dense_t A({I, R});
        std::vector<double> want = ref;
        for (std::size_t x = 0; x < want.size(); ++x) {
          A.values()[x] = add ? static_cast<double>(x % 3) : 5.0;
          if (add) want[x] += static_cast<double>(x % 3);
        }
        run(mode, add, A(i, r), B.t(i, j, k, l) * C.t(j, r) * D.t(k, r) * E.t(l, r));
        EXPECT_EQ(count_mismatches<double>(A.values(), want,
                                           "order 4 R=" + std::to_string(R) + " mode " + std::to_string(mode) +
                                               (add ? " +=" : " =")),
                  0U);
      }
  }
}

// Other dense outputs: an order-3 output bound by two loops above the hoist
// (A(i,j,r) = B(i,j,k,l) C(k,r) D(l,r): loops i,j,k,l,r, C hoisted out of
// l), and a column-major matrix output, which puts r outside i and so does
// not hoist; extents 0 and 1, `=` and `+=`.
TEST(Hoist, DenseOutputFormats) {
  std::mt19937_64 rng(13);
  using B4 = tensor<double, csf_tensor<4>>;
  using A3 = tensor<double, dense_tensor<3>>;
  using Acm = tensor<double, dense_col_major>;
  constexpr auto p3 = plan_of<decltype(std::declval<A3&>()(i, j, r)),
                              decltype(std::declval<const B4&>()(i, j, k, l) * std::declval<C_kr>() * std::declval<D_lr>())>();
  static_assert(p3.hoist == 3 && p3.hoist_outer == (tensorlev::cg::mask_t{1} << 2));
  static_assert(plan_of<decltype(std::declval<Acm&>()(i, r)), mttkrp_t<csf>>().hoist == -1);
  std::size_t bad = 0;
  for (const auto& e : std::vector<std::array<int, 5>>{
           {3, 4, 2, 5, 6}, {1, 1, 1, 1, 1}, {0, 2, 2, 2, 2}, {2, 2, 3, 3, 0}, {3, 3, 4, 2, 16}, {2, 1, 3, 3, 8}})
    for (const bool add : {false, true}) {
      const int I = e[0], J = e[1], K = e[2], L = e[3], R = e[4];
      auto B = random_operand<csf_tensor<4>>(std::array<int, 4>{I, J, K, L}, 0.4, rng);
      auto C = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
      auto D = random_operand<dense_row_major>(std::array<int, 2>{L, R}, 1.0, rng);
      A3 A({I, J, R});
      std::fill(A.values().begin(), A.values().end(), 1.0);
      std::vector<double> ref(static_cast<std::size_t>(I * J * R), add ? 1.0 : 0.0);
      for (int a = 0; a < I; ++a)
        for (int b = 0; b < J; ++b)
          for (int c = 0; c < K; ++c)
            for (int d = 0; d < L; ++d)
              for (int q = 0; q < R; ++q)
                ref[static_cast<std::size_t>((a * J + b) * R + q)] +=
                    B.d[static_cast<std::size_t>(((a * J + b) * K + c) * L + d)] * C.d[static_cast<std::size_t>(c * R + q)] *
                    D.d[static_cast<std::size_t>(d * R + q)];
      run(0, add, A(i, j, r), B.t(i, j, k, l) * C.t(k, r) * D.t(l, r));
      bad += count_mismatches<double>(A.values(), ref, std::string("order-3 output") + (add ? " +=" : " ="));
      // Column-major A(i,r) from the same entries summed over j.
      auto B3 = random_operand<csf>(std::array<int, 3>{I, K, L}, 0.4, rng);
      Acm M({I, R});
      std::fill(M.values().begin(), M.values().end(), 1.0);
      std::vector<double> mref(static_cast<std::size_t>(I * R), add ? 1.0 : 0.0);  // column-major
      for (int a = 0; a < I; ++a)
        for (int c = 0; c < K; ++c)
          for (int d = 0; d < L; ++d)
            for (int q = 0; q < R; ++q)
              mref[static_cast<std::size_t>(q * I + a)] += B3.d[static_cast<std::size_t>((a * K + c) * L + d)] *
                                                           C.d[static_cast<std::size_t>(c * R + q)] *
                                                           D.d[static_cast<std::size_t>(d * R + q)];
      run(0, add, M(i, r), B3.t(i, k, l) * C.t(k, r) * D.t(l, r));
      bad += count_mismatches<double>(M.values(), mref, std::string("column-major output") + (add ? " +=" : " ="));
    }
  EXPECT_EQ(bad, 0U);
}

}  // namespace
