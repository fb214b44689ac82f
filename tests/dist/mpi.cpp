// Distributed tensors and kernels under mpirun (ctest runs this with 1, 2,
// 3, 4, 8 and 9 ranks): every result is compared with the single-node
// result on the same global data (every rank builds it from the same seed),
// and the counted communication with each algorithm's model.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <random>
#include <set>

#include "tensorlev/codegen.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/frostt.hpp"
#include "tensorlev/io/matrix_market.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::dist;
using namespace tensorlev::indices;

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A random m x n matrix with small integer values (exact sums) in format F.
template <class F>
tensor<double, F> random_matrix(int m, int n, double fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> val(1, 9);
  coordinate_list<double, int> list({m, n});
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      if (u(rng) < fill) list.push_back({r, c}, val(rng));
  return pack<F>(list);
}
tensor<double, dense_vector> random_vector(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> val(-4, 4);
  tensor<double, dense_vector> x({n});
  for (auto& v : x.values()) v = val(rng);
  return x;
}

// The dense sub-block [lo, hi) of a dense row-major m x n array.
std::vector<double> sub_block(const std::vector<double>& a, long long n, const block_box& b) {
  std::vector<double> out;
  for (long long r = b.lo[0]; r < b.hi[0]; ++r)
    for (long long c = b.lo[1]; c < b.hi[1]; ++c) out.push_back(a[static_cast<std::size_t>(r * n + c)]);
  return out;
}

// Every rank's piece equals its box of the global tensor.
template <class T, class G>
void expect_piece(const T& dt, const G& global, const std::string& what) {
  if (!dt.holds()) {
    EXPECT_EQ(dt.local().stored(), 0u) << what;
    return;
  }
  EXPECT_EQ(to_dense(dt.local()), sub_block(to_dense(global), dt.dims()[1], *dt.box()))
      << what << " on rank " << dt.grid().rank();
}

TEST(DistGrid, ShapesCoordinatesAndAxes) {
  const int p = world_size();
  for (std::size_t order : {1u, 2u, 3u}) {
    machine_grid g(MPI_COMM_WORLD, std::vector<int>(order, 0));
    EXPECT_EQ(g.size(), p);
    EXPECT_EQ(g.rank_of(g.coord_vector()), g.rank());
    EXPECT_EQ(g.coords_of(g.rank()), g.coord_vector());
    for (std::size_t d = 0; d < order; ++d) {
      int s = 0;
      int r = 0;
      MPI_Comm_size(g.axis(d), &s);
      MPI_Comm_rank(g.axis(d), &r);
      EXPECT_EQ(s, g.dims()[d]);
      EXPECT_EQ(r, g.coords()[d]);
    }
  }
  EXPECT_THROW(machine_grid(MPI_COMM_WORLD, {p + 1}), shape_error);
  EXPECT_THROW(machine_grid(MPI_COMM_WORLD, {}), shape_error);
}

TEST(DistTensor, DistributeGatherRedistribute) {
  const int p = world_size();
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  for (auto [m, n] : {std::pair{0, 0}, {1, 1}, {5, 3}, {13, 17}, {40, 9}}) {
    const auto A = random_matrix<csr>(m, n, 0.3, static_cast<unsigned>(m * 31 + n));
    const auto* root_A = line.rank() == 0 ? &A : nullptr;
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + " on " + std::to_string(p) + " ranks";
    // Row blocks (CSR pieces), gathered back.
    auto rows = distribute<csr>(line, distribution_map<distribution<"xy->x">>({m, n}, line.extents()), root_A);
    expect_piece(rows, A, "rows " + what);
    const auto back = gather<csr>(rows);
    EXPECT_EQ(back.has_value(), line.rank() == 0);
    if (back) {
      EXPECT_EQ(to_dense(*back), to_dense(A)) << what;
    }
    // Columns (CSC pieces) by redistribution, then tiles, a fixed face and
    // replicated tiles on grids of 2 and 3 dimensions (dense pieces).
    auto cols = redistribute<csc>(rows, distribution_map<distribution<"xy->y">>({m, n}, line.extents()));
    expect_piece(cols, A, "columns " + what);
    auto tiles = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->xy">>({m, n}, plane.extents()),
                                             plane.rank() == 0 ? &A : nullptr);
    expect_piece(tiles, A, "tiles " + what);
    auto face = distribute<coo>(cube, distribution_map<distribution<"xy->xy0">>({m, n}, cube.extents()),
                                cube.rank() == 0 ? &A : nullptr);
    expect_piece(face, A, "face " + what);
    EXPECT_EQ(face.holds(), cube.coords()[2] == 0);
    auto repl = distribute<csr>(cube, distribution_map<distribution<"xy->xy*">>({m, n}, cube.extents()),
                                cube.rank() == 0 ? &A : nullptr);
    expect_piece(repl, A, "replicated " + what);
    const auto repl_back = gather<dense_row_major>(repl);
    if (repl_back) {
      EXPECT_EQ(to_dense(*repl_back), to_dense(A)) << "replicated pieces are gathered once " << what;
    }
    auto transposed =
        redistribute<dense_row_major>(tiles, distribution_map<distribution<"xy->yx">>({m, n}, plane.extents()));
    expect_piece(transposed, A, "tiles yx " + what);
    // From per-rank parts: rank r contributes the entries e with e % p == r.
    coordinate_list<double, int> part({m, n});
    long long e = 0;
    for_each_component(A, [&](const auto& x, double v) {
      if (e++ % p == line.rank()) part.push_back(std::span<const int>(x), v);
    });
    auto parts = distribute_entries<dcsr>(line, distribution_map<distribution<"xy->x">>({m, n}, line.extents()), part);
    expect_piece(parts, A, "from parts " + what);
  }
}

// Files read on rank 0 and routed: pieces equal the serial read's boxes;
// a missing file is an io_error on every rank.
TEST(DistTensor, ReadFiles) {
  machine_grid line(MPI_COMM_WORLD, {0});
  const std::string mtx = std::string(TENSORLEV_TEST_DATA_DIR) + "/can___24.mtx";
  const auto A = pack<csr>(io::read_matrix_market<double, int>(mtx));
  for (auto sp : {split_policy::blocked, split_policy::nonzeros}) {
    const auto dA = read_matrix_market<csr, distribution<"xy->x">>(line, mtx, sp);
    expect_piece(dA, A, "can___24 rows");
    if (sp == split_policy::nonzeros) {
      const auto want = balanced_splits<int>(std::span<const int>(A.level<1>().pos()), line.size());
      EXPECT_EQ(dA.map().splits(0), want);
    }
  }
  const std::string tns = std::string(TENSORLEV_TEST_DATA_DIR) + "/nations.tns";
  const auto T = pack<csf>(io::read_frostt<double, int>(tns));
  const auto dT = read_frostt<csf, distribution<"xyz->y">>(line, tns, split_policy::nonzeros);
  const auto back = gather<csf>(dT);
  if (back) {
    EXPECT_EQ(to_dense(*back), to_dense(T));
  }
  using rows = distribution<"xy->x">;
  EXPECT_THROW(((void)read_matrix_market<csr, rows>(line, mtx + ".missing")), io_error);
  EXPECT_THROW(((void)read_frostt<csr, rows>(line, tns)), io_error);  // an order-3 file for an order-2 format
}

TEST(DistTensor, ErrorsReachEveryRank) {
  machine_grid line(MPI_COMM_WORLD, {0});
  const auto A = random_matrix<csr>(6, 4, 0.5, 1);
  // The root's global tensor is not the distribution's shape: every rank throws.
  EXPECT_THROW((void)distribute<csr>(line, distribution_map<distribution<"xy->x">>({6, 5}, line.extents()),
                                     line.rank() == 0 ? &A : nullptr),
               shape_error);
  // A map for a 2D machine on a 1D grid.
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  EXPECT_THROW((void)distribute<csr>(line, distribution_map<distribution<"xy->xy">>({6, 4}, plane.extents()),
                                     line.rank() == 0 ? &A : nullptr),
               shape_error);
}

// Failures that depend on one rank's data or arguments are thrown on every
// rank (a rank left waiting would hang this test until ctest's timeout).
TEST(DistTensor, OneRankErrorsReachEveryRank) {
  machine_grid line(MPI_COMM_WORLD, {0});
  const bool root = line.rank() == 0;
  // A format whose rows hold one entry each: row 0 has two, so the piece
  // holding row 0 cannot be packed.
  using one_per_row = tensorlev::format<tensorlev::levels<tensorlev::dense<>, tensorlev::singleton<>>>;
  coordinate_list<double, int> list({4, 4});
  list.push_back({0, 0}, 1.0);
  list.push_back({0, 2}, 2.0);
  list.push_back({3, 1}, 3.0);
  const auto A = pack<csr>(list);
  EXPECT_THROW((void)distribute<one_per_row>(line, distribution_map<distribution<"xy->x">>({4, 4}, line.extents()),
                                             root ? &A : nullptr),
               shape_error);
  // Split points set on one rank only.
  distribution_map<distribution<"xy->x">> map({4, 4}, line.extents());
  if (root && line.size() > 1) {
    std::vector<long long> sp(static_cast<std::size_t>(line.size()) + 1, 4);
    sp[0] = 0;
    map.set_splits(0, sp);
  }
  if (line.size() > 1) {
    EXPECT_THROW((void)distribute<csr>(line, map, root ? &A : nullptr), shape_error);
  }
  // Extents beyond the index type.
  EXPECT_THROW((void)distribute<csr>(line, distribution_map<distribution<"xy->x">>({3000000000LL, 4}, line.extents()),
                                     static_cast<const tensor<double, csr>*>(nullptr)),
               shape_error);
}

// y = A x with A in row blocks (default and nonzero-balanced splits), in
// several formats; only x moves, by one all-gather.
template <class F>
void spmv_case(int m, int n, double fill, bool balanced) {
  machine_grid g(MPI_COMM_WORLD, {0});
  const int p = g.size();
  const auto A = random_matrix<csr>(m, n, fill, static_cast<unsigned>(m * 7 + n));
  const auto x = random_vector(n, static_cast<unsigned>(n));
  tensor<double, dense_vector> want({m});
  want(i) = A(i, j) * x(j);
  distribution_map<distribution<"xy->x">> amap({m, n}, g.extents());
  distribution_map<distribution<"x->x">> ymap({m}, g.extents());
  if (balanced) {
    const auto& rp = A.level<1>().pos();
    const auto s = balanced_splits<int>(rp, p);
    amap.set_splits(0, s);
    ymap.set_splits(0, s);
  }
  const auto dA = distribute<F>(g, amap, g.rank() == 0 ? &A : nullptr);
  const auto dx = distribute<dense_vector>(g, distribution_map<distribution<"x->x">>({n}, g.extents()),
                                           g.rank() == 0 ? &x : nullptr);
  auto dy = distribute<dense_vector>(g, ymap, g.rank() == 0 ? &want : nullptr);
  for (auto& v : dy.local().values()) v = -7;  // overwritten
  g.stats().reset();
  spmv_rows(dy, dA, dx);
  const auto& box = *dy.box();
  const std::vector<double> expect(want.values().begin() + box.lo[0], want.values().begin() + box.hi[0]);
  EXPECT_EQ(std::vector<double>(dy.local().values().begin(), dy.local().values().end()), expect)
      << m << "x" << n << " on rank " << g.rank();
  // The model: this rank sends its block of x to every other rank and
  // receives every other non-empty block; nothing else is communicated.
  const auto& xs = dx.map().splits(0);
  const long long mine = xs[static_cast<std::size_t>(g.rank()) + 1] - xs[static_cast<std::size_t>(g.rank())];
  long long others = 0;
  long long from = 0;
  for (int r = 0; r < p; ++r) {
    const long long c = xs[static_cast<std::size_t>(r) + 1] - xs[static_cast<std::size_t>(r)];
    if (r != g.rank() && c > 0) {
      others += c;
      ++from;
    }
  }
  const auto& st = g.stats()[comm_kind::allgather];
  EXPECT_EQ(st.bytes_received, others * 8);
  EXPECT_EQ(st.messages_received, from);
  EXPECT_EQ(st.bytes_sent, mine > 0 ? mine * 8 * (p - 1) : 0);
  EXPECT_EQ(g.stats().total().bytes_received, st.bytes_received) << "row-blocked SpMV moves only x";
  EXPECT_EQ(g.stats().total().bytes_sent, st.bytes_sent);
  // Ghost exchange: only the entries of x this rank's rows use, counted
  // against the columns of the global matrix's rows here.
  ghost_spmv<double, F, distribution<"xy->x">, distribution<"x->x">> plan(dA, dx.map());
  for (auto& v : dy.local().values()) v = -7;
  g.stats().reset();
  plan(dy, dx);
  EXPECT_EQ(std::vector<double>(dy.local().values().begin(), dy.local().values().end()), expect)
      << "ghost SpMV " << m << "x" << n;
  std::set<int> used;
  for_each_component(A, [&](const auto& x, double) {
    if (x[0] >= box.lo[0] && x[0] < box.hi[0] && (x[1] < xs[static_cast<std::size_t>(g.rank())] ||
                                                   x[1] >= xs[static_cast<std::size_t>(g.rank()) + 1]))
      used.insert(x[1]);
  });
  EXPECT_EQ(plan.ghosts(), static_cast<long long>(used.size()));
  EXPECT_EQ(g.stats()[comm_kind::alltoall].bytes_received, static_cast<long long>(used.size()) * 8);
  EXPECT_EQ(g.stats().total().bytes_received, static_cast<long long>(used.size()) * 8) << "ghost SpMV moves only ghosts";
  // Two-level: ranks, then chunks inside each rank (the local kernel on an
  // executor; a Kokkos one in an application).
  for (auto& v : dy.local().values()) v = -7;
  spmv_rows(dy, dA, dx, tensorlev::chunked_serial_executor{});
  EXPECT_EQ(std::vector<double>(dy.local().values().begin(), dy.local().values().end()), expect)
      << "chunked local kernel " << m << "x" << n;
}

