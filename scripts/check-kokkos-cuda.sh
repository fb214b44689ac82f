#!/usr/bin/env bash
# The device-form tests built for Kokkos::Cuda (the cases of
# tests/codegen/device_cases.hpp on Kokkos::Cuda, tensors in CudaSpace), with
# Kokkos 4.6.99's CUDA back end for Hopper (sm_90) and its nvcc_wrapper as
# tensorlev's C++ compiler. No GPU is needed.
#
#   scripts/check-kokkos-cuda.sh [build-dir]
#       compile only (what CI runs): Kokkos is configured from
#       ../shared/vendor/kokkos-4.6.99.tar.gz but not built (its build tree
#       is a CMake package: the headers and KokkosCore_config.h), and the
#       test's object files (the cases on a few formats, every call of the
#       launcher) are compiled against it. Minutes instead of the
#       library's build; linking is left to --run. bench/gpu's benchmark
#       against cuSPARSE is compiled the same way.
#   scripts/check-kokkos-cuda.sh --run [build-dir]
#       on a machine with a GPU: Kokkos built and installed with CUDA
#       (scripts/build-kokkos.sh --kokkos4 --cuda, cached under ~/.cache),
#       the device tests linked and run on the GPU (ctest -R kokkos.device_form).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=0
if [ "${1:-}" = "--run" ]; then
  run=1
  shift
fi
build=${1:-$root/build-kokkos-cuda}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "check-kokkos-cuda: no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
jobs=$(nproc)
objects=(tests/kokkos/CMakeFiles/test_kokkos_device_cuda_0.dir/device.cpp.o
  tests/kokkos/CMakeFiles/test_kokkos_device_cuda_1.dir/device.cpp.o
  tests/kokkos/CMakeFiles/test_kokkos_device_cuda_2.dir/device.cpp.o
  examples/explore/CMakeFiles/tl-explore.dir/dk_tensor.cpp.o)
# tl-explore --device's sources that hold no device code (compiled too: the
# explorer had never been through nvcc, whose front end rejected its kernel
# table until its members got default initializers).
host_objects=(examples/explore/CMakeFiles/tl-explore.dir/main.cpp.o
  examples/explore/CMakeFiles/tl-explore.dir/kokkos_exec.cpp.o)
if ((run)); then
  kokkos=$("$root/scripts/build-kokkos.sh" --kokkos4 --cuda | tail -1)
  kokkos_args=("-DKokkos_ROOT=$kokkos")
  wrapper=$kokkos/bin/nvcc_wrapper
else
  tarball=${TENSORLEV_KOKKOS4_TARBALL:-$root/../shared/vendor/kokkos-4.6.99.tar.gz}
  [ -f "$tarball" ] || { echo "check-kokkos-cuda: no $tarball (see ../shared/vendor/README.md)" >&2; exit 1; }
  src=$build/kokkos-4.6.99
  if [ ! -f "$src/CMakeLists.txt" ]; then
    mkdir -p "$build"
    tar -xzf "$tarball" -C "$build"
  fi
  wrapper=$src/bin/nvcc_wrapper
  # The same configuration as scripts/build-kokkos.sh --kokkos4 --cuda.
  cmake -S "$src" -B "$build/kokkos" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
    -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_SERIAL=ON "-DCMAKE_CXX_COMPILER=$wrapper" \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null
  kokkos=$build/kokkos
  kokkos_args=("-DKokkos_DIR=$kokkos")
fi
device_tests=OFF
opt_args=()
if ((run)); then
  device_tests=ON
  # Undo what a compile-only run leaves in the same build folder's cache.
  opt_args=("-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG" -DTENSORLEV_DEVICE_TEST_OPT= -DTENSORLEV_DEVICE_TEST_API_SUBSET=OFF)
