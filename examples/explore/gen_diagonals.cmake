# Writes a test matrix for tl-explore's size budgets: a symmetric pattern
# matrix, N x N, with its whole main diagonal and PAIRS entries below it on
# OFFSETS distinct diagonals (so 2 * OFFSETS + 1 diagonals, N + 2 * PAIRS
# entries after symmetric expansion). The defaults give the shape of the
# matrix in issue 15: 4960 x 4960, 23,884 entries on 3,899 diagonals, rows of
# at most 17 entries (CSR is tiny; DIA would store 3,899 x 4,960 values).
#   cmake -DOUT=<file.mtx> [-DN=4960] [-DPAIRS=9462] [-DOFFSETS=1949] -P gen_diagonals.cmake
# Entry p (0 <= p < PAIRS) lies on offset d = offs[p mod OFFSETS], the
# offsets spread evenly over [1, N - 60]; its row is d plus a stride of the
# diagonal's length, so that no entry repeats while p / OFFSETS < 5.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED OUT)
  message(FATAL_ERROR "gen_diagonals.cmake: -DOUT=<file.mtx> is required")
endif()
if(NOT DEFINED N)
  set(N 4960)
endif()
if(NOT DEFINED PAIRS)
  set(PAIRS 9462)
endif()
if(NOT DEFINED OFFSETS)
  set(OFFSETS 1949)
endif()
math(EXPR span "${N} - 61")
math(EXPR qlast "${OFFSETS} - 1")
math(EXPR plast "${PAIRS} - 1")
math(EXPR pmax "5 * ${OFFSETS}")
if(qlast LESS 1 OR PAIRS GREATER_EQUAL pmax OR span LESS OFFSETS)
  message(FATAL_ERROR "gen_diagonals.cmake: need 2 <= OFFSETS <= N - 61 and PAIRS < 5 * OFFSETS")
endif()
math(EXPR lower "${N} + ${PAIRS}")
set(lines "%%MatrixMarket matrix coordinate pattern symmetric\n")
string(APPEND lines "% tl-explore test matrix (gen_diagonals.cmake): ${PAIRS} pairs on ${OFFSETS} offsets plus the diagonal\n")
string(APPEND lines "${N} ${N} ${lower}\n")
foreach(k RANGE 1 ${N})
  string(APPEND lines "${k} ${k}\n")
endforeach()
foreach(p RANGE ${plast})
  math(EXPR q "${p} % ${OFFSETS}")
  math(EXPR t "${p} / ${OFFSETS}")
  math(EXPR d "1 + (${q} * ${span}) / ${qlast}")
  math(EXPR len "${N} - ${d}")
  math(EXPR i "${d} + (${q} * 131 + ${t} * (${len} / 5)) % ${len} + 1")
  math(EXPR j "${i} - ${d}")
  string(APPEND lines "${i} ${j}\n")
endforeach()
file(WRITE "${OUT}" "${lines}")
