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
