// MTTKRP on the real third-order tensors of ../shared/data/tns (FROSTT
// format): A(i,r) = B(i,k,l) * C(k,r) * D(l,r), rank R = 16, dense row-major
// factors.
//
//   mttkrp/<hand|tensorlev|tensorlev_kokkos>/<coo|csf>/<tensor>
//
// `hand` for COO is the loop over entries; for CSF it is the loop over
// (i, k) fibres that sums D's rows over l first and multiplies by C's row
// once per fibre (SPLATT's order), which saves R multiplications per entry.
// Eigen and Kokkos Kernels have no MTTKRP. Tensors: every *.tns in
// $TENSORLEV_BENCH_TENSORS (default: the repository's ../shared/data/tns).
#include <algorithm>
#include <filesystem>
#include <optional>

#include "suite.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/frostt.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/pack.hpp"

#ifndef TENSORLEV_BENCH_TNS_DIR
#define TENSORLEV_BENCH_TNS_DIR ""
#endif

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;
constexpr tensorlev::index_var<'r'> r{};
constexpr int R = 16;

struct problem {
  std::string name;
  coordinate_list<double, int> entries;
  bool ready = false;
  // Built on first use (tensors have no empty state).
  std::optional<tensor<double, coo_tensor<3>>> B_coo_;
  std::optional<tensor<double, csf>> B_csf_;
  std::optional<tensor<double, dense_row_major>> C_, D_;
  const tensor<double, coo_tensor<3>>& B_coo() const { return *B_coo_; }
  const tensor<double, csf>& B_csf() const { return *B_csf_; }
  const tensor<double, dense_row_major>& C() const { return *C_; }
  const tensor<double, dense_row_major>& D() const { return *D_; }

  void prepare() {
    if (ready) return;
    B_coo_.emplace(pack<coo_tensor<3>>(entries));
    B_csf_.emplace(pack<csf>(entries));
    C_.emplace(std::array<int, 2>{entries.dims()[1], R});
    D_.emplace(std::array<int, 2>{entries.dims()[2], R});
    for (std::size_t x = 0; x < C_->values().size(); ++x) C_->values()[x] = 1.0 + static_cast<double>(x % 5) / 4.0;
    for (std::size_t x = 0; x < D_->values().size(); ++x) D_->values()[x] = 1.0 + static_cast<double>(x % 3) / 2.0;
    ready = true;
  }
};

void hand_coo(const problem& p, std::vector<double>& A) {
  std::fill(A.begin(), A.end(), 0.0);
  const int* i0 = p.B_coo().level<0>().crd().data();
  const int* i1 = p.B_coo().level<1>().crd().data();
  const int* i2 = p.B_coo().level<2>().crd().data();
  const double* v = p.B_coo().values().data();
  const double* C = p.C().values().data();
  const double* D = p.D().values().data();
  const std::size_t nnz = p.B_coo().stored();
  for (std::size_t q = 0; q < nnz; ++q) {
    double* a = A.data() + static_cast<std::ptrdiff_t>(i0[q]) * R;
    const double* c = C + static_cast<std::ptrdiff_t>(i1[q]) * R;
    const double* d = D + static_cast<std::ptrdiff_t>(i2[q]) * R;
    for (int x = 0; x < R; ++x) a[x] += v[q] * c[x] * d[x];
  }
}

void hand_csf(const problem& p, std::vector<double>& A) {
  std::fill(A.begin(), A.end(), 0.0);
  const auto& L0 = p.B_csf().level<0>();
  const auto& L1 = p.B_csf().level<1>();
  const auto& L2 = p.B_csf().level<2>();
  const int *p0 = L0.pos().data(), *c0 = L0.crd().data(), *p1 = L1.pos().data(), *c1 = L1.crd().data(),
            *p2 = L2.pos().data(), *c2 = L2.crd().data();
  const double* v = p.B_csf().values().data();
  const double* C = p.C().values().data();
  const double* D = p.D().values().data();
  double t[R];
  for (int a0 = p0[0]; a0 < p0[1]; ++a0) {
    double* a = A.data() + static_cast<std::ptrdiff_t>(c0[a0]) * R;
    for (int a1 = p1[a0]; a1 < p1[a0 + 1]; ++a1) {
      for (int x = 0; x < R; ++x) t[x] = 0;
      for (int a2 = p2[a1]; a2 < p2[a1 + 1]; ++a2) {
        const double* d = D + static_cast<std::ptrdiff_t>(c2[a2]) * R;
        for (int x = 0; x < R; ++x) t[x] += v[a2] * d[x];
      }
      const double* c = C + static_cast<std::ptrdiff_t>(c1[a1]) * R;
      for (int x = 0; x < R; ++x) a[x] += t[x] * c[x];
    }
  }
}

template <class F>
const tensor<double, F>& B_of(const problem& p) {
  if constexpr (std::is_same_v<F, csf>)
    return p.B_csf();
  else
    return p.B_coo();
}

template <class F>
void run(benchmark::State& state, problem& p, const std::string& impl) {
  p.prepare();
  const int I = p.entries.dims()[0];
  std::vector<double> hand(static_cast<std::size_t>(I) * R);
  tensor<double, dense_row_major> A({I, R});
  const kokkos_executor<> space;
  const auto& B = B_of<F>(p);
  for (auto _ : state) {
    if (impl == "hand") {
      if constexpr (std::is_same_v<F, csf>)
        hand_csf(p, hand);
      else
        hand_coo(p, hand);
      benchmark::DoNotOptimize(hand.data());
    } else if (tlbench::parallel_impl(impl)) {
      compute(space, A(i, r), B(i, k, l) * p.C()(k, r) * p.D()(l, r));
      benchmark::DoNotOptimize(A.values().data());
    } else {
      A(i, r) = B(i, k, l) * p.C()(k, r) * p.D()(l, r);
      benchmark::DoNotOptimize(A.values().data());
    }
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, impl, static_cast<double>(p.entries.size()));
}

void register_all(const std::vector<std::shared_ptr<const tlbench::matrix_input>>&) {
  std::string dir = TENSORLEV_BENCH_TNS_DIR;
  if (const char* d = std::getenv("TENSORLEV_BENCH_TENSORS"); d != nullptr && *d != '\0') dir = d;
  if (dir.empty() || !std::filesystem::is_directory(dir)) {
    std::cerr << "no tensor folder (set TENSORLEV_BENCH_TENSORS)\n";
    return;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tns") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto p = std::make_shared<problem>();
    p->name = f.stem().string();
    p->entries = tensorlev::io::read_frostt<double, int>(f.string());
    if (p->entries.order() != 3) continue;
    for (const std::string impl : {"hand", "tensorlev", "tensorlev_kokkos"}) {
      benchmark::RegisterBenchmark(("mttkrp/" + impl + "/coo/" + p->name).c_str(),
                                   [p, impl](benchmark::State& s) { run<coo_tensor<3>>(s, *p, impl); })
          ->Apply(tlbench::common_options);
      benchmark::RegisterBenchmark(("mttkrp/" + impl + "/csf/" + p->name).c_str(),
                                   [p, impl](benchmark::State& s) { run<csf>(s, *p, impl); })
          ->Apply(tlbench::common_options);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // No matrices needed: skip loading them.
  setenv("TENSORLEV_BENCH_STENCIL", "0", 1);
  unsetenv("TENSORLEV_BENCH_MATRICES");
  return tlbench::suite_main(argc, argv, register_all);
}
