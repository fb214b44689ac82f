// Sparse outputs of dist::compute (issue 19) under mpirun (ctest: 1, 2, 3,
// 4, 6 and 8 ranks on the 1D, 2D and 3D grids MPI_Dims_create shapes):
// SpGEMM with rows on a line (each rank's block is its own piece: nothing
// moves), with the output's columns on the line (pieces of each partial to
// every holder), with k split on a plane and a cube (partials summed at
// the holders, replicated outputs), SpMM in steps of l, dense inputs into a
// sparse output, an output that is also an input, TTM into CSF and COO
// with l split, MTTKRP into CSR with j and k split. Outputs in CSR, CSR
// with unsorted rows, DCSR, COO, CSC and column-major dense; extents 0 and
// 1 included; values in -3..3 without 0, so that partial sums cancel and
// the stored zeros must match too. Every rank's piece (replicas included)
// is compared, coordinate by coordinate, with the single-node statement's
// result on the same global operands (every rank builds them from the
// same seed): the same stored coordinates (every coordinate a product
// reaches, as single-node) and the same values. Bytes against a model
// counted from the operands' patterns (entries * (2 * 4 + 8) per message).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <complex>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/formats.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::dist;
using namespace tensorlev::indices;

// Values in -3..3 without 0: products and sums are exact and may cancel.
int nonzero_value(std::mt19937& rng) {
  std::uniform_int_distribution<int> val(-3, 2);
  const int v = val(rng);
  return v >= 0 ? v + 1 : v;
}

template <class F>
tensor<double, F> random_matrix(int m, int n, double fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  coordinate_list<double, int> list({m, n});
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      if (u(rng) < fill) list.push_back({r, c}, nonzero_value(rng));
  return pack<F>(list);
}

template <class F>
tensor<double, F> random_tensor3(std::array<int, 3> d, double fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  coordinate_list<double, int> list({d[0], d[1], d[2]});
  for (int a = 0; a < d[0]; ++a)
    for (int b = 0; b < d[1]; ++b)
      for (int c = 0; c < d[2]; ++c)
        if (u(rng) < fill) list.push_back({a, b, c}, nonzero_value(rng));
  return pack<F>(list);
}

using entry = std::pair<std::vector<long long>, double>;

// The stored entries of t, shifted by `lo`, those inside [lo, hi) of the
// global coordinates when `box` is given, sorted.
template <class T>
std::vector<entry> entries_of(const T& t, const std::vector<long long>& shift, const block_box* box = nullptr) {
  std::vector<entry> out;
  for_each_component(t, [&](const auto& c, double v) {
    std::vector<long long> x(c.size());
    bool inside = true;
    for (std::size_t d = 0; d < c.size(); ++d) {
      x[d] = static_cast<long long>(c[d]) + shift[d];
      if (box != nullptr) inside = inside && x[d] >= box->lo[d] && x[d] < box->hi[d];
    }
    if (inside) out.emplace_back(std::move(x), v);
  });
  std::sort(out.begin(), out.end());
  return out;
}

// Every rank's piece stores exactly the global result's entries in its
// box (coordinates and values).
template <class T, class G>
void expect_piece(const T& dt, const G& global, const std::string& what) {
  if (!dt.holds()) {
    EXPECT_EQ(dt.local().stored(), 0u) << what;
    return;
  }
  std::vector<long long> off(T::order), zero(T::order, 0);
  for (std::size_t d = 0; d < T::order; ++d) off[d] = dt.offset(d);
  const auto got = entries_of(dt.local(), off);
  const auto want = entries_of(global, zero, &*dt.box());
  EXPECT_EQ(got, want) << what << " on rank " << dt.grid().rank();
}

// The (row, column) pairs a product A B reaches with k in [k0, k1).
template <class A, class B>
std::set<std::pair<long long, long long>> reached(const A& a, const B& b, long long k0, long long k1) {
  std::vector<std::vector<long long>> brow(static_cast<std::size_t>(b.dimension(0)));
  for_each_component(b, [&](const auto& c, double) { brow[static_cast<std::size_t>(c[0])].push_back(c[1]); });
  std::set<std::pair<long long, long long>> out;
  for_each_component(a, [&](const auto& c, double) {
    if (c[1] < k0 || c[1] >= k1) return;
    for (long long j : brow[static_cast<std::size_t>(c[1])]) out.insert({c[0], j});
  });
  return out;
}

std::size_t count_in(const std::set<std::pair<long long, long long>>& s, std::array<long long, 2> rows,
                     std::array<long long, 2> cols) {
  std::size_t n = 0;
  for (const auto& [r, c] : s) n += r >= rows[0] && r < rows[1] && c >= cols[0] && c < cols[1];
  return n;
}

constexpr long long entry_bytes = 2 * 4 + 8;

bool only_reduce(const comm_stats& st) {
  for (std::size_t q = 0; q < comm_kinds; ++q) {
    const auto k = static_cast<comm_kind>(q);
    if (k != comm_kind::reduce && (st[k].bytes_sent != 0 || st[k].bytes_received != 0)) return false;
  }
  return true;
}

const std::vector<std::array<int, 3>> extents = {{6, 5, 4}, {9, 7, 3}, {1, 3, 1}, {4, 1, 5}, {0, 3, 2}, {5, 0, 3}, {3, 4, 0}};

