// Debian's Kokkos Kernels (Serial) on the kernels and Matrix Market inputs of
// tensorlev's own benchmarks, so that the figures can be set side by side:
//
//   spmv/kokkos_kernels/csr/<matrix>/real_time    y = A x          (KokkosSparse::spmv)
//   add/kokkos_kernels/csr/<matrix>/real_time     C = A + A^T      (spadd_symbolic + spadd_numeric)
//   spgemm/kokkos_kernels/csr/<matrix>/real_time  C = A * A        (spgemm_symbolic + spgemm_numeric)
//
// Usage:
//   bench_kokkos_kernels [benchmark flags] [kokkos flags] a.mtx b.mtx ...
//   TENSORLEV_BENCH_MATRICES=dir bench_kokkos_kernels [flags]   (every dir/*.mtx, by name)
//
// The inputs follow bench/suite.hpp (tensorlev's bench_suite_* binaries): the
// files given on the command line, or else every *.mtx in
// $TENSORLEV_BENCH_MATRICES, then the synthetic `stencil27_<n>` (n^3 rows, n
// from $TENSORLEV_BENCH_STENCIL, default 100, 2.6e7 nonzeros; 0 leaves it
// out). <matrix> is the file's name without ".mtx". add and spgemm are
// registered for square matrices only, spgemm only up to 3e6 entries in the
// file's coordinate list (as bench/suite_sparse.cpp counts them). Matrices are
// read with tensorlev's Matrix Market reader (symmetric files expanded,
// duplicates summed) and packed with tensorlev::pack<csr>, then copied into
// KokkosSparse::CrsMatrix<double, int, Device<Serial, HostSpace>, void, int>
// (int row offsets, like tensorlev's CSR). Every result is checked once,
// outside the timed loops, against tensorlev or a hand-written loop; a
// mismatch aborts the run.
//
// Environment: KK_SPGEMM_ALGO=<name> picks another SpGEMM algorithm
// (SPGEMM_KK, SPGEMM_KK_MEMORY, ... as KokkosSparse::StringToSPGEMMAlgorithm
// reads them); the default, SPGEMM_DEFAULT, is SPGEMM_SERIAL on Serial. The
// algorithm used is reported as the benchmarks' label.
#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spadd.hpp>
#include <KokkosSparse_spgemm.hpp>
#include <KokkosSparse_spmv.hpp>

#include <memory>

#include "../inputs.hpp"
#include "../standalone.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

