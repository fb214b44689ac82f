#!/usr/bin/env bash
# Fills gpu-inputs/ (ignored by git; name it in the device tool's `carry`)
# with what bench/gpu/run.sh needs on a GPU machine, which has nvcc, CMake
# and Ninja but no package registry: the Kokkos 4.6.99 tarball, the
# googletest sources (Debian's /usr/src/googletest), Google Benchmark's
# sources (Debian's source package) and the bench matrices. About 37 MB.
# Usage: scripts/gpu-inputs.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/gpu-inputs
mkdir -p "$out"
# shellcheck source=scripts/lib/apt.sh
. "$root/scripts/lib/apt.sh"
apt_install googletest dpkg-dev
cp -f "${TENSORLEV_KOKKOS4_TARBALL:-$root/../shared/vendor/kokkos-4.6.99.tar.gz}" "$out/kokkos-4.6.99.tar.gz"
tar -czf "$out/googletest.tar.gz" -C /usr/src googletest
if [ ! -f "$out/benchmark.tar.gz" ]; then
  apt_ensure_source benchmark
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && { apt-get source --download-only benchmark >/dev/null 2>&1 ||
    $SUDO apt-get source --download-only benchmark >/dev/null; })
  cp "$work"/benchmark_*.orig.tar.gz "$out/benchmark.tar.gz"
fi
matrices=$("$root/scripts/fetch-bench-matrices.sh" | tail -1)
mkdir -p "$out/matrices"
cp "$matrices"/*.mtx "$out/matrices/"
du -sh "$out"
echo "$out"
