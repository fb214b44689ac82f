# Must-not-compile check, run by ctest:
#   cmake -DCXX=<compiler> -DSRC=<file> -DINCLUDE=<dir> [-DEXTRA_INCLUDES=<dir>|<dir>...] -P check_compile_fail.cmake
# The source names its expected diagnostic in a first line `// EXPECT: <regex>`
# (and with a line `// EXPECT_ONE_ERROR`, it must be the only error).
# Passes when (1) the file compiles without TL_SHOULD_FAIL (the twin), and
# (2) with -DTL_SHOULD_FAIL it fails and the compiler output matches the regex.
file(STRINGS ${SRC} expect_line REGEX "^// EXPECT: " LIMIT_COUNT 1)
if(NOT expect_line)
  message(FATAL_ERROR "${SRC}: no '// EXPECT: <regex>' line")
endif()
string(REGEX REPLACE "^// EXPECT: " "" expect "${expect_line}")
set(flags -std=c++20 -I${INCLUDE} -fsyntax-only)
# EXTRA_INCLUDES: more include directories, separated by '|' (MPI's).
if(EXTRA_INCLUDES)
  string(REPLACE "|" ";" extra_dirs "${EXTRA_INCLUDES}")
  foreach(dir IN LISTS extra_dirs)
    list(APPEND flags -I${dir})
  endforeach()
endif()
execute_process(COMMAND ${CXX} ${flags} ${SRC} RESULT_VARIABLE ok_rc OUTPUT_VARIABLE ok_out ERROR_VARIABLE ok_out)
if(NOT ok_rc EQUAL 0)
  message(FATAL_ERROR "twin of ${SRC} (without TL_SHOULD_FAIL) does not compile:\n${ok_out}")
endif()
execute_process(COMMAND ${CXX} ${flags} -DTL_SHOULD_FAIL ${SRC} RESULT_VARIABLE ko_rc OUTPUT_VARIABLE ko_out
                ERROR_VARIABLE ko_out)
include(${CMAKE_CURRENT_LIST_DIR}/expect_failure.cmake)
tensorlev_expect_failure("compiling ${SRC} with TL_SHOULD_FAIL" "${ko_rc}" "${ko_out}" "${expect}")
# A line `// EXPECT_ONE_ERROR` asks that the expected error come alone: one
# line of the compiler's output says "error:".
file(STRINGS ${SRC} one_line REGEX "^// EXPECT_ONE_ERROR" LIMIT_COUNT 1)
if(one_line)
  string(REGEX MATCHALL "error:" errors "${ko_out}")
  list(LENGTH errors n_errors)
  if(NOT n_errors EQUAL 1)
    message(FATAL_ERROR "compiling ${SRC} with TL_SHOULD_FAIL gives ${n_errors} errors, not the expected one alone:\n${ko_out}")
  endif()
endif()
