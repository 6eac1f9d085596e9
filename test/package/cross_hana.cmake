# cmake -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DHANA_DIR=... [-DRUNNER=...] -P cross_hana.cmake
#
# RUNNER (|-separated) runs the consumer's programs, for a real cross compiler:
# -DCXX=aarch64-linux-gnu-g++ "-DRUNNER=qemu-aarch64|-L|/usr/aarch64-linux-gnu".
#
# Boost.Hana through CMake in a cross build (cmake/mha-hana.cmake): with a
# toolchain file whose CMAKE_FIND_ROOT_PATH is a sysroot that has no Boost
# (CXX is the compiler; any will do, the point is the lookup), and
# CMAKE_FIND_ROOT_PATH_MODE_INCLUDE / _PACKAGE ONLY as cross toolchains set them:
#  1. configuring mha without MHA_HANA_INCLUDE_DIR fails with mha's message
#     (the lookup does not fall back to the host's /usr/include);
#  2. with MHA_HANA_INCLUDE_DIR = a directory holding only a link
#     boost -> HANA_DIR/boost, mha configures and installs into the sysroot;
#  3. the consumer project (test/package) without MHA_HANA_INCLUDE_DIR:
#     find_package(mha) fails with the same message;
#  4. with it: configures, builds and runs (its programs consumer and
#     consumer_exported), and its compile commands (every target's, also
#     consumer_dispatch's) carry that directory as -isystem and no /usr/include;
#     consumer_dispatch (the per-level copies of the kernels, most of the
#     build) is built and run by package_consumer (run.cmake): built here too
#     it would prove nothing about the lookup that the other two do not;
#  5. with a second root in CMAKE_FIND_ROOT_PATH whose usr/include holds the
#     link (Hana installed in the sysroot): found there with no variable set.
file(REMOVE_RECURSE "${WORK_DIR}")
string(REPLACE "|" ";" runner "${RUNNER}")
set(sysroot "${WORK_DIR}/sysroot")
set(hana "${WORK_DIR}/hana-only")
set(hana_root "${WORK_DIR}/hana-root")
file(MAKE_DIRECTORY "${sysroot}/usr" "${hana}" "${hana_root}/usr/include")
file(CREATE_LINK "${HANA_DIR}/boost" "${hana}/boost" SYMBOLIC)
file(CREATE_LINK "${HANA_DIR}/boost" "${hana_root}/usr/include/boost" SYMBOLIC)
foreach(name IN ITEMS plain with_hana_root)
  set(roots "${sysroot}")
  if(name STREQUAL "with_hana_root")
    list(APPEND roots "${hana_root}")
  endif()
  file(WRITE "${WORK_DIR}/toolchain-${name}.cmake"
"set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR \${CMAKE_HOST_SYSTEM_PROCESSOR})
set(CMAKE_CXX_COMPILER \"${CXX}\")
set(CMAKE_FIND_ROOT_PATH \"${roots}\")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
")
endforeach()
set(plain "-DCMAKE_TOOLCHAIN_FILE=${WORK_DIR}/toolchain-plain.cmake")
set(mha_args -S "${SOURCE_DIR}" -DMHA_WITH_IO=OFF -DMHA_BUILD_TESTS=OFF -DMHA_BUILD_EXAMPLES=OFF
    "-DCMAKE_INSTALL_PREFIX=${sysroot}/usr")
set(consumer_args -S "${SOURCE_DIR}/test/package" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
    "-DMHA_TEST_DATA_DIR=${SOURCE_DIR}/test/data/safetensors")
set(not_found "boost/hana.hpp not found")

# run(<expect: ok|fail> <output must match> <command...>)
function(run expect pattern)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REPLACE ";" " " shown "${ARGN}")
  message("$ ${shown}\n${out}")
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "cross_hana: step failed (${rc}): ${shown}")
  elseif(expect STREQUAL "fail" AND rc EQUAL 0)
    message(FATAL_ERROR "cross_hana: step must fail but succeeded: ${shown}")
  endif()
  if(pattern AND NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "cross_hana: the output of ${shown} does not contain \"${pattern}\"")
  endif()
endfunction()

run(fail "${not_found}" ${CMAKE_COMMAND} ${mha_args} -B "${WORK_DIR}/mha-none" ${plain})
run(ok "" ${CMAKE_COMMAND} ${mha_args} -B "${WORK_DIR}/mha" ${plain} "-DMHA_HANA_INCLUDE_DIR=${hana}")
run(ok "" ${CMAKE_COMMAND} --install "${WORK_DIR}/mha")
run(fail "${not_found}" ${CMAKE_COMMAND} ${consumer_args} -B "${WORK_DIR}/consumer-none" ${plain})
run(ok "" ${CMAKE_COMMAND} ${consumer_args} -B "${WORK_DIR}/consumer" ${plain}
    "-DMHA_HANA_INCLUDE_DIR=${hana}")
run(ok "" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer" --target consumer consumer_exported)
run(ok "" ${runner} "${WORK_DIR}/consumer/consumer")
run(ok "" ${runner} "${WORK_DIR}/consumer/consumer_exported")
file(READ "${WORK_DIR}/consumer/compile_commands.json" commands)
if(NOT commands MATCHES "-isystem ${hana}")
  message(FATAL_ERROR "cross_hana: the consumer's compile commands lack -isystem ${hana}:\n${commands}")
endif()
if(commands MATCHES "(-I|-isystem )/usr/include")
  message(FATAL_ERROR "cross_hana: the consumer's compile commands name /usr/include:\n${commands}")
endif()
run(ok "" ${CMAKE_COMMAND} ${consumer_args} -B "${WORK_DIR}/consumer-root"
    "-DCMAKE_TOOLCHAIN_FILE=${WORK_DIR}/toolchain-with_hana_root.cmake")
file(STRINGS "${WORK_DIR}/consumer-root/CMakeCache.txt" found REGEX "^MHA_HANA_INCLUDE_DIR:")
if(NOT found STREQUAL "MHA_HANA_INCLUDE_DIR:PATH=${hana_root}/usr/include")
  message(FATAL_ERROR "cross_hana: with Hana in a find root, found ${found}")
endif()
message("cross_hana: all steps as expected")
