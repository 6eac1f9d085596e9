// book_chapter3 -- chapter 3 of "Build a Large Language Model From Scratch"
// (S. Raschka) computed by mha on the book's input with PyTorch's seed-123
// weights (exported by tools/export_book_weights.py into book_weights.hpp).
//
// Prints, like the book: the context vectors of CausalAttention (3.5.3), the
// MultiHeadAttentionWrapper (3.6.1), Exercise 3.2 and MultiHeadAttention
// (3.6.2), their shapes, then the mha::dynamic twin's largest difference on the
// same weights, and facts the compiler computed (head_dim, head offsets, the
// GPT-2 parameter count of Exercise 3.3, one row evaluated at compile time).
//
// Usage: book_chapter3 [--weights FILE]
//   --weights FILE  load the MultiHeadAttention (3.6.2) weights from a
//                   safetensors file in the book's naming (W_query.weight, ...,
//                   out_proj.bias; e.g. torch's save_file(model.state_dict()) of
//                   MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)) instead of the
//                   built-in seed-123 weights. A bad file prints the loader's
//                   error and exits with status 1.
#include <mha/mha.hpp>
#if defined(MHA_EXAMPLES_HAVE_IO)
#include <mha/io/safetensors.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "book_weights.hpp"

namespace {

// Prints a [B][N][D] tensor the way PyTorch prints it with 4 decimals.
template <std::size_t B, std::size_t N, std::size_t D>
void print_tensor(const mha::tensor<float, B, N, D>& t) {
  std::printf("tensor([");
  for (std::size_t b = 0; b < B; ++b) {
    std::printf(b == 0 ? "[" : "        [");
    for (std::size_t i = 0; i < N; ++i) {
      std::printf(i == 0 ? "[" : "         [");
      for (std::size_t d = 0; d < D; ++d) std::printf(d == 0 ? "%7.4f" : ", %7.4f", static_cast<double>(t(b, i, d)));
      std::printf(i + 1 < N ? "],\n" : "]");
    }
    std::printf(b + 1 < B ? "],\n\n" : "]");
  }
  std::printf("])\n");
}

template <std::size_t B, std::size_t N, std::size_t D>
void print_shape(const mha::tensor<float, B, N, D>&) {
  std::printf("context_vecs.shape: torch.Size([%zu, %zu, %zu])\n\n", B, N, D);
}

// Copies a fixed-size tensor into a dynamic one of the same shape.
template <std::size_t... E>
void copy_to(mha::dynamic::tensor<float>& dst, const mha::tensor<float, E...>& src) {
  std::copy(src.begin(), src.end(), dst.begin());
}

template <std::size_t... E>
double max_abs_diff(const mha::tensor<float, E...>& a, const mha::dynamic::tensor<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size; ++i)
    m = std::max(m, std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const char* weights_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--weights") == 0 && i + 1 < argc) {
      weights_file = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--weights FILE.safetensors]\n", argv[0]);
      return 2;
    }
  }
#if !defined(MHA_EXAMPLES_HAVE_IO)
  if (weights_file != nullptr) {
    std::fprintf(stderr, "--weights needs the build with mha::io (MHA_WITH_IO=ON)\n");
    return 2;
  }
#endif
  const auto& batch = mha_book::batch;  // [2][6][3]: "Your journey starts with one step", twice
  std::printf("batch.shape: torch.Size([2, 6, 3])\n\n");

  std::printf("# 3.5.3 CausalAttention (d_in=3, d_out=2)\n");
  const auto& ca = mha_book::causal_attention_model;
  const auto ca_out = ca(batch);
  print_tensor(ca_out);
  print_shape(ca_out);

  std::printf("# 3.6.1 MultiHeadAttentionWrapper (d_out=2, num_heads=2)\n");
  const auto& wrapper = mha_book::wrapper_model;
  const auto wrapper_out = wrapper(batch);
  print_tensor(wrapper_out);
  print_shape(wrapper_out);

  std::printf("# Exercise 3.2: MultiHeadAttentionWrapper (d_out=1, num_heads=2) -> 2-dim vectors\n");
  const auto& ex32 = mha_book::exercise_3_2_model;
  const auto ex32_out = ex32(batch);
  print_tensor(ex32_out);
  print_shape(ex32_out);

  std::printf("# 3.6.2 MultiHeadAttention with weight splits (d_out=2, num_heads=2)\n");
  auto mha_model = mha_book::mha_model;  // a copy: --weights may replace its weights
