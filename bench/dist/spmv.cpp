// Distributed CSR SpMV on a real matrix (run with mpirun -n 4): tensorlev's
// row-blocked SpMV (x all-gathered, then the generated CSR kernel on each
// rank's rows), the same with a ghost exchange (ghost_spmv: only the
// entries of x each rank's columns touch) and PETSc's MatMult on the same rows of the same matrix
// (MPIAIJ built from the same CSR arrays; PETSc scatters only the entries
// of x each rank's columns touch). Names: dist_spmv/<impl>/<matrix>.
// Matrices: the .mtx files in $TENSORLEV_BENCH_MATRICES (see
// scripts/fetch-bench-matrices.sh). y is checked against PETSc's.
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mpi_bench.hpp"
#include "tensorlev/dist.hpp"

namespace {
namespace td = tensorlev::dist;
using tensorlev::csr;
using tensorlev::dense_vector;
using rows = td::distribution<"xy->x">;
using blocks = td::distribution<"x->x">;

struct problem {
  td::machine_grid grid{MPI_COMM_WORLD, {0}};
  std::optional<td::dist_tensor<double, csr, rows>> A;
  std::optional<td::dist_tensor<double, dense_vector, blocks>> x, y;
  Mat P = nullptr;
  Vec px = nullptr, py = nullptr;
  std::vector<PetscInt> rp, ci;  // PETSc's copies of the local CSR arrays

  explicit problem(const std::string& path) {
    A.emplace(td::read_matrix_market<csr, rows>(grid, path, td::split_policy::nonzeros));
    const long long m = A->dims()[0];
    const long long n = A->dims()[1];
    td::distribution_map<blocks> ymap({m}, grid.extents());
    ymap.set_splits(0, A->map().splits(0));
    // x split as y when square (as PETSc's column layout), blocked otherwise.
    td::distribution_map<blocks> xmap({n}, grid.extents());
    if (m == n) xmap.set_splits(0, A->map().splits(0));
    const auto xbox = *xmap.box_of(grid.coord_vector());
    tensorlev::tensor<double, dense_vector> xl({static_cast<int>(xbox.extent(0))});
    for (long long q = 0; q < xbox.extent(0); ++q)
      xl.values()[static_cast<std::size_t>(q)] = 1.0 + static_cast<double>((xbox.lo[0] + q) % 7);
    x.emplace(grid, xmap, std::move(xl));
    y.emplace(grid, ymap, tensorlev::tensor<double, dense_vector>({static_cast<int>(A->local().dimension(0))}));
    // PETSc from the same arrays (global column indices).
    const auto& pos = A->local().level<1>().pos();
    const auto& crd = A->local().level<1>().crd();
    rp.assign(pos.begin(), pos.end());
    ci.assign(crd.begin(), crd.end());
    const auto vals = A->local().values();
    MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, static_cast<PetscInt>(A->local().dimension(0)),
                              static_cast<PetscInt>(xbox.extent(0)), static_cast<PetscInt>(m),
                              static_cast<PetscInt>(n), rp.data(), ci.data(), vals.data(), &P);
    VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, static_cast<PetscInt>(xbox.extent(0)), static_cast<PetscInt>(n),
                          x->local().values().data(), &px);
    VecCreateMPI(PETSC_COMM_WORLD, static_cast<PetscInt>(A->local().dimension(0)), static_cast<PetscInt>(m), &py);
  }
  ~problem() {
    VecDestroy(&px);
    VecDestroy(&py);
    MatDestroy(&P);
  }
  // Largest difference from PETSc's y, relative to the largest |y|.
  double diff() {
    const PetscScalar* p = nullptr;
    VecGetArrayRead(py, &p);
    double d[2] = {0, 0};
    const auto yv = y->local().values();
    for (std::size_t q = 0; q < yv.size(); ++q) {
      d[0] = std::max(d[0], std::abs(yv[q] - p[q]));
      d[1] = std::max(d[1], std::abs(p[q]));
    }
    VecRestoreArrayRead(py, &p);
    MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return d[0] / std::max(d[1], 1e-300);
  }
};

enum class impl { allgather, ghost, petsc };

void run(benchmark::State& state, const std::string& path, impl which) {
  problem p(path);
  td::ghost_spmv<double, csr, rows, blocks> plan(*p.A, p.x->map());
  MatMult(p.P, p.px, p.py);
  if (which == impl::ghost) plan(*p.y, *p.x);
  else td::spmv_rows(*p.y, *p.A, *p.x);
  if (p.diff() > 1e-12) {
    state.SkipWithError("tensorlev's y differs from PETSc's");
    return;
  }
  for (auto _ : state) {
    switch (which) {
      case impl::petsc: tlbench::timed(state, [&] { MatMult(p.P, p.px, p.py); }); break;
      case impl::ghost: tlbench::timed(state, [&] { plan(*p.y, *p.x); }); break;
      case impl::allgather: tlbench::timed(state, [&] { td::spmv_rows(*p.y, *p.A, *p.x); }); break;
    }
  }
  long long nnz = static_cast<long long>(p.A->local().stored());
  MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  state.counters["nnz"] = static_cast<double>(nnz);
  state.counters["ranks"] = p.grid.size();
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  const char* dir = std::getenv("TENSORLEV_BENCH_MATRICES");
  std::vector<std::filesystem::path> files;
  if (dir != nullptr && std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (auto [name, which] : {std::pair{"tensorlev", impl::allgather}, {"tensorlev_ghost", impl::ghost},
                               {"petsc", impl::petsc}})
      benchmark::RegisterBenchmark(("dist_spmv/" + std::string(name) + "/" + f.stem().string()).c_str(), run,
                                   f.string(), which)
          ->Iterations(50)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  tlbench::run_all(argc, argv);
  PetscFinalize();
  MPI_Finalize();
  return 0;
}
