// mha/detail/api/dynamic_output_check.hpp -- the run-time output-shape check of
// mha::dynamic (the attention modules' forward and dynamic::linear's
// forward(x, out)).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// Checks `out` has the shape of x with last extent `width` (std::invalid_argument).
template <class T>
void check_dynamic_output(const char* api, const dynamic::tensor_view<const T>& x,
                          const dynamic::tensor_view<T>& out, std::size_t width) {
  const auto xs = x.shape();
  const auto os = out.shape();
  bool ok = os.size() == xs.size() && os.back() == width;
  for (std::size_t d = 0; ok && d + 1 < xs.size(); ++d) ok = os[d] == xs[d];
  if (ok) return;  // no allocation on the valid path
  std::vector<std::size_t> expected(xs.begin(), xs.end());
  expected.back() = width;
  throw std::invalid_argument(std::string(api) + "::forward: output is " +
                              dynamic::shape_string(out.shape()) + ", expected " +
                              dynamic::shape_string(expected));
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
