// dist::einsum_into (dist/einsum_into.hpp) under mpirun (ctest: 1, 2, 3,
// 4, 6 and 8 ranks on the 1D, 2D and 3D grids MPI_Dims_create shapes): Deinsum's plan
// over tensors the caller holds in their own distributions -- tiles,
// transposed tiles, row and column blocks replicated along the other
// machine dimension, pieces on one face, everything replicated -- for
// products, MTTKRP, chains of three, outer and batched products, a
// transposed output, matrix-vector, a letter summed in one input, an
// order-0 intermediate and a replicated output, over generated extents (0 and 1
// included), in doubles and complex doubles with small integer values.
// Every rank's piece of the output (replicas included) is compared exactly
// with a naive loop over every index on the global operands (every rank
// builds them from the same seed); the output's previous values are
// poisoned first. Also: the plan is plan_einsum's for this many ranks, the
// errors (another grid, one letter with two extents) reach every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <random>
#include <string>
#include <vector>

#include "tensorlev/dist.hpp"
#include "tensorlev/dist/einsum_into.hpp"
#include "tensorlev/formats.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::dist;

template <std::size_t N>
using dense_n = std::conditional_t<N == 1, dense_vector, std::conditional_t<N == 2, dense_row_major, dense_tensor<N>>>;

// A global dense tensor of the given extents, small integer values (real
// and imaginary parts for complex), the same on every rank.
template <class V, std::size_t N>
tensor<V, dense_n<N>> random_dense(const std::vector<long long>& ext, unsigned seed) {
  std::array<int, N> d{};
  for (std::size_t q = 0; q < N; ++q) d[q] = static_cast<int>(ext[q]);
  tensor<V, dense_n<N>> t = std::apply([](auto... x) { return tensor<V, dense_n<N>>({x...}); }, d);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> val(-3, 3);
  for (auto& v : t.values()) {
    if constexpr (std::is_same_v<V, std::complex<double>>) v = V(val(rng), val(rng));
    else v = static_cast<V>(val(rng));
  }
  return t;
}

// The einsum on whole row-major arrays by a loop over every index.
template <class V>
std::vector<V> naive_einsum(const einsum_spec& e, const std::vector<long long>& ext,
                            const std::vector<const std::vector<V>*>& in) {
  long long out_size = 1, all = 1;
  for (std::size_t d = 0; d < e.output_order; ++d) out_size *= ext[static_cast<std::size_t>(e.output[d])];
  for (std::size_t v = 0; v < e.nindices; ++v) all *= ext[v];
  std::vector<V> out(static_cast<std::size_t>(out_size), V{});
  std::vector<long long> x(e.nindices, 0);
  for (long long c = 0; c < all; ++c) {
    long long q = c;
    for (std::size_t v = e.nindices; v-- > 0;) x[v] = q % ext[v], q /= ext[v];
    V prod{1};
    for (std::size_t k = 0; k < e.ninputs; ++k) {
      long long at = 0;
      for (std::size_t d = 0; d < e.input_order[k]; ++d) {
        const auto v = static_cast<std::size_t>(e.input[k][d]);
        at = at * ext[v] + x[v];
      }
      prod *= (*in[k])[static_cast<std::size_t>(at)];
    }
    long long at = 0;
    for (std::size_t d = 0; d < e.output_order; ++d) {
      const auto v = static_cast<std::size_t>(e.output[d]);
      at = at * ext[v] + x[v];
    }
    out[static_cast<std::size_t>(at)] += prod;
  }
  return out;
}

// Whether t's piece equals its box of the global row-major array `whole`.
template <class T, class V>
bool piece_matches(const T& t, const std::vector<V>& whole) {
  if (!t.holds()) return t.local().values().empty();
  const block_box& b = *t.box();
  const std::size_t n = b.lo.size();
  const auto vals = t.local().values();
  std::vector<long long> x(n);
  for (std::size_t c = 0; c < vals.size(); ++c) {
    long long q = static_cast<long long>(c), at = 0;
    for (std::size_t d = n; d-- > 0;) x[d] = b.lo[d] + q % b.extent(d), q /= b.extent(d);
    for (std::size_t d = 0; d < n; ++d) at = at * t.dims()[d] + x[d];
    if (!(vals[c] == whole[static_cast<std::size_t>(at)])) return false;
  }
  return true;
}