// SpGEMM C(i,j) = A(i,k) B(k,j) with the output in format FO.
template <class FO>
void spgemm_into() {
  // A dense output stores (and sends) every component of a partial,
  // reached or not.
  constexpr bool stores_all = std::is_same_v<FO, dense_col_major>;
  const auto count_in = [&](const std::set<std::pair<long long, long long>>& s, std::array<long long, 2> rows,
                            std::array<long long, 2> cols) {
    if (stores_all) return static_cast<std::size_t>(std::max(0LL, rows[1] - rows[0]) * std::max(0LL, cols[1] - cols[0]));
    return ::count_in(s, rows, cols);
  };
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const std::string f = std::string(FO::name) + " ";
  const bool l0 = line.rank() == 0, p0 = plane.rank() == 0, c0 = cube.rank() == 0;
  for (const auto& d : extents) {
    const std::string what = f + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    const auto A = random_matrix<csr>(d[0], d[1], 0.4, 11u + static_cast<unsigned>(d[0] * 7 + d[1]));
    const auto B = random_matrix<csr>(d[1], d[2], 0.4, 12u + static_cast<unsigned>(d[1] * 7 + d[2]));
    const tensor<double, FO> C0 = pack<FO>(coordinate_list<double, int>({d[0], d[2]}));
    tensor<double, FO> C = C0;
    C(i, j) = A(i, k) * B(k, j);
    const auto all = reached(A, B, 0, d[1]);

    // Rows on a line, B replicated: each rank's block is its piece.
    {
      const auto dA = distribute<csr>(line, distribution_map<distribution<"xy->x">>({d[0], d[1]}, line.extents()),
                                      l0 ? &A : nullptr);
      const auto dB = distribute<csr>(line, distribution_map<distribution<"xy->*">>({d[1], d[2]}, line.extents()),
                                      l0 ? &B : nullptr);
      auto dC = distribute<FO>(line, distribution_map<distribution<"xy->x">>({d[0], d[2]}, line.extents()),
                               l0 ? &C0 : nullptr);
      line.stats().reset();
      compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("i"));
      EXPECT_EQ(line.stats().total().bytes_sent, 0) << "rows on a line move nothing " << what;
      expect_piece(dC, C, "SpGEMM, rows on a line " + what);
      // Again into the same output (its previous entries replaced).
      compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("i"));
      expect_piece(dC, C, "SpGEMM, rows on a line, twice " + what);
      // The output's columns on the line: each rank's rows go in pieces
      // to every rank, by columns.
      auto cC = distribute<FO>(line, distribution_map<distribution<"xy->y">>({d[0], d[2]}, line.extents()),
                               l0 ? &C0 : nullptr);
      line.stats().reset();
      compute(cC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("i"));
      expect_piece(cC, C, "SpGEMM, output by columns " + what);
      const auto ib = block_bounds(d[0], line.size(), line.coords()[0]);
      long long want = 0;
      for (int h = 0; h < line.size(); ++h)
        if (h != line.rank() && d[1] > 0)
          want += static_cast<long long>(count_in(all, ib, block_bounds(d[2], line.size(), h))) * entry_bytes;
      EXPECT_EQ(line.stats().total().bytes_sent, want) << "output by columns " << what;
      EXPECT_TRUE(only_reduce(line.stats())) << what;
      // The output read as an input: C = C B in place (square only).
      if constexpr (std::is_same_v<FO, csr>) {
        if (d[0] == d[1]) {
          tensor<double, csr> S = pack<csr>(coordinate_list<double, int>({d[0], d[0]}));
          S(i, j) = A(i, k) * A(k, j);
          const auto rA = distribute<csr>(line, distribution_map<distribution<"xy->*">>({d[0], d[0]}, line.extents()),
                                          l0 ? &A : nullptr);
          auto dS = distribute<csr>(line, distribution_map<distribution<"xy->x">>({d[0], d[0]}, line.extents()),
                                    l0 ? &A : nullptr);
          compute(dS(i, j) = dS(i, k) * rA(k, j), statement_schedule().distribute("i"));
          expect_piece(dS, S, "SpGEMM, S = S A in place " + what);
        }
      }
    }
    // k split on a plane: partial rows summed at the row blocks' holders,
    // replicated along the plane's second dimension (C "xy->x*") or in
    // tiles (C "xy->xy").
    {
      const int gy = plane.dims()[1];
      const auto dA = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                      p0 ? &A : nullptr);
      const auto dB = distribute<csr>(plane, distribution_map<distribution<"xy->*x">>({d[1], d[2]}, plane.extents()),
                                      p0 ? &B : nullptr);
      const auto ib = block_bounds(d[0], plane.dims()[0], plane.coords()[0]);
      const auto kb = block_bounds(d[1], gy, plane.coords()[1]);
      const auto mine = reached(A, B, kb[0], kb[1]);
      const bool runs = ib[1] > ib[0] && kb[1] > kb[0] && d[2] > 0;
      auto rC = distribute<FO>(plane, distribution_map<distribution<"xy->x*">>({d[0], d[2]}, plane.extents()),
                               p0 ? &C0 : nullptr);
      plane.stats().reset();
      compute(rC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
      expect_piece(rC, C, "SpGEMM, k split, rows replicated " + what);
      EXPECT_EQ(plane.stats().total().bytes_sent,
                runs ? (gy - 1) * static_cast<long long>(count_in(mine, ib, {0, d[2]})) * entry_bytes : 0)
          << "k split, rows replicated " << what;
      EXPECT_TRUE(only_reduce(plane.stats())) << what;
      // The same with each rank's k block in 2 and 3 steps, into the output
      // just computed: a coordinate reached in several steps is summed on
      // its rank before it is sent, so the bytes are the same.
      for (long long q : {2LL, 3LL}) {
        plane.stats().reset();
        compute(rC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik").divide('k', q));
        expect_piece(rC, C, "SpGEMM, k split and in steps, rows replicated " + what);
        EXPECT_EQ(plane.stats().total().bytes_sent,
                  runs ? (gy - 1) * static_cast<long long>(count_in(mine, ib, {0, d[2]})) * entry_bytes : 0)
            << "k split in " << q << " steps, rows replicated " << what;
        EXPECT_TRUE(only_reduce(plane.stats())) << what;
      }
      auto tC = distribute<FO>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[2]}, plane.extents()),
                               p0 ? &C0 : nullptr);
      plane.stats().reset();
      compute(tC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
      expect_piece(tC, C, "SpGEMM, k split, tiles " + what);
      long long want = 0;
      for (int c = 0; c < gy && runs; ++c)
        if (c != plane.coords()[1])
          want += static_cast<long long>(count_in(mine, ib, block_bounds(d[2], gy, c))) * entry_bytes;
      EXPECT_EQ(plane.stats().total().bytes_sent, want) << "k split, tiles " << what;
    }
    // The cube: i, j, k each over a machine dimension; partial tiles
    // summed along the third.
    {
      const auto dA = distribute<csr>(cube, distribution_map<distribution<"xy->x*y">>({d[0], d[1]}, cube.extents()),
                                      c0 ? &A : nullptr);
      const auto dB = distribute<dcsr>(cube, distribution_map<distribution<"xy->*yx">>({d[1], d[2]}, cube.extents()),
                                       c0 ? &B : nullptr);
      auto dC = distribute<FO>(cube, distribution_map<distribution<"xy->xy*">>({d[0], d[2]}, cube.extents()),
                               c0 ? &C0 : nullptr);
      cube.stats().reset();
      compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ijk"));
      expect_piece(dC, C, "SpGEMM on the cube " + what);
      const auto ib = block_bounds(d[0], cube.dims()[0], cube.coords()[0]);
      const auto jb = block_bounds(d[2], cube.dims()[1], cube.coords()[1]);
      const auto kb = block_bounds(d[1], cube.dims()[2], cube.coords()[2]);
      const bool runs = ib[1] > ib[0] && jb[1] > jb[0] && kb[1] > kb[0];
      const long long n = static_cast<long long>(count_in(reached(A, B, kb[0], kb[1]), ib, jb));
      EXPECT_EQ(cube.stats().total().bytes_sent, runs ? (cube.dims()[2] - 1) * n * entry_bytes : 0)
          << "cube " << what;
      EXPECT_TRUE(only_reduce(cube.stats())) << what;
    }
  }
}

