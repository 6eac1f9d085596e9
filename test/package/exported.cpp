// Compiles and runs the headers that the installed `mha-export-weights` wrote
// (CMakeLists.txt, at build time) from test/data/safetensors/book_ca_f32{,.io}.safetensors: the
// book's CausalAttention (d_in 4, d_out 5, context_length 7, qkv_bias) and
// PyTorch's input and output for it. Exits 0 when the exported model
// reproduces PyTorch's output (the tolerance of test/io/test_exported_header.cpp).
#include <cstddef>

#include <book_ca.hpp>
#include <book_ca_io.hpp>

static_assert(book_ca::model_type::d_in == 4 && book_ca::model_type::d_out == 5 &&
              book_ca::model_type::context_length == 7 && book_ca::model_type::qkv_bias);

int main() {
  const auto y = book_ca::model(book_ca_io::model_input);
  const auto& expected = book_ca_io::model_output;
  static_assert(decltype(y)::size == decltype(book_ca_io::model_output)::size);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double a = static_cast<double>(y.elements[i]);
    const double b = static_cast<double>(expected.elements[i]);
    const double d = a > b ? a - b : b - a;
    if (!(d <= 1e-5 * (b < 0 ? -b : b) + 1e-6)) return 1;
  }
  return 0;
}
