// Deinsum's contraction groups and the traffic model (dist/einsum_plan.hpp):
// the paper's partition and grids for ijk,ja,ka,al->il, the fused MTTKRP
// group against the KRP-then-GEMM decomposition by the model's bytes, and
// properties of plans of random einsums (the groups partition the path,
// each group's grid uses the most ranks that factor, the recomputation bound, the
// chosen partition no costlier than one group per step). The engine's
// counted bytes are checked against the model under mpirun (mpi.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "random_einsum.hpp"
#include "tensorlev/dist/einsum_plan.hpp"

namespace {
using namespace tensorlev::dist;

long long total(const std::vector<long long>& v) { return std::accumulate(v.begin(), v.end(), 0LL); }

TEST(EinsumPlan, PaperPartitionAndGrids) {
  // P = 8, N = 10 (seed 002, Sec. V): the KRP and the TDOT as one MTTKRP
  // group on (2,2,2,1) over (i,j,k,a), the GEMM on (2,2,2) over (i,a,l).
  const einsum_spec e = parse_einsum("ijk,ja,ka,al->il");
  const std::vector<long long> ext(e.nindices, 10);
  const einsum_plan p = plan_einsum(e, ext, 8);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].steps, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(p.groups[1].steps, (std::vector<std::size_t>{2}));
  EXPECT_EQ(p.to_string(e),
            "ja,ka,ijk->ia on i=2,j=2,k=2,a=1 (2 steps)\n"
            "ia,al->il on i=2,a=2,l=2 (1 step)\n");
  EXPECT_EQ(p.groups[0].words_per_rank, 125 + 3 * 50);
  EXPECT_EQ(p.groups[0].ranks, 8);
  // Unfused: the KRP, the TDOT and the GEMM on grids of their own.
  const einsum_plan u = plan_einsum(e, ext, 8, {.fuse = false});
  ASSERT_EQ(u.groups.size(), 3u);
  for (std::size_t g = 0; g < 3; ++g) EXPECT_EQ(u.groups[g].steps, (std::vector<std::size_t>{g}));
  // The model: the fused group moves only its reduction (the split j and
  // k: 8 ranks, 4 sharing each 5x10 block of the result), then t(i,a)
  // from (i,a) blocks 5x10 to 5x5 blocks on the GEMM's grid.
  const std::vector<long long> b = einsum_traffic_model(p, ext, 16);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0], 8 * (2 * 3 * 50 * 16 / 4));
  // Each 5x5 block of t goes to its first replica on the GEMM's grid (l =
  // 0: ranks 0, 2, 4, 6) from the owner of its rows on the first grid (a
  // rank with j = k = 0: rank 0 or 4, already holding two of them); each
  // first replica broadcasts it to the rank with l = 1; then the GEMM's
  // reduction over a (2 ranks sharing each 5x5 block of the result).
  EXPECT_EQ(b[1], 2 * 25 * 16 + 4 * 25 * 16 + 8 * (2 * 1 * 25 * 16 / 2));
}

TEST(EinsumPlan, FusedMttkrpMovesFewerBytesThanKrpThenGemm) {
  // The MTTKRP term on its SOAP grid against the same path split into the
  // KRP and the TDOT, by the model (the engine's counts equal it: mpi.cpp),
  // for every mode of order 3 and modes 0, 2, 4 of order 5 (its path: a
  // KRP of two factors, a third, the TDOT, then the last factor).
  const std::vector<std::string> kernels{"ijk,ja,ka->ia", "ijk,ia,ka->ja", "ijk,ia,ja->ka",
                                         "ijklm,ja,ka,la,ma->ia", "ijklm,ia,ja,la,ma->ka", "ijklm,ia,ja,ka,la->ma"};
  for (const std::string& s : kernels) {
    const einsum_spec e = parse_einsum(s);
    for (const long long n : {6, 16, 30})
      for (const long long P : {2, 3, 4, 6, 8, 12, 16}) {

        // Order 5 at 3^5 on 16 ranks is planned as two groups (as one it
        // holds more words or repeats more than 1.25x its FLOPs).
        if (e.ninputs == 5 && n == 6 && P == 16) continue;
        std::vector<long long> ext(e.nindices, e.ninputs == 3 ? n : (n + 1) / 2);
        ext.back() = 8;  // the rank, a
        if (e.ninputs == 5) ext[e.nindices - 1] = 4;
        const einsum_plan f = plan_einsum(e, ext, P), u = plan_einsum(e, ext, P, {.fuse = false});
        ASSERT_EQ(f.groups.size(), 1u) << s;
        EXPECT_GT(u.groups.size(), 1u) << s;
        EXPECT_LT(total(einsum_traffic_model(f, ext, 16)), total(einsum_traffic_model(u, ext, 16)))
            << s << " n " << n << " P " << P;
      }
  }
}

