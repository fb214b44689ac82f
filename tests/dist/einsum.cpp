// Einsum strings and Deinsum's planning (dist/einsum.hpp): parsing and its
// errors at compile and run time, the FLOP-optimal contraction order
// against an exhaustive search over pairwise orders, and the SOAP tiles,
// bound and grids with the paper's numbers (seed 002, Sec. IV-E and V;
// seeds_002_004.md 1.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "tensorlev/dist/einsum.hpp"

namespace {
using namespace tensorlev::dist;

// ---- parsing ----------------------------------------------------------------------

using mttkrp = einsum<"ijk,ja,ka->ia">;
static_assert(mttkrp::inputs == 3 && mttkrp::spec.nindices == 4 && mttkrp::spec.output_order == 2);
static_assert(mttkrp::spec.input_mask(0) == 0b0111 && mttkrp::spec.input_mask(1) == 0b1010 &&
              mttkrp::spec.output_mask() == 0b1001);
static_assert(einsum<"ij,jk,kl,lm->im">::inputs == 4);
static_assert(einsum<"ij,ij->">::spec.output_order == 0);  // a full contraction
static_assert(parse_einsum("ij,jk").error == einsum_error::no_arrow);
static_assert(parse_einsum("ij,,jk->ik").error == einsum_error::empty_input);
static_assert(parse_einsum(",ij->i").error == einsum_error::empty_input);
static_assert(parse_einsum("ii->i").error == einsum_error::repeated_index);
static_assert(parse_einsum("ij->ii").error == einsum_error::repeated_index);
static_assert(parse_einsum("ij,jk->il").error == einsum_error::output_not_in_input);
static_assert(parse_einsum("i1,1j->ij").error == einsum_error::bad_character);
static_assert(parse_einsum("ij jk->ik").error == einsum_error::bad_character);
static_assert(parse_einsum("abcdefghi->a").error == einsum_error::operand_order);
static_assert(parse_einsum("a,b,c,d,e,f,g,h,i->a").error == einsum_error::too_many_inputs);
static_assert(parse_einsum("a,b,c,d,e,f,g,h->a").error == einsum_error::none);
static_assert(parse_einsum("abcdefgh,ijklmnop,q->a").error == einsum_error::too_many_indices);
static_assert(parse_einsum("ij,jk->il").position == 8);

TEST(Einsum, RunTimeErrorsNameRuleAndPosition) {
  EXPECT_EQ(parse_einsum_checked("ijk,ja,ka->ia").ninputs, 3u);
  try {
    (void)parse_einsum_checked("ij,jk->iz");
    FAIL() << "no error";
  } catch (const tensorlev::error& e) {
    EXPECT_NE(std::string(e.what()).find("an output index that no input has at character 8"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)parse_einsum_checked("ij"), tensorlev::error);
  EXPECT_THROW((void)parse_einsum_checked("i-j->i"), tensorlev::error);
}

// ---- contraction order ---------------------------------------------------------------

// Independent reference: every order of pairwise contractions of the
// current operands (intermediates keep the indices read later or by the
// output), the cheapest total by the same FLOP rule.
double exhaustive_flops(const einsum_spec& e, const std::vector<long long>& ext) {
  const std::uint32_t out = e.output_mask();
  std::function<double(std::vector<std::uint32_t>)> go = [&](std::vector<std::uint32_t> ops) -> double {
    if (ops.size() <= 1) return 0;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < ops.size(); ++a)
      for (std::size_t b = a + 1; b < ops.size(); ++b) {
        std::uint32_t later = out;
        for (std::size_t c = 0; c < ops.size(); ++c)
          if (c != a && c != b) later |= ops[c];
        const std::uint32_t span = ops[a] | ops[b];
        const std::uint32_t res = ops.size() == 2 ? out : (span & later);
        double f = 1;
        for (std::size_t v = 0; v < e.nindices; ++v)
          if ((span >> v) & 1U) f *= static_cast<double>(ext[v]);
        if ((span & ~res) != 0) f *= 2;
        std::vector<std::uint32_t> next;
        for (std::size_t c = 0; c < ops.size(); ++c)
          if (c != a && c != b) next.push_back(ops[c]);
        next.push_back(res);
        best = std::min(best, f + go(next));
      }
    return best;
  };
  std::vector<std::uint32_t> ops;
  for (std::size_t k = 0; k < e.ninputs; ++k) ops.push_back(e.input_mask(k));
  return go(ops);
}

TEST(Einsum, DeinsumMttkrpOrder) {
  // ijk,ja,ka,al->il (seed 002, Fig. 2): the KRP first, then the TDOT, then the GEMM.
  const einsum_spec e = parse_einsum("ijk,ja,ka,al->il");
  const double N = 10;
  const std::vector<long long> ext(e.nindices, 10);
  const contraction_path p = optimal_path(e, ext);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.to_string(e),
            "ja,ka->jka  (1e+03 FLOPs)\n"
            "ijk,jka->ia  (2e+04 FLOPs)\n"
            "ia,al->il  (2e+03 FLOPs)\n");
  EXPECT_DOUBLE_EQ(p.flops, N * N * N + 2 * N * N * N * N + 2 * N * N * N);
  EXPECT_DOUBLE_EQ(p.flops, exhaustive_flops(e, ext));
  // 3MM with a thin middle: (AB)(CD) beats left to right.
  const einsum_spec m = parse_einsum("ij,jk,kl,lm->im");
  const std::vector<long long> me{100, 100, 2, 100, 100};
  const contraction_path q = optimal_path(m, me);
  EXPECT_EQ(q.to_string(m).substr(0, 9), "ij,jk->ik");
  EXPECT_DOUBLE_EQ(q.flops, exhaustive_flops(m, me));
}