TEST(DistKernels, RowBlockedSpmv) {
  for (bool balanced : {false, true}) {
    spmv_case<csr>(24, 24, 0.3, balanced);   // square
    spmv_case<csr>(13, 29, 0.2, balanced);   // rectangular, non-divisible
    spmv_case<csr>(3, 5, 0.6, balanced);     // fewer rows than some rank counts
    spmv_case<coo>(17, 11, 0.3, balanced);
    spmv_case<dcsr>(17, 11, 0.1, balanced);
    spmv_case<dense_row_major>(10, 7, 1.0, balanced);
  }
  // y split unlike A's rows: a readable error on every rank.
  machine_grid g(MPI_COMM_WORLD, {0});
  if (g.size() > 1) {
    const auto A = random_matrix<csr>(8, 8, 0.5, 3);
    const auto x = random_vector(8, 4);
    const auto dA = distribute<csr>(g, distribution_map<distribution<"xy->x">>({8, 8}, g.extents()),
                                    g.rank() == 0 ? &A : nullptr);
    const auto dx = distribute<dense_vector>(g, distribution_map<distribution<"x->x">>({8}, g.extents()),
                                             g.rank() == 0 ? &x : nullptr);
    distribution_map<distribution<"x->x">> odd({8}, g.extents());
    std::vector<long long> s(static_cast<std::size_t>(g.size()) + 1, 8);
    s[0] = 0;
    odd.set_splits(0, s);
    auto dy = distribute<dense_vector>(g, odd, g.rank() == 0 ? &x : nullptr);
    EXPECT_THROW(spmv_rows(dy, dA, dx), shape_error);
  }
}

// C = A B with dense tiles, by SUMMA (any 2D grid) and Cannon (square
// grids), against the single-node product, with the communication model.
struct gemm_setup {
  int m, k, n;
  bool odd_k;  // split A's columns and B's rows differently (SUMMA only)
};

// Whether only the allowed kinds of communication moved any bytes.
bool only_kinds(const comm_stats& st, std::initializer_list<comm_kind> allowed) {
  for (std::size_t q = 0; q < comm_kinds; ++q) {
    const auto k = static_cast<comm_kind>(q);
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    if (st[k].bytes_sent != 0 || st[k].bytes_received != 0) return false;
  }
  return true;
}

TEST(DistKernels, SummaAndCannon) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  const int gx = g.dims()[0];
  const int gy = g.dims()[1];
  for (const gemm_setup s : {gemm_setup{12, 12, 12, false}, {7, 5, 9, false}, {10, 7, 3, true}, {1, 1, 1, false},
                             {5, 11, 4, true}}) {
    const auto A = random_matrix<dense_row_major>(s.m, s.k, 1.0, 11u + static_cast<unsigned>(s.m));
    const auto B = random_matrix<dense_row_major>(s.k, s.n, 0.7, 13u + static_cast<unsigned>(s.n));
    tensor<double, dense_row_major> want({s.m, s.n});
    want(i, j) = A(i, k) * B(k, j);
    using tiles = distribution<"xy->xy">;
    distribution_map<tiles> amap({s.m, s.k}, g.extents());
    distribution_map<tiles> bmap({s.k, s.n}, g.extents());
    if (s.odd_k) {
      // A's columns: everything to the last grid column; B's rows: blocked.
      std::vector<long long> sp(static_cast<std::size_t>(gy) + 1, 0);
      sp.back() = s.k;
      amap.set_splits(1, sp);
    }
    const auto dA = distribute<dense_row_major>(g, amap, g.rank() == 0 ? &A : nullptr);
    const auto dB = distribute<dense_row_major>(g, bmap, g.rank() == 0 ? &B : nullptr);
    const distribution_map<tiles> cmap({s.m, s.n}, g.extents());
    auto dC = distribute<dense_row_major>(g, cmap, g.rank() == 0 ? &want : nullptr);
    const std::string what = std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + " on " +
                             std::to_string(gx) + "x" + std::to_string(gy);
    const auto expect = sub_block(to_dense(want), s.n, *dC.box());
    const long long rows = dC.local().dimension(0);
    const long long cols = dC.local().dimension(1);

    std::fill(dC.local().values().begin(), dC.local().values().end(), -5.0);  // replaced, not added to
    g.stats().reset();
    summa(dC, dA, dB);
    EXPECT_EQ(to_dense(dC.local()), expect) << "SUMMA " << what;
    // Model: per k interval, the A panel (rows x w) comes along the grid
    // row from its owner column, the B panel (w x cols) along the grid
    // column from its owner row.
    std::vector<long long> ks = amap.splits(1);
    ks.insert(ks.end(), bmap.splits(0).begin(), bmap.splits(0).end());
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    long long recv = 0;
    long long sent = 0;
    for (std::size_t t = 0; t + 1 < ks.size(); ++t) {
      const long long w = ks[t + 1] - ks[t];
      if (w == 0) continue;
      const auto own = [&](const std::vector<long long>& sp) {
        return static_cast<int>(std::upper_bound(sp.begin(), sp.end(), ks[t]) - sp.begin()) - 1;
      };
      if (gy > 1) {
        if (own(amap.splits(1)) == g.coords()[1]) sent += (gy - 1) * rows * w * 8;
        else recv += rows * w * 8;
      }
      if (gx > 1) {
        if (own(bmap.splits(0)) == g.coords()[0]) sent += (gx - 1) * w * cols * 8;
        else recv += w * cols * 8;
      }
    }
    // (summa is a preset of the engine, which sends nothing to ranks
    // without a C block: the model holds when every rank has one.)
    if (s.m >= gx && s.n >= gy) {
      EXPECT_EQ(g.stats()[comm_kind::broadcast].bytes_received, recv) << "SUMMA " << what;
      EXPECT_EQ(g.stats()[comm_kind::broadcast].bytes_sent, sent) << "SUMMA " << what;
      EXPECT_EQ(g.stats().total().bytes_received, recv) << "SUMMA moves only row and column broadcasts";
    }

    std::fill(dC.local().values().begin(), dC.local().values().end(), -5.0);  // replaced, not added to
    g.stats().reset();
    if (gx != gy || amap.splits(1) != bmap.splits(0)) {
      EXPECT_THROW(cannon(dC, dA, dB), shape_error) << what;
      continue;
    }
    cannon(dC, dA, dB);
    EXPECT_EQ(to_dense(dC.local()), expect) << "Cannon " << what;
    // Model (cannon is a preset of the engine): step t of rank (r, c) runs
    // k block x = (t + r + c) mod q. Its A block comes unless x == c (its
    // own tile), its B block unless x == r: at step 0 from the owner (the
    // skew), later from the neighbour that ran it at step t - 1 (a shift
    // by one). Every message is part of a permutation along one axis.
    const int q = gx;
    const int r = g.coords()[0];
    const int c = g.coords()[1];
    const auto kw = [&](int kk) {
      return amap.splits(1)[static_cast<std::size_t>(kk) + 1] - amap.splits(1)[static_cast<std::size_t>(kk)];
    };
    long long c_recv = 0;
    long long msgs = 0;
    for (int t = 0; t < q; ++t) {
      const int x = (t + r + c) % q;
      if (x != c && rows * kw(x) > 0) c_recv += rows * kw(x) * 8, ++msgs;
      if (x != r && kw(x) * cols > 0) c_recv += kw(x) * cols * 8, ++msgs;
    }
    const auto& sh = g.stats()[comm_kind::shift];
    EXPECT_TRUE(only_kinds(g.stats(), {comm_kind::shift})) << "Cannon moves data only by shifts " << what;
    if (s.m >= q && s.n >= q && s.k >= q) {  // every rank has a C block and every k block an index
      EXPECT_EQ(sh.bytes_received, c_recv) << "Cannon " << what;
      EXPECT_EQ(sh.messages_received, msgs) << "Cannon " << what;
    }
  }
}

// f() throws a shape_error whose message contains part.
template <class F>
void expect_message(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error for " << part;
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Gathers t on rank 0 and compares it with want there.
template <class G, class T, class W>
void expect_gathered(const T& t, const W& want, const std::string& what) {
  const auto got = gather<G>(t);
  if (got) {
    EXPECT_EQ(to_dense(*got), to_dense(want)) << what;
  }
}

template <class F>
tensor<double, F> random_tensor3(std::array<int, 3> d, double fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> val(1, 5);
  coordinate_list<double, int> list({d[0], d[1], d[2]});
  for (int a = 0; a < d[0]; ++a)
    for (int b = 0; b < d[1]; ++b)
      for (int c = 0; c < d[2]; ++c)
        if (u(rng) < fill) list.push_back({a, b, c}, val(rng));
  return pack<F>(list);
}

// a = d + B c with j split: both reductions, several formats of B.
template <class F>
void spmv_cols_case(int m, int n, reduction how) {
  machine_grid g(MPI_COMM_WORLD, {0});
  const auto B = random_matrix<F>(m, n, 0.3, static_cast<unsigned>(m + 3 * n));
  const auto c = random_vector(n, 5);
  const auto d = random_vector(m, 6);
  tensor<double, dense_vector> want({m});
  want(i) = d(i) + B(i, j) * c(j);
  const bool root = g.rank() == 0;
  const auto dB = distribute<F>(g, distribution_map<distribution<"xy->y">>({m, n}, g.extents()), root ? &B : nullptr);
  using blocks = distribution<"x->x">;
  const auto dc = distribute<dense_vector>(g, distribution_map<blocks>({n}, g.extents()), root ? &c : nullptr);
  const auto dd = distribute<dense_vector>(g, distribution_map<blocks>({m}, g.extents()), root ? &d : nullptr);
  auto da = distribute<dense_vector>(g, distribution_map<blocks>({m}, g.extents()), root ? &d : nullptr);
  g.stats().reset();
  spmv_cols(da, dd, dB, dc, how);
  const comm_stats st = g.stats();
  const std::string what = std::string(how == reduction::tree ? "tree" : "sequential") + " " + std::to_string(m) +
                           "x" + std::to_string(n);
  expect_gathered<dense_vector>(da, want, "a = d + B c, j split, " + what);
  // In place: a = a + B c.
  auto aa = distribute<dense_vector>(g, distribution_map<blocks>({m}, g.extents()), root ? &d : nullptr);
  spmv_cols(aa, aa, dB, dc, how);
  expect_gathered<dense_vector>(aa, want, "a = a + B c in place, " + what);
  if (how == reduction::tree) {
    EXPECT_TRUE(only_kinds(st, {comm_kind::reduce})) << what;
  } else {
    EXPECT_TRUE(only_kinds(st, {comm_kind::shift, comm_kind::alltoall})) << what;
    // The running sum passes every rank once: m values per hop.
    const int p = g.size();
    EXPECT_EQ(st[comm_kind::shift].bytes_sent, g.rank() + 1 < p && m > 0 ? m * 8 : 0) << what;
  }
}

TEST(DistKernels, ColumnSplitSpmvBothReductions) {
  for (reduction how : {reduction::tree, reduction::sequential}) {
    spmv_cols_case<csr>(24, 24, how);
    spmv_cols_case<csc>(13, 29, how);
    spmv_cols_case<coo>(3, 5, how);
    spmv_cols_case<dense_row_major>(7, 10, how);
  }
}

TEST(DistKernels, TwoDimensionalSpmv) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  const bool root = g.rank() == 0;
  for (auto [m, n] : {std::pair{24, 24}, {13, 29}, {3, 2}}) {
    const auto A = random_matrix<csr>(m, n, 0.3, static_cast<unsigned>(m * n));
    const auto x = random_vector(n, 8);
    tensor<double, dense_vector> want({m});
    want(i) = A(i, j) * x(j);
    const auto dA = distribute<csr>(g, distribution_map<distribution<"xy->xy">>({m, n}, g.extents()), root ? &A : nullptr);
    const auto dx = distribute<dense_vector>(g, distribution_map<distribution<"x->*x">>({n}, g.extents()),
                                             root ? &x : nullptr);
    auto y0 = distribute<dense_vector>(g, distribution_map<distribution<"x->x0">>({m}, g.extents()),
                                       root ? &want : nullptr);
    std::fill(y0.local().values().begin(), y0.local().values().end(), -3.0);
    g.stats().reset();
    spmv_2d(y0, dA, dx);
    EXPECT_TRUE(only_kinds(g.stats(), {comm_kind::reduce})) << "the matrix stays put";
    expect_gathered<dense_vector>(y0, want, "2D SpMV onto column 0");
    auto ya = distribute<dense_vector>(g, distribution_map<distribution<"x->x*">>({m}, g.extents()),
                                       root ? &want : nullptr);
    std::fill(ya.local().values().begin(), ya.local().values().end(), -3.0);
    spmv_2d(ya, dA, dx);
    if (ya.holds()) {
      const auto& b = *ya.box();
      EXPECT_EQ(std::vector<double>(ya.local().values().begin(), ya.local().values().end()),
                std::vector<double>(want.values().begin() + b.lo[0], want.values().begin() + b.hi[0]));
    }
  }
}

