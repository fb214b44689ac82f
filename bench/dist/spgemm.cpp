// Distributed SpGEMM C = A A on a real matrix (run with mpirun -n 4), the
// whole product (pattern and values) per iteration:
// - tensorlev_rows: `compute(C(i,j) = A(i,k) * A(k,j),
//   distribute("i"))` with A's rows split by stored entries on a line; the
//   second operand's box is all of A, so each rank receives every stored
//   entry of A it does not hold (a dense box, not the rows its pattern
//   names), then runs the generated Gustavson kernel into its CSR rows;
// - tensorlev_summa: sparse SUMMA, A and C in CSR tiles of a 2x2 grid
//   (rows and columns split by stored entries), `statement_schedule::summa(0)`:
//   k in steps at the tiles' split points (no panel width: `summa()`'s
//   128-wide panels suit dense blocks; here each step repacks its tiles),
//   each step's tiles of A moved as entries, each rank's partial rows summed
//   in its own tile;
// - petsc: `MatMatMult(A, A, MAT_INITIAL_MATRIX, ...)` on an MPIAIJ matrix
//   built from the same rows (PETSc gathers only the rows of A each rank's
//   columns name), destroyed after each product.
// Names: dist_spgemm/<impl>/<matrix>. Matrices: the .mtx files in
// $TENSORLEV_BENCH_MATRICES but the stencil (its A A has 2.6e7 x 27 products).
// C's stored entries and Frobenius norm are checked against PETSc's before
// timing.
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
using namespace tensorlev::indices;
using rows = td::distribution<"xy->x">;
using tiles = td::distribution<"xy->xy">;

template <class D>
using dmat = td::dist_tensor<double, csr, D>;

// Stored entries and the sum of squares of the owner copies' values, over
// the grid.
template <class D>
std::pair<long long, double> checksum(const dmat<D>& C) {
  double s[2] = {0, 0};
  if (C.owner()) {
    s[0] = static_cast<double>(C.local().stored());
    for (double v : C.local().values()) s[1] += v * v;
  }
  MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {static_cast<long long>(s[0]), std::sqrt(s[1])};
}

// An empty C in A's map (the same splits).
template <class D>
dmat<D> empty_like(const td::machine_grid& g, const dmat<D>& A) {
  tensorlev::coordinate_list<double, int> none({static_cast<int>(A.dims()[0]), static_cast<int>(A.dims()[1])});
  return td::distribute_entries<csr>(g, A.map(), none);
}

struct petsc_problem {
  Mat P = nullptr;
  std::vector<PetscInt> rp, ci;
  explicit petsc_problem(const dmat<rows>& A) {
    const auto& pos = A.local().level<1>().pos();
    const auto& crd = A.local().level<1>().crd();
    rp.assign(pos.begin(), pos.end());
    ci.assign(crd.begin(), crd.end());
    const auto vals = A.local().values();
    const auto m = static_cast<PetscInt>(A.local().dimension(0));
    MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, m, static_cast<PetscInt>(A.dims()[0]),
                              static_cast<PetscInt>(A.dims()[1]), rp.data(), ci.data(), vals.data(), &P);
  }
  ~petsc_problem() { MatDestroy(&P); }
  std::pair<long long, double> product_checksum() const {
    Mat C = nullptr;
    MatMatMult(P, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C);
    MatInfo info;
    MatGetInfo(C, MAT_GLOBAL_SUM, &info);
    PetscReal norm = 0;
    MatNorm(C, NORM_FROBENIUS, &norm);
    MatDestroy(&C);
    return {static_cast<long long>(info.nz_used), static_cast<double>(norm)};
  }
};

enum class impl { rows, summa, petsc };

bool agrees(std::pair<long long, double> a, std::pair<long long, double> b) {
  return a.first == b.first && std::abs(a.second - b.second) <= 1e-10 * std::max(1.0, std::abs(b.second));
}

void run(benchmark::State& state, const std::string& path, impl which) {
  td::machine_grid line(MPI_COMM_WORLD, {0});
  const auto A = td::read_matrix_market<csr, rows>(line, path, td::split_policy::nonzeros);
  if (A.dims()[0] != A.dims()[1]) {
    state.SkipWithError("not square");
    return;
  }
  const petsc_problem pp(A);
  const auto want = pp.product_checksum();
  if (which == impl::petsc) {
    for (auto _ : state)
      tlbench::timed(state, [&] {
        Mat C = nullptr;
        MatMatMult(pp.P, pp.P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C);
        MatDestroy(&C);
      });
  } else if (which == impl::rows) {
    auto C = empty_like(line, A);
    compute(C(i, j) = A(i, k) * A(k, j), td::statement_schedule().distribute("i"));
    if (!agrees(checksum(C), want)) {
      state.SkipWithError("tensorlev's C differs from PETSc's");
      return;
    }
    for (auto _ : state)
      tlbench::timed(state, [&] { compute(C(i, j) = A(i, k) * A(k, j), td::statement_schedule().distribute("i")); });
  } else {
    td::machine_grid plane(MPI_COMM_WORLD, {0, 0});
    const auto T = td::read_matrix_market<csr, tiles>(plane, path, td::split_policy::nonzeros);
    auto C = empty_like(plane, T);
    compute(C(i, j) = T(i, k) * T(k, j), td::statement_schedule::summa(0));
    if (!agrees(checksum(C), want)) {
      state.SkipWithError("tensorlev's C differs from PETSc's");
      return;
    }
    for (auto _ : state)
      tlbench::timed(state, [&] { compute(C(i, j) = T(i, k) * T(k, j), td::statement_schedule::summa(0)); });
  }
  state.counters["nnz_C"] = static_cast<double>(want.first);
  state.counters["ranks"] = line.size();
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  const char* dir = std::getenv("TENSORLEV_BENCH_MATRICES");
  std::vector<std::filesystem::path> files;
  if (dir != nullptr && std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".mtx" && e.path().stem() != "stencil27_100") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (auto [name, which] :
         {std::pair{"tensorlev_rows", impl::rows}, {"tensorlev_summa", impl::summa}, {"petsc", impl::petsc}})
      benchmark::RegisterBenchmark(("dist_spgemm/" + std::string(name) + "/" + f.stem().string()).c_str(), run,
                                   f.string(), which)
          ->Iterations(5)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  tlbench::run_all(argc, argv);
  PetscFinalize();
  MPI_Finalize();
  return 0;
}
