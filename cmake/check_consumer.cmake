# Installs tensorlev from a build tree and builds and runs an outside
# project (tests/cmake/consumer*) against the installed package:
#   cmake -DBUILD=<tensorlev build dir> -DSRC=<consumer dir> -DWORK=<scratch dir> -DCXX=<compiler>
#         [-DKOKKOS_DIR=<KokkosConfig.cmake's folder>] [-DCONFIGURE_ARGS=a|b]
#         [-DEXPECT_CONFIGURE_ERROR=<regex>] -P check_consumer.cmake
#   cmake -DBUILD=... -DSRC=<consumer dir> -DWORK=... -DCXX=... -DPKGCONFIG=<pkg-config> -P check_consumer.cmake
# EXPECT_CONFIGURE_ERROR: configuring must fail with output matching it.
# PKGCONFIG: no CMake; SRC/main.cpp is compiled with the flags
# `pkg-config --cflags tensorlev` gives from the installed tensorlev.pc, and
# the package's version is passed to it as TL_PACKAGE_VERSION.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/install RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()
if(PKGCONFIG)
  set(ENV{PKG_CONFIG_PATH} ${WORK}/install/share/pkgconfig)
  execute_process(COMMAND ${PKGCONFIG} --cflags tensorlev RESULT_VARIABLE rc OUTPUT_VARIABLE cflags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${PKGCONFIG} --modversion tensorlev OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT cflags MATCHES "-I")
    message(FATAL_ERROR "pkg-config --cflags tensorlev failed (${rc}): '${cflags}' ${err}")
  endif()
  separate_arguments(cflags UNIX_COMMAND "${cflags}")
  file(MAKE_DIRECTORY ${WORK}/build)
  execute_process(COMMAND ${CXX} -std=c++20 ${cflags} "-DTL_PACKAGE_VERSION=\"${version}\"" ${SRC}/main.cpp
                          -o ${WORK}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling with pkg-config's flags (${cflags}) failed:\n${out}")
  endif()
  message(STATUS "pkg-config: tensorlev ${version}, cflags ${cflags}")
else()
  set(extra "")
  if(KOKKOS_DIR)
    list(APPEND extra -DKokkos_DIR=${KOKKOS_DIR})
  endif()
  if(CONFIGURE_ARGS)
    string(REPLACE "|" ";" args "${CONFIGURE_ARGS}")
    list(APPEND extra ${args})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/install
                          -DCMAKE_CXX_COMPILER=${CXX} ${extra} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                          ERROR_VARIABLE out)
  if(DEFINED EXPECT_CONFIGURE_ERROR)
    include(${CMAKE_CURRENT_LIST_DIR}/expect_failure.cmake)
    tensorlev_expect_failure("configuring ${SRC}" "${rc}" "${out}" "${EXPECT_CONFIGURE_ERROR}")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer configure failed:\n${out}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer build failed:\n${out}")
  endif()
endif()
find_program(consumer_exe consumer PATHS ${WORK}/build NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${consumer_exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed")
endif()
