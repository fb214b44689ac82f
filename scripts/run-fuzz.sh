#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang under ASan and
# UBSan and runs each on a scratch copy of its seed corpus, failing on any
# crash, leak, timeout, sanitizer report or wrong result.
# Usage: scripts/run-fuzz.sh [--runs N | --seconds S | --ci] [--build DIR] [--corpus-out DIR] [harness...]
#   --runs N         stop each harness after N executions
#   --seconds S      stop each harness after S seconds (default 60)
#   --ci             what CI runs: 30 seconds per harness
#   --build DIR      build folder (default build-fuzz)
#   --corpus-out DIR keep the grown corpora in DIR/<harness> (by default they
#                    are discarded: nothing is written into tests/fuzz/corpus)
#   harness...       matrix_market, frostt (default: both)
# Long hunts: scripts/run-fuzz.sh --seconds 3600 --corpus-out ~/fuzz-corpus
# (the same DIR again resumes from the grown corpus). A failing input is
# saved under <build>/artifacts/ and replays with: <build>/tests/fuzz/fuzz_<harness> <file>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
limit=(-max_total_time=60)
build=$root/build-fuzz
corpus_out=""
harnesses=()
while (($#)); do
  case "$1" in
    --runs) limit=(-runs="$2"); shift 2 ;;
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --ci) limit=(-max_total_time=30); shift ;;
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --corpus-out) corpus_out=$(realpath -m "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    matrix_market|frostt) harnesses+=("$1"); shift ;;
    *) echo "run-fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
((${#harnesses[@]})) || harnesses=(matrix_market frostt)

"$root/scripts/install-deps.sh"
cxx=${TENSORLEV_FUZZ_CXX:-clang++}
# shellcheck source=scripts/lib/ccache.sh
. "$root/scripts/lib/ccache.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE= \
  -DTENSORLEV_BUILD_TESTS=OFF -DTENSORLEV_BUILD_EXAMPLES=OFF -DTENSORLEV_FUZZ=ON -DTENSORLEV_WARNINGS_AS_ERRORS=ON \
  ${launcher[@]+"${launcher[@]}"} >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# Symbolized reports; UBSan findings abort (-fno-sanitize-recover=all).
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
[ -z "$symbolizer" ] || export ASAN_SYMBOLIZER_PATH=$symbolizer
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build/artifacts"
# The harnesses run side by side (each is one process on one core) when
# the machine has a core for each; their logs are printed in order after.
parallel=0
(($(nproc) >= ${#harnesses[@]})) && parallel=1
fuzz_one() {
  local h=$1 corpus=$scratch/$1
  if [ -n "$corpus_out" ]; then corpus=$corpus_out/$h; fi
  mkdir -p "$corpus"
  cp -n "$root/tests/fuzz/corpus/$h/"* "$corpus/"
  echo "--- fuzz_$h: ${limit[*]} on $(find "$corpus" -type f | wc -l) corpus files" >"$scratch/$h.head"
  # -timeout: one input running 10 s is a finding; -rss_limit_mb stays at its default (2048).
  if nice -n 10 "$build/tests/fuzz/fuzz_$h" "${limit[@]}" -timeout=10 -print_final_stats=1 \
      -dict="$root/tests/fuzz/$h.dict" -artifact_prefix="$build/artifacts/$h-" "$corpus" 2>"$scratch/$h.log"; then
    echo 0 >"$scratch/$h.rc"
  else
    echo 1 >"$scratch/$h.rc"
  fi
}
for h in "${harnesses[@]}"; do
  if ((parallel)); then fuzz_one "$h" & else fuzz_one "$h"; fi
done
wait
failed=()
for h in "${harnesses[@]}"; do
  cat "$scratch/$h.head" 2>/dev/null || echo "--- fuzz_$h: did not start (see above)"
  if [ "$(cat "$scratch/$h.rc" 2>/dev/null)" != 0 ]; then
    tail -n 60 "$scratch/$h.log"
    failed+=("$h")
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$scratch/$h.log" || true
done
if ((${#failed[@]})); then
  echo "run-fuzz.sh: FAILED: ${failed[*]} (inputs in $build/artifacts/)" >&2
  exit 1
fi
echo "run-fuzz.sh: no findings"
