# Finds Debian's Kokkos Kernels (libtrilinos-kokkos-kernels-dev: Kokkos
# Kernels 13.2 over Kokkos 3.4.1, Serial) and makes its imported targets
# usable: Debian's TriBITS-generated targets (trilinos_kokkoskernels,
# trilinos_kokkoscore, ...) carry no include directories, and the headers
# live in /usr/include/trilinos, which the config reports as
# KokkosKernels_INCLUDE_DIRS with a "../" in it. After include(), link
# trilinos_kokkoskernels. Used by tests/kokkos_kernels,
# examples/interop_kokkos_kernels and bench/kokkos_kernels.
find_package(KokkosKernels REQUIRED)  # TriBITS writes no version file for it
get_filename_component(tensorlev_kk_include "${KokkosKernels_INCLUDE_DIRS}" REALPATH)
if(NOT EXISTS "${tensorlev_kk_include}/KokkosSparse_CrsMatrix.hpp")
  message(FATAL_ERROR "Kokkos Kernels headers not found in '${tensorlev_kk_include}' "
                      "(install libtrilinos-kokkos-kernels-dev)")
endif()
foreach(t trilinos_kokkoskernels trilinos_kokkoscore trilinos_kokkoscontainers trilinos_kokkosalgorithms)
  if(TARGET ${t})
    set_target_properties(${t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${tensorlev_kk_include}")
  endif()
endforeach()
# Kokkos::kokkos (only defined when someone also ran find_package(Kokkos))
# points at ${prefix}/include, which has no Kokkos headers.
if(TARGET Kokkos::kokkos)
  set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${tensorlev_kk_include}")
endif()
