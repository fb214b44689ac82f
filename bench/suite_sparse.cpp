// Sparse results on real square matrices (bench/suite.hpp): each timed
// iteration builds a new CSR matrix, as Eigen's `C = A + B` and `C = A * B`
// do.
//
//   add/<hand|eigen|tensorlev|tensorlev_kokkos>/csr/<matrix>      C = A + B, B = A^T in CSR
//   spgemm/<hand|eigen|tensorlev|tensorlev_kokkos>/csr/<matrix>   C = A * A (left out above 3e6 nonzeros)
//   add/<tensorlev|tensorlev_kokkos>/<dcsr|hash_rows>/<matrix>     C = A + B into DCSR (assembled level by
//                                                                  level) and hashed rows (inserted)
//   spgemm/<tensorlev|tensorlev_kokkos>/csr_unsorted/<matrix>      C = A * A into CSR with unsorted rows
//   spgemm/<tensorlev|tensorlev_kokkos>/csr_numeric/<matrix>       compute_numeric: values into C's pattern
//   spgemm/<tensorlev|tensorlev_kokkos>/csr_numeric_plan/<matrix>  numeric_plan::run: the same, the patterns
//                                                                  checked once (untimed) and compared after
//   spgemm/<tensorlev|tensorlev_kokkos>/csr_fresh/<matrix>         C = A * A into a new, empty C each time
//
// `hand` is a two-pass (count, then fill) row merge for add and a
// Gustavson row-by-row product with a dense accumulator, sorted per row,
// for SpGEMM. bench_kokkos_kernels measures Kokkos Kernels on the same
// inputs.
#include <Eigen/SparseCore>
#include <algorithm>
#include <optional>

#include "suite.hpp"
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/numeric_plan.hpp"
#include "tensorlev/pack.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::indices;
using tlbench::matrix_input;
using eigen_csr = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
// Rows dense, columns hashed: the inserted output.
struct hash_rows : format<levels<dense<>, hashed<>>> {};

struct csr_arrays {
  std::vector<int> pos, crd;
  std::vector<double> val;
};

eigen_csr to_eigen(const tensor<double, csr>& A) {
  eigen_csr e(A.dimension(0), A.dimension(1));
  const auto& pos = A.level<1>().pos();
  const auto& crd = A.level<1>().crd();
  e.resizeNonZeros(static_cast<Eigen::Index>(crd.size()));
  std::copy(pos.begin(), pos.end(), e.outerIndexPtr());
  std::copy(crd.begin(), crd.end(), e.innerIndexPtr());
  std::copy(A.values().begin(), A.values().end(), e.valuePtr());
  return e;
}

struct problem {
  std::shared_ptr<const matrix_input> in;
  bool ready = false;
  // Built on first use (tensors have no empty state).
  std::optional<tensor<double, csr>> A, B;  // B = A^T
  std::optional<tensor<double, csr>> empty;  // the output's starting value (no entries)
  eigen_csr A_eigen, B_eigen;

  explicit problem(std::shared_ptr<const matrix_input> m) : in(std::move(m)) {}
  void prepare() {
    if (ready) return;
    A.emplace(pack<csr>(in->entries));
    coordinate_list<double, int> t({in->cols(), in->rows()});
    t.reserve(in->entries.size());
    const int* x = in->entries.raw_coords().data();
    for (std::size_t e = 0; e < in->entries.size(); ++e) t.push_back({x[2 * e + 1], x[2 * e]}, in->entries.value(e));
    B.emplace(pack<csr>(t));
    empty.emplace(pack<csr>(coordinate_list<double, int>({in->rows(), in->cols()})));
    A_eigen = to_eigen(*A);
    B_eigen = to_eigen(*B);
    ready = true;
  }
};

const int* pos_of(const tensor<double, csr>& A) { return A.level<1>().pos().data(); }
const int* crd_of(const tensor<double, csr>& A) { return A.level<1>().crd().data(); }

