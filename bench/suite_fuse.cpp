// Fusion across statements (issue 20): fused against unfused chains of
// statements, and conjugate gradient against Eigen's, in one binary:
//
//   chain/<impl>/dense/vec<n>   c = a + b; d = 2 c - a; s = c . d over
//                               vectors of n (TENSORLEV_BENCH_CHAIN, default
//                               2^23: 64 MB each, out of cache), and of
//                               TENSORLEV_BENCH_CHAIN_CACHED (default 2^16:
//                               512 KB each, in cache; at most n), where
//                               what the loop loads counts, not the bus
//   chain_temp/<impl>/...       the same with c and d temporaries: only s
//                               is kept (fuse substitutes c and d into the
//                               dot: one statement, one loop; the `_kept`
//                               impls keep them: each chunk's rows in the
//                               workspace, never allocated)
//   cg/<impl>/csr/<matrix>      20 CG iterations (x = 0 first) on the
//                               matrix made symmetric positive definite
//                               (inputs.hpp, make_spd; bench/peers'
//                               bench_petsc solves the same system with
//                               PETSc); a CG iteration takes real_time / 20
//   cg/<impl>_<f>/<f>/<matrix>  the same with A in another format f: rows8
//                               (grouped_rows<8>), sell8 (sell<8>) or sell8s
//                               (sell_sigma<8, 256>), each where it stores
//                               at most 2x the nonzeros (sell8s: and less
//                               than 0.9x SELL-8's slots) (impls
//                               tensorlev_<f>, tensorlev_<f>_unfused,
//                               tensorlev_kokkos_<f>,
//                               tensorlev_kokkos_<f>_unfused: as the csr
//                               ones; the peers' CSR times are the csr rows')
//
// Impls: `tensorlev` (fuse: the chain as one loop nest, CG as three an
// iteration), `tensorlev_unfused` (one statement at a time, as `=` runs
// it: three and six loop nests; CG with a temporary for the new p), `hand`
// (the fused loops written by hand over the arrays), `eigen` (Eigen 3.4:
// vector expressions for the chain, evaluated as three statements like
// the unfused code; ConjugateGradient<RowMajor, Lower|Upper,
// IdentityPreconditioner>, the same unpreconditioned algorithm, with its
// own per-iteration copy and dot for the preconditioner step), and the
// two tensorlev ones on Kokkos threads (`tensorlev_kokkos`,
// `tensorlev_kokkos_unfused`).
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "suite.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/fuse.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace tlbench {
namespace {

using vec = tensor<double, dense_vector>;
constexpr int cg_iterations = 20;

bool fused_impl(const std::string& impl) { return impl == "tensorlev" || impl == "tensorlev_kokkos"; }
bool kokkos_impl(const std::string& impl) { return impl.rfind("tensorlev_kokkos", 0) == 0; }

executor executor_of(const std::string& impl) {
  static const kokkos_executor<> kokkos;  // created after Kokkos::initialize (first use in a benchmark)
  return kokkos_impl(impl) ? executor(kokkos) : serial;
}

void counters(benchmark::State& state, const std::string& impl, double items) {
  state.counters["threads"] = kokkos_impl(impl) ? Kokkos::DefaultHostExecutionSpace().concurrency() : 1;
  state.SetItemsProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * items));
}

// ---- chain -------------------------------------------------------------------

void chain(benchmark::State& state, const std::string& impl, int n) {
  vec a({n}), b({n}), c({n}), d({n});
  for (int x = 0; x < n; ++x) a.values()[x] = 1.0 + (x % 7), b.values()[x] = 0.5 * (x % 5);
  scalar<double> s;
  const executor ex = executor_of(impl);
  Eigen::Map<Eigen::VectorXd> ea(a.values().data(), n), eb(b.values().data(), n), ec(c.values().data(), n),
      ed(d.values().data(), n);
  for (auto _ : state) {
    if (impl == "hand") {
      const double* pa = a.values().data();
      const double* pb = b.values().data();
      double* pc = c.values().data();
      double* pd = d.values().data();
      double acc = 0;
      for (int x = 0; x < n; ++x) {
        const double cx = pa[x] + pb[x];
        const double dx = 2.0 * cx - pa[x];
        pc[x] = cx;
        pd[x] = dx;
        acc += cx * dx;
      }
      s.value() = acc;
    } else if (impl == "eigen") {
      ec.noalias() = ea + eb;
      ed.noalias() = 2.0 * ec - ea;
      s.value() = ec.dot(ed);
    } else if (fused_impl(impl)) {
      fuse(ex, defer(c(i)) = a(i) + b(i), defer(d(i)) = 2.0 * c(i) - a(i), defer(s()) = c(i) * d(i));
    } else {
      compute(ex, c(i), a(i) + b(i));
      compute(ex, d(i), 2.0 * c(i) - a(i));
      compute(ex, s(), c(i) * d(i));
    }
    benchmark::DoNotOptimize(s.value());
    benchmark::ClobberMemory();
  }
  counters(state, impl, n);
  state.counters["bytes_per_row_fused"] = 32;    // read a, b; write c, d
  state.counters["bytes_per_row_unfused"] = 64;  // (a, b, c) + (c, a, d) + (c, d)
}