TEST(DistKernels, HigherOrder) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  for (std::array<int, 3> d : {std::array<int, 3>{6, 5, 4}, {9, 3, 7}, {2, 2, 2}}) {
    const auto B = random_tensor3<csf>(d, 0.4, static_cast<unsigned>(d[0] * 100 + d[1] * 10 + d[2]));
    const auto Bd = random_tensor3<dense_tensor<3>>(d, 1.0, 77);
    const auto C = random_matrix<dense_row_major>(d[2], 3, 1.0, 12);
    const auto c = random_vector(d[2], 13);
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    // TTM, split by i, C replicated: no communication.
    tensor<double, dense_tensor<3>> ttm_want({d[0], d[1], 3});
    ttm_want(i, j, l) = B(i, j, k) * C(k, l);
    const bool r0 = line.rank() == 0;
    const auto dB = distribute<csf>(line, distribution_map<distribution<"xyz->x">>({d[0], d[1], d[2]}, line.extents()),
                                    r0 ? &B : nullptr);
    const auto dC = distribute<dense_row_major>(line, distribution_map<distribution<"xy->*">>({d[2], 3}, line.extents()),
                                                r0 ? &C : nullptr);
    auto dA = distribute<dense_tensor<3>>(line, distribution_map<distribution<"xyz->x">>({d[0], d[1], 3}, line.extents()),
                                          r0 ? &ttm_want : nullptr);
    line.stats().reset();
    ttm(dA, dB, dC);
    EXPECT_EQ(line.stats().total().bytes_sent, 0) << "TTM moves nothing " << what;
    expect_gathered<dense_tensor<3>>(dA, ttm_want, "TTM " + what);
    // TTV on (i, j) tiles.
    tensor<double, dense_row_major> ttv_want({d[0], d[1]});
    ttv_want(i, j) = B(i, j, k) * c(k);
    const bool p0 = plane.rank() == 0;
    const auto pB = distribute<csf>(plane, distribution_map<distribution<"xyz->xy">>({d[0], d[1], d[2]}, plane.extents()),
                                    p0 ? &B : nullptr);
    const auto pc = distribute<dense_vector>(plane, distribution_map<distribution<"x->**">>({d[2]}, plane.extents()),
                                             p0 ? &c : nullptr);
    auto pA = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                          p0 ? &ttv_want : nullptr);
    plane.stats().reset();
    ttv(pA, pB, pc);
    EXPECT_EQ(plane.stats().total().bytes_sent, 0) << "TTV moves nothing " << what;
    expect_gathered<dense_row_major>(pA, ttv_want, "TTV " + what);
    // Inner product, sparse with dense, on the cube.
    scalar<double> ip_want;
    ip_want() = B(i, j, k) * Bd(i, j, k);
    const bool c0 = cube.rank() == 0;
    using cube_tiles = distribution<"xyz->xyz">;
    const distribution_map<cube_tiles> tmap({d[0], d[1], d[2]}, cube.extents());
    const auto cB = distribute<csf>(cube, tmap, c0 ? &B : nullptr);
    const auto cBd = distribute<dense_tensor<3>>(cube, tmap, c0 ? &Bd : nullptr);
    EXPECT_EQ(innerprod(cB, cBd), ip_want.value()) << "innerprod " << what;
    // MTTKRP on the cube: partial rows reduced onto the face.
    const auto Cj = random_matrix<dense_row_major>(d[1], 3, 1.0, 31);
    const auto Dk = random_matrix<dense_row_major>(d[2], 3, 1.0, 32);
    tensor<double, dense_row_major> mt_want({d[0], 3});
    mt_want(i, l) = B(i, j, k) * Cj(j, l) * Dk(k, l);
    const auto cC = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->*x*">>({d[1], 3}, cube.extents()),
                                                c0 ? &Cj : nullptr);
    const auto cD = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->**x">>({d[2], 3}, cube.extents()),
                                                c0 ? &Dk : nullptr);
    auto cA = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->x00">>({d[0], 3}, cube.extents()),
                                          c0 ? &mt_want : nullptr);
    std::fill(cA.local().values().begin(), cA.local().values().end(), 0.0);
    cube.stats().reset();
    mttkrp(cA, cB, cC, cD);
    EXPECT_TRUE(only_kinds(cube.stats(), {comm_kind::reduce})) << "MTTKRP reduces only " << what;
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP " + what);
  }
}

// Statements whose leaf is a matrix product of the fetched boxes (GEMM,
// TTM, TTV, matrix-vector, outer product), and some that are not.
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ij", "ik", "kj">() == 1);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ijl", "ijk", "kl">() == 2);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ij", "ijk", "k">() == 2);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"i", "ij", "j">() == 1);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ij", "i", "j">() == 1);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"j", "k", "kj">() == 0);
static_assert(tensorlev::dist::detail::gemm_rows_vars<"il", "ijk", "jl", "kl">() == -1);  // three inputs
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ij", "kj", "ik">() == -1);          // B A
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ji", "ik", "kj">() == -1);          // transposed output
static_assert(tensorlev::dist::detail::gemm_rows_vars<"ik", "ik", "k">() == -1);           // not summed

