#!/usr/bin/env bash
# Sets up, builds and runs the format explorer on your own data:
#   scripts/run-explore.sh --kernel spmv my_matrix.mtx
#   scripts/run-explore.sh --kernel mttkrp --rank 16 my_tensor.tns
# (tl-explore --help lists kernels, formats and options). The first build
# compiles every kernel for every format: a few minutes. Build output and
# tl-explore's progress lines (one per format and phase; --quiet drops them)
# go to stderr, so `--json` output on stdout can be piped. Formats too big
# or too slow for the input are skipped with the reason (--max-bytes,
# --max-work; defaults keep a run on up to 10^6 entries under a minute).
# --threads N and --device need Kokkos: the first such run builds Kokkos
# with OpenMP (scripts/build-kokkos.sh, cached) and tl-explore against it
# in a second build folder. TENSORLEV_EXPLORE_KOKKOS=<prefix> names another
# Kokkos installation instead, e.g. one with CUDA from
# `scripts/build-kokkos.sh --kokkos4 --cuda` (then --device runs on the GPU;
# tl-explore is compiled with that Kokkos' nvcc_wrapper).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" >&2
kokkos_args=()
build=$root/build-explore-release
for a in "$@"; do
  case $a in
    --threads | --threads=* | --device) want_kokkos=1 ;;
  esac
done
if [ -n "${want_kokkos:-}" ] || [ -n "${TENSORLEV_EXPLORE_KOKKOS:-}" ]; then
  kokkos=${TENSORLEV_EXPLORE_KOKKOS:-$("$root/scripts/build-kokkos.sh" | tail -1)}
  kokkos_args=(-DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos")
  # A build folder per Kokkos installation (a cached Kokkos_DIR would keep
  # the first one).
  build=$root/build-explore-kokkos-$(basename "$kokkos")
  if [ -x "$kokkos/bin/nvcc_wrapper" ] &&
    grep -q "KOKKOS_ENABLE_CUDA$" "$(find -L "$kokkos" -name KokkosCore_config.h | head -1)"; then
    kokkos_args+=("-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper")
  fi
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_BUILD_TESTS=OFF \
  ${kokkos_args[@]+"${kokkos_args[@]}"} >&2
cmake --build "$build" --target tl-explore >&2
exec "$build/examples/explore/tl-explore" "$@"
