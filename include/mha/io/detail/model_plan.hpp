// mha/io/detail/model_plan.hpp -- which tensors a model needs from a checkpoint
// (names, shapes) and where each one's elements go in the model.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/causal_attention.hpp>
#include <mha/fused_multi_head_attention.hpp>
#include <mha/io/detail/safetensors_reader.hpp>
#include <mha/io/load_result.hpp>
#include <mha/linear.hpp>
#include <mha/multi_head_attention.hpp>
#include <mha/multi_head_attention_wrapper.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <mha/dynamic.hpp>
#endif

#include <mha/detail/macros.hpp>  // MHA_IO_HAVE_DYNAMIC: with exceptions

namespace mha::io::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// Destination of (part of) a file tensor: dest[r * cols + c] =
/// src[src_offset + r * src_row_stride + c * src_col_stride] for r < rows, c < cols.
/// A plain copy has src_row_stride = cols, src_col_stride = 1; a Conv1D
/// (transposed) weight has src_row_stride = 1.
template <class T>
struct sink {
  T* dest;
  std::size_t rows, cols;
  std::size_t src_offset, src_row_stride, src_col_stride;
};

/// What the loader does with a tensor name.
enum class role {
  weight,     ///< required; shape checked; converted and scattered to sinks
  forbidden,  ///< must be absent (a bias the model does not have: qkv_bias mismatch)
  mask,       ///< optional; if present must be the causal mask [context][context]
  ignored,    ///< optional; accepted and not read (GPT-2's attn.bias / masked_bias)
};

template <class T>
struct planned_tensor {
  std::string name;  ///< full name (prefix included)
  role kind = role::weight;
  std::vector<std::uint64_t> shape;
  std::vector<sink<T>> sinks;
  std::string why;  ///< for forbidden/weight: the model fact behind it, for messages
  bool is_qkv_bias = false;  ///< a query/key/value bias (absence is a qkv_bias mismatch)
  load_errc forbidden_code = load_errc::qkv_bias;  ///< for forbidden: the error when present
};

/// The tensors one model needs (built by plan_for, consumed by the loader).
template <class T>
struct plan {
  std::vector<planned_tensor<T>> tensors;
  std::size_t context_length = 0;
};

/// Pointers into one Linear layer of a model: weight [out][in], bias [out] or null.
template <class T>
struct linear_ref {
  T* weight = nullptr;
  T* bias = nullptr;
  std::size_t out = 0, in = 0;
  bool has_bias = false;
};

template <class T, std::size_t In, std::size_t Out, bool Bias>
linear_ref<T> ref_of(mha::linear<T, In, Out, Bias>& l) noexcept {
  linear_ref<T> r{l.weight.data(), nullptr, Out, In, Bias};
  if constexpr (Bias) r.bias = l.bias.data();
  return r;
}

/// Generic description of an attention model for planning.
template <class T>
struct attention_desc {
  enum class kind { single, wrapper, multi } type = kind::single;
  std::size_t d_in = 0, d_out = 0, context_length = 0, num_heads = 1;
  bool qkv_bias = false;
  std::vector<linear_ref<T>> q, k, v;  ///< one per head for the wrapper, else one
  linear_ref<T> out_proj;              ///< multi only
  bool fused = false;                  ///< q, k, v rows are contiguous blocks of one [3 d_out][d_in]
  std::string model_name;
};

template <class T>
planned_tensor<T> weight_tensor(std::string name, std::vector<std::uint64_t> shape,
                                std::vector<sink<T>> sinks, std::string why = {}) {
  planned_tensor<T> p;
  p.is_qkv_bias = !why.empty();
  p.name = std::move(name);
  p.kind = role::weight;
  p.shape = std::move(shape);
  p.sinks = std::move(sinks);
  p.why = std::move(why);
  return p;
}
template <class T>
planned_tensor<T> other_tensor(std::string name, role kind, std::string why = {}) {
  planned_tensor<T> p;
  p.name = std::move(name);
  p.kind = kind;
  p.why = std::move(why);
  return p;
}
template <class T>
sink<T> copy_sink(T* dest, std::size_t rows, std::size_t cols, std::size_t src_offset = 0) {
  return {dest, rows, cols, src_offset, cols, 1};
}