namespace {

using exec_space = Kokkos::Serial;
using mem_space = Kokkos::HostSpace;
using device = Kokkos::Device<exec_space, mem_space>;
// int offsets: pre-instantiated in Debian's library (KOKKOSKERNELS_INST_OFFSET_INT)
// and the same width as tensorlev's pos array, so the byte counts match.
using crs = KokkosSparse::CrsMatrix<double, int, device, void, int>;
using handle_type = KokkosKernels::Experimental::KokkosKernelsHandle<int, int, double, exec_space, mem_space, mem_space>;
using tl_csr = tensorlev::tensor<double, tensorlev::csr>;

constexpr double spgemm_max_nnz = 3e6;

// A failed check or an unusable input (tlbench::die): main reports it, frees
// every View, finalizes Kokkos and exits with status 1.
using tlbench::die;

struct matrix_case {
  explicit matrix_case(tl_csr a) : A(std::move(a)) {}
  std::string name;
  int rows = 0;
  int cols = 0;
  std::size_t nnz = 0;          // stored entries of A (duplicates summed)
  std::size_t list_size = 0;    // entries of the coordinate list (the spgemm cut-off)
  tl_csr A;                   // tensorlev CSR of the file
  std::unique_ptr<tl_csr> B;  // A's transpose (square matrices only)
  crs A_kk;
  crs B_kk;
};

// Kokkos Views live in here and must die before Kokkos::finalize.
std::vector<std::unique_ptr<matrix_case>>* cases = nullptr;
KokkosSparse::SPGEMMAlgorithm spgemm_algo = KokkosSparse::SPGEMM_DEFAULT;
std::string spgemm_algo_name;

crs to_kokkos(const tl_csr& t, const std::string& label) {
  const auto& lv = t.level<1>();
  const std::vector<int>& pos = lv.pos();
  const std::vector<int>& crd = lv.crd();
  const auto vals = t.values();
  const int m = t.dimension(0);
  const int n = t.dimension(1);
  const int nnz = static_cast<int>(vals.size());
  crs::row_map_type::non_const_type row_map(Kokkos::ViewAllocateWithoutInitializing(label + ".row_map"), m + 1);
  crs::index_type::non_const_type entries(Kokkos::ViewAllocateWithoutInitializing(label + ".entries"), nnz);
  crs::values_type::non_const_type values(Kokkos::ViewAllocateWithoutInitializing(label + ".values"), nnz);
  for (int r = 0; r <= m; ++r) row_map(r) = pos[static_cast<std::size_t>(r)];
  for (int q = 0; q < nnz; ++q) {
    entries(q) = crd[static_cast<std::size_t>(q)];
    values(q) = vals[static_cast<std::size_t>(q)];
  }
  return crs(label, m, n, nnz, values, row_map, entries);
}

// The timed operations (also run once for the checks).
// The view-level spadd: the CrsMatrix overload of spadd_symbolic in Kokkos
// Kernels 3.4 builds C with CrsMatrix(label, graph), which sets numCols to
// 1 + the largest entry of C's *uninitialized* column array (a garbage shape
// and an extra O(nnz) pass); here C gets A's shape, as a user would write it.
crs kk_add(const crs& A, const crs& B) {
  using row_map_t = crs::row_map_type::non_const_type;
  using entries_t = crs::index_type::non_const_type;
  using values_t = crs::values_type::non_const_type;
  handle_type kh;
  kh.create_spadd_handle(true);  // tensorlev's CSR keeps each row sorted
  row_map_t row_map(Kokkos::ViewAllocateWithoutInitializing("C.row_map"), A.numRows() + 1);
  KokkosSparse::Experimental::spadd_symbolic<handle_type, crs::row_map_type::const_type,
                                             crs::index_type::const_type, crs::row_map_type::const_type,
                                             crs::index_type::const_type, row_map_t, entries_t>(
      &kh, A.graph.row_map, A.graph.entries, B.graph.row_map, B.graph.entries, row_map);
  const int nnz = static_cast<int>(kh.get_spadd_handle()->get_c_nnz());
  entries_t entries(Kokkos::ViewAllocateWithoutInitializing("C.entries"), nnz);
  values_t values(Kokkos::ViewAllocateWithoutInitializing("C.values"), nnz);
  KokkosSparse::Experimental::spadd_numeric(&kh, A.graph.row_map, A.graph.entries, A.values, 1.0, B.graph.row_map,
                                            B.graph.entries, B.values, 1.0, row_map, entries, values);
  kh.destroy_spadd_handle();
  return crs("C", A.numRows(), A.numCols(), nnz, values, row_map, entries);
}

crs kk_spgemm(const crs& A) {
  handle_type kh;
  kh.create_spgemm_handle(spgemm_algo);
  crs C;
  KokkosSparse::spgemm_symbolic(kh, A, false, A, false, C);
  KokkosSparse::spgemm_numeric(kh, A, false, A, false, C);  // destroys the SpGEMM handle
  return C;
}

std::string algo_name(KokkosSparse::SPGEMMAlgorithm a) {
  switch (a) {
    case KokkosSparse::SPGEMM_DEFAULT: return "SPGEMM_DEFAULT";
    case KokkosSparse::SPGEMM_DEBUG: return "SPGEMM_DEBUG";
    case KokkosSparse::SPGEMM_SERIAL: return "SPGEMM_SERIAL";
    case KokkosSparse::SPGEMM_KK: return "SPGEMM_KK";
    case KokkosSparse::SPGEMM_KK_DENSE: return "SPGEMM_KK_DENSE";
    case KokkosSparse::SPGEMM_KK_MEMORY: return "SPGEMM_KK_MEMORY";
    case KokkosSparse::SPGEMM_KK_LP: return "SPGEMM_KK_LP";
    default: return "SPGEMMAlgorithm(" + std::to_string(static_cast<int>(a)) + ")";
  }
}

// ---------------------------------------------------------------------------
// Checks (once per matrix, outside the timed loops).

using tlbench::stencil27;
using tlbench::x_value;

void check_spmv(const matrix_case& c) {
  Kokkos::View<double*, device> x("x", c.cols), y("y", c.rows);
  for (int j = 0; j < c.cols; ++j) x(j) = x_value(j);
  KokkosSparse::spmv("N", 1.0, c.A_kk, x, 0.0, y);
  tlbench::check_rows("spmv Kokkos Kernels " + c.name, c.rows, c.A.level<1>().pos().data(),
                      c.A.level<1>().crd().data(), c.A.values().data(), x_value, y.data());
}

tlbench::summary summarize(const crs& C) {
  return tlbench::summarize(std::span<const double>(C.values.data(), C.values.extent(0)));
}

void compare(const std::string& what, const tlbench::summary& kk, const tlbench::summary& tl) {
  tlbench::compare(what, "Kokkos Kernels", kk, tl);
}

void check_add(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({c.rows, c.cols}));
  C(i, j) = c.A(i, j) + (*c.B)(i, j);
  const crs K = kk_add(c.A_kk, c.B_kk);
  if (K.numRows() != c.rows || K.numCols() != c.cols) die("add check failed for " + c.name + ": wrong shape");
  compare("add " + c.name, summarize(K), tlbench::summarize(C.values()));
}

