// dist::fuse (dist/fuse.hpp): fusions over every rank's rows, order-0
// outputs summed over the grid. Run under mpirun with 1, 2, 3 and 4 ranks
// (tests/dist/CMakeLists.txt). Vectors are split at random points (ranks
// with no rows included); every rank builds the global vectors from the
// same seed and checks against loops over them: integer values, so sums
// are exact in any order. CG is checked against one node's unfused CG,
// iterate by iterate.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/dist/fuse.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/fuse.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;
namespace td = tensorlev::dist;
using vec = tensor<double, dense_vector>;
using blocks = td::distribution<"x->x">;
using rows = td::distribution<"xy->x">;
using dvec = td::dist_tensor<double, dense_vector, blocks>;

// Split points of [0, n) over p ranks, at random (equal ones: empty ranks).
std::vector<long long> random_splits(long long n, int p, std::mt19937_64& rng) {
  std::vector<long long> s(static_cast<std::size_t>(p) + 1, 0);
  for (int k = 1; k < p; ++k) s[static_cast<std::size_t>(k)] = std::uniform_int_distribution<long long>(0, n)(rng);
  s.back() = n;
  std::sort(s.begin(), s.end());
  return s;
}

// This rank's piece of a global vector.
dvec piece_of(const td::machine_grid& g, const td::distribution_map<blocks>& m, const std::vector<double>& global) {
  const auto& s = m.splits(0);
  const long long lo = s[static_cast<std::size_t>(g.rank())], hi = s[static_cast<std::size_t>(g.rank()) + 1];
  vec v({static_cast<int>(hi - lo)});
  std::copy(global.begin() + lo, global.begin() + hi, v.values().begin());
  return dvec(g, m, std::move(v));
}

std::vector<double> random_values(long long n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> val(-4, 4);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = val(rng);
  return v;
}

TEST(DistFuse, ScalarsSumOverTheRanks) {
  td::machine_grid g(MPI_COMM_WORLD, {0});
  std::mt19937_64 rng(20261128);  // the same stream on every rank
  const chunked_serial_executor scrambled;
  for (long long n : {0LL, 1LL, 2LL, 5LL, 1000LL, 5000LL, 20000LL}) {
    for (int round = 0; round < 3; ++round) {
      td::distribution_map<blocks> m({n}, g.extents());
      m.set_splits(0, random_splits(n, g.size(), rng));
      auto ga = random_values(n, rng), gb = random_values(n, rng), gx = random_values(n, rng);
      auto a = piece_of(g, m, ga), b = piece_of(g, m, gb), x = piece_of(g, m, gx);
      const double c = std::uniform_int_distribution<int>(-3, 3)(rng);
      const double s0 = std::uniform_int_distribution<int>(-50, 50)(rng);
      const executor ex = round == 1 ? executor(scrambled) : serial;
      scalar<double> s1, s2, s3;
      s2.value() = s0;
      s3.value() = s0;
      auto& al = a.local();
      auto& bl = b.local();
      auto& xl = x.local();
      // One kernel: an = dot, an update, a += reduction reading the update;
      // a scalar alone in its own call; then a kernel writing a temporary
      // and reducing s4, and a second reading s4 (reduced in the kernel
      // before it), the first call's s1 and the temporary: substituted into
      // both readers (rounds 0, 1), or kept and allocated (round 2).
      td::fuse(g, ex, defer(s1()) = al(i) * bl(i), defer(xl(i)) += c * al(i),
               defer(s2()) += xl(i) * xl(i) - bl(i) * al(i));
      td::fuse(g, ex, defer(s3()) += -(al(i) * al(i)));
      temporary<double> t({al.dimension(0)});
      scalar<double> s4, s5;
      const auto f1 = defer(t(i)) = al(i) - bl(i);
      const auto f2 = defer(s4()) = t(i) * al(i);
      const auto f3 = defer(xl(i)) += s4() * bl(i) - s1() * al(i);
      const auto f4 = defer(s5()) = xl(i) * t(i);
      if (round == 2)
        td::fuse(g, keep_temporaries, ex, f1, f2, f3, f4);
      else
        td::fuse(g, ex, f1, f2, f3, f4);
      // A temporary with a constant term summed (kept: each term sums over
      // its own variables), and one substituted into a dot; both sums over
      // the grid.
      temporary<double, 1, int, struct dist_u> u({al.dimension(0)});
      scalar<double> s6, s7;
      td::fuse(g, ex, defer(u(i)) = al(i) + 1.0, defer(s6()) = u(i));
      td::fuse(g, ex, defer(u(i)) = 2.0 * al(i), defer(s7()) = u(i) * bl(i));
      double w1 = 0, w2 = s0, w3 = s0, w4 = 0, w5 = 0;
      for (long long q = 0; q < n; ++q) {
        const auto u = static_cast<std::size_t>(q);
        w1 += ga[u] * gb[u];
        gx[u] += c * ga[u];
        w2 += gx[u] * gx[u] - gb[u] * ga[u];
        w3 -= ga[u] * ga[u];
      }
      std::vector<double> gt(static_cast<std::size_t>(n));
      for (long long q = 0; q < n; ++q) {
        const auto u = static_cast<std::size_t>(q);
        gt[u] = ga[u] - gb[u];
        w4 += gt[u] * ga[u];
      }
      for (long long q = 0; q < n; ++q) {
        const auto u = static_cast<std::size_t>(q);
        gx[u] += w4 * gb[u] - w1 * ga[u];
        w5 += gx[u] * gt[u];
      }
      double w6 = 0, w7 = 0;
      for (long long q = 0; q < n; ++q) {
        const auto u6 = static_cast<std::size_t>(q);
        w6 += ga[u6] + 1.0;
        w7 += 2.0 * ga[u6] * gb[u6];
      }
      const std::string at = "n " + std::to_string(n) + " round " + std::to_string(round) + " rank " +
                             std::to_string(g.rank());
      EXPECT_EQ(s6.value(), w6) << at;
      EXPECT_EQ(s7.value(), w7) << at;
      EXPECT_EQ(s1.value(), w1) << at;
      EXPECT_EQ(s2.value(), w2) << at;
      EXPECT_EQ(s3.value(), w3) << at;
      EXPECT_EQ(s4.value(), w4) << at;
      EXPECT_EQ(s5.value(), w5) << at;
      const auto& s = m.splits(0);
      const long long lo = s[static_cast<std::size_t>(g.rank())];
      long long wrong = 0, first = -1;  // (no ASSERT: a rank leaving early would leave the others waiting)
      for (long long q = lo; q < s[static_cast<std::size_t>(g.rank()) + 1]; ++q)
        if (xl.values()[static_cast<std::size_t>(q - lo)] != gx[static_cast<std::size_t>(q)] && wrong++ == 0) first = q;
      EXPECT_EQ(wrong, 0) << at << ", first at row " << first;
    }
  }
}

