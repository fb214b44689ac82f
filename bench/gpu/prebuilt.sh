#!/usr/bin/env bash
# The GPU run with everything compiled on this machine (no GPU needed to
# compile or link) and only run on the GPU machine: a lent GPU comes with
# 15 minutes of device time a session, start included, and building Kokkos,
# the device tests and the explorer there (bench/gpu/run.sh) does not fit in
# it. Two stages:
#
#   bash bench/gpu/prebuilt.sh build   here: Kokkos 4.6.99 with CUDA (sm_90,
#       scripts/build-kokkos.sh --kokkos4 --cuda, cached), then
#       test_kokkos_device_cuda_{0,1,2}, bench_gpu (bench/gpu/device_bench.cpp)
#       and tl-explore built with nvcc_wrapper in build-gpu/, copied
#       stripped into gpu-inputs/prebuilt/ with the shared libraries they
#       need that a CUDA image may lack (Google Benchmark's, the CUDA
#       runtime), and the bench
#       matrices as one xz archive (the device tool carries 64 MiB).
#       TENSORLEV_GPU_EXPLORE=0 leaves the explorer out (its 23 translation
#       units through nvcc are most of the build).
#   bash bench/gpu/prebuilt.sh run     there, with the device tool, carry
#       ["gpu-inputs/prebuilt"]: the device tests, the benchmark against
#       cuSPARSE and tl-explore --device on the matrices, each step under its
#       own time limit and all by a deadline (TL_GPU_DEADLINE, 540 s), and
#       the device tests again under compute-sanitizer's
#       memcheck (TL_GPU_MEMCHECK=0 leaves it out); logs and JSON packed into $OUT/results.tar.gz.
#       Exit status 1 if a step failed (the others still run).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pre=$root/gpu-inputs/prebuilt

