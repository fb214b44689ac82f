# tensorlev_expect_failure(<what> <exit status> <output> <regex>): for the
# ctest scripts that check a failure (must-not-compile cases, consumers
# asking for missing components): stops with a message unless the command
# failed and its output matches the regex.
function(tensorlev_expect_failure what rc out regex)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${what} succeeded, but must fail with a message matching '${regex}':\n${out}")
  endif()
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what} failed, but without a message matching '${regex}':\n${out}")
  endif()
  message(STATUS "${what} fails with the expected message")
endfunction()
