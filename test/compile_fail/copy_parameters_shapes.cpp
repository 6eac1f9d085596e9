// compile-fail case: mha::copy_parameters between fixed-size modules whose parameters differ
// (out_proj is [4][4] in one, [6][6] in the other).
// Must fail with: mha::copy_parameters: the models' parameters differ in names or shapes
// With -DMHA_CF_OK (the same shapes, float into double) it must compile.
#include <memory>

#include <mha/multi_head_attention.hpp>
#include <mha/parameters.hpp>

int main() {
  const auto from = std::make_unique<mha::multi_head_attention<float, 6, 4, 7, 2>>();
#ifndef MHA_CF_OK
  auto to = std::make_unique<mha::multi_head_attention<double, 6, 6, 7, 2>>();
#else
  auto to = std::make_unique<mha::multi_head_attention<double, 6, 4, 7, 2>>();
#endif
  mha::copy_parameters(*from, *to);
  return static_cast<int>(to->out_proj.bias(0));
}