build() {
  set -e
  local kokkos build=$root/build-gpu jobs
  jobs=$(nproc)
  kokkos=$("$root/scripts/build-kokkos.sh" --kokkos4 --cuda | tail -1)
  # As scripts/check-kokkos-cuda.sh --run: the tests' host side at -O1
  # (their default), every case on every format.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper" \
    -DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos" -DTENSORLEV_BUILD_EXAMPLES=ON -DTENSORLEV_WARNINGS_AS_ERRORS=ON \
    -DTENSORLEV_DEVICE_TESTS=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG" -DTENSORLEV_DEVICE_TEST_OPT= \
    -DTENSORLEV_DEVICE_TEST_API_SUBSET=OFF >/dev/null
  local targets=(test_kokkos_device_cuda_0 test_kokkos_device_cuda_1 test_kokkos_device_cuda_2)
  [ "${TENSORLEV_GPU_EXPLORE:-1}" = 0 ] || targets+=(tl-explore)
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
  cmake -S "$root/bench/gpu" -B "$build/bench" -G Ninja "-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper" \
    "-DKokkos_ROOT=$kokkos" >/dev/null
  cmake --build "$build/bench" -j "$jobs"
  rm -rf "$pre"
  mkdir -p "$pre/lib"
  local bins=("$build"/tests/kokkos/test_kokkos_device_cuda_{0,1,2} "$build/bench/bench_gpu")
  [ "${TENSORLEV_GPU_EXPLORE:-1}" = 0 ] || bins+=("$build/examples/explore/tl-explore")
  for b in "${bins[@]}"; do
    strip -o "$pre/$(basename "$b")" "$b"
    # Libraries outside the C/C++ runtime, the CUDA driver and cuSPARSE
    # (which the GPU image has): Google Benchmark's and the CUDA runtime.
    ldd "$b" | awk '$3 ~ /^\// {print $3}' | { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libdl|libpthread|librt|libcuda|libcusparse|libnvJitLink)[.-]' || true; } |
      while read -r lib; do cp -L "$lib" "$pre/lib/"; done
    # The driver library is the GPU machine's; anything else missing here is not carried.
    ldd "$b" | grep 'not found' | grep -v 'libcuda[.]so' | sed "s|^|prebuilt.sh: $(basename "$b") needs|" >&2 || true
  done
  local matrices
  matrices=$("$root/scripts/fetch-bench-matrices.sh" | tail -1)
  (cd "$matrices" && tar -cJf "$pre/matrices.tar.xz" ./*.mtx)
  du -sh "$pre"
}

# step NAME SECONDS COMMAND...: one step, its output in NAME.txt among the
# results ($res), which are packed into $OUT/results.tar.gz after each step
# (the device tool returns at most 8 files, and what $OUT holds when a
# command is stopped at its limit).
step() {
  local name=$1 limit=$2
  shift 2
  # Every step also ends by the run's deadline (TL_GPU_DEADLINE seconds
  # after it began, 540 by default: inside the device tool's 600 a call).
  local left=$((deadline - SECONDS))
  if ((left < 10)); then
    echo "== $name: skipped (the run's deadline is reached)"
    return 1
  fi
  ((limit <= left)) || limit=$left
  echo "== $name (limit ${limit} s)"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$res/$name.txt" 2>&1
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  tail -n 15 "$res/$name.txt"
  tar -czf "$OUT/results.tar.gz" -C "$res" .
  return $rc
}

run() {
  [ -x "$pre/test_kokkos_device_cuda_0" ] || { echo "prebuilt.sh: no $pre (run 'prebuilt.sh build' first)" >&2; exit 1; }
  OUT=${OUT:-$pre/results}
  deadline=$((SECONDS + ${TL_GPU_DEADLINE:-540}))
  res=$(mktemp -d)
  mkdir -p "$OUT"
  export LD_LIBRARY_PATH=$pre/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=$PATH:/usr/local/cuda/bin
  local status=0 work
  work=$(mktemp -d)
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv >"$res/gpu.txt" 2>&1
  cat "$res/gpu.txt"
  [ ! -f "$pre/matrices.tar.xz" ] || tar -xJf "$pre/matrices.tar.xz" -C "$work"
  for part in 0 1 2; do
    step "tests_$part" "${TL_GPU_TEST_LIMIT:-150}" "$pre/test_kokkos_device_cuda_$part" || status=1
  done
  if [ -x "$pre/bench_gpu" ]; then
    # Line-buffered: what ran before a crash is in bench.txt.
    step bench "${TL_GPU_BENCH_LIMIT:-200}" env "TENSORLEV_BENCH_MATRICES=$work" stdbuf -oL -eL "$pre/bench_gpu" \
      --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
      "--benchmark_out=$res/bench_gpu.json" --benchmark_out_format=json || status=1
  fi
  if [ -x "$pre/tl-explore" ]; then
    explore() {
      local m k rc all=0
      for m in "$work"/*.mtx; do
        for k in spmv add spgemm; do
          "$pre/tl-explore" --kernel "$k" --device --reps 3 --quiet "$m" 2>"$work/stderr"
          rc=$?
          cat "$work/stderr"
          # 2: a usage error such as add on a non-square matrix; 1 with
          # every format skipped by the budgets (email-Enron's SpGEMM):
          # recorded, not failures
          [ $rc -eq 0 ] || [ $rc -eq 2 ] || grep -q 'no format could be run (all skipped)' "$work/stderr" || all=1
        done
      done
      return $all
    }
    export -f explore
    export pre work
    step explore "${TL_GPU_EXPLORE_LIMIT:-150}" bash -c explore || status=1
  fi
  # The same tests under compute-sanitizer's memcheck (out-of-bounds and
  # misaligned device accesses, CUDA API errors), where the image has it.
  if [ "${TL_GPU_MEMCHECK:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
    for part in 0 1 2; do
      step "memcheck_$part" "${TL_GPU_MEMCHECK_LIMIT:-120}" compute-sanitizer --tool memcheck --error-exitcode 1 \
        "$pre/test_kokkos_device_cuda_$part" || status=1
    done
  fi
  rm -rf "$work" "$res"
  return $status
}

case ${1:-} in
  build) build ;;
  run) run ;;
  *) echo "usage: bench/gpu/prebuilt.sh build|run" >&2; exit 2 ;;
esac
