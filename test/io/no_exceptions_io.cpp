// Built with -fno-exceptions (and -fno-rtti): the non-throwing loader works in
// a build without exceptions. Loads the PyTorch-written book_mha_f32 file into
// a fixed-size model, compares its output with PyTorch's, and checks that a
// corrupt buffer is reported as an error value with the model unchanged.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "../program_path.hpp"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "this file must be compiled with -fno-exceptions"
#endif

namespace {
using model_t = mha::multi_head_attention<float, 6, 8, 9, 4, true>;
model_t model{};
mha::tensor<float, 3, 7, 6> x{};

bool read(const char* file, const char* name, std::vector<float>& out) {
  mha::io::detail::file_source src;
  mha::io::detail::header_info h;
  if (src.open(file) || mha::io::detail::parse_header(src, h)) return false;
  const auto* e = h.find(name);
  return e != nullptr && !mha::io::detail::read_converted<float>(src, h, *e, false, out);
}
}  // namespace

int main() {
  const std::string dir = mha_test::program_relative(MHA_SAFETENSORS_DIR);
  const auto r = mha::io::try_load_safetensors(dir + "/book_mha_f32.safetensors", model);
  if (!r.ok()) {
    std::printf("load failed: %s\n", r.message.c_str());
    return 1;
  }
  std::vector<float> in, expected;
  if (!read((dir + "/book_mha_f32.io.safetensors").c_str(), "input", in) ||
      !read((dir + "/book_mha_f32.io.safetensors").c_str(), "output", expected) || in.size() != x.size) {
    std::printf("cannot read the PyTorch input/output\n");
    return 1;
  }
  for (std::size_t i = 0; i < in.size(); ++i) x.elements[i] = in[i];
  const auto y = model(x);
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (!(std::fabs(y.elements[i] - expected[i]) <= 1e-5f * std::fabs(expected[i]) + 1e-6f)) {
      std::printf("output %zu: %g, PyTorch %g\n", i, double(y.elements[i]), double(expected[i]));
      return 1;
    }
  // A corrupt buffer: error value, model unchanged.
  const unsigned char bad[] = {16, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'a', '"', ':', ' ', '[', '1'};
  const model_t before = model;
  const auto r2 = mha::io::try_load_safetensors_memory(bad, sizeof bad, model);
  if (r2.ok() || r2.code != mha::io::load_errc::truncated ||
      std::memcmp(&before, &model, sizeof(model_t)) != 0) {
    std::printf("corrupt buffer not rejected properly: %s\n", r2.message.c_str());
    return 1;
  }
  std::printf("ok: %s\n", r2.message.c_str());
  return 0;
}
