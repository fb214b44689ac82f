# Defines tensorlev::dist (tensorlev/dist/*.hpp on MPI::MPI_CXX) when MPI is
# found. Included by tensorlev's own build and by its installed package
# configuration; without MPI it defines nothing and the core is unaffected.
# (dist/notation.hpp needs no MPI and is part of the core.)
if(NOT TARGET MPI::MPI_CXX)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
if(TARGET MPI::MPI_CXX AND NOT TARGET tensorlev::dist)
  add_library(tensorlev::dist INTERFACE IMPORTED)
  target_link_libraries(tensorlev::dist INTERFACE tensorlev::tensorlev MPI::MPI_CXX)
endif()
# Local dense leaf products (SUMMA, Cannon, schedules) go to a BLAS's gemm
# when one is found (Debian: libopenblas-dev); otherwise to the generated
# kernels.
if(TARGET tensorlev::dist AND NOT TARGET BLAS::BLAS)
  find_package(BLAS QUIET)
endif()
if(TARGET tensorlev::dist AND TARGET BLAS::BLAS)
  get_target_property(_tl_dist_defs tensorlev::dist INTERFACE_COMPILE_DEFINITIONS)
  if(NOT _tl_dist_defs MATCHES "TENSORLEV_DIST_BLAS")
    target_link_libraries(tensorlev::dist INTERFACE BLAS::BLAS)
    target_compile_definitions(tensorlev::dist INTERFACE TENSORLEV_DIST_BLAS=1)
  endif()
endif()
