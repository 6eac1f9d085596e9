// dispatch_kernels.cpp -- built once per x86-64 level by mha_dispatch_sources.
#include "dispatch_kernels.hpp"

namespace consumer::MHA_DISPATCH_NAMESPACE {
void forward(const model& m, const mha::tensor<float, 6, 3>& x, mha::tensor<float, 6, 2>& out) {
  m.forward(x, out);
}
}  // namespace consumer::MHA_DISPATCH_NAMESPACE
