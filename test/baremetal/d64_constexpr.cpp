// d64_constexpr.cpp -- the d64 model's forward pass (d64_model.hpp) evaluated
// at compile time, the reference that d64.cpp compares the run-time result
// with bit for bit. A translation unit of its own, so that this one slow
// evaluation (GCC 12: about 10-13 s, 0.85 GB, and more operations than GCC's
// default -fconstexpr-ops-limit, raised for this file in CMakeLists.txt)
// builds in parallel with the rest.
#include "mha_baremetal.hpp"

#include "d64_model.hpp"

namespace d64 {
namespace {
constexpr output_type forward_at_compile_time() noexcept {
  output_type out{};
  workspace_type ws{};
  model.forward(input, out, ws);
  return out;
}
}  // namespace

constexpr output_type compile_time_output = forward_at_compile_time();

}  // namespace d64
