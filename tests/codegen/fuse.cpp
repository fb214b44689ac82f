// fuse(): chains of statements in fused loop nests (Diffuse, issue 20),
// checked against dense reference loops run one statement after another.
// Programs are fixed sequences of statement shapes; every run binds the
// shapes' vector slots to randomly chosen vectors of a pool, so outputs
// alias inputs (in place, across statements) in every combination, and
// the plan, not the test, decides what shares a kernel. Extents cross the
// chunk size; executors run chunks in order and scrambled (this file), or
// on Kokkos threads (built again as tests/kokkos' test_kokkos_fuse with
// TL_FUSE_KOKKOS).
#include <algorithm>
#include <array>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "common.hpp"
#include "fuse_executors.hpp"
#include "tensorlev/fuse.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace {

using tltest::second_executor;

using vec = tensor<double, dense_vector>;
constexpr int pool = 4;

// One program's world: a matrix A in format F, a dense matrix M, vectors and scalars.
template <class F>
struct world {
  tensor<double, F> A;
  std::vector<std::array<int, 2>> Ac;  // A's nonzeros (distinct coordinates) ...
  std::vector<double> Av;              // ... and values
  tensor<double, dense_row_major> M;
  std::array<vec, pool> v;
  std::array<scalar<double>, 2> s;
  int n = 0;
};

struct ref_world {
  std::vector<std::array<int, 2>> Ac;
  std::vector<double> Av, M;
  std::array<std::vector<double>, pool> v;
  std::array<double, 2> s{};
  int n = 0;
};

// Slots: o (output vector), a, b, c (input vectors), k (scalar), and a constant.
struct binding {
  int o = 0, a = 0, b = 0, c = 0, k = 0;
  double coef = 1;
};