/// nn.Linear-named tensors `<base>.weight` [out][in] and `<base>.bias` [out].
template <class T>
void add_linear(plan<T>& p, const std::string& base, const linear_ref<T>& l, bool is_qkv) {
  p.tensors.push_back(weight_tensor<T>(base + ".weight", {l.out, l.in},
                                       {copy_sink(l.weight, l.out, l.in)}));
  if (l.has_bias)
    p.tensors.push_back(weight_tensor<T>(base + ".bias", {l.out}, {copy_sink(l.bias, 1, l.out)},
                                         is_qkv ? "the model has qkv_bias = true" : ""));
  else
    p.tensors.push_back(other_tensor<T>(base + ".bias", role::forbidden,
                                        "the model has qkv_bias = false"));
}

/// Sinks of a fused [3E][d_in] weight (nn.Linear layout; `transposed`: a
/// Conv1D [d_in][3E]) or, with `bias`, of a fused [3E] bias, into the model's
/// query/key/value parts (each [E][d_in] / [E]) for `layout` (contiguous, or
/// interleaved_per_head with head_dim E / num_heads).
template <class T>
std::vector<sink<T>> fused_sinks(const attention_desc<T>& d, qkv_layout layout, bool transposed,
                                 bool bias) {
  const std::size_t E = d.d_out, in = d.d_in;
  const linear_ref<T>* parts[3] = {&d.q[0], &d.k[0], &d.v[0]};
  std::vector<sink<T>> out;
  // Part i's rows [first, first + rows) come from the file's output features
  // [src_row, src_row + rows).
  const auto add = [&](std::size_t i, std::size_t first, std::size_t rows, std::size_t src_row) {
    T* dest = bias ? parts[i]->bias + first : parts[i]->weight + first * in;
    if (bias)
      out.push_back(copy_sink(dest, 1, rows, src_row));
    else if (transposed)  // Conv1D [in][3E]: model row r, column c <- file [c][src_row + r]
      out.push_back(sink<T>{dest, rows, in, src_row, 1, 3 * E});
    else
      out.push_back(copy_sink(dest, rows, in, src_row * in));
  };
  if (layout == qkv_layout::interleaved_per_head) {
    const std::size_t hd = E / d.num_heads;
    for (std::size_t h = 0; h < d.num_heads; ++h)
      for (std::size_t i = 0; i < 3; ++i) add(i, h * hd, hd, (3 * h + i) * hd);
  } else {
    for (std::size_t i = 0; i < 3; ++i) add(i, 0, E, i * E);
  }
  return out;
}

