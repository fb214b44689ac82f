#!/usr/bin/env bash
# Generative differential tester (tests/random/statements.py): random
# index-notation statements over every format, compiled and checked against
# a dense interpreter. CI runs the fixed seeds below under ASan+UBSan; pass
# other seeds for longer hunts, e.g.
#   scripts/run-statements.sh --seeds 1000-1999 --no-sanitize --keep
# (--keep appends each shrunk failure to tests/random/regressions.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seeds=1-8
sanitize=--sanitize
args=()
while (($#)); do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --no-sanitize) sanitize=""; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
"$root/scripts/install-deps.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec python3 "$root/tests/random/statements.py" run --seeds "$seeds" --per-tu 16 --jobs "$(nproc)" $sanitize "${args[@]}"
