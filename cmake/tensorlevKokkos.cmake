# Defines tensorlev::kokkos (tensorlev/kokkos.hpp on Kokkos::kokkos) when a
# Kokkos 3.4 or newer is found (Kokkos_ROOT or CMAKE_PREFIX_PATH pick which;
# scripts/build-kokkos.sh builds one with OpenMP). Included by tensorlev's
# own build and by its installed package configuration; without Kokkos it
# defines nothing and the core is unaffected.
if(NOT TARGET Kokkos::kokkos)
  find_package(Kokkos 3.4 QUIET)
endif()
if(TARGET Kokkos::kokkos AND NOT TARGET tensorlev::kokkos)
  # Debian's Kokkos (built inside Trilinos) exports an include directory
  # that does not exist; point the target at the one it installs.
  get_target_property(_tl_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_tl_kokkos_inc_ok TRUE)
  foreach(_tl_dir IN LISTS _tl_kokkos_inc)
    if(NOT _tl_dir MATCHES "^\\$<" AND NOT IS_DIRECTORY "${_tl_dir}")
      set(_tl_kokkos_inc_ok FALSE)
    endif()
  endforeach()
  if(NOT _tl_kokkos_inc_ok AND Kokkos_INCLUDE_DIRS)
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
  endif()
  add_library(tensorlev::kokkos INTERFACE IMPORTED)
  target_link_libraries(tensorlev::kokkos INTERFACE tensorlev::tensorlev Kokkos::kokkos)
  # With Kokkos' CUDA back end the device form calls constexpr standard
  # functions (std::array's operator[], std::min) from device code, which
  # nvcc allows only with --expt-relaxed-constexpr (without it, a warning
  # per call and host code in the kernel); Kokkos_ENABLE_CUDA_CONSTEXPR
  # would add the same flag, but a Kokkos need not be built with it.
  if("CUDA" IN_LIST Kokkos_DEVICES)
    target_compile_options(tensorlev::kokkos INTERFACE $<$<COMPILE_LANGUAGE:CXX>:--expt-relaxed-constexpr>)
  endif()
endif()