// Any dense statement as a schedule (compute / reduce): the DISTAL §7.2
// schedules move nothing when the data sits where the schedule computes,
// the same statements in other distributions move what each block reads,
// and every result equals the single-node one.
TEST(DistStatements, SchedulesOfAnyDenseStatement) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const auto moved_anywhere = [](const comm_stats& st) {
    long long v = st.total().bytes_received;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return v;
  };
  // Every output starts as a sentinel: compute must replace it.
  const auto poison = [](auto& t) { std::fill(t.local().values().begin(), t.local().values().end(), -1.0); };
  for (std::array<int, 3> d : {std::array<int, 3>{6, 5, 4}, {9, 3, 7}, {2, 2, 2}, {1, 4, 1}}) {
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    const auto B = random_tensor3<dense_tensor<3>>(d, 1.0, static_cast<unsigned>(d[0] * 100 + d[1] * 10 + d[2]));
    const auto B2 = random_tensor3<dense_tensor<3>>(d, 1.0, 78);
    const auto C = random_matrix<dense_row_major>(d[2], 3, 1.0, 12);
    const auto c = random_vector(d[2], 13);
    const bool l0 = line.rank() == 0;
    const bool p0 = plane.rank() == 0;
    const bool c0 = cube.rank() == 0;
    const std::vector<long long> dims3{d[0], d[1], d[2]};

    // TTV, A(i,j) = B(i,j,k) c(k): (i, j) tiles, c replicated: nothing moves.
    tensor<double, dense_row_major> ttv_want({d[0], d[1]});
    ttv_want(i, j) = B(i, j, k) * c(k);
    const auto tB = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xy">>(dims3, plane.extents()),
                                                p0 ? &B : nullptr);
    const auto tc = distribute<dense_vector>(plane, distribution_map<distribution<"x->**">>({d[2]}, plane.extents()),
                                             p0 ? &c : nullptr);
    auto tA = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                          p0 ? &ttv_want : nullptr);
    plane.stats().reset();
    poison(tA);
    compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij"), tB, tc);
    EXPECT_EQ(plane.stats().total().bytes_sent, 0) << "TTV schedule moves nothing " << what;
    expect_gathered<dense_row_major>(tA, ttv_want, "TTV schedule " + what);
    // The same TTV with (j, k) distributed: B's tiles do not match, k is a
    // distributed reduction, partial rows are summed at A's holders.
    plane.stats().reset();
    poison(tA);
    compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("jk"), tB, tc);
    expect_gathered<dense_row_major>(tA, ttv_want, "TTV over (j, k) " + what);
    if (plane.size() > 1 && d[0] * d[1] * d[2] > 4) {
      EXPECT_GT(moved_anywhere(plane.stats()), 0) << what;
    }
    // TTM, A(i,j,l) = B(i,j,k) C(k,l), split by i, C replicated: nothing moves.
    tensor<double, dense_tensor<3>> ttm_want({d[0], d[1], 3});
    ttm_want(i, j, l) = B(i, j, k) * C(k, l);
    const auto mB = distribute<dense_tensor<3>>(line, distribution_map<distribution<"xyz->x">>(dims3, line.extents()),
                                                l0 ? &B : nullptr);
    const auto mC = distribute<dense_row_major>(line, distribution_map<distribution<"xy->*">>({d[2], 3}, line.extents()),
                                                l0 ? &C : nullptr);
    auto mA = distribute<dense_tensor<3>>(line, distribution_map<distribution<"xyz->x">>({d[0], d[1], 3}, line.extents()),
                                          l0 ? &ttm_want : nullptr);
    line.stats().reset();
    poison(mA);
    compute<"ijl", "ijk", "kl">(mA, statement_schedule().distribute("i"), mB, mC);
    EXPECT_EQ(line.stats().total().bytes_sent, 0) << "TTM schedule moves nothing " << what;
    expect_gathered<dense_tensor<3>>(mA, ttm_want, "TTM schedule " + what);
    // TTM distributed by l instead: every rank with an l block reads all of B.
    poison(mA);
    line.stats().reset();
    compute<"ijl", "ijk", "kl">(mA, statement_schedule().distribute("l"), mB, mC);
    if (line.size() > 1) {
      EXPECT_GT(moved_anywhere(line.stats()), 0) << "TTM over l moves B " << what;
    }
    expect_gathered<dense_tensor<3>>(mA, ttm_want, "TTM over l " + what);
    // Inner product: local sums, then one all-reduce (no other traffic).
    scalar<double> ip_want;
    ip_want() = B(i, j, k) * B2(i, j, k);
    const auto tB2 = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xy">>(dims3, plane.extents()),
                                                 p0 ? &B2 : nullptr);
    plane.stats().reset();
    EXPECT_EQ((reduce<"ijk", "ijk">(statement_schedule().distribute("ij"), tB, tB2)), ip_want.value()) << what;
    EXPECT_TRUE(only_kinds(plane.stats(), {comm_kind::reduce, comm_kind::broadcast})) << "innerprod: one all-reduce " << what;
    EXPECT_LE(plane.stats()[comm_kind::reduce].bytes_received, static_cast<long long>(sizeof(double)) * (plane.size() - 1));
    EXPECT_EQ((reduce<"ijk", "ijk">(statement_schedule().distribute("kj"), tB, tB2)), ip_want.value())
        << "innerprod over (k, j) " << what;
    // MTTKRP on the cube (Ballard et al.): inputs where the blocks read
    // them, so only partial rows move, onto the face "xy->x00".
    const auto Cj = random_matrix<dense_row_major>(d[1], 3, 1.0, 31);
    const auto Dk = random_matrix<dense_row_major>(d[2], 3, 1.0, 32);
    tensor<double, dense_row_major> mt_want({d[0], 3});
    mt_want(i, l) = B(i, j, k) * Cj(j, l) * Dk(k, l);
    const auto cB = distribute<dense_tensor<3>>(cube, distribution_map<distribution<"xyz->xyz">>(dims3, cube.extents()),
                                                c0 ? &B : nullptr);
    const auto cC = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->*x*">>({d[1], 3}, cube.extents()),
                                                c0 ? &Cj : nullptr);
    const auto cD = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->**x">>({d[2], 3}, cube.extents()),
                                                c0 ? &Dk : nullptr);
    auto cA = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->x00">>({d[0], 3}, cube.extents()),
                                          c0 ? &mt_want : nullptr);
    cube.stats().reset();
    poison(cA);
    compute<"il", "ijk", "jl", "kl">(cA, statement_schedule().distribute("ijk"), cB, cC, cD);
    EXPECT_TRUE(only_kinds(cube.stats(), {comm_kind::reduce})) << "MTTKRP schedule moves partial rows only " << what;
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP schedule " + what);
    // MTTKRP with A replicated on every rank (every holder gets every sum).
    auto rA = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->***">>({d[0], 3}, cube.extents()),
                                          c0 ? &mt_want : nullptr);
    poison(rA);
    compute<"il", "ijk", "jl", "kl">(rA, statement_schedule().distribute("kji"), cB, cC, cD);
    EXPECT_EQ(to_dense(rA.local()), to_dense(mt_want)) << "MTTKRP into a replicated A " << what;
    // A replicated output whose sum depends on the order of the partials:
    // every copy is summed in the same (rank) order, so all agree bit for bit.
    {
      const int nj = std::max(3, line.size());
      tensor<double, dense_row_major> Mf({1, nj});
      for (int q = 0; q < nj; ++q) Mf.values()[static_cast<std::size_t>(q)] = q % 3 == 0 ? 1e16 : q % 3 == 1 ? -1e16 : 1.0;
      tensor<double, dense_vector> ones({nj});
      std::fill(ones.values().begin(), ones.values().end(), 1.0);
      const tensor<double, dense_vector> y0({1});
      const auto fM = distribute<dense_row_major>(line, distribution_map<distribution<"xy->y">>({1, nj}, line.extents()),
                                                  l0 ? &Mf : nullptr);
      const auto f1 = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({nj}, line.extents()),
                                               l0 ? &ones : nullptr);
      auto fy = distribute<dense_vector>(line, distribution_map<distribution<"x->*">>({1}, line.extents()),
                                         l0 ? &y0 : nullptr);
      compute<"i", "ij", "j">(fy, statement_schedule().distribute("j"), fM, f1);
      double mine = fy.local().values()[0];
      double lo = mine;
      double hi = mine;
      MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(lo, hi) << "copies of a replicated output differ " << what;
    }
    // Matrix-vector with the column variable distributed: a distributed
    // reduction by messages to y's owners.
    const auto M = random_matrix<dense_row_major>(d[0], d[1], 1.0, 41);
    const auto x = random_vector(d[1], 42);
    tensor<double, dense_vector> y_want({d[0]});
    y_want(i) = M(i, j) * x(j);
    const auto lM = distribute<dense_row_major>(line, distribution_map<distribution<"xy->y">>({d[0], d[1]}, line.extents()),
                                                l0 ? &M : nullptr);
    const auto lx = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({d[1]}, line.extents()),
                                             l0 ? &x : nullptr);
    auto ly = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({d[0]}, line.extents()),
                                       l0 ? &y_want : nullptr);
    line.stats().reset();
    poison(ly);
    compute<"i", "ij", "j">(ly, statement_schedule().distribute("j"), lM, lx);
    EXPECT_TRUE(only_kinds(line.stats(), {comm_kind::reduce})) << "y = M x with j split " << what;
    expect_gathered<dense_vector>(ly, y_want, "y = M x with j split " + what);
    // The matrix product as a plain statement agrees with matmul.
    const auto P = random_matrix<dense_row_major>(d[0], d[2], 1.0, 51);
    const auto Q = random_matrix<dense_row_major>(d[2], d[1], 1.0, 52);
    tensor<double, dense_row_major> pq({d[0], d[1]});
    pq(i, j) = P(i, k) * Q(k, j);
    using tiles = distribution<"xy->xy">;
    const auto dP = distribute<dense_row_major>(plane, distribution_map<tiles>({d[0], d[2]}, plane.extents()),
                                                p0 ? &P : nullptr);
    const auto dQ = distribute<dense_row_major>(plane, distribution_map<tiles>({d[2], d[1]}, plane.extents()),
                                                p0 ? &Q : nullptr);
    auto dPQ = distribute<dense_row_major>(plane, distribution_map<tiles>({d[0], d[1]}, plane.extents()),
                                           p0 ? &pq : nullptr);
    poison(dPQ);
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij"), dP, dQ);
    expect_piece(dPQ, pq, "C = A B as a statement " + what);
    // SUMMA as a statement schedule: k in steps at A's column blocks, each
    // step's panels fetched from their owners. On a square grid the bytes
    // are SUMMA's (matmul's broadcasts), here as messages.
    const int gx = plane.dims()[0];
    const int gy = plane.dims()[1];
    plane.stats().reset();
    poison(dPQ);
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij").divide('k', gy), dP, dQ);
    expect_piece(dPQ, pq, "SUMMA as a statement " + what);
    const auto st_steps = plane.stats();
    plane.stats().reset();
    matmul(dPQ, dP, dQ, matmul_schedule::summa());
    if (gx == gy && d[0] >= gx && d[1] >= gy && d[2] >= gx) {
      EXPECT_EQ(st_steps[comm_kind::broadcast], plane.stats()[comm_kind::broadcast])
          << "SUMMA as a statement moves SUMMA's bytes, by broadcasts " << what;
      EXPECT_TRUE(only_kinds(st_steps, {comm_kind::broadcast})) << what;
    }
    // A fetched once (communicate at a distributed variable): same bytes.
    plane.stats().reset();
    poison(dPQ);
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij").divide('k', gy).communicate(0, 'j'), dP, dQ);
    expect_piece(dPQ, pq, "SUMMA, A once " + what);
    EXPECT_EQ(plane.stats().total().bytes_received, st_steps.total().bytes_received) << what;
    // Cannon's rotation (each panel still fetched once, from its owner:
    // the same bytes at other times), and steps of a fixed width.
    poison(dPQ);
    plane.stats().reset();
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij").divide('k', gx).rotate("ij"), dP, dQ);
    expect_piece(dPQ, pq, "Cannon as a statement " + what);
    if (gx == gy) {
      EXPECT_EQ(plane.stats().total().bytes_received, st_steps.total().bytes_received) << what;
      if (d[0] >= gx && d[1] >= gy && d[2] >= gx) {  // every rank a block, every step an index
        EXPECT_TRUE(only_kinds(plane.stats(), {comm_kind::shift})) << "Cannon as a statement shifts " << what;
      }
    }
    poison(dPQ);
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij").split('k', 2).rotate("i"), dP, dQ);
    expect_piece(dPQ, pq, "split k, rotated by i " + what);
    // A huge step count: at most one step per index (no empty steps).
    poison(dPQ);
    compute<"ij", "ik", "kj">(dPQ, statement_schedule().distribute("ij").divide('k', 1LL << 40), dP, dQ);
    expect_piece(dPQ, pq, "k in 2^40 steps " + what);
    // Steps over an output variable (each step writes its slice), over a
    // summed one (steps accumulate), and in a reduction.
    poison(mA);
    compute<"ijl", "ijk", "kl">(mA, statement_schedule().distribute("i").split('l', 1), mB, mC);
    expect_gathered<dense_tensor<3>>(mA, ttm_want, "TTM, l one at a time " + what);
    poison(mA);
    compute<"ijl", "ijk", "kl">(mA, statement_schedule().distribute("j").divide('k', 3).communicate(1, 'j'), mB, mC);
    expect_gathered<dense_tensor<3>>(mA, ttm_want, "TTM over j, k in 3 steps, C once " + what);
    poison(cA);
    compute<"il", "ijk", "jl", "kl">(cA, statement_schedule().distribute("ijk").divide('j', 2).rotate("k"), cB, cC, cD);
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP, j in 2 rotated steps " + what);
    // A generated leaf (three inputs) with an output variable in steps.
    poison(cA);
    compute<"il", "ijk", "jl", "kl">(cA, statement_schedule().distribute("ijk").split('l', 2), cB, cC, cD);
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP, l in steps of 2 " + what);
    // reorder: output variables before the step loop tile the rank's block
    // (each tile runs every step and fetches its own boxes), the loops'
    // order is a generated matrix-product leaf's; never the result.
    for (const auto& sch : {statement_schedule().distribute("i").divide('k', 2).reorder({"ii", "ko", "ji", "li", "ki"}),
                            statement_schedule().distribute("j").divide('k', 2).reorder({"li", "ii", "ko", "ji", "ki"}),
                            statement_schedule().distribute("l").divide(3).reorder({"ko", "li", "ii", "ji", "ki"}).blas(false),
                            statement_schedule().distribute("i").divide(2).reorder({"ji", "ii", "ko", "ki", "li"}).blas(false),
                            statement_schedule().distribute("j").divide(2).reorder({"ii", "li", "ko", "ji", "ki"}).blas(false)}) {
      poison(mA);
      compute<"ijl", "ijk", "kl">(mA, sch, mB, mC);
      expect_gathered<dense_tensor<3>>(mA, ttm_want, "TTM with reorder " + what);
    }
    poison(cA);
    compute<"il", "ijk", "jl", "kl">(
        cA, statement_schedule().distribute("ijk").divide('j', 2).rotate("k").reorder({"li", "jo", "ii", "ji", "ki"}), cB,
        cC, cD);
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP, columns outside the j steps " + what);
    // A tile of the output per step writes in place (whole rows) or adds.
    poison(cA);
    compute<"il", "ijk", "jl", "kl">(cA, statement_schedule().distribute("kji").split('j', 1).reorder({"ii", "li", "jo", "ji", "ki"}),
                                     cB, cC, cD);
    expect_gathered<dense_row_major>(cA, mt_want, "MTTKRP, components outside the j steps " + what);
    EXPECT_EQ((reduce<"ijk", "ijk">(statement_schedule().distribute("ij").divide('k', 2), tB, tB2)), ip_want.value())
        << "innerprod, k in 2 steps " << what;
  }
  // Errors name the variable or the schedule, on every rank.
  const auto B = random_tensor3<dense_tensor<3>>({4, 3, 2}, 1.0, 5);
  const auto c5 = random_vector(5, 6);
  const auto tB = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xy">>({4, 3, 2}, plane.extents()),
                                              plane.rank() == 0 ? &B : nullptr);
  const auto tc5 = distribute<dense_vector>(plane, distribution_map<distribution<"x->**">>({5}, plane.extents()),
                                            plane.rank() == 0 ? &c5 : nullptr);
  const tensor<double, dense_row_major> zero({4, 3});
  auto tA = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->xy">>({4, 3}, plane.extents()),
                                        plane.rank() == 0 ? &zero : nullptr);
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij"), tB, tc5); },
                 "variable 'k' has extent 2 in one tensor but 5 in tensor 2");
  const auto c2 = random_vector(2, 7);
  const auto tc2 = distribute<dense_vector>(plane, distribution_map<distribution<"x->**">>({2}, plane.extents()),
                                            plane.rank() == 0 ? &c2 : nullptr);
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ix"), tB, tc2); },
                 "'x', which is not a variable");
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ijk"), tB, tc2); },
                 "distributes 3 variables (\"ijk\") over a grid of 2 dimensions");
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").divide('x', 2), tB, tc2); },
                 "divides 'x', which is not a variable");
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").rotate("i"), tB, tc2); },
                 "rotate needs divide or split");
  expect_message(
      [&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").divide('k', 2).rotate("k"), tB, tc2); },
      "rotate by 'k', which is not distributed");
  expect_message(
      [&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").communicate(2, 'i'), tB, tc2); },
      "communicate names input 2, but the statement has 2 inputs");
  expect_message(
      [&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").communicate(0, 'k'), tB, tc2); },
      "communicate input 0 at 'k'");
  EXPECT_THROW((void)statement_schedule().divide('k', 0), shape_error);
  EXPECT_THROW((void)statement_schedule().communicate(static_cast<std::size_t>(-1), 'i'), shape_error);
  // Ranks that pass different schedules are told so (instead of hanging).
  if (plane.size() > 1) {
    expect_message(
        [&] {
          compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").divide('k', plane.rank() == 0 ? 1 : 2),
                                    tB, tc2);
        },
        "the ranks passed different schedules");
  }

  EXPECT_THROW((void)statement_schedule().split('k', 0), shape_error);
  EXPECT_THROW((void)statement_schedule().distribute("ii"), shape_error);
  // reorder against the statement: every loop named, tiles of output
  // variables only, a matrix product's groups of variables kept together,
  // the step loop the divided variable's; divide without a variable needs
  // one summed variable.
  expect_message([&] { compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").reorder({"ii", "ji"}), tB, tc2); },
                 "compute: reorder does not name the loop \"ki\"");
  expect_message(
      [&] {
        compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").divide('j', 2).reorder({"ki", "jo", "ii", "ji"}),
                                  tB, tc2);
      },
      "only output variables may tile the rank's block ('k' is summed)");
  expect_message(
      [&] {
        compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").reorder({"ii", "ki", "ji", "xi"}), tB, tc2);
      },
      "reorder names \"xi\", but 'x' is not a variable of the statement");
  expect_message(
      [&] {
        compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").reorder({"ii", "ko", "ki", "ji"}), tB, tc2);
      },
      "reorder names the step loop \"ko\", but the schedule divides nothing");
  expect_message(
      [&] {
        compute<"ij", "ijk", "k">(tA, statement_schedule().distribute("ij").reorder({"ii", "ki", "ji"}).blas(false), tB,
                                  tc2);
      },
      "compute: reorder's loop order \"ikj\" interleaves the rows, columns and inner variables");
  expect_message([&] { compute<"ij", "ij">(tA, statement_schedule().distribute("ij").divide(2), tA); },
                 "divide or split without a variable needs a statement with one summed variable, not 0");
  EXPECT_THROW((void)statement_schedule().reorder({"ko", "k"}), shape_error);
  EXPECT_THROW((void)statement_schedule().reorder({"ko", "ii", "jo"}), shape_error);
}

// Statements in index notation over dist_tensors, and einsum strings that
// build the same statement types: the engine runs them exactly as the
// variable-string form, against the single-node statement. Shapes:
// products, transposed and repeated operands, the output read as an input,
// a one-input copy, three inputs, extents 0 and 1.
TEST(DistStatements, IndexNotationAndEinsumStrings) {
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const bool p0 = plane.rank() == 0;
  using tiles = distribution<"xy->xy">;
  const auto dist2 = [&](const auto& t) {
    return distribute<dense_row_major>(plane, distribution_map<tiles>({t.dimension(0), t.dimension(1)}, plane.extents()),
                                       p0 ? &t : nullptr);
  };
  for (std::array<int, 3> d : {std::array<int, 3>{6, 5, 4}, {9, 7, 7}, {1, 3, 1}, {4, 1, 5}, {0, 3, 2}, {3, 2, 0}}) {
    const auto [m, kd, n] = d;
    const std::string what = std::to_string(m) + "x" + std::to_string(kd) + "x" + std::to_string(n);
    const auto A = random_matrix<dense_row_major>(m, kd, 1.0, 31u + static_cast<unsigned>(m));
    const auto B = random_matrix<dense_row_major>(kd, n, 0.9, 37u + static_cast<unsigned>(n));
    tensor<double, dense_row_major> At({kd, m});
    At(k, i) = A(i, k);
    tensor<double, dense_row_major> want({m, n});
    want(i, j) = A(i, k) * B(k, j);
    const auto dA = dist2(A);
    const auto dAt = dist2(At);
    const auto dB = dist2(B);
    auto dC = dist2(want);
    const auto poison = [](auto& t) { std::fill(t.local().values().begin(), t.local().values().end(), -1.0); };
    static_assert(std::is_same_v<decltype(einsum_statement<"ik,kj->ij">(dC, dA, dB)), decltype(dC(i, j) = dA(i, k) * dB(k, j))>,
                  "an einsum string builds the statement type of its accesses");
    // A product, as index notation, as an einsum string and as strings:
    // the same result and the same traffic.
    poison(dC);
    plane.stats().reset();
    compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule::summa());
    expect_piece(dC, want, "C(i,j) = A(i,k) * B(k,j), SUMMA " + what);
    const auto st_notation = plane.stats();
    poison(dC);
    plane.stats().reset();
    compute(einsum_statement<"ik,kj->ij">(dC, dA, dB), statement_schedule::summa());
    expect_piece(dC, want, "einsum ik,kj->ij, SUMMA " + what);
    EXPECT_EQ(plane.stats().total(), st_notation.total()) << what;
    poison(dC);
    plane.stats().reset();
    compute<"ij", "ik", "kj">(dC, statement_schedule::summa(), dA, dB);
    expect_piece(dC, want, "compute<ij, ik, kj>, SUMMA " + what);
    EXPECT_EQ(plane.stats().total(), st_notation.total()) << what;
    // A transposed operand, Cannon's rotation, BLAS off.
    poison(dC);
    compute(dC(i, j) = dAt(k, i) * dB(k, j), statement_schedule().distribute("ij").divide('k', 2).rotate("ij").blas(false));
    expect_piece(dC, want, "C(i,j) = At(k,i) * B(k,j) " + what);
    // Other variable names, distributed the other way round.
    const index_var<'r'> r;
    const index_var<'c'> c;
    const index_var<'t'> t;
    poison(dC);
    compute(dC(r, c) = dA(r, t) * dB(t, c), statement_schedule().distribute("cr").split('t', 2));
    expect_piece(dC, want, "C(r,c) = A(r,t) * B(t,c) " + what);
    // A one-input copy through a transpose: C(i,j) = Ct(j,i).
    tensor<double, dense_row_major> Ct({n, m});
    Ct(j, i) = want(i, j);
    const auto dCt = dist2(Ct);
    poison(dC);
    compute(dC(i, j) = dCt(j, i), statement_schedule().distribute("ij"));
    expect_piece(dC, want, "C(i,j) = Ct(j,i) " + what);
    // Square: a repeated operand (S S), and the output read as an input
    // (S2 = S2 S: every box is fetched before the output is written).
    const auto S = random_matrix<dense_row_major>(kd, kd, 1.0, 41u + static_cast<unsigned>(kd));
    tensor<double, dense_row_major> SS({kd, kd});
    SS(i, j) = S(i, k) * S(k, j);
    const auto dS = dist2(S);
    auto dSS = dist2(SS);
    poison(dSS);
    compute(dSS(i, j) = dS(i, k) * dS(k, j), statement_schedule::summa());
    expect_piece(dSS, SS, "C(i,j) = S(i,k) * S(k,j) " + what);
    auto dS2 = dist2(S);
    compute(dS2(i, j) = dS2(i, k) * dS(k, j), statement_schedule().distribute("ij").divide(2));
    expect_piece(dS2, SS, "S2(i,j) = S2(i,k) * S(k,j) in place " + what);
    // Three inputs (a generated leaf): MTTKRP on the cube, by index
    // notation and by einsum string.
    const auto X = random_tensor3<dense_tensor<3>>({m, kd, n}, 0.8, 43u);
    const auto Bm = random_matrix<dense_row_major>(kd, 3, 1.0, 44u);
    const auto Cm = random_matrix<dense_row_major>(n, 3, 1.0, 45u);
    tensor<double, dense_row_major> mt({m, 3});
    mt(i, l) = X(i, j, k) * Bm(j, l) * Cm(k, l);
    const bool c0 = cube.rank() == 0;
    const auto dX = distribute<dense_tensor<3>>(
        cube, distribution_map<distribution<"xyz->xyz">>({m, kd, n}, cube.extents()), c0 ? &X : nullptr);
    const auto dBm = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->*x*">>({kd, 3}, cube.extents()),
                                                 c0 ? &Bm : nullptr);
    const auto dCm = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->**x">>({n, 3}, cube.extents()),
                                                 c0 ? &Cm : nullptr);
    auto dM = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->x**">>({m, 3}, cube.extents()),
                                          c0 ? &mt : nullptr);
    poison(dM);
    compute(dM(i, l) = dX(i, j, k) * dBm(j, l) * dCm(k, l), statement_schedule().distribute("ijk"));
    expect_gathered<dense_row_major>(dM, mt, "M(i,l) = X(i,j,k) * B(j,l) * C(k,l) " + what);
    poison(dM);
    compute(einsum_statement<"ijk,jl,kl->il">(dM, dX, dBm, dCm), statement_schedule().distribute("ijk").divide('j', 2));
    expect_gathered<dense_row_major>(dM, mt, "einsum ijk,jl,kl->il " + what);
  }
}

