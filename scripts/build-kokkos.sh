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
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
need=()
for p in cmake ninja-build g++ dpkg-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
# Source packages need a deb-src entry; add Debian's if none is configured.
if ! apt-cache showsrc trilinos 2>/dev/null | grep -q '^Version: 13'; then
  echo "Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee /etc/apt/sources.list.d/tensorlev-deb-src.sources >/dev/null
  $SUDO apt-get update -q
fi
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