// Row-merge of two sorted CSR matrices: count pass, then fill.
csr_arrays add_hand(const tensor<double, csr>& A, const tensor<double, csr>& B) {
  const int m = A.dimension(0);
  const int *ap = pos_of(A), *ac = crd_of(A), *bp = pos_of(B), *bc = crd_of(B);
  const double *av = A.values().data(), *bv = B.values().data();
  csr_arrays C;
  C.pos.assign(static_cast<std::size_t>(m) + 1, 0);
  for (int r = 0; r < m; ++r) {
    int p = ap[r], q = bp[r], n = 0;
    while (p < ap[r + 1] && q < bp[r + 1]) {
      const int a = ac[p], b = bc[q];
      p += a <= b, q += b <= a, ++n;
    }
    C.pos[static_cast<std::size_t>(r) + 1] = C.pos[static_cast<std::size_t>(r)] + n + (ap[r + 1] - p) + (bp[r + 1] - q);
  }
  C.crd.resize(static_cast<std::size_t>(C.pos.back()));
  C.val.resize(static_cast<std::size_t>(C.pos.back()));
  int* cc = C.crd.data();
  double* cv = C.val.data();
  for (int r = 0; r < m; ++r) {
    int p = ap[r], q = bp[r], o = C.pos[static_cast<std::size_t>(r)];
    while (p < ap[r + 1] && q < bp[r + 1]) {
      const int a = ac[p], b = bc[q];
      if (a < b) cc[o] = a, cv[o++] = av[p++];
      else if (b < a) cc[o] = b, cv[o++] = bv[q++];
      else cc[o] = a, cv[o++] = av[p++] + bv[q++];
    }
    for (; p < ap[r + 1]; ++p) cc[o] = ac[p], cv[o++] = av[p];
    for (; q < bp[r + 1]; ++q) cc[o] = bc[q], cv[o++] = bv[q];
  }
  return C;
}

// Gustavson: row i of C accumulates A(i,j) * row j of B in a dense
// workspace; the touched columns are sorted and appended.
csr_arrays spgemm_hand(const tensor<double, csr>& A, const tensor<double, csr>& B) {
  const int m = A.dimension(0), n = B.dimension(1);
  const int *ap = pos_of(A), *ac = crd_of(A), *bp = pos_of(B), *bc = crd_of(B);
  const double *av = A.values().data(), *bv = B.values().data();
  std::vector<double> ws(static_cast<std::size_t>(n), 0.0);
  std::vector<char> mark(static_cast<std::size_t>(n), 0);
  std::vector<int> touched;
  csr_arrays C;
  C.pos.assign(static_cast<std::size_t>(m) + 1, 0);
  for (int r = 0; r < m; ++r) {
    for (int p = ap[r]; p < ap[r + 1]; ++p) {
      const int j = ac[p];
      const double a = av[p];
      for (int q = bp[j]; q < bp[j + 1]; ++q) {
        const int k = bc[q];
        if (!mark[static_cast<std::size_t>(k)]) mark[static_cast<std::size_t>(k)] = 1, touched.push_back(k);
        ws[static_cast<std::size_t>(k)] += a * bv[q];
      }
    }
    std::sort(touched.begin(), touched.end());
    for (const int k : touched) {
      C.crd.push_back(k);
      C.val.push_back(ws[static_cast<std::size_t>(k)]);
      ws[static_cast<std::size_t>(k)] = 0, mark[static_cast<std::size_t>(k)] = 0;
    }
    touched.clear();
    C.pos[static_cast<std::size_t>(r) + 1] = static_cast<int>(C.crd.size());
  }
  return C;
}