// Each shape: the deferred statement, its reference, and whether it reads
// its output other than in place (fuse must refuse it).
struct spmv {  // v_o(i) = A(i,j) * v_a(j)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) = w.A(i, j) * w.v[b.a](j);
  }
  static void ref(ref_world& r, const binding& b) {
    std::vector<double> y(static_cast<std::size_t>(r.n), 0.0);
    for (std::size_t e = 0; e < r.Av.size(); ++e) y[r.Ac[e][0]] += r.Av[e] * r.v[b.a][r.Ac[e][1]];
    r.v[b.o] = y;
  }
  static bool refused(const binding& b) { return b.o == b.a; }
};
struct dot {  // s_k() = v_a(i) * v_b(i)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.s[b.k]()) = w.v[b.a](i) * w.v[b.b](i);
  }
  static void ref(ref_world& r, const binding& b) {
    double s = 0;
    for (int x = 0; x < r.n; ++x) s += r.v[b.a][x] * r.v[b.b][x];
    r.s[b.k] = s;
  }
  static bool refused(const binding&) { return false; }
};
struct axpy {  // v_o(i) += coef * v_a(i)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) += b.coef * w.v[b.a](i);
  }
  static void ref(ref_world& r, const binding& b) {
    const auto a = r.v[b.a];
    for (int x = 0; x < r.n; ++x) r.v[b.o][x] += b.coef * a[x];
  }
  static bool refused(const binding&) { return false; }
};
struct xpby {  // v_o(i) = v_a(i) + coef * v_b(i)   (p = r + beta p in place)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) = w.v[b.a](i) + b.coef * w.v[b.b](i);
  }
  static void ref(ref_world& r, const binding& b) {
    std::vector<double> y(static_cast<std::size_t>(r.n));
    for (int x = 0; x < r.n; ++x) y[x] = r.v[b.a][x] + b.coef * r.v[b.b][x];
    r.v[b.o] = y;
  }
  static bool refused(const binding&) { return false; }
};
struct mixed_dot {  // s_k() += v_a(i) * v_b(i) - (-v_c(i)) * v_a(i)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.s[b.k]()) += w.v[b.a](i) * w.v[b.b](i) - (-w.v[b.c](i)) * w.v[b.a](i);
  }
  static void ref(ref_world& r, const binding& b) {
    double s = 0;
    for (int x = 0; x < r.n; ++x) s += r.v[b.a][x] * r.v[b.b][x] + r.v[b.c][x] * r.v[b.a][x];
    r.s[b.k] += s;
  }
  static bool refused(const binding&) { return false; }
};
struct scale_by_scalar {  // v_o(i) = s_k() * v_a(i) - v_b(i): reads a scalar an earlier statement may reduce
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) = w.s[b.k]() * w.v[b.a](i) - w.v[b.b](i);
  }
  static void ref(ref_world& r, const binding& b) {
    std::vector<double> y(static_cast<std::size_t>(r.n));
    for (int x = 0; x < r.n; ++x) y[x] = r.s[b.k] * r.v[b.a][x] - r.v[b.b][x];
    r.v[b.o] = y;
  }
  static bool refused(const binding&) { return false; }
};
struct negate {  // v_o(i) = -v_a(i)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) = -w.v[b.a](i);
  }
  static void ref(ref_world& r, const binding& b) {
    std::vector<double> y(static_cast<std::size_t>(r.n));
    for (int x = 0; x < r.n; ++x) y[x] = -r.v[b.a][x];
    r.v[b.o] = y;
  }
  static bool refused(const binding&) { return false; }
};
struct outer {  // M(i,j) = v_a(i) * v_b(j): a matrix output in rows
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.M(i, j)) = w.v[b.a](i) * w.v[b.b](j);
  }
  static void ref(ref_world& r, const binding& b) {
    for (int x = 0; x < r.n; ++x)
      for (int z = 0; z < r.n; ++z) r.M[static_cast<std::size_t>(x) * r.n + z] = r.v[b.a][x] * r.v[b.b][z];
  }
  static bool refused(const binding&) { return false; }
};
struct gemv_t {  // v_o(i) += M(j,i) * v_a(j): a transposed dense matrix (not by rows of i)
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.v[b.o](i)) += w.M(j, i) * w.v[b.a](j);
  }
  static void ref(ref_world& r, const binding& b) {
    std::vector<double> y = r.v[b.o];
    for (int x = 0; x < r.n; ++x)
      for (int z = 0; z < r.n; ++z) y[x] += r.M[static_cast<std::size_t>(z) * r.n + x] * r.v[b.a][z];
    r.v[b.o] = y;
  }
  static bool refused(const binding& b) { return b.o == b.a; }
};

struct sparse_rows {  // M(i,j) = A(i,j) * v_a(i): a dense output some loops leave unwritten
  template <class W>
  static auto make(W& w, const binding& b) {
    return defer(w.M(i, j)) = w.A(i, j) * w.v[b.a](i);
  }
  static void ref(ref_world& r, const binding& b) {
    std::fill(r.M.begin(), r.M.end(), 0.0);
    for (std::size_t e = 0; e < r.Av.size(); ++e)
      r.M[static_cast<std::size_t>(r.Ac[e][0]) * r.n + r.Ac[e][1]] = r.Av[e] * r.v[b.a][r.Ac[e][0]];
  }
  static bool refused(const binding&) { return false; }
};

template <class... Shape>
struct program {};

// A CG iteration, a longer chain with scalars read back, and dense matrices.
using cg_iteration = program<spmv, dot, axpy, axpy, dot, xpby>;
// (No dot after the scalar scaling: values stay below 2^53, so every sum is exact in any order.)
using long_chain = program<spmv, dot, mixed_dot, scale_by_scalar, negate, axpy, xpby, spmv>;
using dense_chain = program<outer, gemv_t, dot, sparse_rows, xpby, axpy, gemv_t>;

template <class F>
world<F> make_world(int n, std::mt19937_64& rng) {
  world<F> w;
  w.n = n;
  // About three distinct columns a row, some rows empty.
  std::uniform_int_distribution<int> val(-3, 3);
  const coordinate_list<double, int> list = tltest::random_rows(n, 5, rng, w.Ac, w.Av);
  w.A = pack<F>(list);
  w.M = tensor<double, dense_row_major>({n < 200 ? n : 0, n < 200 ? n : 0});
  for (auto& x : w.v) {
    x = vec({n});
    for (auto& e : x.values()) e = val(rng);
  }
  for (auto& x : w.M.values()) x = val(rng);
  w.s[0].value() = val(rng);
  w.s[1].value() = val(rng);
  return w;
}