TEST(DistSparseOutputs, SpGEMMIntoCSR) { spgemm_into<csr>(); }
TEST(DistSparseOutputs, SpGEMMIntoUnsortedRows) { spgemm_into<csr_unsorted>(); }
TEST(DistSparseOutputs, SpGEMMIntoDCSR) { spgemm_into<dcsr>(); }
TEST(DistSparseOutputs, SpGEMMIntoCOO) { spgemm_into<coo>(); }
TEST(DistSparseOutputs, SpGEMMIntoCSC) { spgemm_into<csc>(); }
TEST(DistSparseOutputs, SpGEMMIntoColumnMajorDense) { spgemm_into<dense_col_major>(); }

// Steps, dense inputs, order 3.
TEST(DistSparseOutputs, StepsDenseInputsAndTensors) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const bool l0 = line.rank() == 0, p0 = plane.rank() == 0, c0 = cube.rank() == 0;
  for (const auto& d : extents) {
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    // SpMM into CSR in two steps of l: each step's entries join the
    // rank's piece (its own rows: nothing moves).
    const auto A = random_matrix<csr>(d[0], d[1], 0.4, 21u + static_cast<unsigned>(d[0]));
    const auto D = random_matrix<dense_row_major>(d[1], d[2], 0.7, 22u + static_cast<unsigned>(d[2]));
    const tensor<double, csr> C0 = pack<csr>(coordinate_list<double, int>({d[0], d[2]}));
    tensor<double, csr> C = C0;
    C(i, l) = A(i, j) * D(j, l);
    const auto dA = distribute<csr>(line, distribution_map<distribution<"xy->x">>({d[0], d[1]}, line.extents()),
                                    l0 ? &A : nullptr);
    const auto dD = distribute<dense_row_major>(line, distribution_map<distribution<"xy->*">>({d[1], d[2]}, line.extents()),
                                                l0 ? &D : nullptr);
    auto dC = distribute<csr>(line, distribution_map<distribution<"xy->x">>({d[0], d[2]}, line.extents()),
                              l0 ? &C0 : nullptr);
    line.stats().reset();
    compute(dC(i, l) = dA(i, j) * dD(j, l), statement_schedule().distribute("i").divide('l', 2));
    expect_piece(dC, C, "SpMM into CSR in steps of l " + what);
    EXPECT_EQ(line.stats().total().bytes_sent, 0) << what;
    // Dense inputs, a sparse output (every coordinate reached), fetched
    // over a plane.
    const auto E = random_matrix<dense_row_major>(d[0], d[1], 0.6, 23u);
    const tensor<double, dcsr> G0 = pack<dcsr>(coordinate_list<double, int>({d[0], d[2]}));
    tensor<double, dcsr> G = G0;
    G(i, l) = E(i, j) * D(j, l);
    const auto pE = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                                p0 ? &E : nullptr);
    const auto pD = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->yx">>({d[1], d[2]}, plane.extents()),
                                                p0 ? &D : nullptr);
    auto pG = distribute<dcsr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[2]}, plane.extents()),
                               p0 ? &G0 : nullptr);
    compute(pG(i, l) = pE(i, j) * pD(j, l), statement_schedule().distribute("il"));
    expect_piece(pG, G, "dense inputs into DCSR, i and l distributed " + what);
    compute(pG(i, l) = pE(i, j) * pD(j, l), statement_schedule().distribute("il").divide('j', 2));
    expect_piece(pG, G, "dense inputs into DCSR, in two steps of j " + what);
    // TTM into CSF and COO with l split (X's i blocks replicated along
    // the plane's second dimension): each rank's own piece.
    const auto X = random_tensor3<csf>(d, 0.4, 24u + static_cast<unsigned>(d[1]));
    const auto U = random_matrix<dense_row_major>(d[2], 3, 1.0, 25u);
    const auto tX = distribute<csf>(plane, distribution_map<distribution<"xyz->x*">>({d[0], d[1], d[2]}, plane.extents()),
                                    p0 ? &X : nullptr);
    const auto dU = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*y">>({d[2], 3}, plane.extents()),
                                                p0 ? &U : nullptr);
    const auto ttm = [&]<class F>(std::type_identity<F>) {
      const tensor<double, F> Y0 = pack<F>(coordinate_list<double, int>({d[0], d[1], 3}));
      tensor<double, F> Y = Y0;
      Y(i, j, l) = X(i, j, k) * U(k, l);
      auto dY = distribute<F>(plane, distribution_map<distribution<"xyz->xz">>({d[0], d[1], 3}, plane.extents()),
                              p0 ? &Y0 : nullptr);
      plane.stats().reset();
      compute(dY(i, j, l) = tX(i, j, k) * dU(k, l), statement_schedule().distribute("il"));
      EXPECT_EQ(plane.stats().total().bytes_sent, 0) << "TTM moves nothing " << what;
      expect_piece(dY, Y, std::string("TTM into ") + std::string(F::name) + ", l split " + what);
      // Its i blocks replicated instead: each rank sends its (i, l) block
      // to the gy - 1 other holders of rows i.
      auto rY = distribute<F>(plane, distribution_map<distribution<"xyz->x*">>({d[0], d[1], 3}, plane.extents()),
                              p0 ? &Y0 : nullptr);
      compute(rY(i, j, l) = tX(i, j, k) * dU(k, l), statement_schedule().distribute("il"));
      expect_piece(rY, Y, std::string("TTM into ") + std::string(F::name) + ", replicated rows " + what);
    };
    ttm(std::type_identity<csf>{});
    ttm(std::type_identity<coo_tensor<3>>{});
    // MTTKRP into CSR with j and k split: partial rows summed at the
    // holders of M's rows.
    const auto Bm = random_matrix<dense_row_major>(d[1], 3, 1.0, 26u);
    const tensor<double, csr> M0 = pack<csr>(coordinate_list<double, int>({d[0], 3}));
    tensor<double, csr> M = M0;
    M(i, l) = X(i, j, k) * Bm(j, l) * U(k, l);
    const auto cX = distribute<csf>(cube, distribution_map<distribution<"xyz->xyz">>({d[0], d[1], d[2]}, cube.extents()),
                                    c0 ? &X : nullptr);
    const auto cB = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->*x*">>({d[1], 3}, cube.extents()),
                                                c0 ? &Bm : nullptr);
    const auto cU = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->**x">>({d[2], 3}, cube.extents()),
                                                c0 ? &U : nullptr);
    auto cM = distribute<csr>(cube, distribution_map<distribution<"xy->x**">>({d[0], 3}, cube.extents()),
                              c0 ? &M0 : nullptr);
    cube.stats().reset();
    compute(cM(i, l) = cX(i, j, k) * cB(j, l) * cU(k, l), statement_schedule().distribute("ijk"));
    expect_piece(cM, M, "MTTKRP into CSR, j and k split " + what);
    EXPECT_TRUE(only_reduce(cube.stats())) << what;
  }
}

