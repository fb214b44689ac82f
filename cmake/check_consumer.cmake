# Installs tensorlev from a build tree and builds and runs tests/cmake/consumer
# against the installed package, as an outside project would:
#   cmake -DBUILD=<tensorlev build dir> -DSRC=<consumer dir> -DWORK=<scratch dir> -DCXX=<compiler>
#         [-DKOKKOS_DIR=<KokkosConfig.cmake's folder>] -P check_consumer.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/install RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()
set(extra "")
if(KOKKOS_DIR)
  set(extra -DKokkos_DIR=${KOKKOS_DIR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/install
                        -DCMAKE_CXX_COMPILER=${CXX} ${extra} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                        ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed:\n${out}")
endif()
find_program(consumer_exe consumer PATHS ${WORK}/build NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${consumer_exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed")
endif()