template <class F>
ref_world reference_of(const world<F>& w) {
  ref_world r;
  r.n = w.n;
  r.Ac = w.Ac;
  r.Av = w.Av;
  r.M.assign(w.M.values().begin(), w.M.values().end());
  for (int x = 0; x < pool; ++x) r.v[x].assign(w.v[x].values().begin(), w.v[x].values().end());
  r.s = {w.s[0].value(), w.s[1].value()};
  return r;
}

binding random_binding(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> slot(0, pool - 1), k(0, 1), c(0, 3);
  const double coefs[] = {2.0, -1.0, 0.5, -0.25};
  return {slot(rng), slot(rng), slot(rng), slot(rng), k(rng), coefs[c(rng)]};
}

// Runs the program with fresh random bindings `rounds` times on ex.
template <class F, class... Shape>
void run_program(program<Shape...>, int n, const executor& ex, std::mt19937_64& rng, int rounds,
                 std::size_t& refusals, std::size_t& fused_runs) {
  constexpr std::size_t ns = sizeof...(Shape);
  for (int round = 0; round < rounds; ++round) {
    auto w = make_world<F>(n, rng);
    std::array<binding, ns> bind;
    for (auto& b : bind) b = random_binding(rng);
    ref_world r = reference_of(w);
    bool refuse = false;
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      ((refuse = refuse || Shape::refused(bind[X])), ...);
    }(std::make_index_sequence<ns>{});
    const std::string what = "n = " + std::to_string(n) + ", round " + std::to_string(round);
    const auto k0 = kernels_run();
    try {
      [&]<std::size_t... X>(std::index_sequence<X...>) {
        fuse(ex, Shape::make(w, bind[X])...);
      }(std::make_index_sequence<ns>{});
      ASSERT_FALSE(refuse) << what << ": a statement reading its output at other rows was not refused";
    } catch (const tensorlev::error& e) {
      ASSERT_TRUE(refuse) << what << ": refused: " << e.what();
      ++refusals;
      continue;
    }
    const auto kernels = kernels_run() - k0;
    fused_runs += kernels < ns ? 1 : 0;
    [&]<std::size_t... X>(std::index_sequence<X...>) { (Shape::ref(r, bind[X]), ...); }(std::make_index_sequence<ns>{});
    for (int x = 0; x < pool; ++x)
      ASSERT_EQ(0u, tltest::count_mismatches<double>(w.v[x].values(), r.v[x], what + ", vector " + std::to_string(x)));
    ASSERT_EQ(0u, tltest::count_mismatches<double>(w.M.values(), r.M, what + ", M"));
    ASSERT_EQ(r.s[0], w.s[0].value()) << what;
    ASSERT_EQ(r.s[1], w.s[1].value()) << what;
  }
}

template <class F, class P>
void check_program(P prog, std::initializer_list<int> sizes, int rounds) {
  std::mt19937_64 rng(20261128);
  std::size_t refusals = 0, fused = 0;
  for (int n : sizes) {
    run_program<F>(prog, n, serial, rng, rounds, refusals, fused);
    run_program<F>(prog, n, second_executor(), rng, rounds, refusals, fused);
  }
  // Generated bindings reach fused kernels and refusals.
  EXPECT_GT(fused, 0u);
  EXPECT_GT(refusals, 0u);
}

}  // namespace

