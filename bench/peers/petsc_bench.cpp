// PETSc's conjugate gradient (KSPCG, no preconditioner) on the systems
// bench_suite_fuse's `cg` solves (bench/inputs.hpp, make_spd): 20
// iterations from x = 0 (relative and absolute tolerances 0), one rank,
// sequential AIJ matrix over a copy of tensorlev's CSR arrays:
//
//   cg/petsc/csr/<matrix>     a CG iteration takes real_time / 20
//
// Usage as bench_peers: bench_petsc [benchmark flags] a.mtx ..., or
// TENSORLEV_BENCH_MATRICES=dir (then the stencil, TENSORLEV_BENCH_STENCIL).
// Each solve is checked once: 20 iterations ran and r.r went down.
#include <benchmark/benchmark.h>
#include <petscksp.h>

#include <memory>
#include <string>
#include <vector>

#include "../inputs.hpp"
#include "../standalone.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

namespace {

using tlbench::die;
constexpr PetscInt cg_iterations = 20;

void petsc_check(PetscErrorCode e, const char* what) {
  if (e != 0) die(std::string(what) + " failed: PETSc error " + std::to_string(static_cast<int>(e)));
}

struct cg_case {
  std::string name;
  std::vector<PetscInt> pos, crd;  // A's CSR arrays in PETSc's index type (the matrix points at them)
  std::vector<PetscScalar> val;
  std::vector<PetscScalar> b;
  std::size_t nnz = 0;
  Mat A = nullptr;
  Vec vb = nullptr, vx = nullptr;
  KSP ksp = nullptr;
  cg_case() = default;
  cg_case(const cg_case&) = delete;
  cg_case& operator=(const cg_case&) = delete;
  ~cg_case() {
    if (ksp != nullptr) KSPDestroy(&ksp);
    if (vx != nullptr) VecDestroy(&vx);
    if (vb != nullptr) VecDestroy(&vb);
    if (A != nullptr) MatDestroy(&A);
  }
};

// A case (no solver for a matrix that is not square: CG needs one).
std::unique_ptr<cg_case> make_case(const std::string& name, const tensorlev::coordinate_list<double, int>& list) {
  auto c = std::make_unique<cg_case>();
  c->name = name;
  if (list.dims()[0] != list.dims()[1]) return c;
  tlbench::spd_system sys = tlbench::make_spd(list);
  const auto A = tensorlev::pack<tensorlev::csr>(sys.A);
  const PetscInt n = A.dimension(0);
  c->pos.assign(A.level<1>().pos().begin(), A.level<1>().pos().end());
  c->crd.assign(A.level<1>().crd().begin(), A.level<1>().crd().end());
  c->val.assign(A.values().begin(), A.values().end());
  c->b.assign(sys.b.begin(), sys.b.end());
  c->nnz = A.stored();
  petsc_check(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, n, n, c->pos.data(), c->crd.data(), c->val.data(), &c->A),
              "MatCreateSeqAIJWithArrays");
  petsc_check(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, c->b.data(), &c->vb), "VecCreateSeqWithArray");
  petsc_check(VecCreateSeq(PETSC_COMM_SELF, n, &c->vx), "VecCreateSeq");
  petsc_check(KSPCreate(PETSC_COMM_SELF, &c->ksp), "KSPCreate");
  petsc_check(KSPSetOperators(c->ksp, c->A, c->A), "KSPSetOperators");
  petsc_check(KSPSetType(c->ksp, KSPCG), "KSPSetType");
  PC pc = nullptr;
  petsc_check(KSPGetPC(c->ksp, &pc), "KSPGetPC");
  petsc_check(PCSetType(pc, PCNONE), "PCSetType");
  petsc_check(KSPSetTolerances(c->ksp, 0.0, 0.0, PETSC_DEFAULT, cg_iterations), "KSPSetTolerances");
  petsc_check(KSPSetInitialGuessNonzero(c->ksp, PETSC_FALSE), "KSPSetInitialGuessNonzero");
  petsc_check(KSPSetUp(c->ksp), "KSPSetUp");
  return c;
}

// One solve; returns the iterations run.
PetscInt solve(const cg_case& c) {
  petsc_check(KSPSolve(c.ksp, c.vb, c.vx), "KSPSolve");
  PetscInt its = 0;
  petsc_check(KSPGetIterationNumber(c.ksp, &its), "KSPGetIterationNumber");
  return its;
}

void check(const cg_case& c) {
  const PetscInt its = solve(c);
  PetscReal rnorm = 0, bnorm = 0;
  petsc_check(KSPGetResidualNorm(c.ksp, &rnorm), "KSPGetResidualNorm");
  petsc_check(VecNorm(c.vb, NORM_2, &bnorm), "VecNorm");
  if (its != cg_iterations && rnorm > 1e-12 * bnorm)
    die("cg/petsc/" + c.name + ": " + std::to_string(static_cast<long long>(its)) + " iterations, not " +
        std::to_string(static_cast<long long>(cg_iterations)));
  if (!(rnorm < bnorm))
    die("cg/petsc/" + c.name + ": the residual did not go down (" + std::to_string(rnorm) + " against " +
        std::to_string(bnorm) + ")");
}

void bm_cg(benchmark::State& state, const cg_case* c) {
  PetscInt its = 0;
  for (auto _ : state) {
    its = solve(*c);
    benchmark::DoNotOptimize(its);
  }
  tlbench::set_counters(state, c->nnz * static_cast<std::size_t>(cg_iterations));
  state.counters["cg_iterations"] = static_cast<double>(cg_iterations);
  state.counters["petsc_iterations"] = static_cast<double>(its);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<cg_case>> cases;
  // PETSc (and MPI, one rank) without the command line: Google Benchmark's flags are not PETSc options.
  if (PetscInitializeNoArguments() != 0) {
    std::fprintf(stderr, "bench_petsc: PetscInitialize failed\n");
    return 1;
  }
  const int rc = tlbench::benchmark_main(argc, argv, "bench_petsc", [&](int& n, char** args) {
    cases = tlbench::load_inputs(n, args, "TENSORLEV_BENCH_MATRICES", ".mtx", "bench_petsc",
                                 [](const std::string& path, const std::string& name) {
                                   return make_case(name, tensorlev::io::read_matrix_market<double, int>(path));
                                 });
    tlbench::add_stencil(cases, make_case);
    if (cases.empty()) die("no matrices: pass .mtx paths or set TENSORLEV_BENCH_MATRICES");
    for (const auto& c : cases) {
      if (c->ksp == nullptr) continue;  // not square
      check(*c);
      const cg_case* p = c.get();
      benchmark::RegisterBenchmark(("cg/petsc/csr/" + c->name).c_str(), [p](benchmark::State& s) {
        bm_cg(s, p);
      })->Apply(tlbench::common_options);
    }
  });
  cases.clear();  // PETSc objects before PetscFinalize
  PetscFinalize();
  return rc;
}