// Pieces split differently in one statement: the same error on every
// rank (the ranks whose pieces happen to match do not wait in a sum).
TEST(DistFuse, MismatchedPiecesAreAnErrorOnEveryRank) {
  td::machine_grid g(MPI_COMM_WORLD, {0});
  std::mt19937_64 rng(5);
  const long long n = 3LL * g.size();
  td::distribution_map<blocks> even({n}, g.extents()), skewed({n}, g.extents());
  std::vector<long long> s(static_cast<std::size_t>(g.size()) + 1);
  for (std::size_t k = 0; k < s.size(); ++k) s[k] = 3 * static_cast<long long>(k);
  if (g.size() > 1) s[s.size() - 2] -= 1;  // the last two ranks' pieces differ; the others match
  skewed.set_splits(0, s);
  const auto ga = random_values(n, rng);
  auto a = piece_of(g, even, ga), b = piece_of(g, skewed, ga);
  scalar<double> d;
  if (g.size() > 1) {
    try {
      td::fuse(g, defer(d()) = a.local()(i) * b.local()(i));
      ADD_FAILURE() << "pieces of different lengths accepted on rank " << g.rank();
    } catch (const shape_error& e) {
      EXPECT_NE(std::string(e.what()).find("tensorlev::dist::fuse"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("reported by rank " + std::to_string(g.size() - 2)), std::string::npos)
          << e.what();
    }
  } else {
    td::fuse(g, defer(d()) = a.local()(i) * b.local()(i));  // one rank: the same pieces
    double w = 0;
    for (double v : ga) w += v * v;
    EXPECT_EQ(d.value(), w);
  }
}

// A symmetric, strictly diagonally dominant n x n matrix (positive
// definite) with about `per_row` off-diagonal entries a row.
coordinate_list<double, int> spd_matrix(int n, int per_row, std::mt19937_64& rng) {
  std::vector<std::vector<std::pair<int, double>>> r(static_cast<std::size_t>(n));
  std::uniform_int_distribution<int> col(0, n - 1), val(-3, 3);
  for (int x = 0; x < n; ++x)
    for (int k = 0; k < per_row / 2; ++k) {
      const int y = col(rng);
      const double v = val(rng);
      if (y == x || v == 0) continue;
      r[static_cast<std::size_t>(x)].emplace_back(y, v);
      r[static_cast<std::size_t>(y)].emplace_back(x, v);
    }
  coordinate_list<double, int> list({n, n});
  for (int x = 0; x < n; ++x) {
    double off = 0;
    for (const auto& [y, v] : r[static_cast<std::size_t>(x)]) {
      list.push_back({x, y}, v);
      off += std::abs(v);
    }
    list.push_back({x, x}, off + 1 + x % 5);
  }
  return list;  // duplicates summed by pack (still symmetric)
}

// 25 iterations of fused CG on the ranks against one node's unfused CG:
// every iterate x_k equal to rounding, three kernels an iteration.
TEST(DistFuse, CgIteratesMatchOneNode) {
  td::machine_grid g(MPI_COMM_WORLD, {0});
  std::mt19937_64 rng(7);
  for (int n : {1, 7, 300}) {
    const auto list = spd_matrix(n, 8, rng);
    const auto A1 = pack<csr>(list, duplicates::sum);
    td::distribution_map<rows> am({n, n}, g.extents());
    am.set_splits(0, random_splits(n, g.size(), rng));
    const auto A = td::distribute<csr>(g, am, g.rank() == 0 ? &A1 : nullptr);
    td::distribution_map<blocks> vm({n}, g.extents());
    vm.set_splits(0, am.splits(0));
    std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
    const auto dones = piece_of(g, vm, ones);
    auto b = piece_of(g, vm, std::vector<double>(static_cast<std::size_t>(n)));
    td::ghost_spmv<double, csr, rows, blocks> spmv(A, vm);
    spmv(b, dones);
    auto x = piece_of(g, vm, std::vector<double>(static_cast<std::size_t>(n)));
    auto r = piece_of(g, vm, std::vector<double>(static_cast<std::size_t>(n)));
    auto p = piece_of(g, vm, std::vector<double>(static_cast<std::size_t>(n)));
    auto q = piece_of(g, vm, std::vector<double>(static_cast<std::size_t>(n)));
    compute(serial, r.local()(i), b.local()(i));
    compute(serial, p.local()(i), b.local()(i));
    scalar<double> pq, rr_next;
    td::fuse(g, defer(rr_next()) = r.local()(i) * r.local()(i));
    double rr = rr_next.value();
    // One node: the unfused statements over the whole vectors.
    vec ones1({n}), b1({n}), x1({n}), r1({n}), p1({n}), q1({n}), next1({n});
    for (auto& v : ones1.values()) v = 1.0;
    compute(serial, b1(i), A1(i, j) * ones1(j));
    compute(serial, r1(i), b1(i));
    compute(serial, p1(i), b1(i));
    scalar<double> pq1, rr1s;
    compute(serial, rr1s(), r1(i) * r1(i));
    double rr1 = rr1s.value();
    auto& xl = x.local();
    auto& rl = r.local();
    auto& pl = p.local();
    auto& ql = q.local();
    const double rr0 = rr1;  // stop where the residual is rounding (relative 1e-10)
    int iterations = 0;
    for (int it = 0; it < 25 && rr1 > 1e-20 * rr0; ++it, ++iterations) {
      const auto k0 = kernels_run();
      spmv.exchange(p);
      td::fuse(g, defer(ql(i)) = spmv.matrix()(i, j) * spmv.ghost_values()(j), defer(pq()) = pl(i) * ql(i));
      const double alpha = rr / pq.value();
      td::fuse(g, defer(xl(i)) += alpha * pl(i), defer(rl(i)) += -alpha * ql(i), defer(rr_next()) = rl(i) * rl(i));
      td::fuse(g, defer(pl(i)) = rl(i) + (rr_next.value() / rr) * pl(i));
      EXPECT_EQ(kernels_run() - k0, 3u) << "n " << n << " iteration " << it;
      rr = rr_next.value();

      compute(serial, q1(i), A1(i, j) * p1(j));
      compute(serial, pq1(), p1(i) * q1(i));
      const double alpha1 = rr1 / pq1.value();
      compute_add(serial, x1(i), alpha1 * p1(i));
      compute_add(serial, r1(i), -alpha1 * q1(i));
      compute(serial, rr1s(), r1(i) * r1(i));
      compute(serial, next1(i), r1(i) + (rr1s.value() / rr1) * p1(i));
      std::swap(p1, next1);
      rr1 = rr1s.value();

      EXPECT_NEAR(rr, rr1, 1e-9 * rr1 + 1e-14 * rr0) << "n " << n << " iteration " << it;
      const auto xs = td::gather<dense_vector>(x);
      if (g.rank() == 0) {
        double diff = 0, scale = 0;
        for (int u = 0; u < n; ++u) {
          diff = std::max(diff, std::abs(xs->values()[static_cast<std::size_t>(u)] - x1.values()[static_cast<std::size_t>(u)]));
          scale = std::max(scale, std::abs(x1.values()[static_cast<std::size_t>(u)]));
        }
        EXPECT_LE(diff, 1e-9 * std::max(scale, 1.0)) << "n " << n << " iteration " << it;
      }
    }
    EXPECT_EQ(iterations, n == 300 ? 25 : std::min(n, 25)) << "n " << n;  // CG ends in n steps (1 and 7)
  }
}

}  // namespace

#define TL_MPI_TESTS_PASSED "dist fuse tests"
#include "mpi_main.hpp"
