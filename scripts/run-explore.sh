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
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-explore-release
"$root/scripts/install-deps.sh" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTENSORLEV_BUILD_TESTS=OFF >&2
cmake --build "$build" --target tl-explore >&2
exec "$build/examples/explore/tl-explore" "$@"
