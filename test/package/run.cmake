# cmake -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -P run.cmake
# Installs mha from SOURCE_DIR into WORK_DIR/prefix, runs the installed
# weight-header exporter (`mha-export-weights --help`), then configures, builds
# and runs the consumer project against that prefix (its build runs the
# installed exporter through the imported target mha::export_weights).
file(REMOVE_RECURSE "${WORK_DIR}")
set(exporter "${WORK_DIR}/prefix/bin/mha-export-weights")
foreach(step
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR}/mha;-DCMAKE_CXX_COMPILER=${CXX};-DMHA_BUILD_TESTS=OFF;-DMHA_BUILD_EXAMPLES=OFF;-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--install;${WORK_DIR}/mha"
    "${exporter};--help"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/test/package;-B;${WORK_DIR}/consumer;-DCMAKE_CXX_COMPILER=${CXX};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix;-DMHA_TEST_DATA_DIR=${SOURCE_DIR}/test/data/safetensors"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/consumer"
    "${WORK_DIR}/consumer/consumer"
    "${WORK_DIR}/consumer/consumer_exported"
    "${WORK_DIR}/consumer/consumer_dispatch")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package consumer step failed (${rc}): ${step}")
  endif()
  if(step MATCHES "--help$" AND NOT out MATCHES "usage: mha-export-weights")
    message(FATAL_ERROR "mha-export-weights --help did not print its usage")
  endif()
endforeach()
