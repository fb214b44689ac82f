#!/usr/bin/env bash
# The benchmark suite on real matrices (bench/suite.hpp): fetches the
# matrices (scripts/fetch-bench-matrices.sh), runs bench_suite_{spmv,sparse,
# mttkrp,fuse} once with one Kokkos thread (every serial implementation) and once
# with two (tensorlev_kokkos and the parallel STREAM triad), builds and runs
# bench_kokkos_kernels (Debian's serial Kokkos Kernels, a separate CMake
# project) and bench/peers (MKL, CXSparse, SPLATT and PETSc, another one), and
# prints the summary tables (bench/summarize.py).
#
# Usage: bench/run-suite.sh <build-dir> [results-dir]
#   <build-dir>: a build with -DTENSORLEV_BUILD_BENCHMARKS=ON -DTENSORLEV_KOKKOS=ON
#   results-dir: default <build-dir>/suite-results (JSON per run, summary.md)
# Environment: TENSORLEV_BENCH_REPS (rounds, default 3; the minimum over the
# rounds is reported): every binary, tensorlev's and the peers', runs once
# per round with one repetition, so that a slow phase of the host falls on
# tensorlev and its peers alike rather than on one binary's whole run;
# TENSORLEV_BENCH_MIN_TIME (seconds per benchmark and repetition,
# default 0.1), TENSORLEV_BENCH_SMOKE=1 (CI: small inputs, one short run
# each, nothing fetched), TENSORLEV_BENCH_STENCIL (stencil size, default 100; 0: none),
# TENSORLEV_BENCH_NO_KK=1 skips Kokkos Kernels, TENSORLEV_BENCH_NO_PEERS=1
# MKL, CXSparse, SPLATT and PETSc; TENSORLEV_BENCH_TENSORS (SPLATT's tensors,
# default ../shared/data/tns), TENSORLEV_BENCH_CHAIN (vector length of the
# fusion chain, default 2^23), TENSORLEV_BENCH_CHAIN_CACHED (its in-cache
# length, default 2^16).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench/run-suite.sh <build-dir> [results-dir]}" && pwd)
out=${2:-$build/suite-results}
mkdir -p "$out"
reps=${TENSORLEV_BENCH_REPS:-3}
min_time=${TENSORLEV_BENCH_MIN_TIME:-0.1}
# shellcheck source=scripts/lib/apt.sh
. "$root/scripts/lib/apt.sh"

if [ "${TENSORLEV_BENCH_SMOKE:-0}" = 1 ]; then
  # CI's smoke run: every kernel and peer built and run briefly on the
  # repository's small test matrices (real, integer and pattern entries),
  # a 10^3 stencil and its one small tensor (nothing fetched); the times
  # mean nothing.
  reps=1
  min_time=0.001
  TENSORLEV_BENCH_MATRICES=$out/smoke-matrices
  mkdir -p "$TENSORLEV_BENCH_MATRICES"
  for m in LFAT5 Ragusa16 can___24 impcol_a; do
    cp "$root/tests/data/$m.mtx" "$TENSORLEV_BENCH_MATRICES/"
  done
  export TENSORLEV_BENCH_STENCIL=${TENSORLEV_BENCH_STENCIL:-10}
  export TENSORLEV_BENCH_CHAIN=${TENSORLEV_BENCH_CHAIN:-10000}
  export TENSORLEV_BENCH_TENSORS=${TENSORLEV_BENCH_TENSORS:-$root/tests/data}
else
  TENSORLEV_BENCH_MATRICES=$("$root/scripts/fetch-bench-matrices.sh" | tail -1)
fi
export TENSORLEV_BENCH_MATRICES
export OMP_PROC_BIND=spread OMP_PLACES=threads
common=("--benchmark_min_time=$min_time" --benchmark_repetitions=1 --benchmark_enable_random_interleaving=true
  --benchmark_out_format=json)
