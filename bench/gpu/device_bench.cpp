// tensorlev's device form on Kokkos::Cuda against cuSPARSE, on the same
// device arrays: SpMV (CSR) on a 27-point stencil of at least 10^8 nonzeros
// and on the bench matrices, its achieved bandwidth as a fraction of the
// device-to-device copy bandwidth measured in the same run, beside two
// hand-written Kokkos loops (a row per thread; a row per group of vector
// lanes); SpGEMM C = A A
// (the device form's row accumulators against cusparseSpGEMM; tensorlev's
// result checked once against the serial product on the host).
// Run by bench/gpu/run.sh on a machine with a GPU (bench/README.md).
#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../inputs.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/kokkos.hpp"

namespace {
using namespace tensorlev::indices;
using space = Kokkos::Cuda;
using mem = space::memory_space;
using host_csr = tensorlev::tensor<double, tensorlev::csr>;
using dev_csr = decltype(tensorlev::to_space<mem>(std::declval<const host_csr&>()));
using dev_vec = decltype(tensorlev::to_space<mem>(std::declval<const tensorlev::tensor<double, tensorlev::dense_vector>&>()));

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cusparseGetErrorString(s));
}

struct input {
  std::string name;
  dev_csr A;
  dev_vec x, y;
  double nnz, rows, cols;
  bool spgemm = true;  // cuSPARSE's product of A with itself is run
  // tensorlev's SpMV and product, compared once with the serial ones on
  // the host (the first call); what differed, reported by every later
  // call too (Google Benchmark's aggregates leave out runs with an error,
  // so an error in one repetition alone would not show).
  bool spmv_checked = false, spgemm_checked = false;
  std::string spmv_error, spgemm_error;
  // The hand-written loops' results (their own y), checked the same way.
  dev_vec y_rows, y_lanes;
  bool rows_checked = false, lanes_checked = false;
  std::string rows_error, lanes_error;
};

std::vector<std::shared_ptr<input>>& inputs() {
  static std::vector<std::shared_ptr<input>> all;
  return all;
}

std::shared_ptr<input> make_input(std::string name, const host_csr& A) {
  const int rows = A.dims()[0], cols = A.dims()[1];
  tensorlev::tensor<double, tensorlev::dense_vector> x({cols}), y({rows});
  for (int j = 0; j < cols; ++j) x.values()[static_cast<std::size_t>(j)] = tlbench::x_value(j);
  auto in = std::make_shared<input>(input{std::move(name), tensorlev::to_space<mem>(A), tensorlev::to_space<mem>(x),
                                          tensorlev::to_space<mem>(y), static_cast<double>(A.values().size()),
                                          static_cast<double>(rows), static_cast<double>(cols)});
  in->y_rows = tensorlev::to_space<mem>(y);
  in->y_lanes = tensorlev::to_space<mem>(y);
  return in;
}

// Bytes an SpMV must move at least: the matrix (values, column indices, row
// pointers) once, x once, y written once.
double spmv_bytes(const input& in) {
  return in.nnz * (sizeof(double) + sizeof(int)) + (in.rows + 1) * sizeof(int) + in.cols * sizeof(double) +
         in.rows * sizeof(double);
}

