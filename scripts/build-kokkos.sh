#!/usr/bin/env bash
# Builds Kokkos 3.4.1 with the OpenMP and Serial back ends from Debian's
# trilinos source package (folder packages/kokkos) and installs it into a
# cache folder; reuses the installation when it is already there. Prints the
# installation prefix on its last line (pass it as -DKokkos_ROOT=...).
# Usage: scripts/build-kokkos.sh [prefix]
#   default prefix: ${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/kokkos-3.4.1-openmp
set -euo pipefail
prefix=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/kokkos-3.4.1-openmp}
config_of() { find "$1" -name KokkosConfig.cmake -path '*cmake/Kokkos/*' 2>/dev/null | head -1; }
if [ -d "$prefix" ] && [ -n "$(config_of "$prefix")" ]; then
  echo "Kokkos: reusing $prefix" >&2
  echo "$prefix"
  exit 0
fi
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
apt_install cmake ninja-build g++ dpkg-dev
# Source packages need a deb-src entry; add Debian's if none is configured.
apt_ensure_source trilinos
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Only the orig tarball is needed, and only its packages/kokkos folder
# (Debian's patches to trilinos touch Kokkos' tests and install layout, not
# the library).
apt-get source --download-only trilinos >/dev/null 2>&1 || $SUDO apt-get source --download-only trilinos >/dev/null
tar -xzf trilinos_*.orig.tar.gz --wildcards '*/packages/kokkos/*'
src=$(echo "$work"/*/packages/kokkos)
grep -q 'set(Kokkos_VERSION_MINOR 4)' "$src/CMakeLists.txt" || echo "warning: expected Kokkos 3.4 in $src" >&2
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_CXX_STANDARD=17 -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF \
  -DKokkos_ENABLE_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null
cmake --build "$work/build" -j "$(nproc)"
cmake --install "$work/build" >/dev/null
[ -n "$(config_of "$prefix")" ] || { echo "Kokkos install in $prefix has no KokkosConfig.cmake" >&2; exit 1; }
echo "Kokkos: installed into $prefix" >&2
echo "$prefix"
