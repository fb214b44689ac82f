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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../inputs.hpp"
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

// A failed check or an unusable input: main reports it, frees every View,
// finalizes Kokkos and exits with status 1.
struct fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void die(const std::string& msg) { throw fatal(msg); }

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
  const std::vector<int>& pos = c.A.level<1>().pos();
  const std::vector<int>& crd = c.A.level<1>().crd();
  const auto val = c.A.values();
  for (int r = 0; r < c.rows; ++r) {
    double acc = 0, mag = 0;
    for (int q = pos[r]; q < pos[r + 1]; ++q) {
      acc += val[q] * x_value(crd[q]);
      mag += std::abs(val[q] * x_value(crd[q]));
    }
    // Same products, possibly summed in another order: 1e-10 of the row's magnitude.
    if (!(std::abs(y(r) - acc) <= 1e-10 * mag))
      die("spmv check failed for " + c.name + ": row " + std::to_string(r) + ": Kokkos Kernels gives " +
          std::to_string(y(r)) + ", the CSR loop " + std::to_string(acc));
  }
}

struct summary {
  std::size_t nnz = 0;
  double sum = 0;
  double abs_sum = 0;
};

summary summarize(std::span<const double> v) {
  summary s{v.size(), 0, 0};
  for (double d : v) s.sum += d, s.abs_sum += std::abs(d);
  return s;
}

summary summarize(const crs& C) {
  return summarize(std::span<const double>(C.values.data(), C.values.extent(0)));
}

void compare(const std::string& what, const summary& kk, const summary& tl) {
  // Sums of many terms in different orders: relative 1e-9 of the magnitude.
  const double tol = 1e-9 * std::max(tl.abs_sum, kk.abs_sum);
  if (kk.nnz != tl.nnz || !(std::abs(kk.sum - tl.sum) <= tol)) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s check failed: Kokkos Kernels nnz %zu sum %.17g, tensorlev nnz %zu sum %.17g",
                  what.c_str(), kk.nnz, kk.sum, tl.nnz, tl.sum);
    die(buf);
  }
}

void check_add(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({c.rows, c.cols}));
  C(i, j) = c.A(i, j) + (*c.B)(i, j);
  const crs K = kk_add(c.A_kk, c.B_kk);
  if (K.numRows() != c.rows || K.numCols() != c.cols) die("add check failed for " + c.name + ": wrong shape");
  compare("add " + c.name, summarize(K), summarize(C.values()));
}

void check_spgemm(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({c.rows, c.cols}));
  C(i, k) = c.A(i, j) * c.A(j, k);
  const crs K = kk_spgemm(c.A_kk);
  if (K.numRows() != c.rows || K.numCols() != c.cols) die("spgemm check failed for " + c.name + ": wrong shape");
  compare("spgemm " + c.name, summarize(K), summarize(C.values()));
}

// ---------------------------------------------------------------------------
// Benchmarks.

// Counters as bench/suite.hpp's set_counters: threads, nnz, nnz per second.
void set_counters(benchmark::State& state, const matrix_case* c) {
  state.counters["threads"] = 1;
  state.counters["nnz"] = static_cast<double>(c->nnz);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c->nnz));
}

void bm_spmv(benchmark::State& state, const matrix_case* c) {
  Kokkos::View<double*, device> x("x", c->cols), y("y", c->rows);
  for (int j = 0; j < c->cols; ++j) x(j) = x_value(j);
  for (auto _ : state) {
    KokkosSparse::spmv("N", 1.0, c->A_kk, x, 0.0, y);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const auto nnz = static_cast<std::int64_t>(c->nnz);
  const std::int64_t bytes = 8 * nnz + 4 * nnz + 4 * (std::int64_t{c->rows} + 1) + 8 * std::int64_t{c->cols} +
                             8 * std::int64_t{c->rows};
  state.SetBytesProcessed(state.iterations() * bytes);
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

std::unique_ptr<matrix_case> load(const std::string& path) {
  return make_case(std::filesystem::path(path).stem().string(),
                   tensorlev::io::read_matrix_market<double, int>(path));
}

int stencil_size() {
  const char* v = std::getenv("TENSORLEV_BENCH_STENCIL");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 100;
}

// As bench/suite.hpp's common_options: milliseconds, wall-clock time, and a
// `min` aggregate when --benchmark_repetitions asks for aggregates.
void common_options(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

bool run_spgemm(const matrix_case& c) { return c.B && static_cast<double>(c.list_size) <= spgemm_max_nnz; }

std::vector<std::string> matrix_paths(int argc, char** argv, bool& from_dir) {
  std::vector<std::string> paths;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s.size() > 1 && s[0] == '-') die("unrecognized flag '" + s + "'");
    paths.push_back(s);
  }
  from_dir = false;
  if (!paths.empty()) return paths;
  const char* dir = std::getenv("TENSORLEV_BENCH_MATRICES");
  if (dir == nullptr || *dir == '\0') return paths;
  from_dir = true;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".mtx" && e.is_regular_file()) paths.push_back(e.path().string());
  if (ec) die(std::string("cannot list TENSORLEV_BENCH_MATRICES='") + dir + "': " + ec.message());
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    return std::filesystem::path(a).filename() < std::filesystem::path(b).filename();
  });
  if (paths.empty()) std::fprintf(stderr, "bench_kokkos_kernels: warning: no .mtx files in %s\n", dir);
  return paths;
}

}  // namespace

int main(int argc_in, char** argv_in) {
  // A default of 0.2 s per benchmark, as a flag placed before the user's
  // (a later --benchmark_min_time wins): ->MinTime() would append
  // "/min_time:0.200" to every benchmark name.
  std::string default_min_time = "--benchmark_min_time=0.2";
  std::vector<char*> args(argv_in, argv_in + argc_in);
  args.insert(args.begin() + 1, default_min_time.data());
  args.push_back(nullptr);
  int argc = argc_in + 1;
  char** argv = args.data();
  benchmark::Initialize(&argc, argv);  // removes --benchmark_* flags
  Kokkos::initialize(argc, argv);      // removes --kokkos-* flags
  int rc = 0;
  cases = new std::vector<std::unique_ptr<matrix_case>>();
  try {
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
    bool from_dir = false;
    const std::vector<std::string> paths = matrix_paths(argc, argv, from_dir);
    for (const std::string& p : paths) {
      try {
        cases->push_back(load(p));
      } catch (const tensorlev::error& e) {
        // A folder may hold files tensorlev cannot read as real matrices
        // (complex ones): skip those; a path given explicitly must load.
        if (!from_dir) die(e.what());
        std::fprintf(stderr, "bench_kokkos_kernels: skipping %s: %s\n", p.c_str(), e.what());
        continue;
      }
      for (std::size_t k = 0; k + 1 < cases->size(); ++k)
        if ((*cases)[k]->name == cases->back()->name) die("two matrices named '" + cases->back()->name + "'");
    }
    if (const int n = stencil_size(); n > 0) {
      const std::string name = "stencil27_" + std::to_string(n);
      for (const auto& c : *cases)
        if (c->name == name) die("two matrices named '" + name + "'");
      cases->push_back(make_case(name, stencil27(n)));
    }
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
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kokkos_kernels: %s\n", e.what());
    rc = 1;
  }
  benchmark::Shutdown();
  delete cases;  // frees every View before Kokkos::finalize
  cases = nullptr;
  Kokkos::finalize();
  return rc;
}
