# cmake -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -P run.cmake
# Installs mha from SOURCE_DIR into WORK_DIR/prefix, then configures, builds and
# runs the consumer project against that prefix.
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(step
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR}/mha;-DCMAKE_CXX_COMPILER=${CXX};-DMHA_BUILD_TESTS=OFF;-DMHA_BUILD_EXAMPLES=OFF;-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--install;${WORK_DIR}/mha"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/test/package;-B;${WORK_DIR}/consumer;-DCMAKE_CXX_COMPILER=${CXX};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/consumer"
    "${WORK_DIR}/consumer/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package consumer step failed (${rc}): ${step}")
  endif()
endforeach()