TEST(Einsum, OptimalPathMatchesExhaustiveSearch) {
  std::mt19937_64 rng(7);
  const std::string letters = "abcdefg";
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // 1-5 inputs of 1-3 distinct letters each, an output drawn from them.
    const int n = 1 + static_cast<int>(rng() % 5);
    std::string s, used;
    for (int k = 0; k < n; ++k) {
      if (k) s += ',';
      std::string op;
      const int order = 1 + static_cast<int>(rng() % 3);
      while (static_cast<int>(op.size()) < order) {
        const char c = letters[rng() % letters.size()];
        if (op.find(c) == std::string::npos) op += c;
      }
      s += op;
      for (char c : op)
        if (used.find(c) == std::string::npos) used += c;
    }
    std::string out;
    for (char c : used)
      if (rng() % 2) out += c;
    s += "->" + out;
    const einsum_spec e = parse_einsum(s);
    ASSERT_EQ(e.error, einsum_error::none) << s;
    std::vector<long long> ext(e.nindices);
    for (auto& x : ext) x = 1 + static_cast<long long>(rng() % 9);
    const contraction_path p = optimal_path(e, ext);
    EXPECT_EQ(p.steps.size(), e.ninputs > 1 ? e.ninputs - 1 : 0) << s;
    double sum = 0;
    for (const auto& st : p.steps) sum += st.flops;
    EXPECT_DOUBLE_EQ(sum, p.flops) << s;
    EXPECT_DOUBLE_EQ(p.flops, exhaustive_flops(e, ext)) << s;
    if (!p.steps.empty()) {
      EXPECT_EQ(p.steps.back().result_indices, e.output_mask()) << s;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 300);
  EXPECT_THROW((void)optimal_path(parse_einsum("ij,jk->ik"), std::vector<long long>{2, 2}), tensorlev::error);
}

// ---- SOAP ------------------------------------------------------------------------------

TEST(Soap, MttkrpTileBoundAndIntensity) {
  // Sec. IV-E at S = 512: I = J = K = S^(1/3) = 8, L = S^(2/3) / 2 = 32,
  // X0 = 5S/2 = 1280, rho = S^(2/3) / 3 = 64/3 (the output's access set
  // counted, seeds_002_004.md 1.3).
  const einsum_spec e = parse_einsum("ijk,ja,ka->ia");
  const soap_tile s = soap_tiling(contraction_group::of(e), 512);
  for (int v : {0, 1, 2}) EXPECT_NEAR(s.t[static_cast<std::size_t>(v)], 8.0, 8e-6);
  EXPECT_NEAR(s.t[3], 32.0, 3.2e-5);
  EXPECT_NEAR(s.x0, 1280.0, 1.3e-3);
  EXPECT_NEAR(s.rho, 64.0 / 3.0, 1e-8);
  // Q >= |V| / rho = 3 N^4 / S^(2/3).
  EXPECT_NEAR(s.bound(1e8), 3e8 / 64.0, 1e-3);
}