template <class V, std::size_t N>
std::vector<V> values_of(const tensor<V, dense_n<N>>& t) {
  return {t.values().begin(), t.values().end()};
}

template <class D, class V, std::size_t N>
auto spread(const machine_grid& g, const tensor<V, dense_n<N>>& t, const std::vector<long long>& ext) {
  return distribute<dense_n<N>>(g, distribution_map<D>(ext, g.extents()), g.rank() == 0 ? &t : nullptr);
}

std::vector<long long> pick(const std::vector<long long>& ext, const einsum_spec& e, int k) {
  std::vector<long long> x;
  const std::size_t n = k < 0 ? e.output_order : e.input_order[static_cast<std::size_t>(k)];
  for (std::size_t d = 0; d < n; ++d)
    x.push_back(ext[static_cast<std::size_t>(k < 0 ? e.output[d] : e.input[static_cast<std::size_t>(k)][d])]);
  return x;
}

// One case: einsum S over inputs distributed as Din..., output as Dout, at
// extents `ext` (one per letter, in the order of first appearance).
template <fixed_string S, class V, class Dout, class... Din>
int einsum_case(const machine_grid& g, const std::vector<long long>& ext, unsigned seed, einsum_options opt = {}) {
  constexpr einsum_spec e = einsum<S>::spec;
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    const auto globals = std::make_tuple(
        random_dense<V, e.input_order[K]>(pick(ext, e, static_cast<int>(K)), seed + static_cast<unsigned>(K))...);
    const std::array<std::vector<V>, e.ninputs> flat{values_of<V, e.input_order[K]>(std::get<K>(globals))...};
    std::vector<const std::vector<V>*> operands;
    for (const auto& f : flat) operands.push_back(&f);
    const auto want = naive_einsum<V>(e, ext, operands);
    const auto ins = std::make_tuple(spread<Din, V, e.input_order[K]>(g, std::get<K>(globals), pick(ext, e, static_cast<int>(K)))...);
    auto out = spread<Dout, V, e.output_order>(g, random_dense<V, e.output_order>(pick(ext, e, -1), seed + 99), pick(ext, e, -1));
    for (auto& v : out.local().values()) v = V(-1000);  // poisoned: every entry must be written
    const auto r = einsum_into<S>(opt, out, std::get<K>(ins)...);
    int bad = piece_matches(out, want) ? 0 : 1;
    std::string what = std::string(S.view()) + " extents";
    for (long long x : ext) what += " " + std::to_string(x);
    if (bad) ADD_FAILURE() << what << ": rank " << g.rank() << "'s piece of the output differs";
    // The plan is plan_einsum's for this many ranks (none for an empty sum).
    bool empty = false;
    for (long long x : ext) empty = empty || x == 0;
    if (!empty) {
      const auto plan = plan_einsum(e, ext, g.size(), opt);
      if (r.groups.size() != plan.groups.size() || r.path.steps.size() != plan.path.steps.size())
        bad = 1, ADD_FAILURE() << what << ": not plan_einsum's plan";
    } else if (!r.groups.empty()) {
      bad = 1, ADD_FAILURE() << what << ": an empty sum ran groups";
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, g.comm());
    return bad;
  }(std::make_index_sequence<e.ninputs>{});
}

std::vector<long long> random_extents(std::mt19937& rng, std::size_t n, int hi) {
  std::uniform_int_distribution<int> x(1, hi), zero(0, 9);
  std::vector<long long> ext;
  for (std::size_t q = 0; q < n; ++q) ext.push_back(zero(rng) == 0 ? 0 : x(rng));
  return ext;
}

using tiles = distribution<"xy->xy">;
using tiles_t = distribution<"xy->yx">;
using rows_rep = distribution<"xy->x*">;
using cols_rep = distribution<"xy->*y">;
using face = distribution<"xy->x0">;
using all_rep = distribution<"xy->**">;
using vec0 = distribution<"x->x*">;
using vec1 = distribution<"x->*x">;
using vec_face = distribution<"x->0x">;
using t3 = distribution<"xyz->xy">;
using t3_zx = distribution<"xyz->zx">;
using t3_rep = distribution<"xyz->y*">;

