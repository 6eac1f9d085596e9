// libFuzzer target: the safetensors header parser and loader.
//
// Input: byte 0 selects the model and options (bits 0-3 the model/format,
// bits 4-5 load_options::layout, bit 6 allow_extra_tensors, bit 7
// allow_non_finite), bytes 1.. are the file (loaded from memory). For every input the loader must return (never crash, read out
// of bounds or hit undefined behaviour: built with ASan + UBSan), and when it
// reports an error the model must be byte-for-byte unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

namespace {

template <class Model>
std::vector<unsigned char> bytes_of(const Model& m) {
  const auto* p = reinterpret_cast<const unsigned char*>(&m);
  return {p, p + sizeof(Model)};
}

template <class Model>
void run_fixed(const std::uint8_t* data, std::size_t size, const mha::io::load_options& o) {
  static Model model{};  // static: large models stay off the stack
  const auto before = bytes_of(model);
  const auto r = mha::io::try_load_safetensors_memory(data, size, model, o);
  if (!r.ok()) {
    if (r.message.empty() || bytes_of(model) != before) __builtin_trap();  // half-loaded model
  }
  model = Model{};
}

template <class T>
std::vector<T> weights_of(const mha::dynamic::multi_head_attention<T>& m) {
  std::vector<T> v;
  for (const auto* t : {&m.w_query.weight, &m.w_query.bias, &m.w_key.weight, &m.w_key.bias,
                        &m.w_value.weight, &m.w_value.bias, &m.out_proj.weight, &m.out_proj.bias})
    v.insert(v.end(), t->begin(), t->end());
  return v;
}

void run_dynamic(const std::uint8_t* data, std::size_t size, const mha::io::load_options& o) {
  mha::dynamic::multi_head_attention<float> m(6, 8, 9, 4, true);
  const auto before = weights_of(m);
  try {
    mha::io::load_safetensors_memory(data, size, m, o);
  } catch (const mha::io::load_error&) {
    if (weights_of(m) != before) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t sel = data[0];
  mha::io::load_options o;
  o.allow_extra_tensors = (sel & 0x40) != 0;
  o.allow_non_finite = (sel & 0x80) != 0;
  switch ((sel >> 4) & 0x3) {
    case 1: o.layout = mha::io::qkv_layout::contiguous; break;
    case 2: o.layout = mha::io::qkv_layout::interleaved_per_head; break;
    default: break;  // unspecified
  }
  const std::uint8_t* file = data + 1;
  const std::size_t n = size - 1;
  using mha::io::checkpoint_format;
  switch (sel & 0x0F) {
    case 0:  // book MultiHeadAttention (seed: book_mha_f32 / f16 / bf16)
      run_fixed<mha::multi_head_attention<float, 6, 8, 9, 4, true>>(file, n, o);
      break;
    case 1:  // book wrapper with bias (seed: book_wrapper_bias_f32)
      run_fixed<mha::multi_head_attention_wrapper<float, 3, 2, 4, 2, true>>(file, n, o);
      break;
    case 2:  // book CausalAttention (seed: book_ca_f32)
      run_fixed<mha::causal_attention<float, 4, 5, 7, true>>(file, n, o);
      break;
    case 3:  // nn.MultiheadAttention into the fused model (seed: torch_mha_*)
      o.format = checkpoint_format::pytorch_multihead;
      run_fixed<mha::fused_multi_head_attention<float, 8, 8, 6, 2, true>>(file, n, o);
      break;
    case 4:  // nn.MultiheadAttention into the split model, double
      o.format = checkpoint_format::pytorch_multihead;
      run_fixed<mha::multi_head_attention<double, 8, 8, 6, 2, true>>(file, n, o);
      break;
    case 5:  // GPT-2 under a prefix (seed: gpt2_*)
      o.format = checkpoint_format::gpt2;
      o.prefix = "h.0.attn.";
      run_fixed<mha::multi_head_attention<float, 12, 12, 10, 3, true>>(file, n, o);
      break;
    case 6:  // GPT-2 into the fused model
      o.format = checkpoint_format::gpt2;
      o.prefix = "h.0.attn.";
      run_fixed<mha::fused_multi_head_attention<float, 12, 12, 10, 3, true>>(file, n, o);
      break;
    case 7:  // book MultiHeadAttention, mha::dynamic, throwing API
      run_dynamic(file, n, o);
      break;
    case 8:  // F64 book file into a double model (seed: book_mha_f64)
      run_fixed<mha::multi_head_attention<double, 5, 6, 8, 3, true>>(file, n, o);
      break;
    case 10:  // GPT-NeoX fused QKV (layout from the metadata or bits 4-5; seed: neox_f32)
      o.format = checkpoint_format::neox;
      o.prefix = "gpt_neox.layers.0.attention.";
      run_fixed<mha::multi_head_attention<float, 12, 12, 8, 3, true>>(file, n, o);
      break;
    case 11:  // GPT-NeoX into the fused model, double (seed: neox_f64)
      o.format = checkpoint_format::neox;
      o.prefix = "gpt_neox.layers.0.attention.";
      run_fixed<mha::fused_multi_head_attention<double, 12, 12, 8, 3, true>>(file, n, o);
      break;
    default:  // book MultiHeadAttention without bias (seed: book_mha_nobias_f32)
      run_fixed<mha::multi_head_attention<float, 4, 6, 5, 2, false>>(file, n, o);
      break;
  }
  return 0;
}