else
  # Compile only: nothing is run, so the host side is compiled at -O0
  # (CMAKE_CXX_FLAGS_RELEASE without -O3, the device tests' -O1 replaced)
  # and the device side with nvcc's fastest device compilation
  # (--Ofast-compile=max: cicc and ptxas skip most optimizations); the
  # front ends (cudafe++, cicc's EDG), which reject what CUDA does not
  # allow, run in full, and ptxas still emits sm_90 code. The device cases
  # on a few formats (TENSORLEV_DEVICE_TEST_API_SUBSET, see
  # tests/codegen/device_cases.hpp): the Kokkos::Cuda launcher's every call,
  # while every format's device code goes through nvcc in
  # tests/device/generated_kernels.cu (ctest's device.nvcc_generated_kernels).
  # The cases on every format took 5.5 minutes here, of which the flags
  # saved 3%: cicc's front end dominates.
  opt_args=(-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG -DTENSORLEV_DEVICE_TEST_OPT=-O0 -DTENSORLEV_DEVICE_TEST_API_SUBSET=ON)
  export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }--Ofast-compile=max"
fi
cmake -S "$root" -B "$build/tensorlev" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=$wrapper" \
  -DTENSORLEV_KOKKOS=ON "${kokkos_args[@]}" -DTENSORLEV_BUILD_EXAMPLES=ON -DTENSORLEV_WARNINGS_AS_ERRORS=ON \
  "-DTENSORLEV_DEVICE_TESTS=$device_tests" ${opt_args[@]+"${opt_args[@]}"} >/dev/null
grep -Eq "^Kokkos_DIR:[A-Z]+=$kokkos" "$build/tensorlev/CMakeCache.txt" ||
  { echo "check-kokkos-cuda: tensorlev is not configured against $kokkos" >&2; exit 1; }
grep -q "KOKKOS_ENABLE_CUDA$" "$(find -L "$kokkos" -name KokkosCore_config.h | head -1)" ||
  { echo "check-kokkos-cuda: $kokkos has no CUDA back end" >&2; exit 1; }
if ((run)); then
  cmake --build "$build/tensorlev" -j "$jobs" --target test_kokkos_device_cuda_0 test_kokkos_device_cuda_1 \
    test_kokkos_device_cuda_2 test_kokkos_device_host_0 test_kokkos_device_host_1 test_kokkos_device_host_2
  ctest --test-dir "$build/tensorlev" --output-on-failure -R '^kokkos[.]device_form[.]'
else
  cmake --build "$build/tensorlev" -j "$jobs" --target "${objects[@]}" "${host_objects[@]}"
  for object in "${objects[@]}"; do
    [ -s "$build/tensorlev/$object" ] || { echo "check-kokkos-cuda: $object was not written" >&2; exit 1; }
    # The object holds device code for sm_90 (a fatbin section), not host code only.
    objdump -h "$build/tensorlev/$object" >"$build/sections.txt"
    grep -q '\.nv_fatbin' "$build/sections.txt" ||
      { echo "check-kokkos-cuda: $object has no .nv_fatbin section (no device code)" >&2; exit 1; }
  done
  echo "check-kokkos-cuda: test_kokkos_device_cuda_0, _1 and _2 and tl-explore's dk_tensor, main and kokkos_exec compiled for Kokkos::Cuda, sm_90 (not linked; --run links and runs the tests)"
  # The GPU benchmark against cuSPARSE (bench/gpu, run by bench/gpu/run.sh)
  # compiles too.
  cmake -S "$root/bench/gpu" -B "$build/bench-gpu" -G Ninja "-DCMAKE_CXX_COMPILER=$wrapper" \
    "-DKokkos_DIR=$kokkos" ${opt_args[@]+"${opt_args[@]}"} >/dev/null
  cmake --build "$build/bench-gpu" -j "$jobs" --target CMakeFiles/bench_gpu.dir/device_bench.cpp.o
  echo "check-kokkos-cuda: bench/gpu/device_bench.cpp compiled (not linked)"
fi
