#!/usr/bin/env bash
# Sets up and runs every test: installs dependencies, builds Kokkos with
# OpenMP into a cache folder (scripts/build-kokkos.sh, once), configures,
# builds and runs ctest. Usage: scripts/run-tests.sh [--sanitize] [build-dir] [extra cmake args...]
#   --sanitize  build tests, examples and tl-explore with AddressSanitizer and
#               UndefinedBehaviorSanitizer (tests at -O0) and fail on any
#               report; this is what CI runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
san=()
if [ "${1:-}" = "--sanitize" ]; then
  shift
  san=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DTENSORLEV_SANITIZE=ON)
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
build=${1:-$root/build}
shift || true
"$root/scripts/install-deps.sh"
# Kokkos with OpenMP for the parallel tests (built once, then reused).
kokkos=$("$root/scripts/build-kokkos.sh" | tail -1)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos" -DTENSORLEV_MPI=ON \
  "${san[@]}" "$@"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
