#!/usr/bin/env bash
# Builds Kokkos with the OpenMP and Serial back ends and installs it into a
# cache folder; reuses the installation when it is already there. Prints the
# installation prefix on its last line (pass it as -DKokkos_ROOT=...).
#   scripts/build-kokkos.sh [prefix]
#       Kokkos 3.4.1 from Debian's trilinos source package (packages/kokkos);
#       default prefix ${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/kokkos-3.4.1-openmp
#   scripts/build-kokkos.sh --kokkos4 [prefix]
#       Kokkos 4.6.99 from ../shared/vendor/kokkos-4.6.99.tar.gz (beside the
#       checkout; TENSORLEV_KOKKOS4_TARBALL overrides), C++20;
#       default prefix ${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/kokkos-4.6.99-openmp
#   scripts/build-kokkos.sh --kokkos4 --cuda [prefix]
#       the same with the CUDA and Serial back ends for Hopper (sm_90), built
#       with Kokkos' nvcc_wrapper (nvcc from PATH or /usr/local/cuda; no GPU
#       is needed to compile); default prefix .../kokkos-4.6.99-cuda
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev
kokkos4=0
cuda=0
if [ "${1:-}" = "--kokkos4" ]; then
  kokkos4=1
  shift
fi
if ((kokkos4)) && [ "${1:-}" = "--cuda" ]; then
  cuda=1
  shift
fi
if ((cuda)); then
  prefix=${1:-$cache/kokkos-4.6.99-cuda}
elif ((kokkos4)); then
  prefix=${1:-$cache/kokkos-4.6.99-openmp}
else
  prefix=${1:-$cache/kokkos-3.4.1-openmp}
fi
config_of() { find -L "$1" -name KokkosConfig.cmake -path '*cmake/Kokkos/*' 2>/dev/null | head -1; }
if [ -d "$prefix" ] && [ -n "$(config_of "$prefix")" ]; then
  echo "Kokkos: reusing $prefix" >&2
  echo "$prefix"
  exit 0
fi
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
apt_install cmake ninja-build g++ dpkg-dev
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ((kokkos4)); then
  tarball=${TENSORLEV_KOKKOS4_TARBALL:-$root/../shared/vendor/kokkos-4.6.99.tar.gz}
  [ -f "$tarball" ] || { echo "Kokkos 4: no $tarball (see ../shared/vendor/README.md)" >&2; exit 1; }
  tar -xzf "$tarball" -C "$work"
  src=$work/kokkos-4.6.99
  grep -q 'Kokkos_VERSION_MAJOR 4' "$src/CMakeLists.txt" 2>/dev/null ||
    { echo "Kokkos 4: $tarball does not unpack to kokkos-4.6.99/ with a Kokkos 4 CMakeLists.txt" >&2; exit 1; }
  std=20
else
  # Source packages need a deb-src entry; add Debian's if none is configured.
  apt_ensure_source trilinos
  cd "$work"
  # Only the orig tarball is needed, and only its packages/kokkos folder
  # (Debian's patches to trilinos touch Kokkos' tests and install layout,
  # not the library).
  apt-get source --download-only trilinos >/dev/null 2>&1 || $SUDO apt-get source --download-only trilinos >/dev/null
  tar -xzf trilinos_*.orig.tar.gz --wildcards '*/packages/kokkos/*'
  src=$(echo "$work"/*/packages/kokkos)
  grep -q 'set(Kokkos_VERSION_MINOR 4)' "$src/CMakeLists.txt" || echo "warning: expected Kokkos 3.4 in $src" >&2
  std=17
fi
if ((cuda)); then
  # nvcc_wrapper finds nvcc on PATH; the host compiler is g++.
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  command -v nvcc >/dev/null || { echo "Kokkos CUDA: no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
  backends=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_SERIAL=ON
    "-DCMAKE_CXX_COMPILER=$src/bin/nvcc_wrapper")
else
  backends=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON)
fi
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_CXX_STANDARD=$std "${backends[@]}" -DKokkos_ENABLE_TESTS=OFF \
  -DKokkos_ENABLE_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null
cmake --build "$work/build" -j "$(nproc)" >&2
cmake --install "$work/build" >/dev/null
[ -n "$(config_of "$prefix")" ] || { echo "Kokkos install in $prefix has no KokkosConfig.cmake" >&2; exit 1; }
echo "Kokkos: installed into $prefix" >&2
echo "$prefix"
