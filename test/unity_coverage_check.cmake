# Run by the test <group>.every_case_discovered (cmake -P): every Catch2 test
# case compiled into a unity group executable belongs to one of the group's
# files, so the per-file discovery (TEST_SPEC "[#file]") registers it with
# CTest. A case that the file tags miss (say, a TEST_CASE in a header the
# group's files include: its tag is the header's name) would otherwise never run
# under ctest, silently. Variables:
#   EXE    the group's test executable
#   FILES  its files, separated by | (test_golden|test_book|...)
#   EMULATOR  the command that runs a cross build's executables (qemu-aarch64
#          -L ..., one string), or empty
string(REPLACE "|" ";" files "${FILES}")
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(spec "")
foreach(name IN LISTS files)
  string(APPEND spec "~[#${name}]")
endforeach()
execute_process(COMMAND ${emulator} "${EXE}" --filenames-as-tags --list-test-names-only "${spec}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${out}" out)
# (Catch2 2 exits with the number of cases it listed: 0 here, anything else is
# a case outside the files or an error.)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
  message(FATAL_ERROR "test cases of ${EXE} outside the files ${FILES} (CTest does not run them), "
                      "exit code ${rc}:\n${out}\n${err}")
endif()
# The spec must not be vacuous: without it the executable lists cases.
execute_process(COMMAND ${emulator} "${EXE}" --filenames-as-tags --list-test-names-only
                RESULT_VARIABLE rc OUTPUT_VARIABLE all ERROR_VARIABLE err)
string(STRIP "${all}" all)
if(all STREQUAL "")
  message(FATAL_ERROR "${EXE} lists no test cases at all:\n${err}")
endif()
message(STATUS "every test case of ${EXE} belongs to one of ${FILES}")