TEST(Soap, MatrixMultiplicationIntensity) {
  // MM: rho = sqrt(S) / 2 with square tiles of sqrt(S) and X0 = 3S.
  for (double S : {64.0, 512.0, 1e6}) {
    const soap_tile s = soap_tiling(contraction_group::of(parse_einsum("ij,jk->ik")), S);
    // (X0 sits at a flat minimum: found to about the square root of the
    // objective's precision.)
    for (int v : {0, 1, 2}) EXPECT_NEAR(s.t[static_cast<std::size_t>(v)] / std::sqrt(S), 1.0, 1e-6);
    EXPECT_NEAR(s.x0 / (3 * S), 1.0, 1e-6);
    EXPECT_NEAR(s.rho / (std::sqrt(S) / 2), 1.0, 1e-9);
  }
  EXPECT_THROW((void)soap_tiling(contraction_group::of(parse_einsum("ij,jk->ik")), 0), tensorlev::error);
}

TEST(Soap, PaperGrids) {
  // P = 8, N = 10, ijk,ja,ka,al->il: the MTTKRP term over (i,j,k,a) gets
  // (2,2,2,1) and the MM term over (i,l,a) (2,2,2) (Sec. V).
  const einsum_spec e = parse_einsum("ijk,ja,ka,al->il");
  const std::vector<long long> ext(e.nindices, 10);
  contraction_group mttkrp;  // ijk,ja,ka->ia
  mttkrp.access = {e.input_mask(0), e.input_mask(1), e.input_mask(2), 0b01001};
  mttkrp.indices = 0b01111;
  const soap_grid_result g = soap_grid(mttkrp, ext, 8);
  EXPECT_EQ((std::array<long long, 5>{g.p[0], g.p[1], g.p[2], g.p[3], g.p[4]}),
            (std::array<long long, 5>{2, 2, 2, 1, 1}));
  EXPECT_EQ(g.words, 125 + 3 * 50);
  const contraction_path path = optimal_path(e, ext);
  const soap_grid_result mm = soap_grid(contraction_group::of(path.steps.back()), ext, 8);  // ia,al->il
  EXPECT_EQ(mm.p[0], 2);
  EXPECT_EQ(mm.p[3], 2);
  EXPECT_EQ(mm.p[4], 2);
  // 1MM: (2,2,4) at 16 ranks, (2,4,4) at 32, up to permutation.
  const einsum_spec m = parse_einsum("ij,jk->ik");
  const std::vector<long long> big(3, 4096);
  auto sorted = [](const soap_grid_result& r) {
    std::array<long long, 3> a{r.p[0], r.p[1], r.p[2]};
    std::sort(a.begin(), a.end());
    return a;
  };
  EXPECT_EQ(sorted(soap_grid(contraction_group::of(m), big, 16)), (std::array<long long, 3>{2, 2, 4}));
  EXPECT_EQ(sorted(soap_grid(contraction_group::of(m), big, 32)), (std::array<long long, 3>{2, 4, 4}));
}

TEST(Soap, GridIsTheCheapestFactorization) {
  // Against a scan of every grid with factors up to the extents.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const einsum_spec e = parse_einsum(trial % 2 ? "ijk,ja,ka->ia" : "ij,jk->ik");
    const contraction_group g = contraction_group::of(e);
    std::vector<long long> ext(e.nindices);
    for (auto& x : ext) x = 1 + static_cast<long long>(rng() % 12);
    const long long P = 1 + static_cast<long long>(rng() % 24);
    long long best = -1;
    std::array<long long, 4> f{1, 1, 1, 1};
    std::function<void(std::size_t)> scan = [&](std::size_t v) {
      if (v == e.nindices) {
        long long prod = 1;
        for (std::size_t q = 0; q < v; ++q) prod *= f[q];
        if (prod != P) return;
        long long w = 0;
        for (const auto m : g.access) {
          long long a = 1;
          for (std::size_t q = 0; q < v; ++q)
            if ((m >> q) & 1U) a *= (ext[q] + f[q] - 1) / f[q];
          w += a;
        }
        if (best < 0 || w < best) best = w;
        return;
      }
      for (f[v] = 1; f[v] <= ext[v]; ++f[v]) scan(v + 1);
      f[v] = 1;
    };
    scan(0);
    if (best < 0) {
      EXPECT_THROW((void)soap_grid(g, ext, P), tensorlev::error);
    } else {
      const soap_grid_result r = soap_grid(g, ext, P);
      long long prod = 1;
      for (std::size_t q = 0; q < e.nindices; ++q) {
        prod *= r.p[q];
        EXPECT_LE(r.p[q], ext[q]);
      }
      EXPECT_EQ(prod, P);
      EXPECT_EQ(r.words, best);
    }
  }
  EXPECT_THROW((void)soap_grid(contraction_group::of(parse_einsum("ij,jk->ik")), std::vector<long long>{2, 2, 2}, 7),
               tensorlev::error);
}

}  // namespace