TEST(DistEinsumInto, ProductsInEveryDistribution) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  std::mt19937 rng(5);
  int bad = 0, cases = 0;
  for (int round = 0; round < 6; ++round) {
    const auto e3 = random_extents(rng, 3, 7);
    bad += einsum_case<"ik,kj->ij", double, tiles, tiles, tiles>(g, e3, 10u + static_cast<unsigned>(round));
    bad += einsum_case<"ik,kj->ij", double, tiles_t, rows_rep, cols_rep>(g, e3, 20u + static_cast<unsigned>(round));
    bad += einsum_case<"ik,kj->ij", double, face, all_rep, tiles_t>(g, e3, 30u + static_cast<unsigned>(round));
    bad += einsum_case<"ij,jk->ki", std::complex<double>, rows_rep, tiles, face>(g, e3, 40u + static_cast<unsigned>(round));
    bad += einsum_case<"ij,j->i", double, vec_face, tiles_t, vec1>(g, random_extents(rng, 2, 9), 50u);
    bad += einsum_case<"i,j->ij", double, tiles, vec0, vec1>(g, random_extents(rng, 2, 6), 60u);
    cases += 6;
  }
  EXPECT_EQ(bad, 0) << "of " << cases << " cases";
}

TEST(DistEinsumInto, ChainsMttkrpAndBatches) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  std::mt19937 rng(6);
  int bad = 0;
  for (int round = 0; round < 4; ++round) {
    const auto u = static_cast<unsigned>(round);
    // MTTKRP, order 3: i, j, k, a.
    bad += einsum_case<"ijk,ja,ka->ia", double, rows_rep, t3, tiles, cols_rep>(g, random_extents(rng, 4, 6), 70u + u);
    bad += einsum_case<"ijk,ja,ka->ia", std::complex<double>, tiles, t3_rep, all_rep, tiles_t>(g, random_extents(rng, 4, 5),
                                                                                               80u + u);
    // Three matrices (two contractions, a contraction order to choose).
    bad += einsum_case<"ij,jk,kl->il", double, tiles_t, tiles, rows_rep, face>(g, random_extents(rng, 4, 6), 90u + u);
    // Batched products and a TTM with its output's dimensions permuted.
    bad += einsum_case<"bij,bjk->bik", double, t3_zx, t3, t3_rep>(g, random_extents(rng, 4, 4), 100u + u);
    bad += einsum_case<"ijk,jl->ilk", double, t3, t3_zx, cols_rep>(g, random_extents(rng, 4, 5), 110u + u);
    // Inputs broadcast from their owners (einsum_options::inputs_from_owners), unfused groups.
    einsum_options owners;
    owners.inputs_from_owners = true;
    bad += einsum_case<"ijk,ja,ka->ia", double, tiles, t3_zx, tiles_t, rows_rep>(g, random_extents(rng, 4, 6), 120u + u,
                                                                                owners);
    einsum_options unfused;
    unfused.fuse = false;
    bad += einsum_case<"ijk,ja,ka->ia", double, face, t3, rows_rep, tiles>(g, random_extents(rng, 4, 6), 130u + u, unfused);
  }
  EXPECT_EQ(bad, 0);
}

// Other grids (one and three dimensions), a replicated output, a letter
// summed in one input only, and an order-0 intermediate (unfused).
TEST(DistEinsumInto, OtherGridsAndShapes) {
  machine_grid line(MPI_COMM_WORLD, {0});
  machine_grid cube(MPI_COMM_WORLD, {0, 0, 0});
  std::mt19937 rng(7);
  int bad = 0;
  einsum_options unfused;
  unfused.fuse = false;
  for (int round = 0; round < 4; ++round) {
    const auto u = static_cast<unsigned>(round);
    bad += einsum_case<"ik,kj->ij", double, distribution<"xy->x">, distribution<"xy->y">, distribution<"xy->*">>(
        line, random_extents(rng, 3, 8), 140u + u);
    bad += einsum_case<"ij,jk->i", double, distribution<"x->*">, distribution<"xy->y">, distribution<"xy->x">>(
        line, random_extents(rng, 3, 7), 150u + u);
    bad += einsum_case<"ijk,ja,ka->ia", double, distribution<"xy->xy*">, distribution<"xyz->xyz">,
                       distribution<"xy->*x*">, distribution<"xy->**y">>(cube, random_extents(rng, 4, 5), 160u + u);
    bad += einsum_case<"i,i,j->j", double, distribution<"x->x">, distribution<"x->x">, distribution<"x->*">,
                       distribution<"x->x">>(line, random_extents(rng, 2, 9), 170u + u, unfused);
    bad += einsum_case<"ik,kj->ij", double, all_rep, tiles_t, rows_rep>(machine_grid(MPI_COMM_WORLD, {0, 0}),
                                                                         random_extents(rng, 3, 7), 180u + u);
  }
  EXPECT_EQ(bad, 0);
}

