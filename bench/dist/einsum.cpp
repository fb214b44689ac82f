// Distributed einsums (dist/einsum_run.hpp) on three kinds of grid (run
// with mpirun -n 4): `soap`, Deinsum's plan (contraction groups, each on
// its SOAP grid); `unfused`, one group per binary step, each on its SOAP
// grid (MTTKRP as KRP then TDOT); `first_index`, the naive baseline, every
// group split along its first index only (row blocks).
// Names: dist_einsum/<kernel>/<grid>/<N>; kernels: mttkrp (ijk,ja,ka->ia,
// N^3 tensor, rank 32) and 3mm (ij,jk,kl,lm->im, N x N matrices). Inputs
// are built in place from the example's entry formula on the ranks that
// hold their blocks, before a barrier (`fill_barrier`); the time is the
// slowest rank's from there to the end (`compute_seconds`: groups,
// redistribution, all-reduces; planning and building left out), and the
// result stays in blocks. Counters: bytes, all
// ranks' together (redistribution and all-reduces: the traffic model's);
// words, the largest per-rank sum of access sets over the groups (what a
// rank holds at once); GFLOPs from the path's FLOPs. Each kernel's
// blocks are checked against its sums on 32 entries per rank before timing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "mpi_bench.hpp"
#include "tensorlev/dist.hpp"

namespace {
namespace td = tensorlev::dist;

struct kernel {
  const char* name;
  const char* spec;
  std::vector<long long> (*extents)(long long n);
};

const kernel kernels[] = {
    {"mttkrp", "ijk,ja,ka->ia", [](long long n) { return std::vector<long long>{n, n, n, 32}; }},
    {"3mm", "ij,jk,kl,lm->im", [](long long n) { return std::vector<long long>{n, n, n, n, n}; }},
};

struct grid_kind {
  const char* name;
  td::einsum_options opt;
};

const grid_kind grids[] = {
    {"soap", {.gather = false, .bound = false, .fill_barrier = true}},
    {"unfused", {.fuse = false, .gather = false, .bound = false, .fill_barrier = true}},
    {"first_index", {.grid = td::einsum_grid::first_index, .gather = false, .bound = false, .fill_barrier = true}},
};

// One output entry at coordinates x (output order): the einsum with the
// output's indices fixed, its inputs sliced there (a slice with no index
// left is a scalar factor), run on one node along its own optimal path
// (3MM: a row of A through B and C into a column of D, O(N^2)).
template <class Fill>
double entry(const td::einsum_spec& e, const std::vector<long long>& ext, const std::vector<long long>& x, Fill& fill) {
  std::vector<long long> at(e.nindices, -1);
  for (std::size_t d = 0; d < e.output_order; ++d) at[static_cast<std::size_t>(e.output[d])] = x[d];
  std::string s;
  double scalar = 1;
  std::vector<std::vector<std::size_t>> free_dims;  // per kept input: its dimensions not fixed
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < e.ninputs; ++k) {
    std::vector<std::size_t> dims;
    for (std::size_t d = 0; d < e.input_order[k]; ++d)
      if (at[static_cast<std::size_t>(e.input[k][d])] < 0) dims.push_back(d);
    if (dims.empty()) {
      long long c[8]{};
      for (std::size_t d = 0; d < e.input_order[k]; ++d) c[d] = at[static_cast<std::size_t>(e.input[k][d])];
      scalar *= fill(k, c);
      continue;
    }
    if (!s.empty()) s += ',';
    for (const std::size_t d : dims) s += e.letter[static_cast<std::size_t>(e.input[k][d])];
    free_dims.push_back(dims);
    kept.push_back(k);
  }
  if (kept.empty()) return scalar;
  const td::einsum_spec se = td::parse_einsum_checked(s + "->");
  std::vector<long long> sext(se.nindices);
  for (std::size_t v = 0; v < se.nindices; ++v)
    for (std::size_t w = 0; w < e.nindices; ++w)
      if (e.letter[w] == se.letter[v]) sext[v] = ext[w];
  std::vector<td::dense_operand<double>> ops;
  for (std::size_t q = 0; q < kept.size(); ++q) {
    const std::size_t k = kept[q];
    td::dense_operand<double> t;
    for (std::size_t d = 0; d < se.input_order[q]; ++d) {
      t.idx.push_back(se.input[q][d]);
      t.ext.push_back(sext[static_cast<std::size_t>(se.input[q][d])]);
    }
    t.data.resize(static_cast<std::size_t>(t.size()));
    long long c[8]{};
    for (std::size_t d = 0; d < e.input_order[k]; ++d) c[d] = std::max(0LL, at[static_cast<std::size_t>(e.input[k][d])]);
    for (long long p = 0; p < t.size(); ++p) {
      long long r = p;
      for (std::size_t d = free_dims[q].size(); d-- > 0;) c[free_dims[q][d]] = r % t.ext[d], r /= t.ext[d];
      t.data[static_cast<std::size_t>(p)] = fill(k, c);
    }
    ops.push_back(std::move(t));
  }
  if (ops.size() == 1) {
    double sum = 0;
    for (const double v : ops[0].data) sum += v;
    return scalar * sum;
  }
  return scalar * td::run_path<double>(se, td::optimal_path(se, sext), sext, std::move(ops)).data[0];
}

void run(benchmark::State& state, const kernel& k, const grid_kind& g) {
  const long long n = state.range(0);
  const td::einsum_spec e = td::parse_einsum_checked(k.spec);
  const std::vector<long long> ext = k.extents(n);
  auto fill = [&e](std::size_t t, const long long* x) {
    long long v = static_cast<long long>(t) + 1;
    for (std::size_t d = 0; d < e.input_order[t]; ++d) v += static_cast<long long>(d + 1) * x[d];
    return static_cast<double>(v % 7 - 3);
  };
  {
    const auto r = td::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, g.opt);
    double d = 0;
    if (!r.local.data.empty()) {
      std::vector<long long> x(r.local.ext.size());
      for (long long q = 0; q < 32; ++q) {
        long long c = (q * 7919) % r.local.size(), at = c;
        for (std::size_t dd = x.size(); dd-- > 0;) x[dd] = r.local_lo[dd] + c % r.local.ext[dd], c /= r.local.ext[dd];
        d = std::max(d, std::abs(entry(e, ext, x, fill) - r.local.data[static_cast<std::size_t>(at)]));
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (d > 0) {  // integer entries: exact
      state.SkipWithError("the einsum's blocks differ from their sums");
      return;
    }
    long long bytes = 0, words = 0;
    for (const auto& gr : r.groups) bytes += gr.bytes_sent, words = std::max(words, gr.words_per_rank);
    state.counters["bytes"] = static_cast<double>(bytes);
    state.counters["words"] = static_cast<double>(words);
    state.counters["groups"] = static_cast<double>(r.groups.size());
    state.counters["GFLOPs"] =
        benchmark::Counter(r.path.flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto r = td::einsum_distributed<double>(MPI_COMM_WORLD, e, ext, fill, g.opt);
    double s = r.compute_seconds;
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(s);
  }
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (const kernel& k : kernels)
    for (const grid_kind& g : grids) {
      auto* b = benchmark::RegisterBenchmark((std::string("dist_einsum/") + k.name + "/" + g.name).c_str(),
                                            [&k, &g](benchmark::State& s) { run(s, k, g); });
      if (std::string(k.name) == "mttkrp") b->Arg(64)->Arg(128);
      else b->Arg(512)->Arg(1024);
      b->Iterations(10)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  tlbench::run_all(argc, argv);
  MPI_Finalize();
  return 0;
}
