#!/usr/bin/env bash
# The Kokkos tests against Kokkos 4.6.99 (CI runs them after the README's
# test command, which uses Kokkos 3.4.1): builds Kokkos 4 with OpenMP from
# ../shared/vendor into a cache folder (scripts/build-kokkos.sh --kokkos4,
# once), configures tensorlev against it, builds the Kokkos targets only and
# runs their tests (kokkos.*, dist.kokkos.*, the installed-package consumer
# and the header-alone check). The Kokkos Kernels interop is not among them:
# Debian's Kokkos Kernels (13.2, i.e. Kokkos Kernels 3.4) is built for Kokkos 3.4.1.
# Usage: scripts/run-kokkos4-tests.sh [--sanitize] [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Compiled by clang like the README's sanitized build (TENSORLEV_SANITIZE_CXX
# picks another): g++ under ASan took 370 s for the largest unit here, clang
# about 220 s. g++ still compiles the device tests in CI as nvcc's host
# compiler (scripts/check-kokkos-cuda.sh) and the Kokkos benchmarks, with
# warnings as errors.
# Dependencies first: sanitize.sh links with lld when it is installed.
"$root/scripts/install-deps.sh"
# shellcheck source=scripts/lib/sanitize.sh
. "$root/scripts/lib/sanitize.sh"
set -- ${rest[@]+"${rest[@]}"}
# shellcheck source=scripts/lib/ccache.sh
. "$root/scripts/lib/ccache.sh"
build=${1:-$root/build-kokkos4}
kokkos=$("$root/scripts/build-kokkos.sh" --kokkos4 | tail -1)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_KOKKOS=ON "-DKokkos_ROOT=$kokkos" \
  -DTENSORLEV_MPI=ON -DTENSORLEV_BUILD_EXAMPLES=OFF -DTENSORLEV_WARNINGS_AS_ERRORS=ON "${san[@]}" \
  -DTENSORLEV_DEVICE_TEST_API_SUBSET=ON \
  ${launcher[@]+"${launcher[@]}"}
grep -q "Kokkos_DIR:PATH=$kokkos/" "$build/CMakeCache.txt" || { echo "not configured against $kokkos" >&2; exit 1; }
# What touches Kokkos' API: Views as storage and dense operands, the host
# executor (storage and dist tests run on it), the device launcher (the
# device form's cases, on every host space this Kokkos has, Serial and
# OpenMP). test_kokkos_parallel, test_kokkos_fuse(_temporaries) and test_kokkos_storage_matrix run the
# generic kernels through the same executor and storage as the README
# build's Kokkos 3.4.1 and are left out here (about 460 CPU-seconds of
# compilation that test no other Kokkos call). Of the device cases, parts 0
# (dense and scalar outputs, copies: upload, for_each, parallel_reduce,
# to_space) and 2 (sparse outputs assembled per level: alloc,
# parallel_scan) reach every call the launcher makes, here on a few formats
# each (TENSORLEV_DEVICE_TEST_API_SUBSET: the calls do not depend on the
# format; part 0 on every format took 145 of this stage's 240 CPU-seconds
# of compilation); part 1 (CSR outputs, SpGEMM) makes the same calls and
# is left out.
cmake --build "$build" -j "$(nproc)" --target test_kokkos_storage test_kokkos_dense_views \
  test_kokkos_device_host_0 test_kokkos_device_host_2 test_dist_kokkos tensorlev_kokkos_header_alone
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -R '^(kokkos[.]|dist[.]kokkos[.]|cmake[.]kokkos_consumer)' \
  -E '^kokkos[.](parallel|fuse|fuse_temporaries|storage_matrix|device_form[.][a-z]+[.]part1)([.]|$)'
