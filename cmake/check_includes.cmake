# ctest -P script: compiles SRC with -H (syntax only) and fails when a
# standard header named in FORBIDDEN (a |-separated list of names such as
# memory|atomic) is among the headers it includes, directly or not.
# FLAGS: the build's compiler flags (a -stdlib or a toolchain choice decides
# which standard library is checked).
# Usage: cmake -DCXX=... -DSRC=... -DINCLUDE=... -DFORBIDDEN=a|b [-DFLAGS=...] -P check_includes.cmake
string(REPLACE "|" ";" forbidden "${FORBIDDEN}")
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
execute_process(COMMAND ${CXX} ${flags} -std=c++20 -fsyntax-only -H -I${INCLUDE} ${SRC}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SRC} does not compile:\n${err}")
endif()
string(REPLACE "\n" ";" lines "${err}")
set(found "")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^\\.+ (.*)$")
    math(EXPR count "${count} + 1")
    set(path "${CMAKE_MATCH_1}")
    foreach(h IN LISTS forbidden)
      if(path MATCHES "/${h}$")
        list(APPEND found "${path}")
      endif()
    endforeach()
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${CXX} -H listed no headers for ${SRC}: cannot check")
endif()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "${SRC} includes, through tensorlev's headers, what its include path must not "
                      "(docs/design.md, \"What a translation unit includes\"):\n  ${text}")
endif()
message(STATUS "${SRC}: ${count} headers, none of ${FORBIDDEN}")
