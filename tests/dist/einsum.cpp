// Einsum strings and Deinsum's planning (dist/einsum.hpp): parsing and its
// errors at compile and run time, the FLOP-optimal contraction order
// against an exhaustive search over pairwise orders, and the SOAP tiles,
// bound and grids with the paper's numbers (seed 002, Sec. IV-E and V;
// seeds_002_004.md 1.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <random>

#include "random_einsum.hpp"
#include "tensorlev/dist/einsum.hpp"

namespace {
using namespace tensorlev::dist;
using tensorlev_test::random_einsum;

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
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::string s = random_einsum(rng, "abcdefg", 5, false);
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


// ---- the einsum as one statement: Table IV's kernels ------------------------------------

// Independent reference: every combination of index values, the product of
// the inputs' entries added into the output's entry.
template <class V>
std::vector<V> naive_einsum(const einsum_spec& e, const std::vector<long long>& ext,
                            const std::vector<std::vector<V>>& in) {
  auto offset = [&](const std::array<int, max_dist_dims>& idx, std::size_t order, const std::vector<long long>& x) {
    long long o = 0;
    for (std::size_t d = 0; d < order; ++d) o = o * ext[static_cast<std::size_t>(idx[d])] + x[static_cast<std::size_t>(idx[d])];
    return static_cast<std::size_t>(o);
  };
  long long out_size = 1;
  for (std::size_t d = 0; d < e.output_order; ++d) out_size *= ext[static_cast<std::size_t>(e.output[d])];
  std::vector<V> out(static_cast<std::size_t>(out_size), V{});
  std::vector<long long> x(e.nindices, 0);
  long long total = 1;
  for (std::size_t v = 0; v < e.nindices; ++v) total *= ext[v];
  for (long long c = 0; c < total; ++c) {
    long long r = c;
    for (std::size_t v = e.nindices; v-- > 0;) x[v] = r % ext[v], r /= ext[v];
    V p{1};
    for (std::size_t k = 0; k < e.ninputs; ++k) p *= in[k][offset(e.input[k], e.input_order[k], x)];
    out[offset(e.output, e.output_order, x)] += p;
  }
  return out;
}

template <class V>
V entry(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-3, 3);
  if constexpr (std::is_same_v<V, double>)
    return d(rng);
  else
    return V(d(rng), d(rng));
}

template <std::size_t N, class V>
tensorlev::tensor<V, tensorlev::dense_tensor<N>> dense_of(const std::vector<long long>& dims, std::vector<V>& vals,
                                                           std::mt19937_64& rng) {
  std::array<int, N> d{};
  std::size_t size = 1;
  for (std::size_t q = 0; q < N; ++q) d[q] = static_cast<int>(dims[q]), size *= static_cast<std::size_t>(dims[q]);
  tensorlev::tensor<V, tensorlev::dense_tensor<N>> t(d);
  vals.resize(size);
  for (std::size_t q = 0; q < size; ++q) t.values()[q] = vals[q] = entry<V>(rng);
  return t;
}

template <fixed_string S, class V, std::size_t... Orders>
std::size_t table_iv_case(std::vector<long long> ext, std::mt19937_64& rng) {
  constexpr einsum_spec e = einsum<S>::spec;
  std::vector<std::vector<V>> vals(e.ninputs);
  auto dims_of = [&](std::size_t k) {
    std::vector<long long> d;
    for (std::size_t q = 0; q < e.input_order[k]; ++q) d.push_back(ext[static_cast<std::size_t>(e.input[k][q])]);
    return d;
  };
  auto run = [&]<std::size_t... K>(std::index_sequence<K...>) {
    auto ops = std::make_tuple(dense_of<Orders>(dims_of(K), vals[K], rng)...);
    std::array<int, e.output_order> od{};
    for (std::size_t q = 0; q < e.output_order; ++q) od[q] = static_cast<int>(ext[static_cast<std::size_t>(e.output[q])]);
    tensorlev::tensor<V, tensorlev::dense_tensor<e.output_order>> out(od);
    einsum_compute<S>(out, std::get<K>(ops)...);
    return std::vector<V>(out.values().begin(), out.values().end());
  };
  const std::vector<V> got = run(std::make_index_sequence<sizeof...(Orders)>{});
  const std::vector<V> ref = naive_einsum<V>(e, ext, vals);
  std::size_t bad = got.size() != ref.size();
  for (std::size_t q = 0; q < std::min(got.size(), ref.size()); ++q) bad += got[q] != ref[q];
  if (bad) ADD_FAILURE() << S.view() << ": " << bad << " entries differ";
  return bad;
}

TEST(Einsum, TableIvKernelsAsOneStatement) {
  // Seed 002's Table IV at reduced sizes, in doubles and complex doubles
  // (integer parts: every sum exact), zero and one extents included.
  std::mt19937_64 rng(13);
  std::size_t bad = 0;
  for (long long n : {0, 1, 3, 5}) {
    const long long r = n == 0 ? 2 : n + 1;
    bad += table_iv_case<"ij,jk->ik", double, 2, 2>({n, r, n}, rng);
    bad += table_iv_case<"ij,jk,kl->il", std::complex<double>, 2, 2, 2>({n, r, n, r}, rng);
    bad += table_iv_case<"ij,jk,kl,lm->im", double, 2, 2, 2, 2>({n, r, n, r, n}, rng);
    bad += table_iv_case<"ijk,ja,ka->ia", std::complex<double>, 3, 2, 2>({n, r, n, r}, rng);
    bad += table_iv_case<"ijk,ia,ka->ja", double, 3, 2, 2>({n, r, n, r}, rng);
    bad += table_iv_case<"ijk,ia,ja->ka", std::complex<double>, 3, 2, 2>({n, r, n, r}, rng);
  }
  for (long long n : {1, 2, 3}) {
    bad += table_iv_case<"ijklm,ja,ka,la,ma->ia", double, 5, 2, 2, 2, 2>({n, n + 1, n, 2, n, 3}, rng);
    bad += table_iv_case<"ijklm,ia,ja,la,ma->ka", std::complex<double>, 5, 2, 2, 2, 2>({n, n + 1, n, 2, n, 2}, rng);
    bad += table_iv_case<"ijklm,ia,ja,ka,la->ma", double, 5, 2, 2, 2, 2>({n, 2, n, n + 1, 2, 3}, rng);
    bad += table_iv_case<"ijklm,jb,kc,ld,me->ibcde", std::complex<double>, 5, 2, 2, 2, 2>(
        {n, 2, n, 2, n, 2, 2, 1, 2}, rng);
  }
  EXPECT_EQ(bad, 0u);
}

