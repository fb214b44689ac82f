// Distributed dense C = A B on a 2D grid of ranks (run with mpirun -n 4):
// tensorlev's SUMMA and Cannon kernels, the SUMMA and Cannon schedules
// (dist/schedule.hpp), SUMMA as a statement schedule (dist/compute.hpp:
// compute<"ij", "ik", "kj"> with k divided), and ScaLAPACK's pdgemm with
// one block per process (the same layout), all with the same BLAS for the
// local products; and the einsum "ij,jk->ik" (dist/einsum_run.hpp) on its
// SOAP grid, its inputs built once by the same formula on their first
// replicas and broadcast to the others inside the timed part
// (`inputs_from_owners`; the time from a barrier after the building,
// `compute_seconds`; the result left in blocks).
// Names: dist_gemm/<impl>/<n>. Every implementation's C is checked
// against ScaLAPACK's before timing (the einsum's: 64 entries per rank
// against their sums).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "mpi_bench.hpp"
#include "tensorlev/dist.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridexit(int context);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* context, const int* lld, int* info);
void pdgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
}

namespace {
namespace td = tensorlev::dist;
using tensorlev::dense_row_major;
using tensorlev::tensor;
using tiles = td::distribution<"xy->xy">;

double value_a(long long r, long long c) { return static_cast<double>((r * 7 + c * 3) % 11) - 5.0; }
double value_b(long long r, long long c) { return static_cast<double>((r * 5 + c * 2) % 13) - 6.0; }

// One problem: tensorlev tiles and ScaLAPACK's column-major blocks.
struct problem {
  int n;
  td::machine_grid grid{MPI_COMM_WORLD, {0, 0}};
  std::optional<td::dist_tensor<double, dense_row_major, tiles>> A, B, C;
  std::vector<double> a_cm, b_cm, c_cm;  // ScaLAPACK local blocks (column-major)
  int desc_a[9]{}, desc_b[9]{}, desc_c[9]{};
  int ctx = 0;

  explicit problem(int size) : n(size) {
    // Each rank fills its own tile (no global tensor is built).
    const auto make = [&](auto value) {
      td::distribution_map<tiles> map({n, n}, grid.extents());
      const auto box = *map.box_of(grid.coord_vector());
      tensor<double, dense_row_major> t({static_cast<int>(box.extent(0)), static_cast<int>(box.extent(1))});
      for (long long r = 0; r < box.extent(0); ++r)
        for (long long c = 0; c < box.extent(1); ++c)
          t.values()[static_cast<std::size_t>(r * box.extent(1) + c)] = value(box.lo[0] + r, box.lo[1] + c);
      return td::dist_tensor<double, dense_row_major, tiles>(grid, map, std::move(t));
    };
    A.emplace(make(value_a));
    B.emplace(make(value_b));
    C.emplace(make([](long long, long long) { return 0.0; }));
    // ScaLAPACK: the same grid (row-major ranks), one block per process.
    const int gr = grid.dims()[0];
    const int gc = grid.dims()[1];
    Cblacs_get(0, 0, &ctx);
    Cblacs_gridinit(&ctx, "Row", gr, gc);
    const int mb = (n + gr - 1) / gr;
    const int nb = (n + gc - 1) / gc;
    const auto box = *A->box();
    const int lr = static_cast<int>(box.extent(0));
    const int lc = static_cast<int>(box.extent(1));
    const int lld = std::max(1, lr);
    const int zero = 0;
    int info = 0;
    descinit_(desc_a, &n, &n, &mb, &nb, &zero, &zero, &ctx, &lld, &info);
    descinit_(desc_b, &n, &n, &mb, &nb, &zero, &zero, &ctx, &lld, &info);
    descinit_(desc_c, &n, &n, &mb, &nb, &zero, &zero, &ctx, &lld, &info);
    a_cm.resize(static_cast<std::size_t>(lr) * lc);
    b_cm.resize(a_cm.size());
    c_cm.assign(a_cm.size(), 0.0);
    for (int r = 0; r < lr; ++r)
      for (int c = 0; c < lc; ++c) {
        a_cm[static_cast<std::size_t>(c) * lr + r] = value_a(box.lo[0] + r, box.lo[1] + c);
        b_cm[static_cast<std::size_t>(c) * lr + r] = value_b(box.lo[0] + r, box.lo[1] + c);
      }
  }
  ~problem() { Cblacs_gridexit(ctx); }