#if defined(MHA_EXAMPLES_HAVE_IO)
  if (weights_file != nullptr) {
    try {
      mha::io::load_safetensors(weights_file, mha_model, mha::io::checkpoint_format::book);
    } catch (const mha::io::load_error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
    std::printf("# (weights loaded from %s)\n", weights_file);
  }
#endif
  const auto mha_out = mha_model(batch);
  print_tensor(mha_out);
  print_shape(mha_out);

  // ---- the runtime-sized twin on the same weights
  mha::dynamic::tensor<float> x({2, 6, 3});
  copy_to(x, batch);
  mha::dynamic::causal_attention<float> d_ca(3, 2, 6);
  copy_to(d_ca.w_query.weight, ca.w_query.weight);
  copy_to(d_ca.w_key.weight, ca.w_key.weight);
  copy_to(d_ca.w_value.weight, ca.w_value.weight);
  mha::dynamic::multi_head_attention_wrapper<float> d_wrapper(3, 2, 6, 2);
  mha::dynamic::multi_head_attention_wrapper<float> d_ex32(3, 1, 6, 2);
  [&]<std::size_t... H>(std::index_sequence<H...>) {
    ((copy_to(d_wrapper.heads[H].w_query.weight, wrapper.head<H>().w_query.weight),
      copy_to(d_wrapper.heads[H].w_key.weight, wrapper.head<H>().w_key.weight),
      copy_to(d_wrapper.heads[H].w_value.weight, wrapper.head<H>().w_value.weight),
      copy_to(d_ex32.heads[H].w_query.weight, ex32.head<H>().w_query.weight),
      copy_to(d_ex32.heads[H].w_key.weight, ex32.head<H>().w_key.weight),
      copy_to(d_ex32.heads[H].w_value.weight, ex32.head<H>().w_value.weight)),
     ...);
  }(std::make_index_sequence<2>{});
  mha::dynamic::multi_head_attention<float> d_mha(3, 2, 6, 2);
  copy_to(d_mha.w_query.weight, mha_model.w_query.weight);
  copy_to(d_mha.w_key.weight, mha_model.w_key.weight);
  copy_to(d_mha.w_value.weight, mha_model.w_value.weight);
  copy_to(d_mha.out_proj.weight, mha_model.out_proj.weight);
  copy_to(d_mha.out_proj.bias, mha_model.out_proj.bias);
  const double diff = std::max({max_abs_diff(ca_out, d_ca(x)), max_abs_diff(wrapper_out, d_wrapper(x)),
                                max_abs_diff(ex32_out, d_ex32(x)), max_abs_diff(mha_out, d_mha(x))});
  std::printf("# mha::dynamic twin on the same weights: largest |fixed - dynamic| = %g\n\n", diff);

  // ---- facts computed by the compiler
  using model = mha::multi_head_attention<float, 3, 2, 6, 2>;
  using gpt2 = mha::multi_head_attention<float, 768, 768, 1024, 12>;
  std::printf("# compile-time facts\n");
  std::printf("multi_head_attention<float,3,2,6,2>: head_dim = %zu, head offsets = {%zu, %zu}, "
              "parameter_count = %zu\n",
              model::head_dim, model::head_offset<0>, model::head_offset<1>, model::parameter_count);
  std::printf("GPT-2 small multi_head_attention<float,768,768,1024,12>: head_dim = %zu, head offsets = "
              "{%zu, %zu, ..., %zu}, parameter_count = %zu (Exercise 3.3: 2,360,064)\n",
              gpt2::head_dim, gpt2::head_offset<0>, gpt2::head_offset<1>, gpt2::head_offset<11>,
              gpt2::parameter_count);
  static_assert(gpt2::parameter_count == 2360064);

  // The whole MultiHeadAttention forward pass, evaluated by the compiler.
  constexpr auto compile_time = mha_book::mha_model(mha_book::batch);
  std::printf("multi_head_attention row 5, computed at compile time: [%.7f, %.7f]\n",
              static_cast<double>(compile_time(0, 5, 0)), static_cast<double>(compile_time(0, 5, 1)));
  std::printf("                          the same row at run time:    [%.7f, %.7f]\n",
              static_cast<double>(mha_out(0, 5, 0)), static_cast<double>(mha_out(0, 5, 1)));
  return 0;
}
