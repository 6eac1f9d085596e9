# check_instruction_ratio.cmake -- issue 10's instruction-count targets as a
# test: runs count_instructions.sh on PROGRAM and checks that the count of its
# region "REGION (mha kernels)" is at most NUM/DEN of the count of its region
# "REGION (plain loops)" (QEMU instruction counts, not cycles: deterministic
# for a given build, so a bound on them is no timing in a test).
#   cmake -DCOUNT_SCRIPT=.. -DMACHINE=.. -DPROGRAM=.. -DREGION=.. -DNUM=1 -DDEN=3
#         -P check_instruction_ratio.cmake
foreach(var COUNT_SCRIPT MACHINE PROGRAM REGION NUM DEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_instruction_ratio.cmake: ${var} is not set")
  endif()
endforeach()
execute_process(COMMAND sh ${COUNT_SCRIPT} --machine ${MACHINE} ${PROGRAM}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "count_instructions.sh failed (${rc}):\n${out}\n${err}")
endif()
set(counts "")
foreach(kind IN ITEMS "mha kernels" "plain loops")
  if(NOT out MATCHES "([0-9]+)  ${REGION} \\(${kind}\\)")
    message(FATAL_ERROR "no region '${REGION} (${kind})' in:\n${out}")
  endif()
  list(APPEND counts ${CMAKE_MATCH_1})
endforeach()
list(GET counts 0 mha)
list(GET counts 1 plain)
math(EXPR lhs "${mha} * ${DEN}")
math(EXPR rhs "${plain} * ${NUM}")
math(EXPR per_mille "${mha} * 1000 / ${plain}")
math(EXPR whole "${per_mille} / 1000")
math(EXPR fraction "${per_mille} % 1000 + 1000")  # 1xyz: three digits after the point
string(SUBSTRING "${fraction}" 1 3 fraction)
message(STATUS "${REGION}: mha ${mha}, plain loops ${plain}: "
               "ratio ${whole}.${fraction} (bound ${NUM}/${DEN})")
if(lhs GREATER rhs)
  message(FATAL_ERROR "${REGION}: mha executes ${mha} instructions, "
                      "more than ${NUM}/${DEN} of the plain loops' ${plain}")
endif()