// Sparse inputs under the engine: each rank's own piece in place where the
// schedule reads exactly that, the leaf the generated kernel over it. SpMV
// with j split (a distributed reduction), TTM with l split, MTTKRP with j
// and k split, in every sparse format as input (and dense, the same
// statement); checked against the single-node statement and a byte model
// (only partial outputs move). Pieces read elsewhere move: last block here,
// more in sparse_out.cpp.
TEST(DistStatements, SparseInputsStayInPlace) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const int gy = plane.dims()[1];
  const bool p0 = plane.rank() == 0;
  const bool c0 = cube.rank() == 0;
  const auto poison = [](auto& t) { std::fill(t.local().values().begin(), t.local().values().end(), -1.0); };
  for (std::array<int, 3> d : {std::array<int, 3>{6, 5, 4}, {9, 7, 3}, {1, 3, 1}, {4, 1, 5}, {0, 3, 2}, {5, 0, 3}}) {
    const std::string what = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    const auto A = random_matrix<coo>(d[0], d[1], 0.5, 61u + static_cast<unsigned>(d[0]));
    const auto x = random_vector(d[1], 62);
    tensor<double, dense_vector> y_want({d[0]});
    y_want(i) = A(i, j) * x(j);
    const auto X = random_tensor3<coo_tensor<3>>(d, 0.4, 63u + static_cast<unsigned>(d[1]));
    const auto U = random_matrix<dense_row_major>(d[2], 3, 1.0, 64);
    tensor<double, dense_tensor<3>> ttm_want({d[0], d[1], 3});
    ttm_want(i, j, l) = X(i, j, k) * U(k, l);
    const auto Bm = random_matrix<dense_row_major>(d[1], 3, 1.0, 65);
    tensor<double, dense_row_major> mt_want({d[0], 3});
    mt_want(i, l) = X(i, j, k) * Bm(j, l) * U(k, l);
    tensor<double, dense_row_major> spmm_want({d[0], 3});
    spmm_want(i, l) = A(i, j) * Bm(j, l);
    const auto dBs = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*x">>({d[1], 3}, plane.extents()),
                                                 p0 ? &Bm : nullptr);
    auto dCs = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->x*">>({d[0], 3}, plane.extents()),
                                           p0 ? &spmm_want : nullptr);
    const auto dx = distribute<dense_vector>(plane, distribution_map<distribution<"x->*x">>({d[1]}, plane.extents()),
                                             p0 ? &x : nullptr);
    auto dy = distribute<dense_vector>(plane, distribution_map<distribution<"x->x*">>({d[0]}, plane.extents()),
                                       p0 ? &y_want : nullptr);
    const auto dU = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*y">>({d[2], 3}, plane.extents()),
                                                p0 ? &U : nullptr);
    auto dY = distribute<dense_tensor<3>>(plane, distribution_map<distribution<"xyz->xz">>({d[0], d[1], 3}, plane.extents()),
                                          p0 ? &ttm_want : nullptr);
    const auto cB = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->*x*">>({d[1], 3}, cube.extents()),
                                                c0 ? &Bm : nullptr);
    const auto cU = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->**x">>({d[2], 3}, cube.extents()),
                                                c0 ? &U : nullptr);
    auto cM = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->x**">>({d[0], 3}, cube.extents()),
                                          c0 ? &mt_want : nullptr);
    const auto spmv_in = [&]<class F>(std::type_identity<F>) {
      const auto dA = distribute<F>(plane, distribution_map<distribution<"xy->xy">>({d[0], d[1]}, plane.extents()),
                                    p0 ? &A : nullptr);
      const std::string f = std::string(F::name) + " ";
      poison(dy);
      plane.stats().reset();
      compute(dy(i) = dA(i, j) * dx(j), statement_schedule().distribute("ij"));
      if (dy.holds()) {  // every copy of y's rows (replicated along the grid's rows)
        const auto yv = dy.local().values();
        for (std::size_t q = 0; q < yv.size(); ++q)
          EXPECT_EQ(yv[q], y_want.values()[static_cast<std::size_t>(dy.offset(0)) + q]) << "SpMV, j split, A " << f << what;
      }
      // Only the partial y moves: from each rank that runs a block to the
      // other gy - 1 holders of its rows.
      const auto ib = block_bounds(d[0], plane.dims()[0], plane.coords()[0]);
      const auto jb = block_bounds(d[1], gy, plane.coords()[1]);
      const bool runs = ib[1] > ib[0] && jb[1] > jb[0];
      EXPECT_EQ(plane.stats().total().bytes_sent, runs ? (gy - 1) * (ib[1] - ib[0]) * 8 : 0) << "SpMV, A " << f << what;
      EXPECT_TRUE(only_kinds(plane.stats(), {comm_kind::reduce})) << what;
      // SpMM with j split: C's rows summed like y's.
      poison(dCs);
      compute(dCs(i, l) = dA(i, j) * dBs(j, l), statement_schedule().distribute("ij"));
      expect_gathered<dense_row_major>(dCs, spmm_want, "SpMM, j split, A " + f + what);
      // A reduction of the same statement.
      const double ip = reduce<"ij", "j">(statement_schedule().distribute("ij"), dA, dx);
      double ip_want = 0;
      for (double v : y_want.values()) ip_want += v;
      EXPECT_EQ(ip, ip_want) << "sum of A x, A " << f << what;
    };
    spmv_in(std::type_identity<csr>{});
    spmv_in(std::type_identity<csc>{});
    spmv_in(std::type_identity<dcsr>{});
    spmv_in(std::type_identity<coo>{});
    spmv_in(std::type_identity<dense_row_major>{});
    const auto tensor_in = [&]<class F>(std::type_identity<F>) {
      const std::string f = std::string(F::name) + " ";
      // TTM with l split: X in i blocks replicated along the grid's second
      // dimension, U's columns and Y's l in blocks along it: nothing moves.
      const auto tX = distribute<F>(plane, distribution_map<distribution<"xyz->x*">>({d[0], d[1], d[2]}, plane.extents()),
                                    p0 ? &X : nullptr);
      poison(dY);
      plane.stats().reset();
      compute(dY(i, j, l) = tX(i, j, k) * dU(k, l), statement_schedule().distribute("il"));
      EXPECT_EQ(plane.stats().total().bytes_sent, 0) << "TTM moves nothing, X " << f << what;
      expect_gathered<dense_tensor<3>>(dY, ttm_want, "TTM, l split, X " + f + what);
      // Steps over a variable the sparse piece lacks: the piece is read at
      // every step, U's and Y's boxes are the step's.
      poison(dY);
      compute(dY(i, j, l) = tX(i, j, k) * dU(k, l), statement_schedule().distribute("il").divide('l', 2));
      expect_gathered<dense_tensor<3>>(dY, ttm_want, "TTM, l split and in 2 steps, X " + f + what);
      // MTTKRP with j and k split: partial rows to the holders of M's rows.
      const auto cX = distribute<F>(cube, distribution_map<distribution<"xyz->xyz">>({d[0], d[1], d[2]}, cube.extents()),
                                    c0 ? &X : nullptr);
      poison(cM);
      cube.stats().reset();
      compute(cM(i, l) = cX(i, j, k) * cB(j, l) * cU(k, l), statement_schedule().distribute("ijk"));
      const comm_stats st = cube.stats();
      expect_gathered<dense_row_major>(cM, mt_want, "MTTKRP, j and k split, X " + f + what);
      bool runs = true;
      for (std::size_t m = 0; m < 3; ++m) {
        const auto b = block_bounds(d[m], cube.dims()[m], cube.coords()[m]);
        runs = runs && b[1] > b[0];
      }
      const auto ib = block_bounds(d[0], cube.dims()[0], cube.coords()[0]);
      const long long others = static_cast<long long>(cube.dims()[1]) * cube.dims()[2] - 1;
      EXPECT_TRUE(only_kinds(st, {comm_kind::reduce})) << what;
      EXPECT_EQ(st.total().bytes_sent, runs ? others * (ib[1] - ib[0]) * 3 * 8 : 0)
          << "MTTKRP moves partial rows only, X " << f << what;
    };
    tensor_in(std::type_identity<coo_tensor<3>>{});
    tensor_in(std::type_identity<csf>{});
    tensor_in(std::type_identity<dense_tensor<3>>{});
  }
  const auto A = random_matrix<csr>(6, 5, 0.5, 71);
  const auto x = random_vector(5, 72);
  const auto lA = distribute<csr>(line, distribution_map<distribution<"xy->x">>({6, 5}, line.extents()),
                                  line.rank() == 0 ? &A : nullptr);
  const auto lx = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({5}, line.extents()),
                                           line.rank() == 0 ? &x : nullptr);
  tensor<double, dense_vector> y0({6});
  auto ly = distribute<dense_vector>(line, distribution_map<distribution<"x->x">>({6}, line.extents()),
                                     line.rank() == 0 ? &y0 : nullptr);
  // A sparse piece that the schedule reads elsewhere moves (as entries):
  // j distributed over A's row blocks, j in steps, i in tiles.
  tensor<double, dense_vector> y_ref({6});
  y_ref(i) = A(i, j) * x(j);
  compute(ly(i) = lA(i, j) * lx(j), statement_schedule().distribute("j"));
  expect_gathered<dense_vector>(ly, y_ref, "SpMV, j distributed over A's row blocks");
  compute(ly(i) = lA(i, j) * lx(j), statement_schedule().distribute("i").divide('j', 2));
  expect_gathered<dense_vector>(ly, y_ref, "SpMV, j in steps");
  compute(ly(i) = lA(i, j) * lx(j), statement_schedule().distribute("i").divide(2).reorder({"ii", "jo", "ji"}));
  expect_gathered<dense_vector>(ly, y_ref, "SpMV, i in tiles");
  compute(ly(i) = lA(i, j) * lx(j), statement_schedule().distribute("i"));
  tensor<double, dense_vector> y_want({6});
  y_want(i) = A(i, j) * x(j);
  expect_gathered<dense_vector>(ly, y_want, "SpMV, row blocks on a line");
}

// The local leaf product: BLAS (when the build found one) and the
// generated kernel (any other value type) agree.
TEST(DistKernels, LeafProduct) {
  for (auto [r, w, c] : {std::array<int, 3>{5, 7, 3}, {1, 1, 1}, {0, 4, 2}, {16, 9, 11}}) {
    std::vector<double> a(static_cast<std::size_t>(r * w)), b(static_cast<std::size_t>(w * c)),
        out(static_cast<std::size_t>(r * c), 1.0);
    std::vector<long long> ai(a.size()), bi(b.size()), outi(out.size(), 1);
    for (std::size_t q = 0; q < a.size(); ++q) ai[q] = static_cast<long long>(a[q] = static_cast<double>(q % 5) - 2);
    for (std::size_t q = 0; q < b.size(); ++q) bi[q] = static_cast<long long>(b[q] = static_cast<double>(q % 3) + 1);
    tensorlev::dist::detail::gemm_add<double, int>(r, w, c, a, b, out, tensorlev::serial);
    tensorlev::dist::detail::gemm_add<long long, int>(r, w, c, ai, bi, outi, tensorlev::serial);
    for (std::size_t q = 0; q < out.size(); ++q) EXPECT_EQ(out[q], static_cast<double>(outi[q]));
    long long want00 = 1;  // C(0,0) by hand
    for (int t = 0; t < w && r > 0 && c > 0; ++t) want00 += ai[static_cast<std::size_t>(t)] * bi[static_cast<std::size_t>(t * c)];
    if (r > 0 && c > 0) {
      EXPECT_EQ(outi[0], want00);
    }
  }
}