void check_spgemm(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({c.rows, c.cols}));
  C(i, k) = c.A(i, j) * c.A(j, k);
  const crs K = kk_spgemm(c.A_kk);
  if (K.numRows() != c.rows || K.numCols() != c.cols) die("spgemm check failed for " + c.name + ": wrong shape");
  compare("spgemm " + c.name, summarize(K), tlbench::summarize(C.values()));
}

// ---------------------------------------------------------------------------
// Benchmarks.

void set_counters(benchmark::State& state, const matrix_case* c) { tlbench::set_counters(state, c->nnz); }

void bm_spmv(benchmark::State& state, const matrix_case* c) {
  Kokkos::View<double*, device> x("x", c->cols), y("y", c->rows);
  for (int j = 0; j < c->cols; ++j) x(j) = x_value(j);
  for (auto _ : state) {
    KokkosSparse::spmv("N", 1.0, c->A_kk, x, 0.0, y);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * tlbench::spmv_bytes(c->nnz, c->rows, c->cols));
  set_counters(state, c);
}

void bm_add(benchmark::State& state, const matrix_case* c) {
  std::size_t out = 0;
  for (auto _ : state) {
    crs C = kk_add(c->A_kk, c->B_kk);
    benchmark::DoNotOptimize(C.values.data());
    benchmark::ClobberMemory();
    out = C.nnz();
  }
  set_counters(state, c);
  state.counters["out_nnz"] = static_cast<double>(out);
}

void bm_spgemm(benchmark::State& state, const matrix_case* c) {
  std::size_t out = 0;
  for (auto _ : state) {
    crs C = kk_spgemm(c->A_kk);
    benchmark::DoNotOptimize(C.values.data());
    benchmark::ClobberMemory();
    out = C.nnz();
  }
  set_counters(state, c);
  state.counters["out_nnz"] = static_cast<double>(out);
  state.SetLabel(spgemm_algo_name);
}

// ---------------------------------------------------------------------------
// Inputs.

