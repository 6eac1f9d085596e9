// libFuzzer target: the mha::dynamic API (issue 11, "fuzz target for the dynamic
// API"). What it checks and how: fuzz_dynamic_session.hpp. This TU holds the
// entry point and the double instantiations; fuzz_dynamic_float.cpp the float
// ones (two TUs: the build uses both cores).
#include "fuzz_dynamic_session.hpp"

void mha_fuzz::run_double(const std::uint8_t* data, std::size_t size, std::uint8_t head) {
  program in{data, size};
  run_type<double>(in, head);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Byte 0 picks the element type (and, in run_type, the module); an empty
  // input reads as zeros, like every byte past the end (program::byte).
  const std::uint8_t head = size == 0 ? std::uint8_t{0} : data[0];
  const std::uint8_t* rest = size == 0 ? data : data + 1;
  const std::size_t rest_size = size == 0 ? 0 : size - 1;
  if ((head & 1) != 0)
    mha_fuzz::run_double(rest, rest_size, head);
  else
    mha_fuzz::run_float(rest, rest_size, head);
  return 0;
}
