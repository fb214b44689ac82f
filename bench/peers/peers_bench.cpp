// Intel MKL (inspector-executor sparse BLAS, sequential) and CXSparse on the
// kernels and inputs of tensorlev's suite (bench/suite.hpp), so that the
// figures sit side by side in bench/summarize.py's tables:
//
//   spmv/mkl/csr/<matrix>           y = A x: mkl_sparse_d_mv on a handle given
//                                   mkl_sparse_set_mv_hint + mkl_sparse_optimize
//   add/mkl/csr/<matrix>            C = A + A^T: mkl_sparse_d_add
//   spgemm/mkl/csr/<matrix>         C = A * A: mkl_sparse_spmm (rows unsorted)
//   spgemm/mkl_sorted/csr/<matrix>  the same, then mkl_sparse_order (sorted rows)
//   spmv/cxsparse/csc/<matrix>      y = A x: cs_gaxpy on A in CSC (CXSparse's
//                                   only layout: a column scatter), y zeroed first
//   add/cxsparse/csc/<matrix>       C = A + A^T: cs_add (CSC)
//   spgemm/cxsparse/csc/<matrix>    C = A * A: cs_multiply (CSC, columns unsorted)
//
// Usage:
//   bench_peers [benchmark flags] a.mtx b.mtx ...
//   TENSORLEV_BENCH_MATRICES=dir bench_peers [flags]   (every dir/*.mtx, by name)
//
// Inputs as bench/kokkos_kernels: the files given, or every *.mtx in
// $TENSORLEV_BENCH_MATRICES, then `stencil27_<n>` (TENSORLEV_BENCH_STENCIL,
// default 100, 0: none); add and spgemm for square matrices only, spgemm up
// to 3e6 entries in the file's list. Matrices are read with tensorlev's
// reader and packed with tensorlev::pack<csr>; MKL's handles point at those
// arrays (32-bit indices, zero-based), CXSparse's matrices at the arrays of
// the transpose (the CSC of A). Every result is checked once, outside the
// timed loops, against tensorlev or a row loop; a mismatch aborts the run.
// MKL runs sequentially (mkl_sequential): the suite's serial figures.
#include <benchmark/benchmark.h>

#include <mkl.h>
#include <mkl_spblas.h>
#include <suitesparse/cs.h>

#include <cstring>
#include <memory>

#include "../inputs.hpp"
#include "../standalone.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

