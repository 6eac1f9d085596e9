// Uses the installed headers through the exported mha::mha target.
#include <mha/mha.hpp>

int main() {
  const mha::multi_head_attention<float, 4, 4, 3, 2> model{};
  const mha::tensor<float, 3, 4> x{};
  const auto y = model(x);  // zero weights and bias: all-zero output
  for (const float v : y)
    if (v != 0.0f) return 1;
  return mha::multi_head_attention<float, 768, 768, 1024, 12>::parameter_count == 2360064 ? 0 : 1;
}