TEST(EinsumPlan, HugeExtentsSaturateNotOverflow) {
  // Planning and the model on extents whose products pass 2^63: counts
  // saturate at 2^62 (UBSan in CI would catch an overflow).
  const einsum_spec e = parse_einsum("ij,jk,kl->il");
  const std::vector<long long> ext(e.nindices, 1LL << 32);
  for (const long long P : {1LL, 8LL, 1LL << 20}) {
    const einsum_plan p = plan_einsum(e, ext, P);
    for (const einsum_group& g : p.groups) EXPECT_LE(g.words_per_rank, 1LL << 62);
    for (const long long b : einsum_traffic_model(p, ext, 16)) {
      EXPECT_GE(b, 0);
      EXPECT_LE(b, 1LL << 62);
    }
  }
}

TEST(EinsumPlan, OneRankMovesNothing) {
  const einsum_spec e = parse_einsum("ij,jk,kl,lm->im");
  const std::vector<long long> ext{3, 4, 5, 6, 7};
  for (const bool fuse : {true, false}) {
    const einsum_plan p = plan_einsum(e, ext, 1, {.fuse = fuse});
    for (const long long b : einsum_traffic_model(p, ext, 8)) EXPECT_EQ(b, 0);
  }
  EXPECT_THROW((void)plan_einsum(e, ext, 0), tensorlev::error);
  EXPECT_THROW((void)plan_einsum(e, std::vector<long long>{3, 0, 5, 6, 7}, 2), tensorlev::shape_error);
}


// The traffic model by brute force: for every intermediate operand, every
// (owner, first replica) pair of ranks that differ, the overlap of their
// blocks; then the broadcasts and the all-reduces.
std::vector<long long> brute_force_traffic(const einsum_plan& p, const std::vector<long long>& ext, long long vb) {
  auto coord = [](const einsum_group& g, long long r, std::size_t v) {
    for (std::size_t q = max_einsum_indices; q-- > 0;) {
      if (((g.indices >> q) & 1U) == 0) continue;
      if (q == v) return r % g.grid[q];
      r /= g.grid[q];
    }
    return 0LL;
  };
  auto block = [&](const einsum_group& g, long long r) {
    return grid_block(ext, g.indices, g.grid, r);
  };
  auto lacks_at_zero = [&](const einsum_group& g, std::uint32_t idx, long long r) {
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if (((g.indices & ~idx) >> v) & 1U && coord(g, r, v) != 0) return false;
    return true;
  };
  std::vector<long long> out;
  for (const einsum_group& g : p.groups) {
    long long b = 0;
    for (const std::uint32_t u : g.operands) {
      if (std::has_single_bit(u)) continue;
      const einsum_group* f = nullptr;
      for (const einsum_group& h : p.groups)
        if (h.inputs == u) f = &h;
      const std::uint32_t idx = f->result_indices;
      long long k = 1;
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if (((g.indices & ~idx) >> v) & 1U) k *= g.grid[v];
      for (long long r = 0; r < g.ranks; ++r) {
        if (!lacks_at_zero(g, idx, r)) continue;
        const auto [clo, chi] = block(g, r);
        long long size = 1;
        for (std::size_t v = 0; v < max_einsum_indices; ++v)
          if ((idx >> v) & 1U) size *= chi[v] - clo[v];
        b += (k - 1) * size * vb;
        for (long long q = 0; q < f->ranks; ++q) {
          if (q == r || !lacks_at_zero(*f, idx, q)) continue;
          const auto [plo, phi] = block(*f, q);
          long long o = 1;
          for (std::size_t v = 0; v < max_einsum_indices; ++v)
            if ((idx >> v) & 1U) o *= std::max(0LL, std::min(phi[v], chi[v]) - std::max(plo[v], clo[v]));
          b += o * vb;
        }
      }
    }
    // The all-reduce: each rank's share of its result block, 2 (k - 1) / k
    // of it, k the ranks along the summed indices' grid dimensions.
    long long k = 1;
    for (std::size_t v = 0; v < max_einsum_indices; ++v) k *= ((g.summed() >> v) & 1U) ? g.grid[v] : 1;
    if (k > 1)
      for (long long r = 0; r < g.ranks; ++r) {
        const auto box = block(g, r);
        long long cells = 1;
        for (std::size_t v = 0; v < max_einsum_indices; ++v)
          cells *= ((g.result_indices >> v) & 1U) ? box.second[v] - box.first[v] : 1;
        b += 2 * (k - 1) * cells * vb / k;
      }
    out.push_back(b);
  }
  return out;
}