// C = A B replaces C, and C may be A (every input box is fetched before C
// is written).
TEST(DistKernels, ProductsReplaceAndAliasing) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  const bool root = g.rank() == 0;
  const auto A = random_matrix<dense_row_major>(6, 6, 1.0, 41);
  const auto B = random_matrix<dense_row_major>(6, 6, 1.0, 42);
  tensor<double, dense_row_major> want({6, 6});
  want(i, j) = A(i, k) * B(k, j);
  using tiles = distribution<"xy->xy">;
  const distribution_map<tiles> map({6, 6}, g.extents());
  const auto dB = distribute<dense_row_major>(g, map, root ? &B : nullptr);
  auto dX = distribute<dense_row_major>(g, map, root ? &A : nullptr);
  // summa and cannon are presets of the engine, which fetches every input
  // box before it writes C: C may be A.
  auto dZ = distribute<dense_row_major>(g, map, root ? &A : nullptr);
  summa(dZ, dZ, dB);
  expect_piece(dZ, want, "SUMMA with C = A");
  if (g.dims()[0] == g.dims()[1]) {
    cannon(dX, dX, dB);
    expect_piece(dX, want, "Cannon with C = A");
  }
  auto dY = distribute<dense_row_major>(g, map, root ? &A : nullptr);
  matmul(dY, dY, dB, matmul_schedule::summa());
  expect_piece(dY, want, "SUMMA schedule with C = A");
  expect_message([&] { matmul(dY, dY, dB, matmul_schedule::summa().communicate(0, 'x')); },
                 "matmul: communicate input 0 at 'x': name the divided variable");
  EXPECT_THROW((void)matmul_schedule().communicate(64, 'i'), shape_error);
  EXPECT_THROW((void)matmul_schedule().divide_at_splits('k', -1), shape_error);
  // divide_at_splits' panels: each interval between split points in
  // near-equal steps of at most the width (exactly), none for a huge width.
  {
    const std::vector<long long> c44{4, 4}, a410{4, 10}, b104{10, 4};
    using steps = std::vector<std::array<long long, 2>>;
    const auto cut = [&](long long width) {
      const auto pl = tensorlev::dist::detail::plan_statement(
          "matmul", g, statement_schedule().distribute("ij").divide_at_splits('k', width), {"ij", "ik", "kj"},
          {&c44, &a410, &b104}, true, {0, 5, 5, 10});
      EXPECT_EQ(pl.why, "");
      return pl.steps.at(0);
    };
    EXPECT_EQ(cut(2), (steps{{0, 2}, {2, 4}, {4, 5}, {5, 7}, {7, 9}, {9, 10}}));
    EXPECT_EQ(cut(3), (steps{{0, 3}, {3, 5}, {5, 8}, {8, 10}}));
    EXPECT_EQ(cut(0), (steps{{0, 5}, {5, 10}}));
    EXPECT_EQ(cut(std::numeric_limits<long long>::max()), (steps{{0, 5}, {5, 10}}));
  }
}

// The schedules of DISTAL Fig. 12 through matmul: every result against the
// single-node product; SUMMA by broadcasts only, Cannon by shifts only
// (their byte models are in DistKernels.SummaAndCannon), the presets
// summa() and cannon() equal to matmul with the same schedule.

TEST(DistSchedules, MatmulFamily) {
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  const int gx = plane.dims()[0];
  const int gy = plane.dims()[1];
  // (6x1x5: on a 3D grid most ranks' k block is empty, so Johnson's
  // reduction onto the C face must not be an MPI_Reduce of unequal sizes.)
  for (auto [m, kd, n] : {std::array<int, 3>{12, 12, 12}, {7, 10, 9}, {5, 3, 8}, {1, 1, 1}, {9, 16, 4}, {6, 1, 5}}) {
    const auto A = random_matrix<dense_row_major>(m, kd, 1.0, 21u + static_cast<unsigned>(m));
    const auto B = random_matrix<dense_row_major>(kd, n, 0.8, 23u + static_cast<unsigned>(n));
    tensor<double, dense_row_major> want({m, n});
    want(i, j) = A(i, k) * B(k, j);
    const std::string what = std::to_string(m) + "x" + std::to_string(kd) + "x" + std::to_string(n);
    using tiles = distribution<"xy->xy">;
    const auto* rootA = plane.rank() == 0 ? &A : nullptr;
    const auto* rootB = plane.rank() == 0 ? &B : nullptr;
    const auto* rootW = plane.rank() == 0 ? &want : nullptr;
    const auto dA = distribute<dense_row_major>(plane, distribution_map<tiles>({m, kd}, plane.extents()), rootA);
    const auto dB = distribute<dense_row_major>(plane, distribution_map<tiles>({kd, n}, plane.extents()), rootB);
    auto dC = distribute<dense_row_major>(plane, distribution_map<tiles>({m, n}, plane.extents()), rootW);
    const auto run = [&](auto& C, const auto& a, const auto& b, const matmul_schedule& s, const std::string& name) {
      std::fill(C.local().values().begin(), C.local().values().end(), -1.0);
      C.grid().stats().reset();
      matmul(C, a, b, s);
      expect_piece(C, want, name + " " + what);
      return C.grid().stats();
    };
    // SUMMA: only broadcasts, the same bytes as the hand-written kernel.
    const auto st_summa = run(dC, dA, dB, matmul_schedule::summa(), "SUMMA schedule");
    EXPECT_TRUE(only_kinds(st_summa, {comm_kind::broadcast})) << what;
    // Narrower panels: the same broadcast bytes in at least as many messages.
    const auto st_panel = run(dC, dA, dB, matmul_schedule::summa(2), "SUMMA, panels of 2");
    EXPECT_TRUE(only_kinds(st_panel, {comm_kind::broadcast})) << what;
    EXPECT_EQ(st_panel[comm_kind::broadcast].bytes_received, st_summa[comm_kind::broadcast].bytes_received) << what;
    EXPECT_GE(st_panel[comm_kind::broadcast].messages_received, st_summa[comm_kind::broadcast].messages_received) << what;
    if (kd > 2 * std::max(gx, gy) && m >= gx && n >= gy && plane.size() > 1) {
      long long more[2] = {st_panel.total().messages_received, st_summa.total().messages_received};
      MPI_Allreduce(MPI_IN_PLACE, more, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_GT(more[0], more[1]) << "panels of 2 cut the blocks " << what;
    }
    if (gx == gy) {
      const auto st_cannon = run(dC, dA, dB, matmul_schedule::cannon(gx), "Cannon schedule");
      const bool whole = m >= gx && n >= gy && kd >= gx;  // every rank a C block, every step an index
      if (whole) {
        EXPECT_TRUE(only_kinds(st_cannon, {comm_kind::shift})) << "Cannon moves data only by shifts " << what;
      }
      std::fill(dC.local().values().begin(), dC.local().values().end(), -5.0);  // replaced, not added to
      plane.stats().reset();
      cannon(dC, dA, dB);
      // cannon() steps at the k blocks, the schedule cuts k in q even
      // steps: the same steps when every block has an index.
      if (kd >= gx) {
        EXPECT_EQ(st_cannon[comm_kind::shift], plane.stats()[comm_kind::shift]) << "cannon() is the preset " << what;
      }
    }
    // PUMMA: A broadcast along rows, B shifted along columns. (On a
    // non-square grid the k steps straddle one input's tiles, and those
    // panels come in pieces: all-to-all traffic, same result.)
    const auto st_pumma = run(dC, dA, dB, matmul_schedule::pumma(std::max(gx, gy)), "PUMMA schedule");
    if (gx == gy && m >= gx && n >= gy && kd >= gx) {
      EXPECT_TRUE(only_kinds(st_pumma, {comm_kind::broadcast, comm_kind::shift})) << what;
    }
    (void)run(dC, dA, dB, matmul_schedule().distribute("ij").split(2).communicate(0, 'i'), "split, A once");
    (void)run(dC, dA, dB, matmul_schedule().distribute("ji").divide(3).rotate("j"), "distribute ji");
    (void)run(dC, dA, dB, matmul_schedule().distribute("ij").divide(1LL << 40).rotate("ij"), "2^40 steps");
    // reorder: the local loop order changes messages and the leaf's loop
    // order, never the result.
    {
      const auto sum_over_ranks = [](long long v) {
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        return v;
      };
      for (const char* leaf : {"ii ji ki", "ii ki ji", "ji ii ki", "ji ki ii", "ki ii ji", "ki ji ii"}) {
        const std::string l(leaf);
        const auto sch = matmul_schedule::summa().reorder({"ko", l.substr(0, 2), l.substr(3, 2), l.substr(6, 2)});
        (void)run(dC, dA, dB, matmul_schedule(sch).blas(false), "generated leaf " + l);
        (void)run(dC, dA, dB, sch, "leaf " + l);
      }
      // B fetched once: rows before ko move the same bytes in more messages.
      const auto b_once = matmul_schedule().distribute("ij").divide(2).communicate(1, 'j');
      const auto st_block = run(dC, dA, dB, b_once, "B once");
      const auto st_rows =
          run(dC, dA, dB, matmul_schedule(b_once).reorder({"ii", "ko", "ji", "ki"}), "B once, rows outside ko");
      EXPECT_EQ(st_rows.total().bytes_received, st_block.total().bytes_received) << what;
      EXPECT_GE(st_rows.total().messages_received, st_block.total().messages_received) << what;
      // B fetched per step: every row fetches its own B panels.
      const auto per_step = matmul_schedule().distribute("ij").divide(2);
      const auto st_step = run(dC, dA, dB, per_step, "per step");
      const auto st_step_rows =
          run(dC, dA, dB, matmul_schedule(per_step).reorder({"ii", "ko", "ji", "ki"}), "rows outside ko");
      EXPECT_GE(st_step_rows.total().bytes_received, st_step.total().bytes_received) << what;
      if (gx > 1 && m > gx && kd >= 2 * gx) {
        EXPECT_GT(sum_over_ranks(st_step_rows.total().bytes_received), sum_over_ranks(st_step.total().bytes_received))
            << "B panels fetched once per row " << what;
      }
      (void)run(dC, dA, dB, matmul_schedule(per_step).reorder({"ji", "ko", "ii", "ki"}), "columns outside ko");
      (void)run(dC, dA, dB, matmul_schedule(per_step).reorder({"ji", "ii", "ko", "ki"}), "components outside ko");
      (void)run(dC, dA, dB, matmul_schedule::cannon(std::max(gx, gy)).reorder({"ii", "ko", "ki", "ji"}).blas(false),
                "Cannon, rows outside ko");
      (void)run(dC, dA, dB,
                matmul_schedule().distribute("ij").split(2).communicate(0, 'i').reorder({"ji", "ko", "ii", "ki"}),
                "A once, columns outside ko");
    }
    // Inputs in other distributions (rows replicated along the grid's
    // second dimension, columns along its first) and C split unevenly.
    const auto rA = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->x*">>({m, kd}, plane.extents()),
                                                rootA);
    const auto cB = distribute<dense_row_major>(plane, distribution_map<distribution<"xy->*y">>({kd, n}, plane.extents()),
                                                rootB);
    distribution_map<tiles> odd({m, n}, plane.extents());
    std::vector<long long> sp(static_cast<std::size_t>(gx) + 1, m);
    sp[0] = 0;
    odd.set_splits(0, sp);
    auto oC = distribute<dense_row_major>(plane, odd, rootW);
    (void)run(oC, rA, cB, matmul_schedule::summa(), "replicated inputs, uneven C");
    // 3D: Johnson (C on the z = 0 face; A and B on the faces they are read from).
    const auto* cube_root = cube.rank() == 0 ? &A : nullptr;
    const auto jA = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->x0y">>({m, kd}, cube.extents()),
                                                cube_root);
    const auto jB = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->0yx">>({kd, n}, cube.extents()),
                                                cube.rank() == 0 ? &B : nullptr);
    auto jC = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->xy0">>({m, n}, cube.extents()),
                                          cube.rank() == 0 ? &want : nullptr);
    const auto st_j = run(jC, jA, jB, matmul_schedule::johnson(), "Johnson");
    EXPECT_TRUE(only_kinds(st_j, {comm_kind::broadcast, comm_kind::reduce})) << "Johnson " << what;
    (void)run(jC, jA, jB, matmul_schedule::cosma(2), "COSMA-style");
    // 2.5D: inputs replicated over the slices, C on the first slice.
    const auto rA3 = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->xy*">>({m, kd}, cube.extents()),
                                                 cube_root);
    const auto rB3 = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->xy*">>({kd, n}, cube.extents()),
                                                 cube.rank() == 0 ? &B : nullptr);
    if (cube.dims()[0] == cube.dims()[1]) {
      const auto st25 = run(jC, rA3, rB3, matmul_schedule::two_point_five_d(cube.dims()[0]), "2.5D");
      long long moved = st25.total().bytes_sent;
      MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (cube.dims()[2] > 1 && m * kd * n > 1) {
        EXPECT_GT(moved, 0) << "2.5D reduces across slices " << what;
      }
    }
    // A C that no schedule's blocks match: partial products by messages.
    auto tC = distribute<dense_row_major>(cube, distribution_map<distribution<"xy->yx*">>({m, n}, cube.extents()),
                                          cube.rank() == 0 ? &want : nullptr);
    (void)run(tC, jA, jB, matmul_schedule::johnson(), "Johnson into transposed tiles");
  }
  // A schedule that does not fit the grid is refused on every rank.
  const auto A = random_matrix<dense_row_major>(4, 4, 1.0, 5);
  using tiles = distribution<"xy->xy">;
  const auto dA = distribute<dense_row_major>(plane, distribution_map<tiles>({4, 4}, plane.extents()),
                                              plane.rank() == 0 ? &A : nullptr);
  auto dC = distribute<dense_row_major>(plane, distribution_map<tiles>({4, 4}, plane.extents()),
                                        plane.rank() == 0 ? &A : nullptr);
  EXPECT_THROW(matmul(dC, dA, dA, matmul_schedule::johnson()), shape_error);
  if (plane.size() > 1) {
    expect_message([&] { matmul(dC, dA, dA, matmul_schedule().distribute("ij").divide(plane.rank() == 0 ? 1 : 2)); },
                   "matmul: the ranks passed different schedules");
  }
  EXPECT_THROW(matmul(dC, dA, dA, matmul_schedule().distribute("ij").rotate("i")), shape_error);
  // Shapes that do not compose: every product names the extents that differ.
  const auto A45 = random_matrix<dense_row_major>(4, 5, 1.0, 6);
  const auto dA45 = distribute<dense_row_major>(plane, distribution_map<tiles>({4, 5}, plane.extents()),
                                                plane.rank() == 0 ? &A45 : nullptr);
  const std::string k_mismatch = "A's column count is 5 but B's row count is 4 (C(i,j) = A(i,k) B(k,j) with A 4x5";
  expect_message([&] { matmul(dC, dA45, dA, matmul_schedule::summa()); }, "matmul: " + k_mismatch);
  expect_message([&] { summa(dC, dA45, dA); }, "summa: " + k_mismatch);
  if (plane.dims()[0] == plane.dims()[1]) expect_message([&] { cannon(dC, dA45, dA); }, "cannon: " + k_mismatch);
  expect_message([&] { matmul(dC, dA, dA45, matmul_schedule::summa()); },
                 "B's column count is 5 but C's column count is 4");
  expect_message([&] { matmul(dC, dA, dA, matmul_schedule().distribute("ix")); },
                 "matmul: the schedule distributes 'x', which is not a variable of the statement");
  EXPECT_THROW((void)matmul_schedule().distribute("i1"), shape_error);
  EXPECT_THROW((void)matmul_schedule().distribute("ii"), shape_error);
  EXPECT_EQ(matmul_schedule().reorder({"ko", "ji", "ki", "ii"}).leaf_order(), "jki");
  EXPECT_EQ(matmul_schedule().reorder({"ii", "ko", "ki", "ji"}).leaf_order(), "ikj");
  EXPECT_EQ(matmul_schedule().leaf_order(), "");
  {
    std::vector<double> a1(4, 1.0), b1(4, 1.0), c1(4, 0.0);
    EXPECT_THROW((tensorlev::dist::detail::gemm_add<double, int>(2, 2, 2, a1, b1, c1, tensorlev::serial, "ikk", false)),
                 shape_error);
  }
  expect_message([&] { matmul(dC, dA, dA, matmul_schedule::summa().reorder({"ko", "ii", "ji"})); },
                 "matmul: reorder does not name the loop \"ki\"");
  expect_message([&] { matmul(dC, dA, dA, matmul_schedule::summa().reorder({"jo", "ii", "ji", "ki"})); },
                 "reorder names the step loop \"jo\", but the schedule divides 'k'");
  EXPECT_THROW((void)matmul_schedule().reorder({"ko", "ii", "ji", "ii"}), shape_error);
  EXPECT_THROW((void)matmul_schedule().reorder({"ki", "ko", "ii", "ji"}), shape_error);
  EXPECT_THROW((void)matmul_schedule().reorder({"io", "ko", "ii", "ji"}), shape_error);
  try {
    (void)matmul_schedule().reorder({"ii", "ki", "ko", "ji"});
    ADD_FAILURE() << "ki before ko accepted";
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"ki\" must come after \"ko\""), std::string::npos) << e.what();
  }
  try {
    (void)matmul_schedule().reorder({"jo", "ko", "ii", "ji"});
    ADD_FAILURE() << "a distributed loop accepted";
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed loops always stay outermost"), std::string::npos) << e.what();
  }
}

}  // namespace