// The same chain when only s is wanted: c and d are temporaries
// (fuse: never allocated; unfused: vectors; Eigen: one lazy expression,
// evaluated in one loop; hand: one loop).
void chain_temp(benchmark::State& state, const std::string& impl, int n) {
  vec a({n}), b({n});
  for (int x = 0; x < n; ++x) a.values()[x] = 1.0 + (x % 7), b.values()[x] = 0.5 * (x % 5);
  scalar<double> s;
  const executor ex = executor_of(impl);
  Eigen::Map<Eigen::VectorXd> ea(a.values().data(), n), eb(b.values().data(), n);
  // Each of its own type, so that fuse substitutes both (one writer a type).
  temporary<double, 1, int, struct chain_c> c({n});
  temporary<double, 1, int, struct chain_d> d({n});
  const bool kept = impl.find("_kept") != std::string::npos;
  vec cv, dv;
  if (!fused_impl(impl) && !kept) cv = vec({n}), dv = vec({n});
  for (auto _ : state) {
    if (impl == "hand") {
      const double* pa = a.values().data();
      const double* pb = b.values().data();
      double acc = 0;
      for (int x = 0; x < n; ++x) {
        const double cx = pa[x] + pb[x];
        acc += cx * (2.0 * cx - pa[x]);
      }
      s.value() = acc;
    } else if (impl == "eigen") {
      s.value() = (ea + eb).dot(2.0 * (ea + eb) - ea);
    } else if (fused_impl(impl)) {
      fuse(ex, defer(c(i)) = a(i) + b(i), defer(d(i)) = 2.0 * c(i) - a(i), defer(s()) = c(i) * d(i));
    } else if (kept) {
      fuse(keep_temporaries, ex, defer(c(i)) = a(i) + b(i), defer(d(i)) = 2.0 * c(i) - a(i), defer(s()) = c(i) * d(i));
    } else {
      compute(ex, cv(i), a(i) + b(i));
      compute(ex, dv(i), 2.0 * cv(i) - a(i));
      compute(ex, s(), cv(i) * dv(i));
    }
    benchmark::DoNotOptimize(s.value());
    benchmark::ClobberMemory();
  }
  counters(state, impl, n);
  state.counters["bytes_per_row_fused"] = 16;    // read a, b
  state.counters["bytes_per_row_unfused"] = 64;  // (a, b, c) + (c, a, d) + (c, d)
}

// ---- CG --------------------------------------------------------------------------

struct spd_matrix {
  tensor<double, csr> A;
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> E;
  std::vector<double> b;  // A * x (x_value)
  // The same matrix in the formats the SpMV suite names best on some
  // matrices (formats.hpp), each packed where it stores at most twice the
  // nonzeros; else empty. Grouped rows of 8: finite-element systems;
  // SELL-8 where neighbouring rows have similar lengths; SELL-8-sigma
  // where they do not (power-law graphs).
  std::optional<tensor<double, grouped_rows<8>>> A8;
  std::optional<tensor<double, sell<8>>> S8;
  std::optional<tensor<double, sell_sigma<8, 256>>> S8s;
};

// The formats besides CSR, by their names in the benchmarks.
constexpr const char* other_formats[] = {"rows8", "sell8", "sell8s"};

// Whether m holds A in format f (one of other_formats).
bool has_format(const spd_matrix& m, const std::string& f) {
  return f == "rows8" ? m.A8.has_value() : f == "sell8" ? m.S8.has_value() : f == "sell8s" && m.S8s.has_value();
}

// Packs A into F and keeps it in `into` where it stores at most twice A's
// nonzeros.
template <class F, class T>
void pack_if_compact(std::optional<tensor<double, F>>& into, const T& entries, std::size_t stored) {
  tensor<double, F> t = pack<F>(entries);
  if (static_cast<double>(t.values().size()) <= 2.0 * static_cast<double>(stored)) into.emplace(std::move(t));
}

