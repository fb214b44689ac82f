// The parallel cases, compiled once (CMake object library
// tensorlev_parallel_cases) and linked into test_codegen_parallel and
// test_kokkos_parallel, which define the executor they run on.
#include "parallel_cases.hpp"
