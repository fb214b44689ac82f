// SPLATT 2.0 (scripts/build-splatt.sh) on the MTTKRP of tensorlev's suite
// (bench/suite_mttkrp.cpp): A(i,r) = B(i,k,l) C(k,r) D(l,r), R = 16, the
// first mode (SPLATT's mode 0), row-major factors.
//
//   mttkrp/splatt/csf/<tensor>    splatt_mttkrp on splatt_csf_convert's CSF
//                                 with SPLATT's default options (its
//                                 default allocation, SPLATT_CSF_TWOMODE)
//                                 and one thread
//
// Usage:
//   bench_splatt [benchmark flags] a.tns b.tns ...
//   TENSORLEV_BENCH_TENSORS=dir bench_splatt [flags]   (every dir/*.tns, by name)
//
// Tensors are read with tensorlev's FROSTT reader. SPLATT drops empty slices
// of every mode (tt_remove_empty, inside splatt_csf_convert) and numbers the
// rest densely; this program does the same renumbering first, so that the
// factors, SPLATT's output and the reference share one numbering. The
// factors hold the suite's values (1 + (x % 5) / 4 and 1 + (x % 3) / 2 at
// row-major offset x) on the renumbered rows; the work per nonzero is the
// suite's. SPLATT's output is checked once against a COO loop, entry by
// entry (1e-10 of each entry's magnitude); a mismatch aborts the run.
// splatt_mttkrp allocates its workspace on every call, as a user calling the
// C API pays it.
#include <benchmark/benchmark.h>

extern "C" {
#include <splatt.h>
}

#include <algorithm>
#include <cmath>
#include <memory>

#include "../standalone.hpp"
#include "tensorlev/io/frostt.hpp"