namespace {
// ---- einsum over the ranks (dist/einsum_run.hpp) -------------------------------------

// Seed 002's Table IV kernels at reduced sizes in complex doubles, every
// operand built from the entry formula ((t + 1) + sum_d (d + 1) x_d) mod 7
// - 3, run over all ranks along the optimal path (each step on its SOAP
// grid, intermediates redistributed by Eq. 28's overlaps, partial sums
// all-reduced) and gathered on rank 0, against the same path run on one
// node (exact: integer parts only); plus random einsums.
std::size_t einsum_case(const std::string& s, const std::vector<long long>& ext,
                        tensorlev::dist::einsum_options opt = {}) {
  using C = std::complex<double>;
  const tensorlev::dist::einsum_spec e = tensorlev::dist::parse_einsum_checked(s);
  auto fill = [&](std::size_t k, const long long* x) {
    long long v = static_cast<long long>(k) + 1;
    for (std::size_t d = 0; d < e.input_order[k]; ++d) v += static_cast<long long>(d + 1) * x[d];
    return C(static_cast<double>(v % 7 - 3), static_cast<double>((v + 1) % 5 - 2));
  };
  const auto r = tensorlev::dist::einsum_distributed<C>(MPI_COMM_WORLD, e, ext, fill, opt);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bad = 0;
  const std::string what = s + (opt.fuse ? "" : " (unfused)") + (opt.inputs_from_owners ? " (inputs from owners)" : "") +
                           (opt.grid == tensorlev::dist::einsum_grid::soap ? "" : " (first-index grids)") +
                           (opt.gather ? "" : " (not gathered)") + " on " + std::to_string(world_size()) + " ranks";
  const auto ops = tensorlev::dist::dense_inputs<C>(e, ext, fill);
  const auto ref = tensorlev::dist::run_path<C>(e, r.path, ext, ops);
  // Every rank's block of the result: the reference's entries at its place.
  if (rank < r.plan.groups.back().ranks) {
    const auto& loc = r.local;
    bool same = loc.idx == ref.idx && r.local_lo.size() == loc.idx.size();
    std::vector<long long> x(loc.idx.size(), 0);
    for (long long c = 0; same && c < loc.size(); ++c) {
      long long q = c, at = 0;
      for (std::size_t d = x.size(); d-- > 0;) x[d] = q % loc.ext[d], q /= loc.ext[d];
      for (std::size_t d = 0; d < x.size(); ++d) at = at * ref.ext[d] + r.local_lo[d] + x[d];
      same = loc.data[static_cast<std::size_t>(c)] == ref.data[static_cast<std::size_t>(at)];
    }
    if (!same) bad = 1, ADD_FAILURE() << what << ": rank " << rank << "'s block differs";
  } else if (!r.local.data.empty() || !r.local.idx.empty()) {
    bad = 1, ADD_FAILURE() << what << ": idle rank " << rank << " holds a block";
  }
  if (!opt.gather && !r.output.data.empty()) bad = 1, ADD_FAILURE() << what << ": gathered anyway";
  if (rank == 0) {
    if (opt.gather && (ref.data != r.output.data || ref.idx != r.output.idx)) {
      bad = 1;
      ADD_FAILURE() << what << " differs from one node";
    }
    // The plan is the one planned without MPI for this many ranks; every
    // step runs in one group; the counted bytes equal the model's.
    const auto plan = tensorlev::dist::plan_einsum(e, ext, world_size(), opt);
    if (r.groups.size() != plan.groups.size()) bad = 1, ADD_FAILURE() << what << ": a report per group";
    std::size_t steps = 0;
    for (const auto& g : r.groups) steps += g.steps;
    if (steps != r.path.steps.size()) bad = 1, ADD_FAILURE() << what << ": " << steps << " steps run";
    const std::vector<long long> model = tensorlev::dist::einsum_traffic_model(plan, ext, sizeof(C));
    for (std::size_t q = 0; q < r.groups.size() && q < model.size(); ++q) {
      // SOAP grids: all the ranks where they factor over the group's
      // extents, else the most that do (asked of soap_grid here).
      long long prod = 1, most = world_size();
      for (const long long p : r.groups[q].grid) prod *= p;
      if (plan.groups[q].indices == 0)
        most = 1;  // scalars
      else if (opt.grid == tensorlev::dist::einsum_grid::soap)
        for (;; --most) {
          try {
            (void)tensorlev::dist::soap_grid(plan.groups[q].access, ext, most);
            break;
          } catch (const tensorlev::error&) {
          }
        }
      else  // first_index: the group's first index over min(P, its extent) ranks
        most = std::min<long long>(most, ext[static_cast<std::size_t>(std::countr_zero(plan.groups[q].indices))]);
      if (prod != most) bad = 1, ADD_FAILURE() << what << ": group " << q << " on " << prod << " of " << most << " ranks";
      if (r.groups[q].bytes_sent != model[q])
        bad = 1, ADD_FAILURE() << what << ": group " << q << " sent " << r.groups[q].bytes_sent << " bytes, the model says "
                               << model[q];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return static_cast<std::size_t>(bad);
}

// Sparse inputs (dist/einsum_run.hpp with einsum_sparse_input): SpMV with j
// split, TTM with l split, MTTKRP with j and k split (a distributed
// reduction), and each on SOAP's grids, in doubles with integer values:
// gathered and compared exactly with the dense path on one node (the
// nonzeros made dense), SpMV also with tensorlev's CSR kernel; every
// group's counted bytes equal the traffic model's.
std::size_t sparse_case(const std::string& s, const std::vector<long long>& ext, const std::string& split,
                        unsigned seed, bool fuse = true, bool both = false) {
  const tensorlev::dist::einsum_spec e = tensorlev::dist::parse_einsum_checked(s);
  // Operand 0 (and 1 with `both`) sparse: about a quarter of its entries,
  // some twice.
  std::mt19937_64 rng(seed);
  auto random_list = [&](std::size_t k) {
    std::vector<long long> dims;
    for (std::size_t d = 0; d < e.input_order[k]; ++d) dims.push_back(ext[static_cast<std::size_t>(e.input[k][d])]);
    tensorlev::coordinate_list<double, long long> l(dims);
    long long total = 1;
    for (const long long d : dims) total *= d;
    std::vector<long long> x(dims.size());
    for (long long c = 0; c < total; ++c) {
      if (rng() % 4 != 0) continue;
      long long q = c;
      for (std::size_t d = dims.size(); d-- > 0;) x[d] = q % dims[d], q /= dims[d];
      for (int t = 0; t < (rng() % 8 == 0 ? 2 : 1); ++t)
        l.push_back(std::span<const long long>(x), static_cast<double>(static_cast<int>(rng() % 9) - 4));
    }
    return l;
  };
  const auto list = random_list(0), list1 = random_list(1);
  auto fill = [&](std::size_t k, const long long* c) {
    long long v = static_cast<long long>(k) + 1;
    for (std::size_t d = 0; d < e.input_order[k]; ++d) v += static_cast<long long>(d + 1) * c[d];
    return static_cast<double>(v % 7 - 3);
  };
  tensorlev::dist::einsum_options opt{.fuse = fuse};
  if (!split.empty()) opt.grid = tensorlev::dist::einsum_grid::split, opt.split = split;
  std::vector<tensorlev::dist::einsum_sparse_input<double, long long>> sparse{{0, &list}};
  if (both) sparse.push_back({1, &list1});
  const auto r = tensorlev::dist::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, opt, sparse);
  int bad = 0, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string what = s + " split \"" + split + "\"" + (fuse ? "" : " unfused") + (both ? " both sparse" : "") +
                           " on " + std::to_string(world_size()) + " ranks";
  auto ops = tensorlev::dist::dense_inputs<double>(e, ext, fill);
  for (std::size_t k = 0; k < (both ? 2u : 1u); ++k) {
    const auto& l = k == 0 ? list : list1;
    tensorlev::dist::sparse_operand<double> a{ops[k].idx, ops[k].ext, l.raw_coords(), l.raw_values()};
    ops[k] = tensorlev::dist::densify(a);
  }
  const auto ref = tensorlev::dist::run_path<double>(e, r.path, ext, ops);
  // This rank's block of the result: the reference's entries at its place.
  if (!r.local.data.empty()) {
    std::vector<long long> x(r.local.ext.size());
    for (long long c = 0; c < r.local.size(); ++c) {
      long long q = c, at = 0;
      for (std::size_t d = x.size(); d-- > 0;) x[d] = q % r.local.ext[d], q /= r.local.ext[d];
      for (std::size_t d = 0; d < x.size(); ++d) at = at * ref.ext[d] + r.local_lo[d] + x[d];
      if (r.local.data[static_cast<std::size_t>(c)] != ref.data[static_cast<std::size_t>(at)]) {
        bad = 1, ADD_FAILURE() << what << ": rank " << rank << "'s block differs";
        break;
      }
    }
  }
  if (rank == 0) {
    if (ref.data != r.output.data) bad = 1, ADD_FAILURE() << what << " differs from one node";
    if (s == "ij,j->i") {  // tensorlev's CSR SpMV
      const auto A = tensorlev::pack<tensorlev::csr>(list);
      tensorlev::tensor<double, tensorlev::dense_vector, long long> xv({ext[1]}), yv({ext[0]});
      for (long long q = 0; q < ext[1]; ++q) xv.values()[static_cast<std::size_t>(q)] = fill(1, &q);
      yv(i) = A(i, j) * xv(j);
      if (std::vector<double>(yv.values().begin(), yv.values().end()) != r.output.data)
        bad = 1, ADD_FAILURE() << what << " differs from tensorlev's CSR SpMV";
    }
    const auto plan = tensorlev::dist::plan_einsum(e, ext, world_size(), opt);
    const auto model = tensorlev::dist::einsum_traffic_model(plan, ext, sizeof(double));
    if (model.size() != r.groups.size()) bad = 1, ADD_FAILURE() << what << ": " << r.groups.size() << " groups ran";
    for (std::size_t q = 0; q < r.groups.size() && q < model.size(); ++q)
      if (r.groups[q].bytes_sent != model[q])
        bad = 1, ADD_FAILURE() << what << ": group " << q << " sent " << r.groups[q].bytes_sent << ", model " << model[q];
    // The split: only the named indices are split (where a group has one).
    for (std::size_t q = 0; q < plan.groups.size() && !split.empty(); ++q)
      for (std::size_t v = 0; v < e.nindices; ++v)
        if (plan.groups[q].grid[v] > 1 && split.find(e.letter[v]) == std::string::npos)
          bad = 1, ADD_FAILURE() << what << ": group " << q << " splits " << e.letter[v];
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return static_cast<std::size_t>(bad);
}

TEST(DistEinsum, SparseStatementsUnderSplits) {
  std::size_t bad = 0;
  for (unsigned seed : {1u, 2u}) {
    bad += sparse_case("ij,j->i", {37, 41}, "j", seed);           // SpMV, j split: an all-reduce of y
    bad += sparse_case("ij,j->i", {37, 41}, "", seed);            // on SOAP's grid
    bad += sparse_case("ijk,kl->ijl", {7, 6, 9, 8}, "l", seed);   // TTM, l split: no communication
    bad += sparse_case("ijk,kl->ijl", {7, 6, 9, 8}, "", seed);
    bad += sparse_case("ijk,ja,ka->ia", {9, 8, 7, 5}, "jk", seed);  // MTTKRP, distributed reduction
    bad += sparse_case("ijk,ja,ka->ia", {9, 8, 7, 5}, "", seed);
    bad += sparse_case("ijk,ja,ka,al->il", {6, 7, 5, 4, 3}, "", seed);  // then a dense GEMM
    bad += sparse_case("ijk,ja,ka,al->il", {6, 7, 5, 4, 3}, "", seed, false);
    bad += sparse_case("ij,jk->ik", {9, 8, 7}, "", seed, true, true);  // both sparse: one made dense
    bad += sparse_case("ij,jk->ik", {9, 8, 7}, "j", seed, true, true);
  }
  EXPECT_EQ(bad, 0u);
  // A sparse operand whose shape is not its term's is named.
  tensorlev::coordinate_list<double, long long> wrong(std::vector<long long>{4, 5});
  const std::vector<tensorlev::dist::einsum_sparse_input<double, long long>> sp{{0, &wrong}};
  EXPECT_THROW((void)tensorlev::dist::einsum_distributed<double>(
                   MPI_COMM_WORLD, tensorlev::dist::parse_einsum_checked("ij,j->i"), std::vector<long long>{4, 6},
                   [](std::size_t, const long long*) { return 1.0; }, {}, sp),
               tensorlev::shape_error);
}

TEST(DistEinsum, FusedMttkrpMovesFewerBytesThanKrpThenGemm) {
  // Counted, not modelled: the MTTKRP group on its SOAP grid against the
  // KRP and the TDOT on grids of their own, every mode of order 3.
  for (const char* s : {"ijk,ja,ka->ia", "ijk,ia,ka->ja", "ijk,ia,ja->ka"}) {
    const tensorlev::dist::einsum_spec e = tensorlev::dist::parse_einsum_checked(s);
    const std::vector<long long> ext{8, 8, 8, 4};
    auto fill = [](std::size_t k, const long long* x) { return static_cast<double>((k + 1 + x[0]) % 5); };
    auto sent = [&](bool fuse) {
      const auto r = tensorlev::dist::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, {.fuse = fuse});
      long long b = 0;
      for (const auto& g : r.groups) b += g.bytes_sent;
      return std::pair{b, r.output.data};
    };
    const auto [fused, out_f] = sent(true);
    const auto [split, out_s] = sent(false);
    EXPECT_EQ(out_f, out_s) << s;
    // Fewer bytes on more than one rank (on one, both move nothing).
    if (world_size() > 1) {
      EXPECT_LT(fused, split) << s;
    } else {
      EXPECT_EQ(fused + split, 0) << s;
    }
  }
}

TEST(DistEinsum, TableIvKernelsMatchOneNode) {
  std::size_t bad = 0;
  for (long long n : {1, 4, 6}) {
    bad += einsum_case("ij,jk->ik", {n, n + 1, n + 2});
    bad += einsum_case("ij,jk,kl->il", {n, n + 1, n, 3});
    bad += einsum_case("ij,jk,kl,lm->im", {n + 1, n, 2, n, n + 1});
    bad += einsum_case("ijk,ja,ka->ia", {n, n + 1, n, 3});
    bad += einsum_case("ijk,ia,ka->ja", {n, n + 1, n, 3});
    bad += einsum_case("ijk,ia,ja->ka", {n, n + 1, n, 3});
    bad += einsum_case("ijk,ja,ka,al->il", {n, n, n, 3, n + 1});
  }
  for (long long n : {1, 2, 3}) {
    bad += einsum_case("ijklm,ja,ka,la,ma->ia", {n + 1, n, 2, n, 2, 3});
    bad += einsum_case("ijklm,ia,ja,la,ma->ka", {n + 1, n, 2, n, 2, 3});
    bad += einsum_case("ijklm,ia,ja,ka,la->ma", {n + 1, n, 2, n, 2, 3});
    bad += einsum_case("ijklm,jb,kc,ld,me->ibcde", {n, 2, n, 2, n, 2, 1, 2, 3});
  }
  // A full contraction and a batch index (a KRP-like step kept to the end).
  bad += einsum_case("ij,ij->", {5, 3});
  bad += einsum_case("ia,ja->ija", {4, 3, 2});
  // Unfused (one group per step): the same result, the model's bytes.
  const tensorlev::dist::einsum_options unfused{.fuse = false},
      rows{.grid = tensorlev::dist::einsum_grid::first_index}, blocks{.gather = false};
  bad += einsum_case("ijk,ja,ka,al->il", {6, 6, 6, 3, 7}, unfused);
  bad += einsum_case("ijklm,ja,ka,la,ma->ia", {3, 2, 2, 3, 2, 3}, unfused);
  bad += einsum_case("ij,jk,kl,lm->im", {7, 6, 2, 6, 7}, unfused);
  // Two full contractions joined by a step of scalars (a group on one rank).
  bad += einsum_case("bf,cd,b,cd->", {3, 2, 4, 5}, unfused);
  bad += einsum_case("bf,cd,b,cd->", {3, 2, 4, 5});
  // The naive baseline's grids (the first index split), and results left
  // in blocks.
  bad += einsum_case("ijk,ja,ka,al->il", {6, 6, 6, 3, 7}, rows);
  bad += einsum_case("ij,jk,kl,lm->im", {7, 6, 2, 6, 7}, rows);
  bad += einsum_case("ijk,ja,ka,al->il", {6, 6, 6, 3, 7}, blocks);
  // Inputs built once, by their first replicas, and broadcast (counted).
  const tensorlev::dist::einsum_options owners{.inputs_from_owners = true};
  bad += einsum_case("ij,jk->ik", {7, 6, 5}, owners);
  bad += einsum_case("ijk,ja,ka,al->il", {6, 6, 6, 3, 7}, owners);
  bad += einsum_case("ijklm,jb,kc,ld,me->ibcde", {3, 2, 3, 2, 3, 2, 1, 2, 3}, owners);
  bad += einsum_case("ijklm,jb,kc,ld,me->ibcde", {3, 2, 3, 2, 3, 2, 1, 2, 3}, blocks);
  EXPECT_EQ(bad, 0u);
  EXPECT_THROW((void)tensorlev::dist::einsum_distributed<double>(
                   MPI_COMM_WORLD, tensorlev::dist::parse_einsum_checked("ij,jk->ik"), std::vector<long long>{2, 0, 2},
                   [](std::size_t, const long long*) { return 1.0; }),
               tensorlev::shape_error);
}

// Collectives and point-to-point messages in pieces of at most
// detail::mpi_chunk values (2^30 in use, so that a block of 2^31 values or
// more is moved rather than refused), lowered here to 5: the grid's
// broadcast, reduce_sum, allreduce_sum and shift, einsum_distributed's
// partial sums, the engine's boxes (Cannon's shifts are the fetcher's
// messages) and sparse entries, the all-to-all and spmv_cols' running sum
// give what one call gives, for counts below, at and across the chunk
// size.
TEST(DistEinsum, ChunkedCollectivesAgreeWithOneCall) {
  struct restore {
    long long old = tensorlev::dist::detail::mpi_chunk;
    ~restore() { tensorlev::dist::detail::mpi_chunk = old; }
  } keep;
  tensorlev::dist::detail::mpi_chunk = 5;
  machine_grid g(MPI_COMM_WORLD, {0});
  const int p = world_size(), me = g.rank();
  for (const std::size_t n : {0, 1, 4, 5, 6, 10, 23}) {
    std::vector<double> a(n), b(n), c(n);
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = b[k] = 100.0 * me + static_cast<double>(k);
      c[k] = me == 0 ? static_cast<double>(k) + 0.5 : -1.0;
    }
    g.allreduce_sum(a.data(), n, g.comm());
    g.reduce_sum(b.data(), n, 0, g.comm());
    g.broadcast(c.data(), n, 0, g.comm());
    for (std::size_t k = 0; k < n; ++k) {
      const double sum = 100.0 * p * (p - 1) / 2 + static_cast<double>(p) * static_cast<double>(k);
      EXPECT_EQ(a[k], sum) << "allreduce, n = " << n << ", entry " << k;
      EXPECT_EQ(b[k], me == 0 ? sum : 100.0 * me + static_cast<double>(k)) << "reduce, n = " << n << ", entry " << k;
      EXPECT_EQ(c[k], static_cast<double>(k) + 0.5) << "broadcast, n = " << n << ", entry " << k;
    }
  }
  // Point-to-point traffic in pieces too: the engine's fetched boxes and
  // partial outputs (SUMMA, steps of k, Cannon's shifts), sparse entries
  // (a sparse output of a split reduction, sparse SUMMA), all-to-all
  // routing (distribute, redistribute, gather) and spmv_cols' running sum.
  machine_grid plane(MPI_COMM_WORLD, {0, 0});
  const bool p0 = plane.rank() == 0;
  const auto A = random_matrix<dense_row_major>(9, 7, 1.0, 51);
  const auto B = random_matrix<dense_row_major>(7, 8, 1.0, 52);
  tensor<double, dense_row_major> AB({9, 8});
  AB(i, j) = A(i, k) * B(k, j);
  using tiles = distribution<"xy->xy">;
  const auto dA = distribute<dense_row_major>(plane, distribution_map<tiles>({9, 7}, plane.extents()), p0 ? &A : nullptr);
  const auto dB = distribute<dense_row_major>(plane, distribution_map<tiles>({7, 8}, plane.extents()), p0 ? &B : nullptr);
  auto dC = distribute<dense_row_major>(plane, distribution_map<tiles>({9, 8}, plane.extents()), p0 ? &AB : nullptr);
  compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule::summa());
  expect_gathered<dense_row_major>(dC, AB, "SUMMA in pieces of 5");
  compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule().distribute("ik"));
  expect_gathered<dense_row_major>(dC, AB, "k split in pieces of 5");
  if (plane.dims()[0] == plane.dims()[1]) {
    compute(dC(i, j) = dA(i, k) * dB(k, j), statement_schedule::cannon(plane.dims()[0]));
    expect_gathered<dense_row_major>(dC, AB, "Cannon in pieces of 5");
  }
  const auto sA = random_matrix<csr>(9, 7, 0.6, 53);
  const auto sB = random_matrix<csr>(7, 8, 0.6, 54);
  tensor<double, csr> sC = pack<csr>(coordinate_list<double, int>({9, 8}));
  sC(i, j) = sA(i, k) * sB(k, j);
  const auto dsA = distribute<csr>(plane, distribution_map<tiles>({9, 7}, plane.extents()), p0 ? &sA : nullptr);
  const auto dsB = distribute<csr>(plane, distribution_map<tiles>({7, 8}, plane.extents()), p0 ? &sB : nullptr);
  auto dsC = distribute<csr>(plane, distribution_map<distribution<"xy->x*">>({9, 8}, plane.extents()),
                             p0 ? &sC : nullptr);
  const auto sparse_rows = [&] {
    if (dsC.holds()) {
      EXPECT_EQ(to_dense(dsC.local()), sub_block(to_dense(sC), 8, *dsC.box())) << "rank " << plane.rank();
    }
  };
  compute(dsC(i, j) = dsA(i, k) * dsB(k, j), statement_schedule::summa(0));
  sparse_rows();
  const auto rA = redistribute<coo>(dsA, distribution_map<distribution<"xy->yx">>({9, 7}, plane.extents()));
  const auto back = gather<csr>(rA);
  if (p0) {
    EXPECT_EQ(to_dense(*back), to_dense(sA)) << "redistribute and gather in pieces of 5";
  }
  const auto sBk = distribute<csr>(plane, distribution_map<distribution<"xy->*x">>({7, 8}, plane.extents()),
                                   p0 ? &sB : nullptr);
  compute(dsC(i, j) = dsA(i, k) * sBk(k, j), statement_schedule().distribute("ik"));
  sparse_rows();
  spmv_cols_case<csr>(24, 24, reduction::sequential);
  // The grid's shift around the ring: 12 values (three pieces) and 4 (one
  // MPI_Sendrecv).
  for (const std::size_t n : {12u, 4u}) {
    std::vector<double> out(n), in(n, -1.0);
    for (std::size_t q = 0; q < n; ++q) out[q] = 1000.0 * me + static_cast<double>(q);
    const int from = (me + p - 1) % p;
    g.shift(out.data(), n, (me + 1) % p, in.data(), n, from, g.comm());
    for (std::size_t q = 0; q < n; ++q) EXPECT_EQ(in[q], 1000.0 * from + static_cast<double>(q)) << "shift of " << n;
  }
  // Partial sums over split reductions, with blocks of more than 5 values.
  std::size_t bad = 0;
  bad += einsum_case("ij,jk->ik", {6, 7, 8});
  bad += einsum_case("ijk,ja,ka->ia", {6, 7, 6, 3});
  bad += einsum_case("ijk,ja,ka,al->il", {6, 6, 6, 3, 7});
  bad += einsum_case("ij,jk->ik", {3, 40, 4});
  EXPECT_EQ(bad, 0u);
}
}  // namespace

#define TL_MPI_TESTS_PASSED "dist tests"
#include "mpi_main.hpp"
