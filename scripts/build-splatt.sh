#!/usr/bin/env bash
# Builds SPLATT 2.0.0 (../shared/vendor/splatt-2.0.0.tar.gz beside the
# checkout; TENSORLEV_SPLATT_TARBALL overrides) into a cache folder, for the
# MTTKRP peer of bench/peers only (never a dependency of the library);
# reuses the installation when it is already there. Prints the prefix on its
# last line (lib/libsplatt.a, include/splatt.h).
#   scripts/build-splatt.sh [prefix]
#       default prefix ${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/splatt-2.0.0
# SPLATT's own defaults: 64-bit indices and values, OpenMP (the benchmark
# sets one thread through SPLATT's options), -O3 -march=native from its
# CMake flags with CMAKE_BUILD_TYPE=Release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/splatt-2.0.0}
if [ -s "$prefix/lib/libsplatt.a" ] && [ -s "$prefix/include/splatt.h" ] &&
  [ -s "$prefix/include/splatt/types.h" ]; then
  echo "SPLATT: reusing $prefix" >&2
  echo "$prefix"
  exit 0
fi
# shellcheck source=scripts/lib/apt.sh
. "$root/scripts/lib/apt.sh"
apt_install cmake ninja-build gcc libblas-dev liblapack-dev
tarball=${TENSORLEV_SPLATT_TARBALL:-$root/../shared/vendor/splatt-2.0.0.tar.gz}
[ -f "$tarball" ] || { echo "SPLATT: no $tarball (see ../shared/vendor/README.md)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src=$work/splatt-2.0.0
[ -f "$src/include/splatt.h" ] || { echo "SPLATT: $tarball does not unpack to splatt-2.0.0/" >&2; exit 1; }
# Debian's alternatives put the selected BLAS and LAPACK here.
libdir=/usr/lib/$(gcc -print-multiarch)
blas=$libdir/libblas.so
lapack=$libdir/liblapack.so
[ -e "$blas" ] && [ -e "$lapack" ] || { echo "SPLATT: no $blas or $lapack" >&2; exit 1; }
echo "SPLATT: building $tarball into $prefix" >&2
# SPLATT's CMakeLists asks for CMake 2.8, which CMake 3.25 still configures
# (with a deprecation warning, silenced here).
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -Wno-dev \
  "-DUSER_BLAS_LIB=$blas" "-DUSER_LAPACK_LIB=$lapack" "-DCMAKE_INSTALL_PREFIX=$work/install" >/dev/null
cmake --build "$work/build" --target splatt >/dev/null
mkdir -p "$work/install/lib" "$work/install/include/splatt"
cp "$work/build/lib/libsplatt.a" "$work/install/lib/"
cp "$src/include/splatt.h" "$work/install/include/"
# Configuring writes include/splatt/types.h (the index and value widths)
# into the source tree; it is copied with the other headers.
[ -s "$src/include/splatt/types.h" ] || { echo "SPLATT: configuring wrote no include/splatt/types.h" >&2; exit 1; }
cp "$src"/include/splatt/*.h "$work/install/include/splatt/"
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
mv "$work/install" "$prefix"
echo "SPLATT: installed into $prefix" >&2
echo "$prefix"