// C = A + B or C = A * A into format F: DCSR and hashed rows for add (no
// peer: the parallel assemble and insert paths against their serial runs),
// CSR with unsorted rows for SpGEMM (against MKL's and CXSparse's unsorted
// products).
template <class F>
void run_into(benchmark::State& state, problem& p, const std::string& op, const std::string& impl) {
  p.prepare();
  const kokkos_executor<> space;
  const bool par = tlbench::parallel_impl(impl);
  const int n = p.A->dimension(0);
  // Into the same C every iteration, as a solver recomputing a product
  // does: the run assembles into the arrays C already holds (SpGEMM;
  // release_arrays), so no iteration pays for fresh pages.
  tensor<double, F> C = pack<F>(coordinate_list<double, int>({n, n}));
  auto once = [&] {
    if (op == "add")
      par ? compute(space, C(i, j), (*p.A)(i, j) + (*p.B)(i, j)) : (void)(C(i, j) = (*p.A)(i, j) + (*p.B)(i, j));
    else
      par ? compute(space, C(i, k), (*p.A)(i, j) * (*p.A)(j, k)) : (void)(C(i, k) = (*p.A)(i, j) * (*p.A)(j, k));
  };
  once();  // untimed: C then holds arrays of the result's size
  std::size_t out_stored = 0;
  for (auto _ : state) {
    once();
    out_stored = C.stored();
    benchmark::DoNotOptimize(C.values().data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, impl, static_cast<double>(p.A->stored()));
  state.counters["out_stored"] = static_cast<double>(out_stored);  // hashed: slots, not nonzeros
}

// SpGEMM's numeric phase alone: C = A * A assembled once (untimed), then
// compute_numeric writes the product's values into C's pattern; with
// `plan`, a numeric_plan runs it (its first, checked run and its first
// trusted run untimed: the timed runs compare the patterns and skip the
// per-product check, through the slot table where the plan keeps one).
template <class F>
void run_numeric(benchmark::State& state, problem& p, const std::string& impl, bool plan) {
  p.prepare();
  const kokkos_executor<> space;
  const bool par = tlbench::parallel_impl(impl);
  const int n = p.A->dimension(0);
  tensor<double, F> C = pack<F>(coordinate_list<double, int>({n, n}));
  C(i, k) = (*p.A)(i, j) * (*p.A)(j, k);
  numeric_plan np(C(i, k), (*p.A)(i, j) * (*p.A)(j, k));
  const executor& ex = par ? static_cast<const executor&>(space) : static_cast<const executor&>(serial);
  // The checked run, then the first trusted run (which records the slot
  // table or builds the jam's table: once per pattern), untimed.
  if (plan) np.run(ex), np.run(ex);
  for (auto _ : state) {
    if (plan)
      np.run(ex);
    else
      par ? compute_numeric(space, C(i, k), (*p.A)(i, j) * (*p.A)(j, k))
          : compute_numeric(C(i, k), (*p.A)(i, j) * (*p.A)(j, k));
    benchmark::DoNotOptimize(C.values().data());
    benchmark::ClobberMemory();
  }
  if (plan && !np.trusted()) state.SkipWithError("numeric_plan did not trust its copy of the patterns");
  tlbench::set_counters(state, impl, static_cast<double>(p.A->stored()));
  state.counters["out_stored"] = static_cast<double>(C.stored());
  if (plan) state.counters["slot_table_bytes"] = static_cast<double>(np.slot_table_bytes());
}

// SpGEMM into a new C every iteration (created empty and destroyed inside
// the timed loop): the first product of a solver, paying for fresh arrays
// and their pages as Eigen, MKL and the hand loop do in every iteration.
void run_fresh(benchmark::State& state, problem& p, const std::string& impl) {
  p.prepare();
  const kokkos_executor<> space;
  const bool par = tlbench::parallel_impl(impl);
  std::size_t out_nnz = 0;
  for (auto _ : state) {
    tensor<double, csr> C = *p.empty;
    par ? compute(space, C(i, k), (*p.A)(i, j) * (*p.A)(j, k)) : (void)(C(i, k) = (*p.A)(i, j) * (*p.A)(j, k));
    out_nnz = C.stored();
    benchmark::DoNotOptimize(C.values().data());
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, impl, static_cast<double>(p.A->stored()));
  state.counters["out_nnz"] = static_cast<double>(out_nnz);
}

void run(benchmark::State& state, problem& p, const std::string& op, const std::string& impl) {
  p.prepare();
  const kokkos_executor<> space;
  const bool par = tlbench::parallel_impl(impl);
  const bool add = op == "add";
  std::size_t out_nnz = 0;
  // tensorlev recomputes into the same C (see run_into), from one untimed
  // product on.
  tensor<double, csr> C = *p.empty;
  auto product = [&] {
    if (add)
      par ? compute(space, C(i, j), (*p.A)(i, j) + (*p.B)(i, j)) : (void)(C(i, j) = (*p.A)(i, j) + (*p.B)(i, j));
    else
      par ? compute(space, C(i, k), (*p.A)(i, j) * (*p.A)(j, k)) : (void)(C(i, k) = (*p.A)(i, j) * (*p.A)(j, k));
  };
  if (impl != "hand" && impl != "eigen") product();
  for (auto _ : state) {
    if (impl == "hand") {
      const csr_arrays C = add ? add_hand(*p.A, *p.B) : spgemm_hand(*p.A, *p.A);
      out_nnz = C.crd.size();
      benchmark::DoNotOptimize(C.val.data());
    } else if (impl == "eigen") {
      eigen_csr C;
      if (add)
        C = p.A_eigen + p.B_eigen;
      else
        C = p.A_eigen * p.A_eigen;
      out_nnz = static_cast<std::size_t>(C.nonZeros());
      benchmark::DoNotOptimize(C.valuePtr());
    } else {
      product();
      out_nnz = C.stored();
      benchmark::DoNotOptimize(C.values().data());
    }
    benchmark::ClobberMemory();
  }
  tlbench::set_counters(state, impl, static_cast<double>(p.A->stored()));
  state.counters["out_nnz"] = static_cast<double>(out_nnz);
}

void register_all(const std::vector<std::shared_ptr<const matrix_input>>& matrices) {
  for (const auto& m : matrices) {
    if (!m->square()) continue;
    auto p = std::make_shared<problem>(m);
    for (const std::string op : {"add", "spgemm"}) {
      if (op == "spgemm" && m->entries.size() > 3000000) {
        std::cerr << m->name << ": spgemm left out (over 3e6 nonzeros)\n";
        continue;
      }
      for (const std::string impl : {"hand", "eigen", "tensorlev", "tensorlev_kokkos"})
        benchmark::RegisterBenchmark((op + "/" + impl + "/csr/" + m->name).c_str(),
                                     [p, op, impl](benchmark::State& s) { run(s, *p, op, impl); })
            ->Apply(tlbench::common_options);
      if (op == "spgemm")
        for (const std::string impl : {"tensorlev", "tensorlev_kokkos"})
          benchmark::RegisterBenchmark(("spgemm/" + impl + "/csr_unsorted/" + m->name).c_str(),
                                       [p, impl](benchmark::State& s) { run_into<csr_unsorted>(s, *p, "spgemm", impl); })
              ->Apply(tlbench::common_options);
      if (op == "spgemm")
        for (const std::string impl : {"tensorlev", "tensorlev_kokkos"})
          benchmark::RegisterBenchmark(("spgemm/" + impl + "/csr_fresh/" + m->name).c_str(),
                                       [p, impl](benchmark::State& s) { run_fresh(s, *p, impl); })
              ->Apply(tlbench::common_options);
      if (op == "spgemm")
        for (const std::string impl : {"tensorlev", "tensorlev_kokkos"})
          benchmark::RegisterBenchmark(("spgemm/" + impl + "/csr_numeric/" + m->name).c_str(),
                                       [p, impl](benchmark::State& s) { run_numeric<csr>(s, *p, impl, false); })
              ->Apply(tlbench::common_options);
      if (op == "spgemm")
        for (const std::string impl : {"tensorlev", "tensorlev_kokkos"})
          benchmark::RegisterBenchmark(("spgemm/" + impl + "/csr_numeric_plan/" + m->name).c_str(),
                                       [p, impl](benchmark::State& s) { run_numeric<csr>(s, *p, impl, true); })
              ->Apply(tlbench::common_options);
    }
    for (const std::string impl : {"tensorlev", "tensorlev_kokkos"}) {
      benchmark::RegisterBenchmark(("add/" + impl + "/dcsr/" + m->name).c_str(),
                                   [p, impl](benchmark::State& s) { run_into<dcsr>(s, *p, "add", impl); })
          ->Apply(tlbench::common_options);
      benchmark::RegisterBenchmark(("add/" + impl + "/hash_rows/" + m->name).c_str(),
                                   [p, impl](benchmark::State& s) { run_into<hash_rows>(s, *p, "add", impl); })
          ->Apply(tlbench::common_options);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return tlbench::suite_main(argc, argv, register_all); }
