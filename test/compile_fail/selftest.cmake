# Self-test of the batches (cmake -P; the test compile_fail.<compiler>.batch_selftest).
# Variables: COMPILER, INCLUDES, PCH, PCH_KIND as for run_case.cmake; OUT_DIR.
#
# selftest/victim.cpp gives two errors on its own, the second in the failing
# specialization of selftest/shared_first.cpp and shared_last.cpp. Batched
# between them, it gets only its first error in both orders (the shared one is
# printed for whichever of the other two comes first), so it passes in both;
# the test checks that run_case.cmake nevertheless does not accept that (the
# other two lose their error in one order each: the batch is not clean) but
# compiles victim.cpp on its own, which fails with two errors.
set(dir "${CMAKE_CURRENT_LIST_DIR}/selftest")
foreach(order forward reverse)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${COMPILER}" "-DINCLUDES=${INCLUDES}"
                          "-DPCH=${PCH}" -DPCH_KIND=${PCH_KIND} "-DOUT_DIR=${OUT_DIR}"
                          -DORDER=${order} "-DCASES=shared_first|victim|shared_last"
                          "-DCASE_DIR=${dir}" "-DCASE_LIST=${dir}/cases.cmake"
                          -P "${CMAKE_CURRENT_LIST_DIR}/run_batch.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("run_batch.cmake, ${order}: exit code ${rc}\n${out}")
  file(READ "${OUT_DIR}/victim.${order}.verdict" verdict)
  message("victim.cpp's verdict in the ${order} batch: ${verdict}")
  if(NOT rc EQUAL 0 OR NOT verdict MATCHES "^pass ")
    message(FATAL_ERROR "the self-test's premise failed: victim.cpp must pass in the ${order} batch")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${COMPILER}" "-DINCLUDES=${INCLUDES}"
                        "-DPCH=${PCH}" -DPCH_KIND=${PCH_KIND} "-DBATCH_DIR=${OUT_DIR}"
                        -DMODE=fail "-DSOURCE=${dir}/victim.cpp"
                        -P "${CMAKE_CURRENT_LIST_DIR}/run_case.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
# (the MHA_CF_ markers are renamed so that this test's own output does not
# trip the case tests' PASS/FAIL expressions, which it does not have anyway)
string(REPLACE "MHA_CF_" "mha_cf_" shown "${out}")
message("run_case.cmake on victim.cpp: exit code ${rc}\n${shown}")
if(rc EQUAL 0 OR NOT out MATCHES "MHA_CF_BATCH: compiled on its own"
   OR NOT out MATCHES "MHA_CF_UNEXPECTED: 2 errors")
  message(FATAL_ERROR "victim.cpp was accepted from the batch, or not compiled on its own")
endif()
message("self-test passed: the batch result was refused, the isolated compile failed with 2 errors")