void copy_bandwidth(benchmark::State& state) {
  const std::size_t n = std::size_t{1} << 28;  // 2 GiB of doubles each way
  // Zero-initialized by the constructors (a memset): filling a with a
  // nonzero value (Kokkos::deep_copy(a, 1.0), Kokkos' ViewFill kernel)
  // wrote out of bounds on the H200 in 3 of 4 runs (compute-sanitizer:
  // gigabytes before the allocation; bench/README.md).
  Kokkos::View<double*, mem> a("a", n), b("b", n);
  for (auto _ : state) {
    Kokkos::deep_copy(b, a);
    Kokkos::fence();
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(2.0 * static_cast<double>(n * sizeof(double)), benchmark::Counter::kIsIterationInvariantRate);
}

std::string spmv_difference(const input& in, const dev_vec& y);
void spmv_tensorlev(benchmark::State& state, std::shared_ptr<input> in) {
  const tensorlev::kokkos_executor<space> ex;
  for (auto _ : state) {
    tensorlev::compute(ex, in->y(i), in->A(i, j) * in->x(j));
    Kokkos::fence();
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(spmv_bytes(*in), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["nnz"] = in->nnz;
  if (!in->spmv_checked) {
    in->spmv_checked = true;
    in->spmv_error = spmv_difference(*in, in->y);
  }
  if (!in->spmv_error.empty()) state.SkipWithError(in->spmv_error.c_str());
}

// Where the device form's y differs from the serial SpMV on the host ("" if
// nowhere).
std::string spmv_difference(const input& in, const dev_vec& y) {
  const auto A = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(in.A));
  const auto x = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(in.x));
  const auto got = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(y));
  tensorlev::tensor<double, tensorlev::dense_vector> want({static_cast<int>(in.rows)});
  tensorlev::compute(tensorlev::serial, want(i), A(i, j) * x(j));
  // Row r's tolerance scales with sum |A(r,j) x(j)|, not |y(r)|: nvcc
  // contracts a * b + c into fused multiply-adds, so rows whose terms cancel
  // (bcsstk16, nsjac) differ from the host's sums by more than |y(r)| * 1e-12.
  const auto& pos = A.level<1>().pos();
  const auto& crd = A.level<1>().crd();
  for (std::size_t r = 0; r < want.values().size(); ++r) {
    double bound = 0;
    for (auto p = pos[r]; p < pos[r + 1]; ++p)
      bound += std::abs(A.values()[static_cast<std::size_t>(p)] * x.values()[static_cast<std::size_t>(crd[static_cast<std::size_t>(p)])]);
    if (!(std::abs(got.values()[r] - want.values()[r]) <= 1e-12 * bound))  // NaN differs too
      return "y = A x differs from the serial one at row " + std::to_string(r);
  }
  return {};
}