// The suite's system (inputs.hpp, make_spd): the same one bench_petsc solves.
spd_matrix make_spd_matrix(const matrix_input& m) {
  spd_system sys = make_spd(m.entries);
  const int n = m.rows();
  std::vector<Eigen::Triplet<double, int>> trip;
  trip.reserve(sys.A.size());
  for (std::size_t e = 0; e < sys.A.size(); ++e) trip.emplace_back(sys.A.coords(e)[0], sys.A.coords(e)[1], sys.A.value(e));
  spd_matrix s{pack<csr>(sys.A), Eigen::SparseMatrix<double, Eigen::RowMajor, int>(n, n), std::move(sys.b), {}, {}, {}};
  s.E.setFromTriplets(trip.begin(), trip.end());
  if (static_cast<double>(grouped_values(sys.A, 8)) <= 2.0 * static_cast<double>(s.A.stored()))
    s.A8.emplace(pack<grouped_rows<8>>(sys.A));
  pack_if_compact(s.S8, sys.A, s.A.stored());
  pack_if_compact(s.S8s, sys.A, s.A.stored());
  // SELL-8-sigma only where sorting saves a tenth of SELL-8's padded slots
  // (else it is SELL-8 with a permutation to read).
  if (s.S8 && s.S8s && static_cast<double>(s.S8s->values().size()) > 0.9 * static_cast<double>(s.S8->values().size()))
    s.S8s.reset();
  return s;
}

// cg_iterations of CG from x = 0 with tensorlev statements over A (m.A or
// one of the other formats); returns r.r.
template <class Matrix>
double cg_tensorlev(const spd_matrix& m, const Matrix& A, const executor& ex, bool fused, vec& x, vec& r, vec& p,
                    vec& q, vec& next) {
  std::copy(m.b.begin(), m.b.end(), r.values().begin());
  std::copy(m.b.begin(), m.b.end(), p.values().begin());
  std::fill(x.values().begin(), x.values().end(), 0.0);
  scalar<double> pq, rr_next;
  compute(ex, rr_next(), r(i) * r(i));
  double rr = rr_next.value();
  for (int it = 0; it < cg_iterations; ++it) {
    if (fused) {
      fuse(ex, defer(q(i)) = A(i, j) * p(j), defer(pq()) = p(i) * q(i));
      const double alpha = rr / pq.value();
      fuse(ex, defer(x(i)) += alpha * p(i), defer(r(i)) += -alpha * q(i), defer(rr_next()) = r(i) * r(i));
      fuse(ex, defer(p(i)) = r(i) + (rr_next.value() / rr) * p(i));
    } else {
      compute(ex, q(i), A(i, j) * p(j));
      compute(ex, pq(), p(i) * q(i));
      const double alpha = rr / pq.value();
      compute_add(ex, x(i), alpha * p(i));
      compute_add(ex, r(i), -alpha * q(i));
      compute(ex, rr_next(), r(i) * r(i));
      compute(ex, next(i), r(i) + (rr_next.value() / rr) * p(i));
      std::swap(p, next);
    }
    rr = rr_next.value();
  }
  return rr;
}

double cg_hand(const spd_matrix& m, std::vector<double>& x, std::vector<double>& r, std::vector<double>& p,
               std::vector<double>& q) {
  const auto& pos = m.A.level<1>().pos();
  const auto& crd = m.A.level<1>().crd();
  const double* val = m.A.values().data();
  const int n = m.A.dimension(0);
  r = m.b;
  p = m.b;
  std::fill(x.begin(), x.end(), 0.0);
  double rr = 0;
  for (int k = 0; k < n; ++k) rr += r[k] * r[k];
  for (int it = 0; it < cg_iterations; ++it) {
    double pq = 0;
    for (int k = 0; k < n; ++k) {
      double acc = 0;
      for (int e = pos[k]; e < pos[k + 1]; ++e) acc += val[e] * p[crd[e]];
      q[k] = acc;
      pq += p[k] * acc;
    }
    const double alpha = rr / pq;
    double rr_next = 0;
    for (int k = 0; k < n; ++k) {
      x[k] += alpha * p[k];
      r[k] -= alpha * q[k];
      rr_next += r[k] * r[k];
    }
    const double beta = rr_next / rr;
    for (int k = 0; k < n; ++k) p[k] = r[k] + beta * p[k];
    rr = rr_next;
  }
  return rr;
}