TEST(Fuse, CgIterationEveryAliasing) {
  check_program<csr>(cg_iteration{}, {0, 1, 7, 2049, 4100, 20000}, 25);
  check_program<dense_row_major>(cg_iteration{}, {0, 1, 7, 130}, 25);
  // Formats whose SpMV is not chunked by rows (scatter, positions): they run alone, still right.
  check_program<csc>(cg_iteration{}, {0, 1, 7, 300}, 15);
  check_program<dcsr>(cg_iteration{}, {0, 1, 7, 300}, 15);
  check_program<coo>(cg_iteration{}, {0, 1, 7, 300}, 15);
  // Outer loops over blocks of rows: chunks of whole blocks (a multiple of B rows).
  check_program<grouped_rows<4>>(cg_iteration{}, {0, 1, 7, 2049, 4100}, 15);
  check_program<grouped_rows<3>>(cg_iteration{}, {2, 4097, 5000, 20000}, 10);
  check_program<sell<8>>(cg_iteration{}, {0, 1, 7, 4100, 20000}, 10);
  // SELL-C-sigma's blocks hold permuted rows, no range: its SpMV runs alone.
  check_program<sell_sigma<8, 64>>(cg_iteration{}, {0, 1, 7, 4100}, 10);
  check_program<bcsr<2>>(cg_iteration{}, {1, 7, 4101}, 10);
  check_program<csb<4>>(cg_iteration{}, {5, 4099}, 10);
}

TEST(Fuse, LongChainEveryAliasing) {
  check_program<csr>(long_chain{}, {0, 1, 7, 2049, 4100, 20000}, 25);
  check_program<ell>(long_chain{}, {0, 1, 7, 300}, 15);
}

TEST(Fuse, DenseMatricesEveryAliasing) { check_program<csr>(dense_chain{}, {0, 1, 2, 33, 130}, 25); }

