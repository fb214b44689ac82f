// The local leaf of the distributed einsum (dist/einsum_leaf.hpp):
// contract_gemm, the binary contraction as transposes and matrix products,
// against contract_pair's loop over every index combination on random
// pairs of operands (every class of index: batch, m, n, contracted, summed
// in one operand; outputs in any order; extents 0 to 4; doubles and
// complex doubles with integer parts, so equal exactly), and
// permute_operand against the coordinates it moves.
#include <gtest/gtest.h>

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

template <class V>
void random_pairs(unsigned seed, int trials) {
  std::mt19937_64 rng(seed);
  int gemms = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 6);
    std::vector<long long> ext(static_cast<std::size_t>(n));
    for (auto& x : ext) x = trial % 10 == 0 ? static_cast<long long>(rng() % 5) : 1 + static_cast<long long>(rng() % 4);
    const std::vector<int> ia = random_indices(rng, n, 4), ib = random_indices(rng, n, 4);
    std::vector<int> u = ia;
    for (const int v : ib)
      if (std::find(u.begin(), u.end(), v) == u.end()) u.push_back(v);
    std::shuffle(u.begin(), u.end(), rng);
    std::vector<int> out;
    for (const int v : u)
      if (rng() % 2) out.push_back(v);
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