/// Builds the plan of `d` for `format` and the fused QKV `layout` (as given
/// or recorded; unspecified = the format's own), names prefixed with `prefix`.
template <class T>
error make_plan(const attention_desc<T>& d, checkpoint_format format, qkv_layout layout,
                const std::string& prefix, plan<T>& p) {
  using kind = typename attention_desc<T>::kind;
  p.context_length = d.context_length;
  const std::size_t E = d.d_out;
  switch (format) {
    case checkpoint_format::book: {
      if (layout == qkv_layout::interleaved_per_head)
        return make_error(load_errc::layout, "",
                          "load_options::layout is qkv_layout::interleaved_per_head, but "
                          "checkpoint_format::book stores W_query, W_key and W_value as separate "
                          "tensors (the layout applies to pytorch_multihead, gpt2 and neox)");
      if (d.type == kind::wrapper) {
        for (std::size_t h = 0; h < d.num_heads; ++h) {
          const std::string hp = prefix + "heads." + std::to_string(h) + ".";
          add_linear(p, hp + "W_query", d.q[h], true);
          add_linear(p, hp + "W_key", d.k[h], true);
          add_linear(p, hp + "W_value", d.v[h], true);
          p.tensors.push_back(other_tensor<T>(hp + "mask", role::mask));
        }
        return {};
      }
      add_linear(p, prefix + "W_query", d.q[0], true);
      add_linear(p, prefix + "W_key", d.k[0], true);
      add_linear(p, prefix + "W_value", d.v[0], true);
      if (d.type == kind::multi) add_linear(p, prefix + "out_proj", d.out_proj, false);
      p.tensors.push_back(other_tensor<T>(prefix + "mask", role::mask));
      return {};
    }
    case checkpoint_format::pytorch_multihead:
    case checkpoint_format::gpt2:
    case checkpoint_format::neox: {
      const bool torch = format == checkpoint_format::pytorch_multihead;
      const bool gpt2 = format == checkpoint_format::gpt2;
      const char* fmt = to_string(format);
      if (d.type != kind::multi)
        return make_error(load_errc::model, "",
                          std::string("checkpoint_format::") + fmt + " holds a packed multi-head "
                          "attention with out_proj; load it into mha::multi_head_attention, "
                          "mha::fused_multi_head_attention or mha::dynamic::multi_head_attention, "
                          "not into " + d.model_name);
      const std::string w_name =
          prefix + (torch ? "in_proj_weight" : gpt2 ? "c_attn.weight" : "query_key_value.weight");
      const std::string b_name =
          prefix + (torch ? "in_proj_bias" : gpt2 ? "c_attn.bias" : "query_key_value.bias");
      if (layout == qkv_layout::unspecified) {
        if (format == checkpoint_format::neox)
          return make_error(load_errc::layout, w_name,
                            "the row order of the fused query/key/value weight is not recorded in "
                            "the file (no 'qkv_layout' in __metadata__) and load_options::layout "
                            "is qkv_layout::unspecified; set it to qkv_layout::interleaved_per_head "
                            "(GPT-NeoX, Megatron-LM: [q_h0 k_h0 v_h0 q_h1 ...]) or "
                            "qkv_layout::contiguous ([Q; K; V]): loading the wrong one gives wrong "
                            "outputs without an error");
        layout = qkv_layout::contiguous;  // what nn.MultiheadAttention and GPT-2 store
      }
      std::vector<sink<T>> w_sinks;
      if (d.fused && layout == qkv_layout::contiguous)  // one copy into w_qkv [3E][d_in]
        w_sinks.push_back(gpt2 ? sink<T>{d.q[0].weight, 3 * E, d.d_in, 0, 1, 3 * E}
                               : copy_sink(d.q[0].weight, 3 * E, d.d_in));
      else
        w_sinks = fused_sinks(d, layout, gpt2, false);
      p.tensors.push_back(weight_tensor<T>(
          w_name, gpt2 ? std::vector<std::uint64_t>{d.d_in, 3 * E} : std::vector<std::uint64_t>{3 * E, d.d_in},
          std::move(w_sinks)));
      if (d.qkv_bias) {
        std::vector<sink<T>> b_sinks;
        if (d.fused && layout == qkv_layout::contiguous)
          b_sinks.push_back(copy_sink(d.q[0].bias, 1, 3 * E));
        else
          b_sinks = fused_sinks(d, layout, gpt2, true);
        p.tensors.push_back(weight_tensor<T>(b_name, {3 * E}, std::move(b_sinks),
                                             "the model has qkv_bias = true"));
      } else {
        p.tensors.push_back(other_tensor<T>(b_name, role::forbidden, "the model has qkv_bias = false"));
      }
      if (torch) {
        add_linear(p, prefix + "out_proj", d.out_proj, false);
      } else if (gpt2) {  // c_proj.weight [E][E] Conv1D: transpose
        p.tensors.push_back(weight_tensor<T>(prefix + "c_proj.weight", {E, E},
                                             {sink<T>{d.out_proj.weight, E, E, 0, 1, E}}));
        p.tensors.push_back(weight_tensor<T>(prefix + "c_proj.bias", {E},
                                             {copy_sink(d.out_proj.bias, 1, E)}));
        p.tensors.push_back(other_tensor<T>(prefix + "bias", role::ignored));
        p.tensors.push_back(other_tensor<T>(prefix + "masked_bias", role::ignored));
      } else {  // neox: dense [E][E], nn.Linear layout
        add_linear(p, prefix + "dense", d.out_proj, false);
        p.tensors.push_back(other_tensor<T>(prefix + "bias", role::ignored));
        p.tensors.push_back(other_tensor<T>(prefix + "masked_bias", role::ignored));
        auto rotary = other_tensor<T>(
            prefix + "rotary_emb.inv_freq", role::forbidden,
            "the checkpoint applies rotary position embeddings to the queries and keys "
            "(GPT-NeoX's rotary_pct > 0), which mha's attention does not: its outputs would differ");
        rotary.forbidden_code = load_errc::unexpected_tensor;
        p.tensors.push_back(std::move(rotary));
      }
      return {};
    }
  }
  return make_error(load_errc::model, "", "unknown checkpoint_format");
}