// Hand-written Kokkos SpMV loops over the same device arrays, to tell what
// the generated kernel costs from what its structure costs: one row per
// thread (the device form's structure: RangePolicy over the rows), and a
// row per group of vector lanes (the structure of cuSPARSE's and Kokkos
// Kernels' CSR kernels): a team of threads takes rows_per_team consecutive
// rows, each thread one row, its lanes striding the row's entries and their
// sums reduced across the lanes (warp shuffles). Lanes per row: the power
// of two at or above the mean row length, at most 32; 128 lanes a team.
struct csr_arrays {
  const int* pos;
  const int* crd;
  const double* val;
  const double* x;
  double* y;
  int rows;
};
csr_arrays arrays_of(input& in, dev_vec& y) {
  auto& lv = std::get<1>(in.A.levels());
  return {lv.pos().data(), lv.crd().data(), in.A.values().data(), in.x.values().data(), y.values().data(),
          static_cast<int>(in.rows)};
}
struct rows_fn {
  csr_arrays a;
  KOKKOS_INLINE_FUNCTION void operator()(int r) const {
    double s = 0;
    for (int p = a.pos[r]; p < a.pos[r + 1]; ++p) s += a.val[p] * a.x[a.crd[p]];
    a.y[r] = s;
  }
};
struct lanes_fn {
  using member = Kokkos::TeamPolicy<space>::member_type;
  csr_arrays a;
  int rows_per_team;
  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const int first = t.league_rank() * rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rows_per_team), [&](int k) {
      const int r = first + k;
      if (r >= a.rows) return;
      double s = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, a.pos[r], a.pos[r + 1]),
          [&](int p, double& acc) { acc += a.val[p] * a.x[a.crd[p]]; }, s);
      Kokkos::single(Kokkos::PerThread(t), [&] { a.y[r] = s; });
    });
  }
};
int lanes_per_row(const input& in) {
  const double mean = in.rows > 0 ? in.nnz / in.rows : 0;
  int v = 1;
  while (v < 32 && v < mean) v *= 2;
  return v;
}
void spmv_hand(benchmark::State& state, std::shared_ptr<input> in, bool lanes) {
  dev_vec& y = lanes ? in->y_lanes : in->y_rows;
  const csr_arrays a = arrays_of(*in, y);
  const int v = lanes_per_row(*in), team = 128 / v;
  for (auto _ : state) {
    if (lanes)
      Kokkos::parallel_for("hand_lanes", Kokkos::TeamPolicy<space>((a.rows + team - 1) / team, team, v),
                           lanes_fn{a, team});
    else
      Kokkos::parallel_for("hand_rows", Kokkos::RangePolicy<space>(0, a.rows), rows_fn{a});
    Kokkos::fence();
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(spmv_bytes(*in), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lanes"] = lanes ? v : 1;
  bool& checked = lanes ? in->lanes_checked : in->rows_checked;
  std::string& error = lanes ? in->lanes_error : in->rows_error;
  if (!checked) {
    checked = true;
    error = spmv_difference(*in, y);
  }
  if (!error.empty()) state.SkipWithError(error.c_str());
}

struct cusparse_csr {
  cusparseHandle_t h{};
  cusparseSpMatDescr_t A{};
  explicit cusparse_csr(input& in) {
    check(cusparseCreate(&h), "cusparseCreate");
    auto& lv = std::get<1>(in.A.levels());
    check(cusparseCreateCsr(&A, static_cast<int64_t>(in.rows), static_cast<int64_t>(in.cols),
                            static_cast<int64_t>(in.nnz), const_cast<int*>(lv.pos().data()),
                            const_cast<int*>(lv.crd().data()), const_cast<double*>(in.A.values().data()),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "cusparseCreateCsr");
  }
  ~cusparse_csr() {
    cusparseDestroySpMat(A);
    cusparseDestroy(h);
  }
};

void spmv_cusparse(benchmark::State& state, std::shared_ptr<input> in) {
  cusparse_csr m(*in);
  cusparseDnVecDescr_t x{}, y{};
  check(cusparseCreateDnVec(&x, static_cast<int64_t>(in->cols), const_cast<double*>(in->x.values().data()),
                            CUDA_R_64F),
        "cusparseCreateDnVec");
  check(cusparseCreateDnVec(&y, static_cast<int64_t>(in->rows), in->y.values().data(), CUDA_R_64F),
        "cusparseCreateDnVec");
  const double alpha = 1.0, beta = 0.0;
  std::size_t size = 0;
  check(cusparseSpMV_bufferSize(m.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m.A, x, &beta, y, CUDA_R_64F,
                                CUSPARSE_SPMV_ALG_DEFAULT, &size),
        "cusparseSpMV_bufferSize");
  Kokkos::View<unsigned char*, mem> buffer("cusparse buffer", size);
  for (auto _ : state) {
    check(cusparseSpMV(m.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m.A, x, &beta, y, CUDA_R_64F,
                       CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()),
          "cusparseSpMV");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  cusparseDestroyDnVec(x);
  cusparseDestroyDnVec(y);
  state.counters["bytes_per_second"] =
      benchmark::Counter(spmv_bytes(*in), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["nnz"] = in->nnz;
}

std::string spgemm_difference(const input& in, const dev_csr& C);
// C = A * A in the device form (an accumulator per row sized by the row's
// products; the CSR result allocated in device memory), every launch and
// allocation timed. Checked once against the serial product on the host.
void spgemm_tensorlev(benchmark::State& state, std::shared_ptr<input> in) {
  const tensorlev::kokkos_executor<space> ex;
  const tensorlev::coordinate_list<double, int> empty({static_cast<int>(in->rows), static_cast<int>(in->cols)});
  auto C = tensorlev::to_space<mem>(tensorlev::pack<tensorlev::csr>(empty));
  for (auto _ : state) {
    tensorlev::compute(ex, C(i, j), in->A(i, k) * in->A(k, j));
    Kokkos::fence();
  }
  // Google Benchmark calls this once per repetition and while it sizes the
  // iteration count; the serial product (seconds on the stencil) once.
  state.counters["nnz_C"] = static_cast<double>(C.values().size());
  if (!in->spgemm_checked) {
    in->spgemm_checked = true;
    in->spgemm_error = spgemm_difference(*in, C);
  }
  if (!in->spgemm_error.empty()) state.SkipWithError(in->spgemm_error.c_str());
}

// Where the device form's C = A A differs from the serial product on the
// host ("" if nowhere): the same pattern, each value within 1e-12 of the
// same entry of |A| |A| (the bound on a sum's rounding, FMAs or not).
std::string spgemm_difference(const input& in, const dev_csr& C) {
  const tensorlev::coordinate_list<double, int> empty({static_cast<int>(in.rows), static_cast<int>(in.cols)});
  const auto A = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(in.A));
  auto absA = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(in.A));  // arrays of its own
  for (auto& v : absA.values()) v = std::abs(v);
  host_csr want = tensorlev::pack<tensorlev::csr>(empty), bound = tensorlev::pack<tensorlev::csr>(empty);
  tensorlev::compute(tensorlev::serial, want(i, j), A(i, k) * A(k, j));
  tensorlev::compute(tensorlev::serial, bound(i, j), absA(i, k) * absA(k, j));
  const auto got = tensorlev::to_owning(tensorlev::to_space<Kokkos::HostSpace>(C));
  if (!std::ranges::equal(got.level<1>().pos(), want.level<1>().pos()) ||
      !std::ranges::equal(got.level<1>().crd(), want.level<1>().crd()) ||
      !std::ranges::equal(bound.level<1>().crd(), want.level<1>().crd()))
    return "the device form's C = A A has another pattern than the serial product";
  for (std::size_t p = 0; p < want.values().size(); ++p)
    if (!(std::abs(got.values()[p] - want.values()[p]) <= 1e-12 * bound.values()[p]))  // NaN differs too
      return "the device form's C = A A differs from the serial product at entry " + std::to_string(p);
  return {};
}

// C = A * A with cuSPARSE's SpGEMM (work estimation, compute, copy into C's
// arrays), every phase timed.
void spgemm_cusparse_run(benchmark::State& state, const std::shared_ptr<input>& in);
// An error of cuSPARSE's (its default algorithm reports insufficient
// resources on some inputs) ends this benchmark, not the run.
void spgemm_cusparse(benchmark::State& state, std::shared_ptr<input> in) {
  try {
    spgemm_cusparse_run(state, in);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}
void spgemm_cusparse_run(benchmark::State& state, const std::shared_ptr<input>& in) {
  cusparse_csr a(*in);
  const double alpha = 1.0, beta = 0.0;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  double nnz_c = 0;
  // C's descriptors, destroyed also when a call throws.
  struct product {
    cusparseSpMatDescr_t C{};
    cusparseSpGEMMDescr_t d{};
    ~product() {
      if (d != nullptr) cusparseSpGEMM_destroyDescr(d);
      if (C != nullptr) cusparseDestroySpMat(C);
    }
  };
  for (auto _ : state) {
    product pr;
    cusparseSpMatDescr_t& C = pr.C;
    check(cusparseCreateCsr(&C, static_cast<int64_t>(in->rows), static_cast<int64_t>(in->cols), 0, nullptr, nullptr,
                            nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "cusparseCreateCsr C");
    cusparseSpGEMMDescr_t& d = pr.d;
    check(cusparseSpGEMM_createDescr(&d), "cusparseSpGEMM_createDescr");
    std::size_t s1 = 0, s2 = 0;
    check(cusparseSpGEMM_workEstimation(a.h, op, op, &alpha, a.A, a.A, &beta, C, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT,
                                        d, &s1, nullptr),
          "cusparseSpGEMM_workEstimation");
    Kokkos::View<unsigned char*, mem> b1("spgemm buffer 1", s1);
    check(cusparseSpGEMM_workEstimation(a.h, op, op, &alpha, a.A, a.A, &beta, C, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT,
                                        d, &s1, b1.data()),
          "cusparseSpGEMM_workEstimation");
    check(cusparseSpGEMM_compute(a.h, op, op, &alpha, a.A, a.A, &beta, C, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s2,
                                 nullptr),
          "cusparseSpGEMM_compute");
    Kokkos::View<unsigned char*, mem> b2("spgemm buffer 2", s2);
    check(cusparseSpGEMM_compute(a.h, op, op, &alpha, a.A, a.A, &beta, C, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s2,
                                 b2.data()),
          "cusparseSpGEMM_compute");
    int64_t r = 0, c = 0, nnz = 0;
    check(cusparseSpMatGetSize(C, &r, &c, &nnz), "cusparseSpMatGetSize");
    Kokkos::View<int*, mem> pos("C pos", static_cast<std::size_t>(r) + 1), crd("C crd", static_cast<std::size_t>(nnz));
    Kokkos::View<double*, mem> val("C values", static_cast<std::size_t>(nnz));
    check(cusparseCsrSetPointers(C, pos.data(), crd.data(), val.data()), "cusparseCsrSetPointers");
    check(cusparseSpGEMM_copy(a.h, op, op, &alpha, a.A, a.A, &beta, C, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d),
          "cusparseSpGEMM_copy");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    nnz_c = static_cast<double>(nnz);
  }
  state.counters["nnz_C"] = nnz_c;
}

void register_all() {
  const int n = std::getenv("TENSORLEV_GPU_STENCIL_N") != nullptr ? std::atoi(std::getenv("TENSORLEV_GPU_STENCIL_N"))
                                                                   : 160;  // 1.09e8 nonzeros
  // SpMV on the large stencil; SpGEMM on the CPU suite's (whose product
  // fits easily) and on the bench matrices.
  inputs().push_back(make_input("stencil27_" + std::to_string(n), tensorlev::pack<tensorlev::csr>(tlbench::stencil27(n))));
  inputs().back()->spgemm = false;
  if (n != 100)
    inputs().push_back(make_input("stencil27_100", tensorlev::pack<tensorlev::csr>(tlbench::stencil27(100))));
  if (const char* dir = std::getenv("TENSORLEV_BENCH_MATRICES"); dir != nullptr && *dir != '\0') {
    std::vector<std::filesystem::path> files;
    for (const auto& f : std::filesystem::directory_iterator(dir))
      if (f.path().extension() == ".mtx") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      inputs().push_back(make_input(f.stem().string(), tensorlev::pack<tensorlev::csr>(
                                                           tensorlev::io::read_matrix_market<double, int>(f.string()))));
  }
  benchmark::RegisterBenchmark("copy/device_to_device", copy_bandwidth)->UseRealTime()->Unit(benchmark::kMillisecond);
  for (const auto& in : inputs()) {
    benchmark::RegisterBenchmark(("spmv/tensorlev/" + in->name).c_str(), spmv_tensorlev, in)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("spmv/cusparse/" + in->name).c_str(), spmv_cusparse, in)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("spmv/hand_rows/" + in->name).c_str(), spmv_hand, in, false)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("spmv/hand_lanes/" + in->name).c_str(), spmv_hand, in, true)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    if (in->spgemm) {
      benchmark::RegisterBenchmark(("spgemm/tensorlev/" + in->name).c_str(), spgemm_tensorlev, in)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("spgemm/cusparse/" + in->name).c_str(), spgemm_cusparse, in)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The Views go before Kokkos does: the registered benchmarks hold the
  // inputs too.
  benchmark::ClearRegisteredBenchmarks();
  inputs().clear();
  return 0;
}
