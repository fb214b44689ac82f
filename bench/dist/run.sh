#!/usr/bin/env bash
# Distributed benchmarks on 4 ranks: tensorlev SUMMA/Cannon (presets of the
# one engine), the same product in index notation and as a string-form
# statement, and the einsum against ScaLAPACK's pdgemm, row-blocked CSR SpMV
# against PETSc's MatMult and SpGEMM against PETSc's MatMatMult on the bench
# matrices, and einsums (MTTKRP, 3MM)
# on SOAP, unfused and first-index grids. Installs ScaLAPACK and PETSc from
# Debian, configures a benchmark build with MPI, fetches the matrices
# (scripts/fetch-bench-matrices.sh) and writes JSON next to the console
# output. Usage: bench/dist/run.sh [build-dir] [out-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench-dist}
out=${2:-$build/results}
# shellcheck source=../../scripts/lib/apt.sh
. "$root/scripts/lib/apt.sh"
"$root/scripts/install-deps.sh"
apt_install libscalapack-openmpi-dev libpetsc-real-dev pkg-config
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_BUILD_TESTS=OFF \
  -DTENSORLEV_BUILD_EXAMPLES=OFF -DTENSORLEV_BUILD_BENCHMARKS=ON -DTENSORLEV_MPI=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target bench_dist_gemm bench_dist_spmv bench_dist_spgemm bench_dist_einsum
matrices=$("$root/scripts/fetch-bench-matrices.sh" | tail -1)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One BLAS thread per rank: 4 ranks already cover (or oversubscribe) the cores.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mpirun --oversubscribe -n 4 "$build/bench/dist/bench_dist_gemm" --benchmark_out="$out/dist_gemm.json" \
  --benchmark_out_format=json
TENSORLEV_BENCH_MATRICES=$matrices mpirun --oversubscribe -n 4 "$build/bench/dist/bench_dist_spmv" \
  --benchmark_out="$out/dist_spmv.json" --benchmark_out_format=json
TENSORLEV_BENCH_MATRICES=$matrices mpirun --oversubscribe -n 4 "$build/bench/dist/bench_dist_spgemm" \
  --benchmark_out="$out/dist_spgemm.json" --benchmark_out_format=json
mpirun --oversubscribe -n 4 "$build/bench/dist/bench_dist_einsum" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/dist_einsum.json" --benchmark_out_format=json