// What the plan fuses, as kernels counted and printed.
TEST(Fuse, CgIterationRunsAsThreeKernels) {
  std::mt19937_64 rng(7);
  auto w = make_world<csr>(5000, rng);
  auto& [p, q, x, r] = w.v;
  auto& [pq, rr] = w.s;
  const auto k0 = kernels_run();
  fuse(defer(q(i)) = w.A(i, j) * p(j), defer(pq()) = p(i) * q(i));
  EXPECT_EQ(kernels_run() - k0, 1u);
  fuse(defer(x(i)) += 0.5 * p(i), defer(r(i)) += -0.5 * q(i), defer(rr()) = r(i) * r(i));
  EXPECT_EQ(kernels_run() - k0, 2u);
  fuse(defer(p(i)) = r(i) + 0.25 * p(i));
  EXPECT_EQ(kernels_run() - k0, 3u);
  const std::string plan = fusion_plan(defer(q(i)) = w.A(i, j) * p(j), defer(pq()) = p(i) * q(i),
                                       defer(x(i)) = pq() * q(i), defer(q(i)) = w.A(i, j) * x(j));
  EXPECT_NE(plan.find("kernel 1: loop over 5000 rows in chunks of 1024: [1] out(i) = t1(i,j) * t2(j); [2] "
                      "out() = t1(i) * t2(i)\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("statement 3 starts a new kernel: it reads the scalar statement 2 reduces"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("statement 4 starts a new kernel: it reads what statement 3 writes, at other rows"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("kernel 2: statement 3 alone"), std::string::npos) << plan;
  EXPECT_NE(plan.find("kernel 3: statement 4 alone"), std::string::npos) << plan;
}

// Blocks of rows: a CG iteration over a blocked matrix runs as three
// kernels; chunks hold whole blocks of every statement (a multiple of the
// least common multiple of their block sizes, at most 4096 rows).
template <class F>
void three_kernels_blocked(int n) {
  std::mt19937_64 rng(11);
  auto w = make_world<F>(n, rng);
  auto& [p, q, x, r] = w.v;
  auto& [pq, rr] = w.s;
  for (int run = 0; run < 2; ++run) {
    const executor ex = run == 0 ? executor(serial) : second_executor();
    const auto k0 = kernels_run();
    fuse(ex, defer(q(i)) = w.A(i, j) * p(j), defer(pq()) = p(i) * q(i));
    fuse(ex, defer(x(i)) += 0.5 * p(i), defer(r(i)) += -0.5 * q(i), defer(rr()) = r(i) * r(i));
    fuse(ex, defer(p(i)) = r(i) + 0.25 * p(i));
    EXPECT_EQ(kernels_run() - k0, 3u) << tltest::fname<F>();
  }
}

TEST(Fuse, BlocksOfRowsFuseInWholeBlocks) {
  three_kernels_blocked<grouped_rows<4>>(5000);
  three_kernels_blocked<sell<8>>(5000);
  three_kernels_blocked<bcsr<2>>(5001);
  three_kernels_blocked<csb<4>>(5000);
  static_assert(cg::fuse_rows_per_chunk(5000, 12) == 1020);
  static_assert(cg::fuse_rows_per_chunk(200000, 12) == 4092);  // the cap, rounded down
  static_assert(cg::fuse_rows_per_chunk(20000, 8) == 1248);
  static_assert(cg::fuse_rows_per_chunk(100, 5000) == 5000);   // one block at least
  std::mt19937_64 rng(11);
  auto w = make_world<grouped_rows<4>>(5000, rng);
  auto& [p, q, x, r] = w.v;
  auto& pq = w.s[0];
  // Groups of 3 and 4 in one kernel: chunks of 1020 rows.
  const auto A3 = convert<grouped_rows<3>>(w.A);
  const std::string plan =
      fusion_plan(defer(q(i)) = A3(i, j) * p(j), defer(x(i)) = w.A(i, j) * p(j), defer(pq()) = q(i) * x(i));
  EXPECT_NE(plan.find("kernel 1: loop over 5000 rows in chunks of 1020: [1] out(i) = t1(i,j) * t2(j); [2] "
                      "out(i) = t1(i,j) * t2(j); [3] out() = t1(i) * t2(i)\n"),
            std::string::npos)
      << plan;
  std::vector<double> ref(5000, 0.0);
  for (std::size_t e = 0; e < w.Av.size(); ++e)
    ref[static_cast<std::size_t>(w.Ac[e][0])] += w.Av[e] * p.values()[static_cast<std::size_t>(w.Ac[e][1])];
  double dot = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) dot += ref[e] * ref[e];
  for (int run = 0; run < 2; ++run) {
    const executor ex = run == 0 ? executor(serial) : second_executor();
    std::fill(q.values().begin(), q.values().end(), 99.0);
    std::fill(x.values().begin(), x.values().end(), 99.0);
    pq.value() = 99.0;
    fuse(ex, defer(q(i)) = A3(i, j) * p(j), defer(x(i)) = w.A(i, j) * p(j), defer(pq()) = q(i) * x(i));
    EXPECT_EQ(0u, tltest::count_mismatches<double>(q.values(), ref, "A3 p"));
    EXPECT_EQ(0u, tltest::count_mismatches<double>(x.values(), ref, "A4 p"));
    EXPECT_EQ(dot, pq.value());
  }
  // Blocks whose least common multiple passes the chunk cap: two kernels.
  auto small = make_world<grouped_rows<64>>(300, rng);
  const auto A65 = convert<grouped_rows<65>>(small.A);
  const std::string split = fusion_plan(defer(small.v[1](i)) = small.A(i, j) * small.v[0](j),
                                        defer(small.v[2](i)) = A65(i, j) * small.v[0](j));
  EXPECT_NE(split.find("statement 2 starts a new kernel: its blocks of 65 rows and the kernel's of 64 need chunks "
                       "of a multiple of 4160 rows"),
            std::string::npos)
      << split;
}

// Scalars are summed per chunk in chunk order, chunks independent of the
// executor: the same bits serially and on threads (values not integers,
// so the order of the sums shows).
TEST(Fuse, SameBitsOnEveryExecutor) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : {1, 300, 4100, 200000}) {
    std::array<world<csr>, 2> w{make_world<csr>(n, rng), make_world<csr>(0, rng)};
    for (auto& x : w[0].v)
      for (auto& e : x.values()) e = u(rng);
    w[1] = w[0];
    for (int run = 0; run < 2; ++run) {
      const executor ex = run == 0 ? executor(serial) : second_executor();
      auto& [p, q, x, r] = w[run].v;
      auto& [pq, rr] = w[run].s;
      for (int it = 0; it < 3; ++it) {
        fuse(ex, defer(q(i)) = w[run].A(i, j) * p(j), defer(pq()) = p(i) * q(i));
        fuse(ex, defer(x(i)) += 0.3 * p(i), defer(r(i)) += -0.3 * q(i), defer(rr()) = r(i) * r(i));
        fuse(ex, defer(p(i)) = r(i) + 0.7 * p(i));
      }
    }
    EXPECT_EQ(w[0].s[0].value(), w[1].s[0].value()) << n;
    EXPECT_EQ(w[0].s[1].value(), w[1].s[1].value()) << n;
    for (int v = 0; v < pool; ++v)
      EXPECT_TRUE(std::equal(w[0].v[v].values().begin(), w[0].v[v].values().end(), w[1].v[v].values().begin())) << n;
  }
}

