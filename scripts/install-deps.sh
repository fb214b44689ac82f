#!/usr/bin/env bash
# Installs what tensorlev's tests, examples and benchmarks need on Debian 12
# (a no-op when everything is present). Needs root or sudo for apt-get.
set -euo pipefail
pkgs=(cmake ninja-build g++ python3 libgtest-dev libbenchmark-dev libeigen3-dev libopenmpi-dev openmpi-bin libopenblas-dev
  # scripts/run-fuzz.sh: clang, its libFuzzer and sanitizer runtimes
  # (libclang_rt.fuzzer, not a dependency of clang), llvm-symbolizer.
  clang libclang-rt-dev llvm
  # scripts/run-tests.sh --sanitize links with lld (scripts/lib/sanitize.sh).
  lld
  # The build scripts compile through ccache (scripts/lib/ccache.sh).
  ccache
  # scripts/run-tests.sh --sanitize builds with clang: its OpenMP runtime
  # (libomp, which also serves the GOMP entry points of the g++-built Kokkos).
  libomp-dev
  # tests/kokkos_kernels (interop) and bench/kokkos_kernels: Debian's Kokkos Kernels.
  libtrilinos-kokkos-kernels-dev libtrilinos-kokkos-dev libblas-dev liblapack-dev
  # tests/cmake: the pkg-config consumer.
  pkgconf
  # tests/device: the HIP compile-only test (Debian's ROCm 5.2 hipcc, no AMD GPU needed).
  hipcc libamdhip64-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