void cg(benchmark::State& state, const std::string& impl, const std::shared_ptr<const spd_matrix>& m) {
  const int n = m->A.dimension(0);
  // `<tensorlev impl>` with `_<format>` after "tensorlev" or "tensorlev_kokkos": A in that format.
  std::string format, base = impl;
  for (const std::string f : other_formats) {
    const std::string tag = "_" + f;
    const std::size_t at = impl.find(tag);
    if (at != std::string::npos && (at + tag.size() == impl.size() || impl[at + tag.size()] == '_'))
      format = f, base = impl.substr(0, at) + impl.substr(at + tag.size());
  }
  const executor ex = executor_of(impl);
  vec x({n}), r({n}), p({n}), q({n}), next({n});
  std::vector<double> hx(n), hr(n), hp(n), hq(n);
  Eigen::Map<const Eigen::VectorXd> eb(m->b.data(), n);
  Eigen::VectorXd ex0(n);
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double, Eigen::RowMajor, int>, Eigen::Lower | Eigen::Upper,
                           Eigen::IdentityPreconditioner>
      solver;
  if (impl == "eigen") {
    solver.setMaxIterations(cg_iterations);
    solver.setTolerance(0.0);
    solver.compute(m->E);
  }
  double rr = 0;
  for (auto _ : state) {
    if (impl == "hand") {
      rr = cg_hand(*m, hx, hr, hp, hq);
    } else if (impl == "eigen") {
      ex0.setZero();
      ex0 = solver.solveWithGuess(eb, ex0);
      rr = solver.error();
    } else if (format == "rows8") {
      rr = cg_tensorlev(*m, *m->A8, ex, fused_impl(base), x, r, p, q, next);
    } else if (format == "sell8") {
      rr = cg_tensorlev(*m, *m->S8, ex, fused_impl(base), x, r, p, q, next);
    } else if (format == "sell8s") {
      rr = cg_tensorlev(*m, *m->S8s, ex, fused_impl(base), x, r, p, q, next);
    } else {
      rr = cg_tensorlev(*m, m->A, ex, fused_impl(impl), x, r, p, q, next);
    }
    benchmark::DoNotOptimize(rr);
  }
  counters(state, impl, static_cast<double>(m->A.stored()) * cg_iterations);
  state.counters["cg_iterations"] = cg_iterations;
  // Every run the same counters (Google Benchmark's CSV reporter stops at
  // a counter the first run lacked): the iterations the solver ran.
  state.counters["iterations_run"] = impl == "eigen" ? static_cast<double>(solver.iterations()) : cg_iterations;
}

void register_all(const std::vector<std::shared_ptr<const matrix_input>>& matrices) {
  const std::vector<std::string> impls{"hand",     "eigen", "tensorlev", "tensorlev_unfused", "tensorlev_kokkos",
                                       "tensorlev_kokkos_unfused"};
  const int n_out = env_int("TENSORLEV_BENCH_CHAIN", 1 << 23);
  const int n_cached = std::min(env_int("TENSORLEV_BENCH_CHAIN_CACHED", 1 << 16), n_out);
  std::vector<std::string> temp_impls = impls;
  temp_impls.insert(temp_impls.begin() + 3, "tensorlev_kept");
  temp_impls.push_back("tensorlev_kokkos_kept");
  for (const int n : n_cached < n_out ? std::vector<int>{n_out, n_cached} : std::vector<int>{n_out}) {
    for (const auto& impl : impls)
      common_options(benchmark::RegisterBenchmark(("chain/" + impl + "/dense/vec" + std::to_string(n)).c_str(),
                                                  [impl, n](benchmark::State& s) { chain(s, impl, n); }));
    for (const auto& impl : temp_impls)
      common_options(benchmark::RegisterBenchmark(("chain_temp/" + impl + "/dense/vec" + std::to_string(n)).c_str(),
                                                  [impl, n](benchmark::State& s) { chain_temp(s, impl, n); }));
  }
  for (const auto& mi : matrices) {
    if (!mi->square()) continue;
    const auto m = std::make_shared<const spd_matrix>(make_spd_matrix(*mi));
    for (const auto& impl : impls)
      common_options(benchmark::RegisterBenchmark(("cg/" + impl + "/csr/" + mi->name).c_str(),
                                                  [impl, m](benchmark::State& s) { cg(s, impl, m); }));
    for (const std::string f : other_formats)
      if (has_format(*m, f))
        for (const std::string& impl : {"tensorlev_" + f, "tensorlev_" + f + "_unfused", "tensorlev_kokkos_" + f,
                                       "tensorlev_kokkos_" + f + "_unfused"})
          common_options(benchmark::RegisterBenchmark(("cg/" + impl + "/" + f + "/" + mi->name).c_str(),
                                                      [impl, m](benchmark::State& s) { cg(s, impl, m); }));
  }
}

}  // namespace
}  // namespace tlbench

int main(int argc, char** argv) { return tlbench::suite_main(argc, argv, tlbench::register_all); }
