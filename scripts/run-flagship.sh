#!/usr/bin/env bash
# Sets up, builds and runs the flagship example on a matrix shipped in the
# repository. Usage: scripts/run-flagship.sh [matrix.mtx]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-flagship
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target flagship
"$build/examples/flagship" "${1:-$root/examples/data/jagmesh7.mtx}"
