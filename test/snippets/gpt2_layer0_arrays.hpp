// Prelude "gpt2_layer0_arrays" of the documentation snippets (check_snippets.py):
// what a header written by tools/export_weights_header.py for GPT-2 small's
// layer 0 (docs/loading-weights.md, "Weights into the binary") declares before
// its model, with zeros in place of the weights' literals.
#include <array>
#include <string_view>

#include <mha/fused_multi_head_attention.hpp>
#include <mha/parameters.hpp>
#include <mha/tensor.hpp>

namespace gpt2_l0 {
inline constexpr mha::tensor<float, 2304, 768> model_in_proj_weight{};
inline constexpr mha::tensor<float, 2304> model_in_proj_bias{};
inline constexpr mha::tensor<float, 768, 768> model_out_proj_weight{};
inline constexpr mha::tensor<float, 768> model_out_proj_bias{};
}  // namespace gpt2_l0