namespace {

using tlbench::die;
constexpr int R = 16;

struct tensor_case {
  std::string name;
  std::size_t nnz = 0;
  std::array<splatt_idx_t, 3> dims{};
  std::vector<splatt_idx_t> ind[3];  // renumbered coordinates, per mode
  std::vector<double> val;
  std::vector<double> C, D;  // dims[1] x R and dims[2] x R
  splatt_csf* csf = nullptr;
  double* opts = nullptr;
  tensor_case() = default;
  tensor_case(const tensor_case&) = delete;
  tensor_case& operator=(const tensor_case&) = delete;
  ~tensor_case() {
    if (csf != nullptr) splatt_free_csf(csf, opts);
    if (opts != nullptr) splatt_free_opts(opts);
  }
};

std::unique_ptr<tensor_case> make_case(std::string name, const tensorlev::coordinate_list<double, int>& list) {
  if (list.order() != 3) throw tensorlev::shape_error(name + ": not an order-3 tensor");
  if (list.size() == 0) throw tensorlev::shape_error(name + ": no entries");
  auto t = std::make_unique<tensor_case>();
  t->name = std::move(name);
  t->nnz = list.size();
  const std::vector<int>& lc = list.raw_coords();
  for (int m = 0; m < 3; ++m) {
    // Dense renumbering of the non-empty slices, in index order (as SPLATT's).
    std::vector<splatt_idx_t> id(static_cast<std::size_t>(list.dims()[m]), 0);
    for (std::size_t e = 0; e < list.size(); ++e) id[static_cast<std::size_t>(lc[3 * e + m])] = 1;
    splatt_idx_t next = 0;
    for (auto& x : id) x = x != 0 ? next++ : 0;
    t->dims[m] = next;
    t->ind[m].resize(list.size());
    for (std::size_t e = 0; e < list.size(); ++e) t->ind[m][e] = id[static_cast<std::size_t>(lc[3 * e + m])];
  }
  t->val = list.raw_values();
  t->C.resize(t->dims[1] * R);
  t->D.resize(t->dims[2] * R);
  for (std::size_t x = 0; x < t->C.size(); ++x) t->C[x] = 1.0 + static_cast<double>(x % 5) / 4.0;
  for (std::size_t x = 0; x < t->D.size(); ++x) t->D[x] = 1.0 + static_cast<double>(x % 3) / 2.0;
  t->opts = splatt_default_opts();
  t->opts[SPLATT_OPTION_NTHREADS] = 1;
  t->opts[SPLATT_OPTION_VERBOSITY] = SPLATT_VERBOSITY_NONE;
  // splatt_csf_convert sorts the arrays it is given by replacing them: it
  // frees them (free()) and leaves the index arrays' successors in inds[],
  // which are freed here; the values' successor is not reachable through
  // its API and stays allocated (8 bytes a nonzero, once per tensor).
  splatt_idx_t* inds[3];
  for (int m = 0; m < 3; ++m) {
    inds[m] = static_cast<splatt_idx_t*>(std::malloc(t->nnz * sizeof(splatt_idx_t)));
    if (inds[m] == nullptr) die(t->name + ": out of memory");
    std::copy(t->ind[m].begin(), t->ind[m].end(), inds[m]);
  }
  auto* val = static_cast<double*>(std::malloc(t->nnz * sizeof(double)));
  if (val == nullptr) die(t->name + ": out of memory");
  std::copy(t->val.begin(), t->val.end(), val);
  const int rc = splatt_csf_convert(3, t->nnz, inds, val, &t->csf, t->opts);
  for (splatt_idx_t* a : inds) std::free(a);
  if (rc != SPLATT_SUCCESS) die(t->name + ": splatt_csf_convert failed");
  for (int m = 0; m < 3; ++m)
    if (t->csf->dims[m] != t->dims[m]) die(t->name + ": SPLATT's dimensions differ from the renumbered ones");
  return t;
}

void splatt_run(tensor_case& t, double* out) {
  double* mats[3] = {nullptr, t.C.data(), t.D.data()};
  if (splatt_mttkrp(0, R, t.csf, mats, out, t.opts) != SPLATT_SUCCESS) die(t.name + ": splatt_mttkrp failed");
}

void check(tensor_case& t) {
  std::vector<double> ref(t.dims[0] * R, 0.0), mag(t.dims[0] * R, 0.0), out(t.dims[0] * R, -1.0);
  for (std::size_t e = 0; e < t.nnz; ++e)
    for (int r = 0; r < R; ++r) {
      const double p = t.val[e] * t.C[t.ind[1][e] * R + r] * t.D[t.ind[2][e] * R + r];
      ref[t.ind[0][e] * R + r] += p;
      mag[t.ind[0][e] * R + r] += std::abs(p);
    }
  splatt_run(t, out.data());
  for (std::size_t x = 0; x < ref.size(); ++x)
    if (!(std::abs(out[x] - ref[x]) <= 1e-10 * mag[x]))
      die("mttkrp check failed for " + t.name + ": entry " + std::to_string(x) + ": SPLATT " +
          std::to_string(out[x]) + ", the COO loop " + std::to_string(ref[x]));
}

void bm_mttkrp(benchmark::State& state, tensor_case* t) {
  std::vector<double> out(t->dims[0] * R);
  for (auto _ : state) {
    splatt_run(*t, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, t->nnz);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<tensor_case>> cases;
  return tlbench::benchmark_main(argc, argv, "bench_splatt", [&](int& n, char** args) {
    cases = tlbench::load_inputs(n, args, "TENSORLEV_BENCH_TENSORS", ".tns", "bench_splatt",
                                 [](const std::string& path, const std::string& name) {
                                   return make_case(name, tensorlev::io::read_frostt<double, int>(path));
                                 });
    if (cases.empty()) die("no tensors: pass .tns paths or set TENSORLEV_BENCH_TENSORS");
    for (const auto& t : cases) {
      check(*t);
      tensor_case* p = t.get();
      benchmark::RegisterBenchmark(("mttkrp/splatt/csf/" + t->name).c_str(),
                                   [p](benchmark::State& s) { bm_mttkrp(s, p); })
          ->Apply(tlbench::common_options);
    }
    benchmark::AddCustomContext("splatt_version", "2.0.0");
  });
}