// ------------------------------------------------------------ fixed-size models

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool B>
error describe(mha::causal_attention<T, DIn, DOut, Ctx, B>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::single;
  d.d_in = DIn, d.d_out = DOut, d.context_length = Ctx, d.num_heads = 1, d.qkv_bias = B;
  d.q = {ref_of(m.w_query)}, d.k = {ref_of(m.w_key)}, d.v = {ref_of(m.w_value)};
  d.model_name = "mha::causal_attention";
  return {};
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
error describe(mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, B>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::wrapper;
  d.d_in = DIn, d.d_out = DOut, d.context_length = Ctx, d.num_heads = H, d.qkv_bias = B;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((d.q.push_back(ref_of(m.template head<I>().w_query)),
      d.k.push_back(ref_of(m.template head<I>().w_key)),
      d.v.push_back(ref_of(m.template head<I>().w_value))),
     ...);
  }(std::make_index_sequence<H>{});
  d.model_name = "mha::multi_head_attention_wrapper";
  return {};
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
error describe(mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::multi;
  d.d_in = DIn, d.d_out = DOut, d.context_length = Ctx, d.num_heads = H, d.qkv_bias = B;
  d.q = {ref_of(m.w_query)}, d.k = {ref_of(m.w_key)}, d.v = {ref_of(m.w_value)};
  d.out_proj = ref_of(m.out_proj);
  d.model_name = "mha::multi_head_attention";
  return {};
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
error describe(mha::fused_multi_head_attention<T, DIn, DOut, Ctx, H, B>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::multi;
  d.d_in = DIn, d.d_out = DOut, d.context_length = Ctx, d.num_heads = H, d.qkv_bias = B;
  // Q, K, V are row blocks 0, 1, 2 of the fused [3 DOut][DIn] weight (and [3 DOut] bias).
  for (std::size_t i = 0; i < 3; ++i) {
    linear_ref<T> r{m.w_qkv.weight.data() + i * DOut * DIn, nullptr, DOut, DIn, B};
    if constexpr (B) r.bias = m.w_qkv.bias.data() + i * DOut;
    (i == 0 ? d.q : i == 1 ? d.k : d.v).push_back(r);
  }
  d.out_proj = ref_of(m.out_proj);
  d.fused = true;
  d.model_name = "mha::fused_multi_head_attention";
  return {};
}

// ------------------------------------------------------------ mha::dynamic models
#if defined(MHA_IO_HAVE_DYNAMIC)

template <class T>
error ref_of_dynamic(mha::dynamic::linear<T>& l, const char* what, linear_ref<T>& r) {
  const bool ok_w = l.weight.shape() == std::vector<std::size_t>{l.out_features(), l.in_features()};
  const bool ok_b = !l.has_bias() || l.bias.shape() == std::vector<std::size_t>{l.out_features()};
  if (!ok_w || !ok_b)
    return make_error(load_errc::model, "",
                      std::string("the model's ") + what +
                          " weight or bias was replaced by a tensor of another shape (weight " +
                          mha::dynamic::shape_string(l.weight.shape()) + ")");
  r = linear_ref<T>{l.weight.data(), l.has_bias() ? l.bias.data() : nullptr, l.out_features(),
                    l.in_features(), l.has_bias()};
  return {};
}

template <class T>
error describe(mha::dynamic::causal_attention<T>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::single;
  d.d_in = m.d_in(), d.d_out = m.d_out(), d.context_length = m.context_length();
  d.num_heads = 1, d.qkv_bias = m.qkv_bias();
  d.q.resize(1), d.k.resize(1), d.v.resize(1);
  if (auto e = ref_of_dynamic(m.w_query, "W_query", d.q[0])) return e;
  if (auto e = ref_of_dynamic(m.w_key, "W_key", d.k[0])) return e;
  if (auto e = ref_of_dynamic(m.w_value, "W_value", d.v[0])) return e;
  d.model_name = "mha::dynamic::causal_attention";
  return {};
}

template <class T>
error describe(mha::dynamic::multi_head_attention_wrapper<T>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::wrapper;
  d.d_in = m.d_in(), d.d_out = m.d_out(), d.context_length = m.context_length();
  d.num_heads = m.num_heads(), d.qkv_bias = m.qkv_bias();
  if (m.heads.size() != m.num_heads())
    return make_error(load_errc::model, "",
                      "the model's heads vector holds " + std::to_string(m.heads.size()) +
                          " heads, expected num_heads = " + std::to_string(m.num_heads()));
  d.q.resize(d.num_heads), d.k.resize(d.num_heads), d.v.resize(d.num_heads);
  for (std::size_t h = 0; h < d.num_heads; ++h) {
    auto& head = m.heads[h];
    if (head.d_in() != d.d_in || head.d_out() != d.d_out || head.qkv_bias() != d.qkv_bias)
      return make_error(load_errc::model, "", "head " + std::to_string(h) + " has other sizes than the wrapper");
    if (auto e = ref_of_dynamic(head.w_query, "W_query", d.q[h])) return e;
    if (auto e = ref_of_dynamic(head.w_key, "W_key", d.k[h])) return e;
    if (auto e = ref_of_dynamic(head.w_value, "W_value", d.v[h])) return e;
  }
  d.model_name = "mha::dynamic::multi_head_attention_wrapper";
  return {};
}

template <class T>
error describe(mha::dynamic::multi_head_attention<T>& m, attention_desc<T>& d) {
  d.type = attention_desc<T>::kind::multi;
  d.d_in = m.d_in(), d.d_out = m.d_out(), d.context_length = m.context_length();
  d.num_heads = m.num_heads(), d.qkv_bias = m.qkv_bias();
  d.q.resize(1), d.k.resize(1), d.v.resize(1);
  if (auto e = ref_of_dynamic(m.w_query, "W_query", d.q[0])) return e;
  if (auto e = ref_of_dynamic(m.w_key, "W_key", d.k[0])) return e;
  if (auto e = ref_of_dynamic(m.w_value, "W_value", d.v[0])) return e;
  if (auto e = ref_of_dynamic(m.out_proj, "out_proj", d.out_proj)) return e;
  d.model_name = "mha::dynamic::multi_head_attention";
  return {};
}

#endif  // MHA_IO_HAVE_DYNAMIC

/// True for the model types the loader knows.
template <class Model, class = void>
inline constexpr bool is_loadable_v = false;
template <class Model>
inline constexpr bool is_loadable_v<
    Model, std::void_t<decltype(describe(std::declval<Model&>(),
                                         std::declval<attention_desc<typename Model::value_type>&>()))>> =
    true;

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::io::detail

#include <mha/detail/macros_undef.hpp>