// Values that are not integers (sums depend on their order), complex
// values with 64-bit indices, a replicated sparse input whose pieces come
// from the owners (not the other replicas), and an order-3 sparse output
// of a split reduction. Replicas of an output piece hold bit-identical
// values; results match the single-node statement to rounding.
TEST(DistSparseOutputs, ReplicasComplexAndOwners) {
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  const bool p0 = plane.rank() == 0;
  const int gy = plane.dims()[1];
  MPI_Comm row_axis = plane.axis(1);  // the ranks holding one replicated row block
  for (const auto& d : extents) {
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    // Non-integer values: A's and B's entries times 1/3 and 1/7.
    auto A = random_matrix<csr>(d[0], d[1], 0.5, 41u + static_cast<unsigned>(d[0]));
    auto B = random_matrix<csr>(d[1], d[2], 0.5, 42u + static_cast<unsigned>(d[2]));
    for (auto& v : A.values()) v /= 3.0;
    for (auto& v : B.values()) v /= 7.0;
    const tensor<double, csr> C0 = pack<csr>(coordinate_list<double, int>({d[0], d[2]}));
    tensor<double, csr> C = C0;
    C(i, j) = A(i, k) * B(k, j);
    const auto dA = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                    p0 ? &A : nullptr);
    const auto dB = distribute<csr>(plane, distribution_map<distribution<"xy->*x">>({d[1], d[2]}, plane.extents()),
                                    p0 ? &B : nullptr);
    auto rC = distribute<csr>(plane, distribution_map<distribution<"xy->x*">>({d[0], d[2]}, plane.extents()),
                              p0 ? &C0 : nullptr);
    compute(rC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
    {
      // Against single-node: the same coordinates, values to rounding.
      std::vector<long long> off{rC.offset(0), rC.offset(1)}, zero{0, 0};
      const auto got = entries_of(rC.local(), off);
      const auto want = rC.holds() ? entries_of(C, zero, &*rC.box()) : std::vector<entry>{};
      // (EXPECT, not ASSERT: every rank must reach the collectives below.)
      EXPECT_EQ(got.size(), want.size()) << what;
      for (std::size_t e = 0; e < std::min(got.size(), want.size()); ++e) {
        EXPECT_EQ(got[e].first, want[e].first) << what;
        EXPECT_NEAR(got[e].second, want[e].second, 1e-12 * (1 + std::abs(want[e].second))) << what;
      }
      // Replicas along the row axis: the values of coordinate 0's copy.
      std::vector<double> v(rC.local().values().begin(), rC.local().values().end());
      long long n0 = static_cast<long long>(v.size());
      MPI_Bcast(&n0, 1, MPI_LONG_LONG, 0, row_axis);
      EXPECT_EQ(static_cast<long long>(v.size()), n0) << what;
      std::vector<double> v0(static_cast<std::size_t>(n0));
      if (plane.coords()[1] == 0) v0 = v;
      MPI_Bcast(v0.data(), static_cast<int>(n0), MPI_DOUBLE, 0, row_axis);
      for (std::size_t e = 0; e < std::min(v.size(), v0.size()); ++e)
        EXPECT_EQ(std::bit_cast<unsigned long long>(v[e]), std::bit_cast<unsigned long long>(v0[e]))
            << "replicas differ, entry " << e << " " << what;
    }
    // A replicated sparse input read by column blocks: B ("xy->*x", k
    // over the second dimension, replicated over the first) where each
    // rank reads all of k for its j block: the pieces come from the
    // owners (first replicas) only, so nothing is counted twice.
    auto tC = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[2]}, plane.extents()),
                              p0 ? &C0 : nullptr);
    const auto tA = distribute<dcsr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                     p0 ? &A : nullptr);
    compute(tC(i, j) = tA(i, k) * dB(k, j), statement_schedule().distribute("ij"));
    {
      std::vector<long long> off{tC.offset(0), tC.offset(1)}, zero{0, 0};
      const auto got = entries_of(tC.local(), off);
      const auto want = tC.holds() ? entries_of(C, zero, &*tC.box()) : std::vector<entry>{};
      EXPECT_EQ(got.size(), want.size()) << "B from its owners " << what;
      for (std::size_t e = 0; e < std::min(got.size(), want.size()); ++e) {
        EXPECT_EQ(got[e].first, want[e].first) << what;
        EXPECT_NEAR(got[e].second, want[e].second, 1e-12 * (1 + std::abs(want[e].second))) << what;
      }
    }
    // Complex values, 64-bit indices: SpGEMM with k split into CSR.
    using Z = std::complex<double>;
    coordinate_list<Z, std::int64_t> la({d[0], d[1]}), lb({d[1], d[2]});
    for_each_component(A, [&](const auto& c, double v) { la.push_back({c[0], c[1]}, Z(3 * v, -6 * v)); });
    for_each_component(B, [&](const auto& c, double v) { lb.push_back({c[0], c[1]}, Z(-7 * v, 14 * v)); });
    const auto zA = pack<csr>(la);
    const auto zB = pack<csr>(lb);
    const tensor<Z, csr, std::int64_t> zC0 = pack<csr>(coordinate_list<Z, std::int64_t>({d[0], d[2]}));
    tensor<Z, csr, std::int64_t> zC = zC0;
    zC(i, j) = zA(i, k) * zB(k, j);
    const auto dzA = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                     p0 ? &zA : nullptr);
    const auto dzB = distribute<csr>(plane, distribution_map<distribution<"xy->*x">>({d[1], d[2]}, plane.extents()),
                                     p0 ? &zB : nullptr);
    auto dzC = distribute<csr>(plane, distribution_map<distribution<"xy->x*">>({d[0], d[2]}, plane.extents()),
                               p0 ? &zC0 : nullptr);
    plane.stats().reset();
    compute(dzC(i, j) = dzA(i, k) * dzB(k, j), statement_schedule().distribute("ik"));
    if (dzC.holds()) {
      std::vector<std::pair<std::array<std::int64_t, 2>, Z>> got, want;
      for_each_component(dzC.local(), [&](const auto& c, const Z& v) {
        got.push_back({{c[0] + static_cast<std::int64_t>(dzC.offset(0)), c[1]}, v});
      });
      for_each_component(zC, [&](const auto& c, const Z& v) {
        if (c[0] >= dzC.box()->lo[0] && c[0] < dzC.box()->hi[0]) want.push_back({{c[0], c[1]}, v});
      });
      const auto by_coord = [](const auto& x, const auto& y) { return x.first < y.first; };
      std::sort(got.begin(), got.end(), by_coord);
      std::sort(want.begin(), want.end(), by_coord);
      EXPECT_EQ(got.size(), want.size()) << "complex " << what;
      for (std::size_t e = 0; e < std::min(got.size(), want.size()); ++e) {
        EXPECT_EQ(got[e].first, want[e].first) << "complex " << what;
        EXPECT_NEAR(std::abs(got[e].second - want[e].second), 0.0, 1e-12 * (1 + std::abs(want[e].second)))
            << "complex " << what;
      }
    }
    // Bytes: each partial's reached entries to the gy - 1 other replicas,
    // 2 * 8 + 16 bytes an entry.
    const auto ib = block_bounds(d[0], plane.dims()[0], plane.coords()[0]);
    const auto kb = block_bounds(d[1], gy, plane.coords()[1]);
    const bool runs = ib[1] > ib[0] && kb[1] > kb[0] && d[2] > 0;
    EXPECT_EQ(plane.stats().total().bytes_sent,
              runs ? (gy - 1) * static_cast<long long>(count_in(reached(A, B, kb[0], kb[1]), ib, {0, d[2]})) * 32 : 0)
        << "complex bytes " << what;
    // Order 3: TTM into CSF with k split (partial fibres summed at the
    // holders of Y's i blocks).
    const auto X = random_tensor3<csf>(d, 0.4, 43u + static_cast<unsigned>(d[1]));
    const auto U = random_matrix<dense_row_major>(d[2], 3, 1.0, 44u);
    const tensor<double, csf> Y0 = pack<csf>(coordinate_list<double, int>({d[0], d[1], 3}));
    tensor<double, csf> Y = Y0;
    Y(i, j, l) = X(i, j, k) * U(k, l);
    const auto kX = distribute<csf>(plane, distribution_map<distribution<"xyz->xz">>({d[0], d[1], d[2]}, plane.extents()),
                                    p0 ? &X : nullptr);
    const auto kU = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*x">>({d[2], 3}, plane.extents()),
                                                p0 ? &U : nullptr);
    auto kY = distribute<csf>(plane, distribution_map<distribution<"xyz->x*">>({d[0], d[1], 3}, plane.extents()),
                              p0 ? &Y0 : nullptr);
    compute(kY(i, j, l) = kX(i, j, k) * kU(k, l), statement_schedule().distribute("ik"));
    expect_piece(kY, Y, "TTM into CSF, k split " + what);
  }
}

