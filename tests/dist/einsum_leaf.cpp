// The local leaf of the distributed einsum (dist/einsum_leaf.hpp):
// contract_gemm, the binary contraction as transposes and matrix products,
// against contract_pair's loop over every index combination on random
// pairs of operands (every class of index: batch, m, n, contracted, summed
// in one operand; outputs in any order; extents 0 to 4; doubles and
// complex doubles with integer parts, so equal exactly), and
// permute_operand against the coordinates it moves; contract_sparse, the
// leaf with a sparse operand, against the dense contraction.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

#include "tensorlev/dist/einsum_leaf.hpp"

namespace {
using namespace tensorlev::dist;

template <class V>
dense_operand<V> random_operand(std::mt19937_64& rng, const std::vector<int>& idx, const std::vector<long long>& ext) {
  dense_operand<V> t;
  t.idx = idx;
  for (const int v : idx) t.ext.push_back(ext[static_cast<std::size_t>(v)]);
  t.data.resize(static_cast<std::size_t>(t.size()));
  for (auto& x : t.data) {
    if constexpr (std::is_same_v<V, double>)
      x = static_cast<double>(static_cast<int>(rng() % 9) - 4);
    else
      x = V(static_cast<double>(static_cast<int>(rng() % 9) - 4), static_cast<double>(static_cast<int>(rng() % 5) - 2));
  }
  return t;
}

// A random subset of 0..n-1 in random order.
std::vector<int> random_indices(std::mt19937_64& rng, int n, int most) {
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) all[static_cast<std::size_t>(v)] = v;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<std::size_t>(rng() % static_cast<unsigned>(std::min(n, most) + 1)));
  return all;
}

// Extents (every tenth trial 0 to zero_mod - 1, else 1 to 4), two operands' indices, an output over some of their union in
// random order.
struct pair_case {
  std::vector<long long> ext;
  std::vector<int> ia, ib, out;
};
pair_case random_case(std::mt19937_64& rng, int trial, unsigned zero_mod) {
  pair_case c;
  const int n = 1 + static_cast<int>(rng() % 6);
  c.ext.resize(static_cast<std::size_t>(n));
  for (auto& x : c.ext) x = trial % 10 == 0 ? static_cast<long long>(rng() % zero_mod) : 1 + static_cast<long long>(rng() % 4);
  c.ia = random_indices(rng, n, 4);
  c.ib = random_indices(rng, n, 4);
  std::vector<int> u = c.ia;
  for (const int v : c.ib)
    if (std::find(u.begin(), u.end(), v) == u.end()) u.push_back(v);
  std::shuffle(u.begin(), u.end(), rng);
  for (const int v : u)
    if (rng() % 2) c.out.push_back(v);
  return c;
}

template <class V>
void random_pairs(unsigned seed, int trials) {
  std::mt19937_64 rng(seed);
  int gemms = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const auto [ext, ia, ib, out] = random_case(rng, trial, 5);
    const auto a = random_operand<V>(rng, ia, ext), b = random_operand<V>(rng, ib, ext);
    const auto ref = contract_pair(a, b, out, ext);
    int calls = 0;
    const auto got = contract_gemm(a, b, out, ext, [&](long long m, long long k, long long q, const V* x, const V* y, V* z) {
      ++calls;
      detail::gemm_loops(m, k, q, x, y, z);
    });
    gemms += calls > 0;
    ASSERT_EQ(got.idx, ref.idx) << trial;
    ASSERT_EQ(got.ext, ref.ext) << trial;
    ASSERT_EQ(got.data, ref.data) << "trial " << trial;
    EXPECT_EQ(contract_gemm(a, b, out, ext).data, ref.data) << trial;
  }
  EXPECT_GT(gemms, trials / 5);  // the rest contract nothing: contract_pair itself
}

TEST(EinsumLeaf, ContractGemmEqualsTheLoopOverEveryIndex) {
  random_pairs<double>(5, 1500);
  random_pairs<std::complex<double>>(6, 600);
}

