#!/usr/bin/env bash
# Sets up and runs every test: installs dependencies, builds Kokkos with
# OpenMP into a cache folder (scripts/build-kokkos.sh, once), configures,
# builds and runs ctest. Usage: scripts/run-tests.sh [--sanitize] [build-dir] [extra cmake args...]
#   --sanitize  build tests, examples and tl-explore with AddressSanitizer and
#               UndefinedBehaviorSanitizer (tests at -O0) and fail on any
#               report; this is what CI runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Dependencies first: sanitize.sh links with lld when it is installed.
"$root/scripts/install-deps.sh"
# shellcheck source=scripts/lib/sanitize.sh
. "$root/scripts/lib/sanitize.sh"
set -- ${rest[@]+"${rest[@]}"}
# shellcheck source=scripts/lib/ccache.sh
. "$root/scripts/lib/ccache.sh"
build=${1:-$root/build}
shift || true
# Kokkos with OpenMP for the parallel tests (built once, then reused).
kokkos=$("$root/scripts/build-kokkos.sh" | tail -1)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos" -DTENSORLEV_MPI=ON \
  "${san[@]}" ${launcher[@]+"${launcher[@]}"} "$@"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
