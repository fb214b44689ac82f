# shellcheck shell=bash
# Shared by the test scripts (source it with the script's arguments): when
# the first argument is --sanitize, drops it and sets `san` to the CMake
# arguments of an AddressSanitizer + UndefinedBehaviorSanitizer build
# (-O1 -g1; the test targets set -O0 themselves), with the sanitizers' options exported; `san` is empty
# (-DTENSORLEV_SANITIZE=OFF, so a build folder once sanitized is not any
# more) otherwise. Use as: . lib/sanitize.sh; set -- ${rest[@]+"${rest[@]}"}
# The sanitized build's compiler is TENSORLEV_SANITIZE_CXX, clang++ unless
# set: it compiles the instrumented tests in about two thirds of g++'s time
# (docs/design.md, CI); run-kokkos4-tests.sh uses it too. g++ compiles the
# device tests in CI as nvcc's host compiler (scripts/check-kokkos-cuda.sh).
# Linked with lld when clang compiles (scripts/install-deps.sh installs lld):
# the instrumented test executables link in about a quarter of GNU ld's time.
san=(-DTENSORLEV_SANITIZE=OFF)
rest=("$@")
if [ "${1:-}" = "--sanitize" ]; then
  rest=("${@:2}")
  san=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DTENSORLEV_SANITIZE=ON
    "-DCMAKE_CXX_COMPILER=${TENSORLEV_SANITIZE_CXX:-clang++}")
  if [[ ${TENSORLEV_SANITIZE_CXX:-clang++} == *clang* ]] && command -v ld.lld >/dev/null; then
    san+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
  fi
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