rm -f "$out"/*.json
# CG's other formats: tensorlev[_kokkos]_<rows8|sell8|sell8s>[_unfused].
serial='^(stream/triad/serial|[a-z_]+/(hand|eigen|tensorlev|tensorlev_direct|tensorlev_convert|tensorlev(_rows8|_sell8|_sell8s)?(_unfused)?)/)'
parallel='^(stream/triad/kokkos|[a-z_]+/tensorlev_kokkos(_rows8|_sell8|_sell8s)?(_unfused)?/)'
for family in spmv sparse mttkrp fuse; do
  [ -x "$build/bench/bench_suite_$family" ] || {
    echo "missing $build/bench/bench_suite_$family (configure with -DTENSORLEV_KOKKOS=ON)" >&2
    exit 1
  }
done
if [ "${TENSORLEV_BENCH_NO_KK:-0}" != 1 ]; then
  apt_install libtrilinos-kokkos-kernels-dev libtrilinos-kokkos-dev libblas-dev liblapack-dev
  cmake -S "$root/bench/kokkos_kernels" -B "$build/kokkos-kernels" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build/kokkos-kernels" >/dev/null
fi
if [ "${TENSORLEV_BENCH_NO_PEERS:-0}" != 1 ]; then
  # MKL (Debian's non-free component; installed for this benchmark only, it
  # does not become the system BLAS: its debconf default keeps the
  # alternatives as they are), CXSparse and SPLATT (built from
  # ../shared/vendor into the cache).
  apt_ensure_non_free libmkl-dev
  apt_install libmkl-dev libsuitesparse-dev pkg-config libbenchmark-dev libpetsc-real-dev
  splatt=$("$root/scripts/build-splatt.sh" | tail -1)
  cmake -S "$root/bench/peers" -B "$build/peers" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DSPLATT_ROOT=$splatt" >/dev/null
  cmake --build "$build/peers" >/dev/null
fi

for ((round = 1; round <= reps; round++)); do
  r=r$round
  for family in spmv sparse mttkrp fuse; do
    bin="$build/bench/bench_suite_$family"
    echo "--- round $round of $reps: $family, serial (1 Kokkos thread)" >&2
    "$bin" --kokkos-threads=1 "${common[@]}" "--benchmark_filter=$serial" "--benchmark_out=$out/$family-serial-$r.json" \
      > "$out/$family-serial-$r.txt"
    echo "--- round $round of $reps: $family, 2 Kokkos threads" >&2
    "$bin" --kokkos-threads=2 "${common[@]}" "--benchmark_filter=$parallel" "--benchmark_out=$out/$family-2threads-$r.json" \
      > "$out/$family-2threads-$r.txt"
  done
  if [ "${TENSORLEV_BENCH_NO_KK:-0}" != 1 ]; then
    echo "--- round $round of $reps: Kokkos Kernels (Debian, Serial)" >&2
    "$build/kokkos-kernels/bench_kokkos_kernels" "${common[@]}" "--benchmark_out=$out/kokkos-kernels-$r.json" \
      > "$out/kokkos-kernels-$r.txt"
  fi
  if [ "${TENSORLEV_BENCH_NO_PEERS:-0}" != 1 ]; then
    echo "--- round $round of $reps: MKL, CXSparse, SPLATT and PETSc (bench/peers)" >&2
    "$build/peers/bench_peers" "${common[@]}" "--benchmark_out=$out/peers-$r.json" > "$out/peers-$r.txt"
    TENSORLEV_BENCH_TENSORS=${TENSORLEV_BENCH_TENSORS:-$root/../shared/data/tns} \
      "$build/peers/bench_splatt" "${common[@]}" "--benchmark_out=$out/splatt-$r.json" > "$out/splatt-$r.txt"
    # PETSc's CG (one rank: MPI's singleton start, which Open MPI refuses to root without these).
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      "$build/peers/bench_petsc" "${common[@]}" "--benchmark_out=$out/petsc-$r.json" > "$out/petsc-$r.txt"
  fi
done

command -v python3 >/dev/null || apt_install python3
python3 "$root/bench/summarize.py" "$out"/*.json | tee "$out/summary.md"