namespace {

using tl_csr = tensorlev::tensor<double, tensorlev::csr>;
using tlbench::die;
using tlbench::x_value;

constexpr double spgemm_max_nnz = 3e6;

void mkl_check(sparse_status_t s, const char* what) {
  if (s != SPARSE_STATUS_SUCCESS) die(std::string(what) + " failed: sparse_status_t " + std::to_string(int(s)));
}

// An MKL handle that is destroyed with its owner.
struct mkl_matrix {
  sparse_matrix_t h = nullptr;
  mkl_matrix() = default;
  explicit mkl_matrix(sparse_matrix_t m) : h(m) {}
  mkl_matrix(const mkl_matrix&) = delete;
  mkl_matrix& operator=(const mkl_matrix&) = delete;
  ~mkl_matrix() {
    if (h != nullptr) mkl_sparse_destroy(h);
  }
};

// A handle over t's arrays (which must outlive it; MKL reads them, the
// non-const pointers are its interface's).
sparse_matrix_t mkl_view(const tl_csr& t) {
  auto& lv = t.level<1>();
  int* pos = const_cast<int*>(lv.pos().data());
  int* crd = const_cast<int*>(lv.crd().data());
  double* val = const_cast<double*>(t.values().data());
  sparse_matrix_t h = nullptr;
  mkl_check(mkl_sparse_d_create_csr(&h, SPARSE_INDEX_BASE_ZERO, t.dimension(0), t.dimension(1), pos, pos + 1, crd, val),
            "mkl_sparse_d_create_csr");
  return h;
}

// CXSparse's view of t's arrays as the CSC of t's transpose.
cs_di csc_of_transpose(const tl_csr& t) {
  auto& lv = t.level<1>();
  cs_di c{};
  c.nzmax = static_cast<int>(t.values().size());
  c.m = t.dimension(1);
  c.n = t.dimension(0);
  c.p = const_cast<int*>(lv.pos().data());
  c.i = const_cast<int*>(lv.crd().data());
  c.x = const_cast<double*>(t.values().data());
  c.nz = -1;  // compressed columns
  return c;
}

struct matrix_case {
  matrix_case(tl_csr a, tl_csr at) : A(std::move(a)), AT(std::move(at)) {}
  std::string name;
  int rows = 0;
  int cols = 0;
  std::size_t nnz = 0;        // stored entries of A (duplicates summed)
  std::size_t list_size = 0;  // entries of the coordinate list (the spgemm cut-off)
  tl_csr A;
  tl_csr AT;  // A's transpose
  mkl_matrix A_mkl, AT_mkl, A_mv;  // A_mv: optimized for mv
  cs_di A_cs{}, AT_cs{};           // CSC of A (AT's arrays) and of A^T (A's arrays)
  bool square() const { return rows == cols; }
  bool run_spgemm() const { return square() && static_cast<double>(list_size) <= spgemm_max_nnz; }
};

// ---------------------------------------------------------------------------
// The timed operations (also run once for the checks).

matrix_descr general() {
  matrix_descr d{};
  d.type = SPARSE_MATRIX_TYPE_GENERAL;
  return d;
}

void mkl_spmv(const matrix_case& c, const double* x, double* y) {
  mkl_check(mkl_sparse_d_mv(SPARSE_OPERATION_NON_TRANSPOSE, 1.0, c.A_mv.h, general(), x, 0.0, y), "mkl_sparse_d_mv");
}

sparse_matrix_t mkl_add(const matrix_case& c) {
  sparse_matrix_t C = nullptr;
  mkl_check(mkl_sparse_d_add(SPARSE_OPERATION_NON_TRANSPOSE, c.A_mkl.h, 1.0, c.AT_mkl.h, &C), "mkl_sparse_d_add");
  return C;
}

sparse_matrix_t mkl_spgemm(const matrix_case& c, bool sorted) {
  sparse_matrix_t C = nullptr;
  mkl_check(mkl_sparse_spmm(SPARSE_OPERATION_NON_TRANSPOSE, c.A_mkl.h, c.A_mkl.h, &C), "mkl_sparse_spmm");
  if (sorted) mkl_check(mkl_sparse_order(C), "mkl_sparse_order");
  return C;
}

void cs_spmv(const matrix_case& c, const double* x, double* y) {
  std::memset(y, 0, sizeof(double) * static_cast<std::size_t>(c.rows));
  if (cs_di_gaxpy(&c.A_cs, x, y) == 0) die("cs_gaxpy failed");
}

// ---------------------------------------------------------------------------
// Checks (once per matrix, outside the timed loops).

struct mkl_export {
  int rows = 0, cols = 0;
  int *start = nullptr, *end = nullptr, *col = nullptr;
  double* val = nullptr;
  std::size_t nnz() const { return rows == 0 ? 0 : static_cast<std::size_t>(end[rows - 1] - start[0]); }
};

mkl_export export_csr(sparse_matrix_t C) {
  mkl_export e;
  sparse_index_base_t base{};
  mkl_check(mkl_sparse_d_export_csr(C, &base, &e.rows, &e.cols, &e.start, &e.end, &e.col, &e.val),
            "mkl_sparse_d_export_csr");
  if (base != SPARSE_INDEX_BASE_ZERO) die("MKL result is not zero-based");
  return e;
}

tlbench::summary summarize_mkl(sparse_matrix_t C, int rows, int cols, bool sorted, const std::string& what) {
  const mkl_export e = export_csr(C);
  if (e.rows != rows || e.cols != cols) die(what + ": MKL result has the wrong shape");
  if (sorted)
    for (int r = 0; r < e.rows; ++r)
      for (int q = e.start[r] + 1; q < e.end[r]; ++q)
        if (e.col[q - 1] >= e.col[q]) die(what + ": row " + std::to_string(r) + " is not sorted after mkl_sparse_order");
  return tlbench::summarize(std::span<const double>(e.val + e.start[0], e.nnz()));
}

tlbench::summary summarize_cs(const cs_di* C, int rows, int cols, const std::string& what) {
  if (C == nullptr) die(what + ": CXSparse returned no matrix");
  if (C->m != rows || C->n != cols) die(what + ": CXSparse result has the wrong shape");
  return tlbench::summarize(std::span<const double>(C->x, static_cast<std::size_t>(C->p[C->n])));
}

void check_spmv(const matrix_case& c) {
  std::vector<double> x(static_cast<std::size_t>(c.cols)), y(static_cast<std::size_t>(c.rows));
  for (int j = 0; j < c.cols; ++j) x[static_cast<std::size_t>(j)] = x_value(j);
  auto& lv = c.A.level<1>();
  mkl_spmv(c, x.data(), y.data());
  tlbench::check_rows("spmv mkl " + c.name, c.rows, lv.pos().data(), lv.crd().data(), c.A.values().data(), x_value,
                      y.data());
  cs_spmv(c, x.data(), y.data());
  tlbench::check_rows("spmv cxsparse " + c.name, c.rows, lv.pos().data(), lv.crd().data(), c.A.values().data(),
                      x_value, y.data());
}

tl_csr empty_like(const matrix_case& c) {
  return tensorlev::pack<tensorlev::csr>(tensorlev::coordinate_list<double, int>({c.rows, c.cols}));
}

void check_add(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = empty_like(c);
  C(i, j) = c.A(i, j) + c.AT(i, j);
  const auto tl = tlbench::summarize(C.values());
  const std::string what = "add " + c.name;
  mkl_matrix M(mkl_add(c));
  tlbench::compare(what, "MKL", summarize_mkl(M.h, c.rows, c.cols, false, what), tl);
  cs_di* X = cs_di_add(&c.A_cs, &c.AT_cs, 1.0, 1.0);
  const auto xs = summarize_cs(X, c.rows, c.cols, what);
  cs_di_spfree(X);
  tlbench::compare(what, "CXSparse", xs, tl);
}

void check_spgemm(const matrix_case& c) {
  using namespace tensorlev::indices;
  tl_csr C = empty_like(c);
  C(i, k) = c.A(i, j) * c.A(j, k);
  const auto tl = tlbench::summarize(C.values());
  const std::string what = "spgemm " + c.name;
  for (bool sorted : {false, true}) {
    mkl_matrix M(mkl_spgemm(c, sorted));
    tlbench::compare(what, sorted ? "MKL sorted" : "MKL", summarize_mkl(M.h, c.rows, c.cols, sorted, what), tl);
  }
  cs_di* X = cs_di_multiply(&c.A_cs, &c.A_cs);
  const auto xs = summarize_cs(X, c.rows, c.cols, what);
  cs_di_spfree(X);
  tlbench::compare(what, "CXSparse", xs, tl);
}

// ---------------------------------------------------------------------------
// Benchmarks.

void bm_spmv(benchmark::State& state, const matrix_case* c, bool mkl) {
  std::vector<double> x(static_cast<std::size_t>(c->cols)), y(static_cast<std::size_t>(c->rows));
  for (int j = 0; j < c->cols; ++j) x[static_cast<std::size_t>(j)] = x_value(j);
  for (auto _ : state) {
    if (mkl)
      mkl_spmv(*c, x.data(), y.data());
    else
      cs_spmv(*c, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * tlbench::spmv_bytes(c->nnz, c->rows, c->cols));
  tlbench::set_counters(state, c->nnz);
}

enum class op { add, spgemm, spgemm_sorted };

void bm_mkl(benchmark::State& state, const matrix_case* c, op o) {
  std::size_t out = 0;
  for (auto _ : state) {
    mkl_matrix C(o == op::add ? mkl_add(*c) : mkl_spgemm(*c, o == op::spgemm_sorted));
    benchmark::DoNotOptimize(C.h);
    benchmark::ClobberMemory();
    if (out == 0) out = export_csr(C.h).nnz();
  }
  tlbench::set_counters(state, c->nnz);
  state.counters["out_nnz"] = static_cast<double>(out);
}

void bm_cs(benchmark::State& state, const matrix_case* c, op o) {
  std::size_t out = 0;
  for (auto _ : state) {
    cs_di* C = o == op::add ? cs_di_add(&c->A_cs, &c->AT_cs, 1.0, 1.0) : cs_di_multiply(&c->A_cs, &c->A_cs);
    if (C == nullptr) die("CXSparse ran out of memory");
    benchmark::DoNotOptimize(C->x);
    benchmark::ClobberMemory();
    out = static_cast<std::size_t>(C->p[C->n]);
    cs_di_spfree(C);
  }
  tlbench::set_counters(state, c->nnz);
  state.counters["out_nnz"] = static_cast<double>(out);
}

// ---------------------------------------------------------------------------
// Inputs.

std::unique_ptr<matrix_case> make_case(std::string name, const tensorlev::coordinate_list<double, int>& list) {
  if (list.order() != 2) throw tensorlev::shape_error(name + ": not a matrix");
  std::vector<int> tc(list.raw_coords().size());
  const std::vector<int>& lc = list.raw_coords();
  for (std::size_t e = 0; e < list.size(); ++e) tc[2 * e] = lc[2 * e + 1], tc[2 * e + 1] = lc[2 * e];
  tensorlev::coordinate_list<double, int> tlist({list.dims()[1], list.dims()[0]}, std::move(tc), list.raw_values());
  auto c = std::make_unique<matrix_case>(tensorlev::pack<tensorlev::csr>(list), tensorlev::pack<tensorlev::csr>(tlist));
  c->name = std::move(name);
  c->list_size = list.size();
  c->rows = list.dims()[0];
  c->cols = list.dims()[1];
  c->nnz = c->A.stored();
  c->A_mkl.h = mkl_view(c->A);
  c->AT_mkl.h = mkl_view(c->AT);
  c->A_mv.h = mkl_view(c->A);
  // The hint says how many products follow (a benchmark's worth): MKL then
  // spends what inspection it judges worth that many calls.
  mkl_check(mkl_sparse_set_mv_hint(c->A_mv.h, SPARSE_OPERATION_NON_TRANSPOSE, general(), 1000),
            "mkl_sparse_set_mv_hint");
  mkl_check(mkl_sparse_optimize(c->A_mv.h), "mkl_sparse_optimize");
  c->A_cs = csc_of_transpose(c->AT);
  c->AT_cs = csc_of_transpose(c->A);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<matrix_case>> cases;
  return tlbench::benchmark_main(argc, argv, "bench_peers", [&](int& n, char** args) {
    cases = tlbench::load_inputs(n, args, "TENSORLEV_BENCH_MATRICES", ".mtx", "bench_peers",
                                 [](const std::string& path, const std::string& name) {
                                   return make_case(name, tensorlev::io::read_matrix_market<double, int>(path));
                                 });
    tlbench::add_stencil(cases, make_case);
    if (cases.empty()) die("no matrices: pass .mtx paths or set TENSORLEV_BENCH_MATRICES");
    for (const auto& c : cases) {
      check_spmv(*c);
      if (c->square()) check_add(*c);
      if (c->run_spgemm()) check_spgemm(*c);
    }
    const auto reg = [](const std::string& name, auto fn) {
      benchmark::RegisterBenchmark(name.c_str(), fn)->Apply(tlbench::common_options);
    };
    for (const auto& c : cases) {
      const matrix_case* p = c.get();
      reg("spmv/mkl/csr/" + c->name, [p](benchmark::State& s) { bm_spmv(s, p, true); });
      reg("spmv/cxsparse/csc/" + c->name, [p](benchmark::State& s) { bm_spmv(s, p, false); });
      if (c->square()) {
        reg("add/mkl/csr/" + c->name, [p](benchmark::State& s) { bm_mkl(s, p, op::add); });
        reg("add/cxsparse/csc/" + c->name, [p](benchmark::State& s) { bm_cs(s, p, op::add); });
      }
      if (c->run_spgemm()) {
        reg("spgemm/mkl/csr/" + c->name, [p](benchmark::State& s) { bm_mkl(s, p, op::spgemm); });
        reg("spgemm/mkl_sorted/csr/" + c->name, [p](benchmark::State& s) { bm_mkl(s, p, op::spgemm_sorted); });
        reg("spgemm/cxsparse/csc/" + c->name, [p](benchmark::State& s) { bm_cs(s, p, op::spgemm); });
      }
    }
    MKLVersion v{};
    mkl_get_version(&v);
    benchmark::AddCustomContext("mkl_version", std::to_string(v.MajorVersion) + "." + std::to_string(v.UpdateVersion));
    benchmark::AddCustomContext("mkl_threads", std::to_string(mkl_get_max_threads()));
  });
}
