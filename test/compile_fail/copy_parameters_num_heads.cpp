// compile-fail case: mha::copy_parameters between fixed-size modules with the same parameter
// names and shapes but another num_heads (a hyperparameter, not in the walk: the copy would
// compute something else).
// Must fail with: mha::copy_parameters: the models' parameters differ in names or shapes
// (compare mha::parameter_names), or their context_length or num_heads differ
// With -DMHA_CF_OK (the same num_heads) it must compile.
#include <memory>

#include <mha/multi_head_attention.hpp>
#include <mha/parameters.hpp>

int main() {
  const auto from = std::make_unique<mha::multi_head_attention<float, 6, 4, 7, 2>>();
#ifndef MHA_CF_OK
  auto to = std::make_unique<mha::multi_head_attention<float, 6, 4, 7, 4>>();
#else
  auto to = std::make_unique<mha::multi_head_attention<float, 6, 4, 7, 2>>();
#endif
  mha::copy_parameters(*from, *to);
  return static_cast<int>(to->out_proj.bias(0));
}