TEST(EinsumPlan, RandomPlansPartitionThePath) {
  std::mt19937_64 rng(23);
  int fused_somewhere = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string s;  // 2 to 5 inputs over up to 6 letters
    do s = tensorlev_test::random_einsum(rng, "abcdef", 5, false);
    while (s.find(',') == std::string::npos);
    const einsum_spec e = parse_einsum(s);
    ASSERT_EQ(e.error, einsum_error::none) << s;
    std::vector<long long> ext(e.nindices);
    for (auto& x : ext) x = 1 + static_cast<long long>(rng() % 7);
    const long long P = 1 + static_cast<long long>(rng() % 12);
    const einsum_plan p = plan_einsum(e, ext, P), u = plan_einsum(e, ext, P, {.fuse = false});
    const auto& st = p.path.steps;
    std::vector<int> seen(st.size(), 0);
    long long cost = 0, ucost = 0;
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
      const einsum_group& gr = p.groups[g];
      ASSERT_FALSE(gr.steps.empty()) << s;
      const contraction_step& root = st[gr.steps.back()];
      EXPECT_EQ(gr.inputs, root.left | root.right) << s;
      EXPECT_EQ(gr.result_indices, root.result_indices) << s;
      // Operands: one more than the steps (a tree), together the root's inputs.
      EXPECT_EQ(gr.operands.size(), gr.steps.size() + 1) << s;
      std::uint32_t under = 0;
      for (const std::uint32_t o : gr.operands) {
        EXPECT_EQ(under & o, 0u) << s;
        under |= o;
        // An operand is an input or the result of an earlier group.
        if (!std::has_single_bit(o)) {
          bool earlier = false;
          for (std::size_t h = 0; h < g; ++h) earlier = earlier || p.groups[h].inputs == o;
          EXPECT_TRUE(earlier) << s;
        }
      }
      EXPECT_EQ(under, gr.inputs) << s;
      // Recomputation within the allowed bound.
      double flops = 0, repeated = 0;
      for (const std::size_t q : gr.steps) {
        ++seen[q];
        double copies = 1;  // grid coordinates holding entries along each index the step lacks
        for (std::size_t v = 0; v < e.nindices; ++v)
          if (((gr.indices & ~(st[q].left_indices | st[q].right_indices)) >> v) & 1U) {
            const long long b = (ext[v] + gr.grid[v] - 1) / gr.grid[v];
            copies *= static_cast<double>((ext[v] + b - 1) / b);
          }
        flops += st[q].flops;
        repeated += st[q].flops * copies;
      }
      EXPECT_DOUBLE_EQ(gr.path_flops, flops) << s;
      EXPECT_DOUBLE_EQ(gr.flops, repeated) << s;
      if (gr.steps.size() > 1) {
        EXPECT_LE(repeated, 1.25 * flops) << s;
      }
      // The grid: the most ranks that factor over the group's extents.
      long long prod = 1;
      for (std::size_t v = 0; v < e.nindices; ++v) {
        prod *= gr.grid[v];
        EXPECT_LE(gr.grid[v], ext[v]) << s;
        if (((gr.indices >> v) & 1U) == 0) {
          EXPECT_EQ(gr.grid[v], 1) << s;
        }
      }
      EXPECT_EQ(prod, gr.ranks) << s;
      for (long long more = gr.ranks + 1; more <= P; ++more)
        EXPECT_THROW((void)soap_grid(gr.access, ext, more), tensorlev::error) << s << " " << more;
      cost += gr.words_per_rank * gr.ranks;
      fused_somewhere += gr.steps.size() > 1;
    }
    for (const int c : seen) EXPECT_EQ(c, 1) << s;
    EXPECT_EQ(u.groups.size(), st.size()) << s;
    for (const einsum_group& gr : u.groups) ucost += gr.words_per_rank * gr.ranks;
    // The objective: words held plus words moved (the model at one byte a
    // value); unfused is one of the partitions considered.
    for (const long long w : einsum_traffic_model(p, ext, 1)) cost += w;
    for (const long long w : einsum_traffic_model(u, ext, 1)) ucost += w;
    EXPECT_LE(cost, ucost) << s;
    // The model's bytes: those of every (owner, replica) pair, non-negative,
    // none where one rank runs everything.
    EXPECT_EQ(einsum_traffic_model(p, ext, 8), brute_force_traffic(p, ext, 8)) << s << " P " << P;
    EXPECT_EQ(einsum_traffic_model(u, ext, 8), brute_force_traffic(u, ext, 8)) << s << " P " << P;
    for (const long long b : einsum_traffic_model(p, ext, 8)) {
      EXPECT_GE(b, 0) << s;
      if (P == 1) {
        EXPECT_EQ(b, 0) << s;
      }
    }
  }
  EXPECT_GT(fused_somewhere, 20);
}

}  // namespace
