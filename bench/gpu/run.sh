#!/usr/bin/env bash
# The GPU run (issue 17), on a machine with an NVIDIA GPU, nvcc 13, CMake
# and Ninja but no package registry. Prepare on this machine with
# scripts/gpu-inputs.sh (fills the ignored gpu-inputs/), then with the
# device tool, carrying gpu-inputs, one stage per call (each fits the
# tool's 10 minutes on a warm machine; outputs stay in gpu-inputs/):
#
#   bash bench/gpu/run.sh deps    googletest, Google Benchmark and Kokkos
#                                 4.6.99 (CUDA, sm_90) built from the
#                                 carried sources into gpu-inputs/prefix
#   bash bench/gpu/run.sh tests   the device tests on the GPU
#                                 (scripts/check-kokkos-cuda.sh --run)
#   bash bench/gpu/run.sh bench   bench/gpu/device_bench.cpp: copy bandwidth,
#                                 SpMV tensorlev vs cuSPARSE, SpGEMM cuSPARSE;
#                                 JSON and console output into $OUT (or
#                                 gpu-inputs/results)
#   bash bench/gpu/run.sh explore tl-explore built against that Kokkos
#                                 (nvcc_wrapper) and run with --device (the
#                                 device form on Kokkos::Cuda): SpMV, add
#                                 and SpGEMM over the bench matrices in
#                                 every format the device form takes, each
#                                 checked against the reference loops
#   bash bench/gpu/run.sh all     the four in order
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
in=$root/gpu-inputs
[ -f "$in/kokkos-4.6.99.tar.gz" ] || { echo "bench/gpu/run.sh: no $in (run scripts/gpu-inputs.sh first)" >&2; exit 1; }
export TENSORLEV_NO_APT=1 XDG_CACHE_HOME=$in/cache TENSORLEV_KOKKOS4_TARBALL=$in/kokkos-4.6.99.tar.gz
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
prefix=$in/prefix
jobs=$(nproc)
stage=${1:-all}

deps() {
  mkdir -p "$in/src" "$prefix"
  if [ ! -f "$prefix/lib/cmake/GTest/GTestConfig.cmake" ] && [ ! -f "$prefix/lib64/cmake/GTest/GTestConfig.cmake" ]; then
    tar -xzf "$in/googletest.tar.gz" -C "$in/src"
    cmake -S "$in/src/googletest" -B "$in/build-gtest" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_INSTALL_PREFIX=$prefix" >/dev/null
    cmake --build "$in/build-gtest" -j "$jobs" >/dev/null
    cmake --install "$in/build-gtest" >/dev/null
  fi
  if [ ! -f "$prefix/lib/cmake/benchmark/benchmarkConfig.cmake" ] && [ ! -f "$prefix/lib64/cmake/benchmark/benchmarkConfig.cmake" ]; then
    rm -rf "$in/src/benchmark"
    mkdir -p "$in/src/benchmark"
    tar -xzf "$in/benchmark.tar.gz" -C "$in/src/benchmark" --strip-components=1
    cmake -S "$in/src/benchmark" -B "$in/build-benchmark" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_INSTALL_PREFIX=$prefix" -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF \
      -DBENCHMARK_ENABLE_WERROR=OFF >/dev/null
    cmake --build "$in/build-benchmark" -j "$jobs" >/dev/null
    cmake --install "$in/build-benchmark" >/dev/null
  fi
  "$root/scripts/build-kokkos.sh" --kokkos4 --cuda | tail -1
}

tests() {
  CMAKE_PREFIX_PATH=$prefix "$root/scripts/check-kokkos-cuda.sh" --run "$in/build-tensorlev-cuda"
}

bench() {
  local kokkos results=${OUT:-$in/results}
  kokkos=$("$root/scripts/build-kokkos.sh" --kokkos4 --cuda | tail -1)
  cmake -S "$root/bench/gpu" -B "$in/build-bench" -G Ninja "-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper" \
    "-DKokkos_ROOT=$kokkos" "-DCMAKE_PREFIX_PATH=$prefix" >/dev/null
  cmake --build "$in/build-bench" -j "$jobs"
  mkdir -p "$results"
  nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv >"$results/gpu.txt" 2>&1 || true
  TENSORLEV_BENCH_MATRICES=$in/matrices "$in/build-bench/bench_gpu" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true "--benchmark_out=$results/bench_gpu.json" --benchmark_out_format=json |
    tee "$results/bench_gpu.txt"
}

explore() {
  local kokkos results=${OUT:-$in/results} status=0
  kokkos=$("$root/scripts/build-kokkos.sh" --kokkos4 --cuda | tail -1)
  cmake -S "$root" -B "$in/build-explore" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper" -DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos" \
    -DTENSORLEV_BUILD_TESTS=OFF "-DCMAKE_PREFIX_PATH=$prefix" >/dev/null
  cmake --build "$in/build-explore" -j "$jobs" --target tl-explore
  mkdir -p "$results"
  : >"$results/explore_device.txt"
  for m in "$in"/matrices/*.mtx; do
    for k in spmv add spgemm; do
      # exit status 1: a format disagrees with the reference or failed; 2: a
      # usage error such as a non-square matrix for add (recorded, not fatal)
      "$in/build-explore/examples/explore/tl-explore" --kernel "$k" --device --reps 3 --quiet "$m" \
        >>"$results/explore_device.txt" 2>&1 || { [ $? -eq 2 ] || status=1; }
    done
  done
  cat "$results/explore_device.txt"
  return $status
}

case $stage in
  deps) deps ;;
  tests) tests ;;
  bench) bench ;;
  explore) explore ;;
  all) deps && tests && bench && explore ;;
  *) echo "usage: bench/gpu/run.sh deps|tests|bench|explore|all" >&2; exit 2 ;;
esac
