// fuzz_dynamic's float instantiations (the target's second TU; see
// fuzz_dynamic.cpp and fuzz_dynamic_session.hpp).
#include "fuzz_dynamic_session.hpp"

void mha_fuzz::run_float(const std::uint8_t* data, std::size_t size, std::uint8_t head) {
  program in{data, size};
  run_type<float>(in, head);
}