std::unique_ptr<matrix_case> make_case(std::string name, const tensorlev::coordinate_list<double, int>& list) {
  if (list.order() != 2) throw tensorlev::shape_error(name + ": not a matrix");
  auto c = std::make_unique<matrix_case>(tensorlev::pack<tensorlev::csr>(list));
  c->name = std::move(name);
  c->list_size = list.size();
  c->rows = list.dims()[0];
  c->cols = list.dims()[1];
  c->nnz = c->A.stored();
  c->A_kk = to_kokkos(c->A, c->name + ".A");
  if (c->rows == c->cols) {
    std::vector<int> tc(list.raw_coords().size());
    const std::vector<int>& lc = list.raw_coords();
    for (std::size_t e = 0; e < list.size(); ++e) tc[2 * e] = lc[2 * e + 1], tc[2 * e + 1] = lc[2 * e];
    tensorlev::coordinate_list<double, int> tlist({c->cols, c->rows}, std::move(tc), list.raw_values());
    c->B = std::make_unique<tl_csr>(tensorlev::pack<tensorlev::csr>(tlist));
    c->B_kk = to_kokkos(*c->B, c->name + ".B");
  }
  return c;
}

using tlbench::common_options;
using tlbench::stencil_size;

bool run_spgemm(const matrix_case& c) { return c.B && static_cast<double>(c.list_size) <= spgemm_max_nnz; }

}  // namespace

int main(int argc, char** argv) {
  bool kokkos = false;
  cases = new std::vector<std::unique_ptr<matrix_case>>();
  const int rc = tlbench::benchmark_main(argc, argv, "bench_kokkos_kernels", [&](int& n, char** args) {
    Kokkos::initialize(n, args);  // removes --kokkos-* flags
    kokkos = true;
    if (const char* a = std::getenv("KK_SPGEMM_ALGO"); a != nullptr && *a != '\0') {
      std::string s = a;  // takes a non-const reference; unknown names give SPGEMM_DEFAULT
      spgemm_algo = KokkosSparse::StringToSPGEMMAlgorithm(s);
    }
    {
      handle_type kh;
      kh.create_spgemm_handle(spgemm_algo);
      spgemm_algo_name = algo_name(kh.get_spgemm_handle()->get_algorithm_type());
      kh.destroy_spgemm_handle();
    }
    *cases = tlbench::load_inputs(n, args, "TENSORLEV_BENCH_MATRICES", ".mtx", "bench_kokkos_kernels",
                                  [](const std::string& path, const std::string& name) {
                                    return make_case(name, tensorlev::io::read_matrix_market<double, int>(path));
                                  });
    tlbench::add_stencil(*cases, make_case);
    if (cases->empty())
      die("no matrices: pass .mtx paths after the flags, set TENSORLEV_BENCH_MATRICES to a folder, "
          "or leave TENSORLEV_BENCH_STENCIL unset or positive");
    for (const auto& c : *cases) {
      check_spmv(*c);
      if (c->B) check_add(*c);
      if (run_spgemm(*c))
        check_spgemm(*c);
      else if (c->B)
        std::fprintf(stderr, "%s: spgemm left out (over 3e6 nonzeros)\n", c->name.c_str());
    }
    for (const auto& c : *cases)
      benchmark::RegisterBenchmark(("spmv/kokkos_kernels/csr/" + c->name).c_str(), bm_spmv, c.get())
          ->Apply(common_options);
    for (const auto& c : *cases)
      if (c->B)
        benchmark::RegisterBenchmark(("add/kokkos_kernels/csr/" + c->name).c_str(), bm_add, c.get())
            ->Apply(common_options);
    for (const auto& c : *cases)
      if (run_spgemm(*c))
        benchmark::RegisterBenchmark(("spgemm/kokkos_kernels/csr/" + c->name).c_str(), bm_spgemm, c.get())
            ->Apply(common_options);
    benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
    benchmark::AddCustomContext("kokkos_execution_space", exec_space::name());
    benchmark::AddCustomContext("kokkos_kernels_spgemm_algorithm", spgemm_algo_name);
  });
  delete cases;  // frees every View before Kokkos::finalize
  cases = nullptr;
  if (kokkos) Kokkos::finalize();
  return rc;
}