// One rank's local kernel throws (an injected overflow_error on the last
// rank): every rank throws overflow_error naming it, after the statement's
// communication, and the next statement runs normally (no rank left
// waiting, no message left over): the sparse output's stepped and direct
// paths and the dense output's.
TEST(DistSparseOutputs, OneRanksFailureReachesEveryRank) {
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  const bool p0 = plane.rank() == 0;
  const auto A = random_matrix<csr>(7, 6, 0.5, 61u);
  const auto B = random_matrix<csr>(6, 5, 0.5, 62u);
  const tensor<double, csr> C0 = pack<csr>(coordinate_list<double, int>({7, 5}));
  tensor<double, csr> C = C0;
  C(i, j) = A(i, k) * B(k, j);
  tensor<double, dense_row_major> Cd({7, 5});
  Cd(i, j) = A(i, k) * B(k, j);
  const auto dA = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({7, 6}, plane.extents()),
                                  p0 ? &A : nullptr);
  const auto dB = distribute<csr>(plane, distribution_map<distribution<"xy->*x">>({6, 5}, plane.extents()),
                                  p0 ? &B : nullptr);
  const auto rB = distribute<csr>(plane, distribution_map<distribution<"xy->**">>({6, 5}, plane.extents()),
                                  p0 ? &B : nullptr);
  const auto rA = distribute<csr>(plane, distribution_map<distribution<"xy->x*">>({7, 6}, plane.extents()),
                                  p0 ? &A : nullptr);
  auto rC = distribute<csr>(plane, distribution_map<distribution<"xy->x*">>({7, 5}, plane.extents()),
                            p0 ? &C0 : nullptr);
  auto oC = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({7, 5}, plane.extents()),
                            p0 ? &C0 : nullptr);
  auto dC = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->x*">>({7, 5}, plane.extents()),
                                        p0 ? &Cd : nullptr);
  struct restore {
    ~restore() { tensorlev::dist::detail::fail_local_kernel_on_rank = -1; }
  } keep;
  const int last = plane.size() - 1;
  const auto expect_overflow = [&](auto&& run, const std::string& what) {
    tensorlev::dist::detail::fail_local_kernel_on_rank = last;
    bool threw = false;
    try {
      run();
    } catch (const overflow_error& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last) + "'s local kernel: an injected failure"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(threw) << what;
    tensorlev::dist::detail::fail_local_kernel_on_rank = -1;
  };
  // The stepped path (k split: partial rows summed at the holders).
  expect_overflow([&] { compute(rC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik")); },
                  "sparse output, k split");
  compute(rC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
  expect_piece(rC, C, "sparse output after a failure");
  // The direct path (each rank its own block: rows, B replicated; on a
  // plane whose second dimension splits j).
  expect_overflow([&] { compute(oC(i, j) = rA(i, k) * rB(k, j), statement_schedule().distribute("ij")); },
                  "sparse output, direct");
  compute(oC(i, j) = rA(i, k) * rB(k, j), statement_schedule().distribute("ij"));
  expect_piece(oC, C, "direct path after a failure");
  // The dense output.
  expect_overflow([&] { compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik")); },
                  "dense output, k split");
  compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
  expect_piece(dC, Cd, "dense output after a failure");
}

// The ranks' blocks follow the tensors' split points (the output's first):
// rows split unevenly (as split_policy::nonzeros splits them) in A, y and
// C: SpMV and SpGEMM (B replicated) move nothing of A and write their
// pieces in place; an input split otherwise than the output moves to the
// output's blocks.
TEST(DistSparseOutputs, BlocksFollowTheTensorsSplits) {
  machine_grid line(MPI_COMM_WORLD, {0});
  const int p = line.size();
  const bool l0 = line.rank() == 0;
  const int m = 3 * p + 2, n = 7;
  // Uneven rows: rank r holds 1 row for r < p - 1, the last rank the rest.
  std::vector<long long> sp(static_cast<std::size_t>(p) + 1);
  for (int r = 0; r <= p; ++r) sp[static_cast<std::size_t>(r)] = r < p ? r : m;
  const auto A = random_matrix<csr>(m, n, 0.5, 71u);
  const auto B = random_matrix<csr>(n, 5, 0.5, 72u);
  const auto x = random_matrix<dense_row_major>(n, 1, 1.0, 73u);
  tensor<double, dense_vector> xv({n});
  std::copy(x.values().begin(), x.values().end(), xv.values().begin());
  tensor<double, dense_vector> y({m});
  y(i) = A(i, k) * xv(k);
  const tensor<double, csr> C0 = pack<csr>(coordinate_list<double, int>({m, 5}));
  tensor<double, csr> C = C0;
  C(i, j) = A(i, k) * B(k, j);
  distribution_map<distribution<"xy->x">> rows({m, n}, line.extents());
  rows.set_splits(0, sp);
  distribution_map<distribution<"xy->x">> crow({m, 5}, line.extents());
  crow.set_splits(0, sp);
  distribution_map<distribution<"x->x">> yrow({m}, line.extents());
  yrow.set_splits(0, sp);
  const auto dA = distribute<csr>(line, rows, l0 ? &A : nullptr);
  const auto rB = distribute<csr>(line, distribution_map<distribution<"xy->*">>({n, 5}, line.extents()), l0 ? &B : nullptr);
  const auto rx = distribute<dense_vector>(line, distribution_map<distribution<"x->*">>({n}, line.extents()),
                                           l0 ? &xv : nullptr);
  auto dy = distribute<dense_vector>(line, yrow, l0 ? &y : nullptr);
  std::fill(dy.local().values().begin(), dy.local().values().end(), -1.0);
  line.stats().reset();
  compute(dy(i) = dA(i, k) * rx(k), statement_schedule().distribute("i"));
  EXPECT_EQ(line.stats().total().bytes_sent, 0) << "SpMV over uneven rows moves nothing";
  for (std::size_t q = 0; q < dy.local().values().size(); ++q)
    EXPECT_EQ(dy.local().values()[q], y.values()[static_cast<std::size_t>(dy.offset(0)) + q]);
  auto dC = distribute<csr>(line, crow, l0 ? &C0 : nullptr);
  line.stats().reset();
  compute(dC(i, j) = dA(i, k) * rB(k, j), statement_schedule().distribute("i"));
  EXPECT_EQ(line.stats().total().bytes_sent, 0) << "SpGEMM over uneven rows moves nothing";
  expect_piece(dC, C, "SpGEMM over uneven rows");
  // A in even rows, C uneven: the blocks are C's, A's rows move to them.
  const auto eA = distribute<coo>(line, distribution_map<distribution<"xy->x">>({m, n}, line.extents()),
                                  l0 ? &A : nullptr);
  compute(dC(i, j) = eA(i, k) * rB(k, j), statement_schedule().distribute("i"));
  expect_piece(dC, C, "SpGEMM, A in even rows into uneven C");
  const double uneven = reduce<"ik", "k">(statement_schedule().distribute("i"), dA, rx);
  const double even = reduce<"ik", "k">(statement_schedule().distribute("i"), eA, rx);
  double want = 0;
  for (double v : y.values()) want += v;
  EXPECT_EQ(uneven, want) << "reduce over uneven rows";
  EXPECT_EQ(even, want) << "reduce over even rows";
}

// The stored entries of matrix t inside rows [r0, r1) and columns [c0, c1).
template <class T>
long long nnz_in(const T& t, std::array<long long, 2> rows, std::array<long long, 2> cols) {
  long long n = 0;
  for_each_component(t, [&](const auto& c, double) {
    n += c[0] >= rows[0] && c[0] < rows[1] && c[1] >= cols[0] && c[1] < cols[1];
  });
  return n;
}

// Sparse inputs read elsewhere than their own pieces move as entries:
// sparse SUMMA (k in steps, A and B in tiles), SpGEMM with B in row blocks
// (every rank reads all of it), SpMV with j over A's row blocks, TTM with
// the sparse tensor's k in steps. Results exactly the single-node ones;
// the bytes each rank receives are those of the entries it reads outside
// its own piece, counted as all-to-all traffic.
TEST(DistSparseOutputs, SparseInputsMove) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  const bool l0 = line.rank() == 0, p0 = plane.rank() == 0;
  const int gx = plane.dims()[0], gy = plane.dims()[1];
  for (const auto& d : extents) {
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    const auto A = random_matrix<csr>(d[0], d[1], 0.4, 31u + static_cast<unsigned>(d[0] * 5 + d[1]));
    const auto B = random_matrix<csr>(d[1], d[2], 0.4, 32u + static_cast<unsigned>(d[1] * 5 + d[2]));
    const tensor<double, csr> C0 = pack<csr>(coordinate_list<double, int>({d[0], d[2]}));
    tensor<double, csr> C = C0;
    C(i, j) = A(i, k) * B(k, j);
    // Sparse SUMMA: A, B and C in tiles of the plane, k in steps.
    const auto dA = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                    p0 ? &A : nullptr);
    const auto dB = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[1], d[2]}, plane.extents()),
                                    p0 ? &B : nullptr);
    auto dC = distribute<csr>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[2]}, plane.extents()),
                              p0 ? &C0 : nullptr);
    compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule::summa());
    expect_piece(dC, C, "sparse SUMMA " + what);
    for (long long q : {1LL, 3LL}) {
      plane.stats().reset();
      compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ij").divide('k', q));
      expect_piece(dC, C, "sparse SUMMA in " + std::to_string(q) + " steps " + what);
      const auto ib = block_bounds(d[0], gx, plane.coords()[0]);
      const auto jb = block_bounds(d[2], gy, plane.coords()[1]);
      const auto ak = block_bounds(d[1], gy, plane.coords()[1]);  // A's tile: (ib, ak)
      const auto bk = block_bounds(d[1], gx, plane.coords()[0]);  // B's tile: (bk, jb)
      long long want = 0;
      const long long parts = std::max(1LL, std::min(q, static_cast<long long>(d[1])));
      if (ib[1] > ib[0] && jb[1] > jb[0] && d[1] > 0)
        for (long long c = 0; c < parts; ++c) {
          const auto ks = block_bounds(d[1], parts, c);
          const std::array<long long, 2> a_own{std::max(ks[0], ak[0]), std::min(ks[1], ak[1])};
          const std::array<long long, 2> b_own{std::max(ks[0], bk[0]), std::min(ks[1], bk[1])};
          want += (nnz_in(A, ib, ks) - nnz_in(A, ib, a_own) + nnz_in(B, ks, jb) - nnz_in(B, b_own, jb)) * entry_bytes;
        }
      EXPECT_EQ(plane.stats()[comm_kind::alltoall].bytes_received, want) << "sparse SUMMA in steps " << what;
      EXPECT_EQ(plane.stats()[comm_kind::reduce].bytes_received, 0) << what;
    }
    // Rows on a line, B in row blocks: every rank reads all of B.
    const auto lA = distribute<coo>(line, distribution_map<distribution<"xy->x">>({d[0], d[1]}, line.extents()),
                                    l0 ? &A : nullptr);
    const auto lB = distribute<csr>(line, distribution_map<distribution<"xy->x">>({d[1], d[2]}, line.extents()),
                                    l0 ? &B : nullptr);
    auto lC = distribute<dcsr>(line, distribution_map<distribution<"xy->x">>({d[0], d[2]}, line.extents()),
                               l0 ? &C0 : nullptr);
    line.stats().reset();
    compute(lC(i, j) = lA(i, k) * lB(k, j), statement_schedule().distribute("i"));
    expect_piece(lC, C, "SpGEMM, B in row blocks " + what);
    const auto ir = block_bounds(d[0], line.size(), line.rank());
    const auto kr = block_bounds(d[1], line.size(), line.rank());
    const bool runs = ir[1] > ir[0] && d[1] > 0 && d[2] > 0;
    EXPECT_EQ(line.stats()[comm_kind::alltoall].bytes_received,
              runs ? (nnz_in(B, {0, d[1]}, {0, d[2]}) - nnz_in(B, kr, {0, d[2]})) * entry_bytes : 0)
        << "B in row blocks " << what;
    // SpMV with j over A's row blocks (A read by columns), and its sum.
    const auto x = random_matrix<dense_row_major>(d[1], 1, 1.0, 33u);
    tensor<double, dense_vector> xv({d[1]});
    std::copy(x.values().begin(), x.values().end(), xv.values().begin());
    tensor<double, dense_vector> y({d[0]});
    y(i) = A(i, k) * xv(k);
    const auto lx = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({d[1]}, line.extents()),
                                             l0 ? &xv : nullptr);
    auto ly = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({d[0]}, line.extents()),
                                       l0 ? &y : nullptr);
    std::fill(ly.local().values().begin(), ly.local().values().end(), -1.0);
    compute(ly(i) = lA(i, k) * lx(k), statement_schedule().distribute("k"));
    if (ly.holds()) {
      for (std::size_t q = 0; q < ly.local().values().size(); ++q) {
        EXPECT_EQ(ly.local().values()[q], y.values()[static_cast<std::size_t>(ly.offset(0)) + q])
            << "SpMV, k over A's rows " << what;
      }
    }
    double sum = 0;
    for (double v : y.values()) sum += v;
    EXPECT_EQ((reduce<"ik", "k">(statement_schedule().distribute("k"), lA, lx)), sum) << "sum of A x " << what;
    // SpMM in steps of l with A in column blocks: A moves (all its
    // columns for the rank's rows) but reads no l, so it moves once, not
    // once a step.
    {
      const auto D = random_matrix<dense_row_major>(d[1], 4, 1.0, 36u);
      tensor<double, dense_row_major> AD({d[0], 4});
      AD(i, l) = A(i, k) * D(k, l);
      const auto cA = distribute<csr>(line, distribution_map<distribution<"xy->y">>({d[0], d[1]}, line.extents()),
                                      l0 ? &A : nullptr);
      const auto rD = distribute<dense_row_major>(line, distribution_map<distribution<"xy->*">>({d[1], 4}, line.extents()),
                                                  l0 ? &D : nullptr);
      auto dAD = distribute<dense_row_major>(line, distribution_map<distribution<"xy->x">>({d[0], 4}, line.extents()),
                                             l0 ? &AD : nullptr);
      line.stats().reset();
      compute(dAD(i, l) = cA(i, k) * rD(k, l), statement_schedule().distribute("i").divide('l', 3));
      expect_piece(dAD, AD, "SpMM, A by columns, l in steps " + what);
      const bool moves = ir[1] > ir[0] && d[1] > 0;
      EXPECT_EQ(line.stats()[comm_kind::alltoall].bytes_received,
                moves ? (nnz_in(A, ir, {0, d[1]}) - nnz_in(A, ir, kr)) * entry_bytes : 0)
          << "A moves once " << what;
    }
    // TTM with X's k in steps (X in i blocks): X moves per step.
    const auto X = random_tensor3<csf>(d, 0.4, 34u + static_cast<unsigned>(d[2]));
    const auto U = random_matrix<dense_row_major>(d[2], 3, 1.0, 35u);
    tensor<double, dense_tensor<3>> Y({d[0], d[1], 3});
    Y(i, j, l) = X(i, j, k) * U(k, l);
    const auto tX = distribute<csf>(plane, distribution_map<distribution<"xyz->x*">>({d[0], d[1], d[2]}, plane.extents()),
                                    p0 ? &X : nullptr);
    const auto dU = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*y">>({d[2], 3}, plane.extents()),
                                                p0 ? &U : nullptr);
    auto dY = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xz">>({d[0], d[1], 3}, plane.extents()),
                                          p0 ? &Y : nullptr);
    std::fill(dY.local().values().begin(), dY.local().values().end(), -1.0);
    compute(dY(i, j, l) = tX(i, j, k) * dU(k, l), statement_schedule().distribute("il").divide('k', 2));
    expect_piece(dY, Y, "TTM, X's k in steps " + what);
  }
}

}  // namespace

#define TL_MPI_TESTS_PASSED "dist sparse output tests"
#include "mpi_main.hpp"