  void scalapack() {
    const int one = 1;
    const double alpha = 1.0;
    const double beta = 0.0;
    pdgemm_("N", "N", &n, &n, &n, &alpha, a_cm.data(), &one, &one, desc_a, b_cm.data(), &one, &one, desc_b, &beta,
            c_cm.data(), &one, &one, desc_c);
  }
  // Largest difference between tensorlev's C and ScaLAPACK's, over all ranks.
  double diff() {
    const auto box = *C->box();
    const long long lr = box.extent(0);
    double d = 0;
    for (long long r = 0; r < lr; ++r)
      for (long long c = 0; c < box.extent(1); ++c)
        d = std::max(d, std::abs(C->local().values()[static_cast<std::size_t>(r * box.extent(1) + c)] -
                                 c_cm[static_cast<std::size_t>(c * lr + r)]));
    MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return d;
  }
};

// summa and cannon are presets of the engine (matmul with SUMMA's and
// Cannon's schedules); notation is SUMMA written as C(i,j) = A(i,k) * B(k,j);
// summa_statement is the string form with q equal k steps; summa_blocks is
// SUMMA with whole blocks as panels (no 128-wide cap).
enum class impl { summa, summa_blocks, cannon, notation, summa_statement, scalapack, einsum };

// The einsum: checked on 64 entries of each rank's block, then timed
// without planning and building the inputs (compute_seconds).
void run_einsum(benchmark::State& state) {
  const long long n = state.range(0);
  const td::einsum_spec e = td::parse_einsum_checked("ij,jk->ik");
  const std::vector<long long> ext{n, n, n};
  auto fill = [](std::size_t k, const long long* x) { return k == 0 ? value_a(x[0], x[1]) : value_b(x[0], x[1]); };
  // Inputs built once by their first replicas and broadcast inside the
  // timed part, as pdgemm's start from one block per rank and move.
  const td::einsum_options opt{.gather = false, .bound = false, .fill_barrier = true, .inputs_from_owners = true};
  {
    const auto r = td::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, opt);
    double d = 0;
    const long long rows = r.local.ext.empty() ? 0 : r.local.ext[0], cols = rows ? r.local.ext[1] : 0;
    for (long long q = 0; q < 64 && rows * cols > 0; ++q) {
      const long long i = (q * 37) % rows, k = (q * 91) % cols;
      double ref = 0;
      for (long long j = 0; j < n; ++j) ref += value_a(r.local_lo[0] + i, j) * value_b(j, r.local_lo[1] + k);
      d = std::max(d, std::abs(ref - r.local.data[static_cast<std::size_t>(i * cols + k)]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (d > 1e-9 * static_cast<double>(n) * 100) {
      state.SkipWithError("einsum's result differs from the sums");
      return;
    }
    long long bytes = 0;
    for (const auto& g : r.groups) bytes += g.bytes_sent;
    state.counters["bytes"] = static_cast<double>(bytes);
  }
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto r = td::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, opt);
    double s = r.compute_seconds;
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(s);
  }
  const double nn = static_cast<double>(n);
  state.counters["GFLOPs"] = benchmark::Counter(2 * nn * nn * nn * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}

void run(benchmark::State& state, impl which) {
  if (which == impl::einsum) {
    run_einsum(state);
    return;
  }
  problem p(static_cast<int>(state.range(0)));
  const bool square = p.grid.dims()[0] == p.grid.dims()[1];
  if (!square && which == impl::cannon) {
    state.SkipWithError("Cannon needs a square grid");
    return;
  }
  const auto once = [&] {
    switch (which) {
      case impl::summa: td::summa(*p.C, *p.A, *p.B); break;
      case impl::summa_blocks: td::matmul(*p.C, *p.A, *p.B, td::statement_schedule::summa(0)); break;
      case impl::cannon: td::cannon(*p.C, *p.A, *p.B); break;
      case impl::notation: {
        using namespace tensorlev::indices;
        const auto& A = *p.A;
        const auto& B = *p.B;
        td::compute((*p.C)(i, j) = A(i, k) * B(k, j), td::statement_schedule::summa());
        break;
      }
      case impl::summa_statement:
        td::compute<"ij", "ik", "kj">(*p.C, td::statement_schedule().distribute("ij").divide('k', p.grid.dims()[1]),
                                      *p.A, *p.B);
        break;
      case impl::scalapack: p.scalapack(); break;
      case impl::einsum: break;  // run_einsum
    }
  };
  p.scalapack();
  if (which != impl::scalapack) {
    once();
    if (p.diff() > 1e-9 * p.n * 100) {
      state.SkipWithError("result differs from ScaLAPACK's");
      return;
    }
  }
  for (auto _ : state) tlbench::timed(state, once);
  const double n = static_cast<double>(p.n);
  state.counters["GFLOPs"] = benchmark::Counter(2 * n * n * n * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  state.counters["ranks"] = p.grid.size();
}

void args(benchmark::internal::Benchmark* b) {
  b->Arg(512)->Arg(1024)->Arg(2048)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (auto [name, which] : {std::pair{"dist_gemm/summa", impl::summa}, {"dist_gemm/summa_blocks", impl::summa_blocks},
                             {"dist_gemm/cannon", impl::cannon},
                             {"dist_gemm/notation", impl::notation},
                             {"dist_gemm/summa_statement", impl::summa_statement},
                             {"dist_gemm/scalapack", impl::scalapack}, {"dist_gemm/einsum", impl::einsum}})
    benchmark::RegisterBenchmark(name, run, which)->Apply(args);
  tlbench::run_all(argc, argv);
  MPI_Finalize();
  return 0;
}