// Two grids of the same extents over the same processes are one grid:
// inputs built on a second, equal grid (its own communicator, congruent
// with the output's) are taken, and the result is the loops'.
TEST(DistEinsumInto, EqualGridsAreOneGrid) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  machine_grid g2(MPI_COMM_WORLD, g.dims());
  ASSERT_TRUE(g.same_as(g2));
  ASSERT_TRUE(g2.same_as(g));
  machine_grid line(MPI_COMM_WORLD, {0});
  EXPECT_FALSE(g.same_as(line));
  const auto A = random_dense<double, 2>({6, 5}, 11);
  const auto B = random_dense<double, 2>({5, 4}, 12);
  const auto dA = spread<tiles, double, 2>(g2, A, {6, 5});
  const auto dB = spread<rows_rep, double, 2>(g, B, {5, 4});
  auto dC = spread<tiles_t, double, 2>(g, random_dense<double, 2>({6, 4}, 13), {6, 4});
  const auto g2_before = g2.stats().total();
  (void)einsum_into<"ik,kj->ij">(dC, dA, dB);
  // The moves are counted on the output's grid, not on the input's equal one.
  EXPECT_EQ(g2.stats().total(), g2_before);
  std::vector<double> want(24, 0.0);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 4; ++c)
      for (int k = 0; k < 5; ++k) want[static_cast<std::size_t>(r * 4 + c)] += A.values()[r * 5 + k] * B.values()[k * 4 + c];
  int bad = piece_matches(dC, want) ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, g.comm());
  EXPECT_EQ(bad, 0);
  // The same extents over the ranks in reverse order (a similar, not
  // congruent, communicator) is another grid: refused on every rank.
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size > 1) {
    MPI_Comm reversed = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
    {
      machine_grid gr(reversed, g.dims());
      EXPECT_FALSE(g.same_as(gr));
      const auto rA = spread<tiles, double, 2>(gr, A, {6, 5});
      try {
        (void)einsum_into<"ik,kj->ij">(dC, rA, dB);
        ADD_FAILURE() << "an input on a grid over other ranks' order accepted";
      } catch (const shape_error& e) {
        EXPECT_NE(std::string(e.what()).find("input 0 is on another grid than the output"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("another rank order"), std::string::npos) << e.what();
      }
    }
    MPI_Comm_free(&reversed);
  }
}

TEST(DistEinsumInto, ErrorsReachEveryRank) {
  machine_grid g(MPI_COMM_WORLD, {0, 0});
  machine_grid line(MPI_COMM_WORLD, {0});
  const auto A = random_dense<double, 2>({4, 3}, 1);
  const auto B = random_dense<double, 2>({5, 2}, 2);
  const auto dA = spread<tiles, double, 2>(g, A, {4, 3});
  const auto dB = spread<tiles, double, 2>(g, B, {5, 2});
  auto dC = spread<tiles, double, 2>(g, random_dense<double, 2>({4, 2}, 3), {4, 2});
  try {
    (void)einsum_into<"ik,kj->ij">(dC, dA, dB);
    ADD_FAILURE() << "k of extents 3 and 5 accepted";
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("index 'k' has extent 3 before, but 5 in dimension 0 of input 1"),
              std::string::npos)
        << e.what();
  }
  const auto B32 = random_dense<double, 2>({3, 2}, 4);
  const auto lB32 = distribute<dense_row_major>(line, distribution_map<distribution<"xy->x">>({3, 2}, line.extents()),
                                                line.rank() == 0 ? &B32 : nullptr);
  try {
    (void)einsum_into<"ik,kj->ij">(dC, dA, lB32);
    ADD_FAILURE() << "an input on another grid accepted";
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("input 1 is on another grid than the output"), std::string::npos) << e.what();
  }
}

}  // namespace

#define TL_MPI_TESTS_PASSED "dist einsum_into tests"
#include "mpi_main.hpp"
