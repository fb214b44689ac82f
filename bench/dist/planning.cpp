// The distributed engine's per-step message planning (dist/fetch_plan.hpp),
// no MPI: one fetch's plan for every rank of a q x q grid over a matrix in
// q x q blocks, as every rank computes it at each step. Names:
// planning/<step>/<planner>/<q>; steps: `cannon` (each rank's next block is
// its right neighbour's panel), `summa` (a row's ranks all need one tile:
// a broadcast), `transpose` (each rank needs the transposed block shifted
// by a column: pieces from two owners); planners: `indexed` (plan_fetch
// over box indexes, the index of the held panels built in the timed loop,
// as the engine does per fetch), `scan` (every rank against every rank,
// the planner before the index: tests/dist/fetch_plan_scan.hpp; up to
// q = 64). Counter ranks = p.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fetch_plan_scan.hpp"
#include "tensorlev/dist/fetch_plan.hpp"

namespace {
namespace tdd = tensorlev::dist::detail;
using tdd::boxn;

boxn block(long long i, long long j, long long n) {
  boxn b{2, {}, {}};
  b.lo[0] = i * n;
  b.hi[0] = (i + 1) * n;
  b.lo[1] = j * n;
  b.hi[1] = (j + 1) * n;
  return b;
}

struct step {
  std::vector<int> dims;
  std::vector<boxn> tile, held, need;
  std::vector<bool> owner;
};

step make_step(int kind, int q) {
  const long long n = 16;
  step s;
  s.dims = {q, q};
  const int p = q * q;
  for (int r = 0; r < p; ++r) {
    const int i = r / q, j = r % q;
    s.tile.push_back(block(i, j, n));
    s.owner.push_back(true);
    if (kind == 0) {  // cannon
      s.held.push_back(block(i, (i + j + 2) % q, n));
      s.need.push_back(block(i, (i + j + 3) % q, n));
    } else if (kind == 1) {  // summa
      s.held.push_back(block(i, 4 % q, n));
      s.need.push_back(block(i, 5 % q, n));
    } else {  // transpose, shifted by a column
      s.held.push_back(boxn{2, {}, {}});
      boxn b = block(j, i, n);
      b.lo[1] += 1;
      b.hi[1] = std::min(b.hi[1] + 1, n * q);
      s.need.push_back(b);
    }
  }
  return s;
}

void indexed(benchmark::State& state, int kind) {
  const step s = make_step(kind, static_cast<int>(state.range(0)));
  const tdd::grid_coords g(s.dims);
  const tdd::box_index tiles(s.tile);
  std::size_t msgs = 0;
  for (auto _ : state) {
    const tdd::box_index held(s.held);
    const auto plan = tdd::plan_fetch(g, tiles, s.owner, held, s.need);
    msgs = plan.size();
    benchmark::DoNotOptimize(plan.data());
  }
  state.counters["ranks"] = static_cast<double>(s.tile.size());
  state.counters["messages"] = static_cast<double>(msgs);
}

void scan(benchmark::State& state, int kind) {
  const step s = make_step(kind, static_cast<int>(state.range(0)));
  std::size_t msgs = 0;
  for (auto _ : state) {
    const auto plan = fetch_plan_scan::scan_plan(s.dims, s.tile, s.owner, s.held, s.need);
    msgs = plan.size();
    benchmark::DoNotOptimize(plan.data());
  }
  state.counters["ranks"] = static_cast<double>(s.tile.size());
  state.counters["messages"] = static_cast<double>(msgs);
}

const char* const names[] = {"cannon", "summa", "transpose"};

const bool registered = [] {
  for (int kind = 0; kind < 3; ++kind) {
    benchmark::RegisterBenchmark((std::string("planning/") + names[kind] + "/indexed").c_str(), indexed, kind)
        ->RangeMultiplier(2)
        ->Range(16, 128)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("planning/") + names[kind] + "/scan").c_str(), scan, kind)
        ->RangeMultiplier(2)
        ->Range(16, 64)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();
}  // namespace

BENCHMARK_MAIN();