template <class V>
std::size_t path_case(const std::string& s, std::mt19937_64& rng) {
  const einsum_spec e = parse_einsum_checked(s);
  std::vector<long long> ext(e.nindices);
  for (auto& x : ext) x = rng() % 10 == 0 ? 0 : 1 + static_cast<long long>(rng() % 3);
  std::vector<std::vector<V>> vals(e.ninputs);
  std::vector<dense_operand<V>> ops(e.ninputs);
  for (std::size_t k = 0; k < e.ninputs; ++k) {
    for (std::size_t d = 0; d < e.input_order[k]; ++d) {
      ops[k].idx.push_back(e.input[k][d]);
      ops[k].ext.push_back(ext[static_cast<std::size_t>(e.input[k][d])]);
    }
    vals[k].resize(static_cast<std::size_t>(ops[k].size()));
    for (auto& x : vals[k]) x = entry<V>(rng);
    ops[k].data = vals[k];
  }
  const contraction_path p = optimal_path(e, ext);
  const dense_operand<V> got = run_path<V>(e, p, ext, ops);
  const std::vector<V> ref = naive_einsum<V>(e, ext, vals);
  if (got.data != ref) {
    ADD_FAILURE() << s << " with extents " << ::testing::PrintToString(ext) << ":\n" << p.to_string(e);
    return 1;
  }
  return 0;
}

TEST(Einsum, RunPathMatchesEveryIndexCombination) {
  // Random einsums (batch indices, indices summed inside one operand,
  // full contractions, one input) run step by step along their optimal
  // path, against the loop over every index combination.
  std::mt19937_64 rng(17);
  std::size_t bad = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::string s = random_einsum(rng, "abcdef", 4, true);
    bad += trial % 2 ? path_case<double>(s, rng) : path_case<std::complex<double>>(s, rng);
  }
  bad += path_case<double>("ijk,ja,ka,al->il", rng);
  EXPECT_EQ(bad, 0u);
  const std::vector<long long> ext{2, 2};
  EXPECT_THROW((void)contract_pair(dense_operand<double>{{0}, {3}, {1, 2, 3}}, dense_operand<double>{{1}, {2}, {1, 2}},
                                   {0, 1}, ext),
               tensorlev::shape_error);
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
  // An access set over every index (a KRP's output, both operands of a dot
  // product): rho = 1 / (their count), reached as X grows without bound.
  const soap_tile krp = soap_tiling(contraction_group::of(parse_einsum("ja,ka->jka")), 512);
  EXPECT_EQ(krp.rho, 1.0);
  EXPECT_TRUE(std::isinf(krp.x0));
  EXPECT_EQ(soap_tiling(contraction_group::of(parse_einsum("ij,ij->")), 512).rho, 0.5);
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

TEST(Soap, TableIIBlockOwnership) {
  // P = 8, N = 10, the MTTKRP term of ijk,ja,ka,al->il on (2,2,2,1) over
  // (i,j,k,a), ranks row-major: rank 0 (0,0,0,0) holds X[:5,:5,:5] and
  // A[:5,:], rank 1 (0,0,1,0) X[:5,:5,5:] and A[:5,:], ..., rank 7
  // (1,1,1,0) X[5:,5:,5:] and A[5:,:] (seed 002, Table II).
  const einsum_spec e = parse_einsum("ijk,ja,ka,al->il");
  const std::vector<long long> ext(e.nindices, 10);
  contraction_group g;
  g.access = {e.input_mask(0), e.input_mask(1), e.input_mask(2), 0b01001};
  g.indices = 0b01111;
  const soap_grid_result grid = soap_grid(g, ext, 8);
  for (long long r = 0; r < 8; ++r) {
    const auto [lo, hi] = grid_block(ext, g.indices, grid.p, r);
    const long long ci = r / 4, cj = (r / 2) % 2, ck = r % 2;
    // X(i,j,k): indices 0, 1, 2; A(j,a): indices 1, 3 (a unsplit: all of it).
    EXPECT_EQ(lo[0], 5 * ci) << r;
    EXPECT_EQ(hi[0], 5 * ci + 5) << r;
    EXPECT_EQ(lo[1], 5 * cj) << r;
    EXPECT_EQ(lo[2], 5 * ck) << r;
    EXPECT_EQ(lo[3], 0) << r;
    EXPECT_EQ(hi[3], 10) << r;
  }
  // Uneven: 7 over 3 ranks is blocks of 3, 3, 1; an index outside the grid
  // is whole.
  std::array<long long, max_einsum_indices> p{};
  p.fill(1);
  p[0] = 3;
  const auto [lo2, hi2] = grid_block(std::vector<long long>{7, 4}, 0b01, p, 2);
  EXPECT_EQ(lo2[0], 6);
  EXPECT_EQ(hi2[0], 7);
  EXPECT_EQ(lo2[1], 0);
  EXPECT_EQ(hi2[1], 4);
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
