// dispatch_kernels.cpp -- the dispatched function of test/dispatch, compiled
// once per x86-64 level (mha_dispatch_sources: -march=<level>,
// MHA_DISPATCH_LEVEL), each copy in its own namespace MHA_DISPATCH_NAMESPACE.
#include <cstring>
#include <memory>

#include "dispatch_kernels.hpp"

namespace dispatch_test::MHA_DISPATCH_NAMESPACE {

report forward(const model& m, const input& x, output& out) {
  static model::workspace<1, 32> ws;  // (static: no heap, no large frame)
  static output again;
  m.forward(x, out, ws);
  std::size_t mismatches = 0;
  if (m.forward(x, 32, again, ws) != mha::status::ok) ++mismatches;
  for (std::size_t i = 0; i < output::size; ++i)
    if (std::memcmp(out.data() + i, again.data() + i, sizeof(float)) != 0) ++mismatches;
  return {mha::detail::isa_name, mismatches};
}

}  // namespace dispatch_test::MHA_DISPATCH_NAMESPACE