TEST(Fuse, RefusesReadsOfTheOutputAtOtherRows) {
  std::mt19937_64 rng(8);
  auto w = make_world<csr>(50, rng);
  auto& p = w.v[0];
  EXPECT_THROW(fuse(defer(p(i)) = w.A(i, j) * p(j)), tensorlev::error);
  try {
    fuse(defer(w.v[1](i)) = w.v[2](i), defer(p(i)) += w.A(i, j) * p(j));
    ADD_FAILURE() << "not refused";
  } catch (const tensorlev::error& e) {
    EXPECT_NE(std::string(e.what()).find("statement 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reads its output other than in place"), std::string::npos) << e.what();
  }
  // A reduction over the output's own component: p(i) = p(i) * sum_j A(i,j) is not pointwise.
  EXPECT_THROW(fuse(defer(p(i)) = p(i) * w.A(i, j)), tensorlev::error);
}

// Compile-time roles.
static_assert(fusable_v<decltype(defer(std::declval<vec&>()(i)) = std::declval<tensor<double, csr>&>()(i, j) *
                                                                    std::declval<vec&>()(j))>);
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(i)) = std::declval<tensor<double, csc>&>()(i, j) *
                                                                     std::declval<vec&>()(j))>);
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(i)) = std::declval<tensor<double, dcsr>&>()(i, j) *
                                                                     std::declval<vec&>()(j))>);
// Outer loops over blocks of rows (loop 0 binds the block, the rows are
// computed from it): fused in chunks of whole blocks.
static_assert(fusable_v<decltype(defer(std::declval<vec&>()(i)) =
                                     std::declval<tensor<double, grouped_rows<4>>&>()(i, j) * std::declval<vec&>()(j))>);
static_assert(fusable_v<decltype(defer(std::declval<vec&>()(i)) =
                                     std::declval<tensor<double, sell<4>>&>()(i, j) * std::declval<vec&>()(j))>);
static_assert(fusable_v<decltype(defer(std::declval<vec&>()(i)) =
                                     std::declval<tensor<double, bcsr<2>>&>()(i, j) * std::declval<vec&>()(j))>);
// SELL-C-sigma's blocks hold rows through a permutation: no range of rows to cut.
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(i)) =
                                      std::declval<tensor<double, sell_sigma<4>>&>()(i, j) * std::declval<vec&>()(j))>);
// The transpose's rows are not loop 0's blocks (they scatter); ELL's loop 0 binds slots.
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(j)) =
                                      std::declval<tensor<double, grouped_rows<4>>&>()(i, j) * std::declval<vec&>()(i))>);
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(j)) =
                                      std::declval<tensor<double, bcsr<2>>&>()(i, j) * std::declval<vec&>()(i))>);
static_assert(!fusable_v<decltype(defer(std::declval<vec&>()(i)) =
                                      std::declval<tensor<double, ell>&>()(i, j) * std::declval<vec&>()(j))>);
static_assert(fusable_v<decltype(defer(std::declval<scalar<double>&>()()) =
                                     std::declval<vec&>()(i) * std::declval<vec&>()(i))>);
static_assert(!fusable_v<decltype(defer(std::declval<tensor<double, csr>&>()(i, j)) =
                                      std::declval<tensor<double, csr>&>()(i, j) * 2.0)>);