TEST(EinsumLeaf, ContractSparseEqualsTheDenseContraction) {
  // Random sparse a (about a third of its entries, some twice), dense b,
  // any output: contract_sparse against contract_pair on a densified.
  std::mt19937_64 rng(9);
  int nonempty = 0;
  for (int trial = 0; trial < 1200; ++trial) {
    const auto [ext, ia, ib, out] = random_case(rng, trial, 4);
    const auto full = random_operand<double>(rng, ia, ext);
    sparse_operand<double> a{ia, full.ext, {}, {}};
    for (long long c = 0; c < full.size(); ++c)
      for (int twice = 0; twice < (rng() % 6 == 0 ? 2 : 1); ++twice)
        if (rng() % 3 == 0) {
          long long q = c;
          std::vector<long long> x(ia.size());
          for (std::size_t d = ia.size(); d-- > 0;) x[d] = q % full.ext[d], q /= full.ext[d];
          a.coords.insert(a.coords.end(), x.begin(), x.end());
          a.vals.push_back(full.data[static_cast<std::size_t>(c)]);
        }
    nonempty += a.nnz() > 0;
    const auto b = random_operand<double>(rng, ib, ext);
    ASSERT_EQ(contract_sparse(a, b, out, ext).data, contract_pair(densify(a), b, out, ext).data) << "trial " << trial;
  }
  EXPECT_GT(nonempty, 600);
  // A coordinate outside its extent is named, not read.
  sparse_operand<double> bad{{0}, {3}, {3}, {1.0}};
  const dense_operand<double> v{{0}, {3}, {1, 2, 3}};
  EXPECT_THROW((void)contract_sparse(bad, v, {}, std::vector<long long>{3}), tensorlev::shape_error);
}

TEST(EinsumLeaf, OneGemmPerBatchEntry) {
  // ibk,bkj->bij: a batch of 3 products of 2x4 by 4x5, and no copy needed
  // for b (already [batch, k, n]).
  const std::vector<long long> ext{2, 3, 4, 5};  // i b k j
  std::mt19937_64 rng(1);
  const auto a = random_operand<double>(rng, {0, 1, 2}, ext), b = random_operand<double>(rng, {1, 2, 3}, ext);
  std::vector<std::array<long long, 3>> shapes;
  const auto c = contract_gemm(a, b, {1, 0, 3}, ext, [&](long long m, long long k, long long n, const double* x,
                                                          const double* y, double* z) {
    shapes.push_back({m, k, n});
    detail::gemm_loops(m, k, n, x, y, z);
  });
  EXPECT_EQ(shapes, (std::vector<std::array<long long, 3>>(3, {2, 4, 5})));
  EXPECT_EQ(c.data, contract_pair(a, b, {1, 0, 3}, ext).data);
}

TEST(EinsumLeaf, PermuteMovesEachEntryToItsCoordinates) {
  const std::vector<long long> ext{2, 3, 4};
  std::mt19937_64 rng(2);
  const auto t = random_operand<double>(rng, {0, 1, 2}, ext);
  const auto p = permute_operand(t, {2, 0, 1});
  ASSERT_EQ(p.ext, (std::vector<long long>{4, 2, 3}));
  for (long long i = 0; i < 2; ++i)
    for (long long j = 0; j < 3; ++j)
      for (long long k = 0; k < 4; ++k)
        EXPECT_EQ(p.data[static_cast<std::size_t>((k * 2 + i) * 3 + j)], t.data[static_cast<std::size_t>((i * 3 + j) * 4 + k)]);
  EXPECT_EQ(permute_operand(p, {0, 1, 2}).data, t.data);
  EXPECT_THROW((void)permute_operand(t, {0, 1}), tensorlev::shape_error);
  EXPECT_THROW((void)permute_operand(t, {0, 1, 3}), tensorlev::shape_error);
  // A wrong extent is named.
  dense_operand<double> bad = t;
  bad.ext[1] = 4;
  EXPECT_THROW((void)contract_gemm(bad, t, {0}, ext), tensorlev::shape_error);
}

}  // namespace
