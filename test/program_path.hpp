// program_path.hpp -- finds the test data from the running program, so that no
// test program's command line names the clone's absolute path (the build passes
// paths relative to the program's directory; a compiler cache then serves clones
// in other folders too, .ci/run and docs/ci.md, "Compiler cache").
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace mha_test {

/// `relative` (a path from the directory of the running program, as the build
/// wrote it) resolved against that directory, found through /proc/self/exe
/// (Linux; QEMU's user mode answers it for the emulated program). If the link
/// cannot be read, `relative` itself (then relative to the working directory).
/// Internal linkage (`static`): the ISA-mix test's copies of a translation unit
/// for different instruction sets must share no function of their own.
static inline std::string program_relative(const char* relative) {
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return relative;
  return (program.parent_path() / relative).lexically_normal().string();
}

}  // namespace mha_test
