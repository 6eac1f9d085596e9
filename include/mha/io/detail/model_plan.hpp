// mha/io/detail/model_plan.hpp -- which tensors a model needs from a checkpoint
// (names, shapes) and where each one's elements go in the model.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
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
#include <mha/parameters.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <stdexcept>

#include <mha/dynamic.hpp>
#endif

#include <mha/detail/macros.hpp>

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
  optional,   ///< like weight when present; when absent its sinks are set to zero (Llama's o_proj.bias)
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
  /// For a key/value weight of a grouped-query model: head_dim (its rows are
  /// num_kv_heads * head_dim; a shape error names both head counts). 0: none.
  std::size_t kv_head_dim = 0;
  std::size_t kv_heads = 0;  ///< with kv_head_dim: the model's num_kv_heads
  /// 'k' / 'v' for a key / value weight whose columns are the model's kdim /
  /// vdim (a shape error then names both widths); 0 for other tensors.
  char kv_input = 0;
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

/// One entry of the model's parameter walk (mha/parameters.hpp), as the
/// loader sees it: a parameter (data, shape), an absent parameter (a bias the
/// model does not have) or a buffer (the book's causal mask).
template <class T>
struct walked_entry {
  enum class kind { parameter, absent, buffer } type = kind::parameter;
  std::string name;  ///< walk name, e.g. "heads.0.W_query.weight"
  T* data = nullptr;
  std::vector<std::uint64_t> shape;
};

/// Generic description of an attention model for planning.
template <class T>
struct attention_desc {
  enum class kind { single, wrapper, multi } type = kind::single;
  std::size_t d_in = 0, d_out = 0, context_length = 0, num_heads = 1;
  /// Features of a key / value input row (PyTorch's kdim / vdim): W_key is
  /// [d_out][key_dim], W_value [d_out][value_dim]; d_in unless the model is a
  /// cross-attention module with its own widths.
  std::size_t key_dim = 0, value_dim = 0;
  std::size_t num_kv_heads = 1;  ///< key/value heads: num_heads unless grouped-query
  bool grouped = false;          ///< a grouped-query attention (has num_kv_heads)
  bool has_rope = false;         ///< the model rotates queries and keys (RoPE)
  bool qkv_bias = false;
  std::vector<linear_ref<T>> q, k, v;  ///< one per head for the wrapper, else one
  linear_ref<T> out_proj;              ///< multi only
  bool fused = false;                  ///< q, k, v rows are contiguous blocks of one [3 d_out][d_in]
  std::string model_name;              ///< the description's name, e.g. "mha::causal_attention"
  std::vector<walked_entry<T>> walked; ///< the parameter walk, in order
};

/// True for a cross-attention model whose key or value input width (kdim,
/// vdim) differs from d_in.
template <class T>
bool is_cross(const attention_desc<T>& d) noexcept {
  return d.key_dim != d.d_in || d.value_dim != d.d_in;
}

/// For messages: ", kdim = K, vdim = V" of a cross-attention model (is_cross),
/// else "".
template <class T>
std::string cross_widths(const attention_desc<T>& d) {
  if (!is_cross(d)) return {};
  return ", kdim = " + std::to_string(d.key_dim) + ", vdim = " + std::to_string(d.value_dim);
}

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

/// Sinks of a query or key weight [rows][in] (or, with in = 1, its bias
/// [rows]) into `dest`, rows in heads of `hd`: a plain copy for
/// rope_layout::half; for rope_layout::interleaved (Meta's adjacent pairs)
/// destination row h*hd + c*(hd/2) + i <- source row h*hd + 2i + c (c in {0,
/// 1}, i < hd/2). Hugging Face's convert_llama_weights_to_hf.py makes its
/// rotate-half checkpoints from Meta's with
///   permute(w, n_heads, dim1, dim2) = w.view(n_heads, dim1 // n_heads // 2, 2,
///   dim2).transpose(1, 2).reshape(dim1, dim2),
/// i.e. its row h*hd + c*(hd/2) + i is Meta's row h*hd + 2i + c: the same map.
template <class T>
std::vector<sink<T>> rope_sinks(T* dest, std::size_t rows, std::size_t in, std::size_t hd,
                                bool bias, rope_layout rl) {
  if (rl == rope_layout::half || hd < 2) return {copy_sink(dest, bias ? 1 : rows, bias ? rows : in)};
  std::vector<sink<T>> out;
  const std::size_t half = hd / 2;
  for (std::size_t h = 0; h < rows / hd; ++h)
    for (std::size_t c = 0; c < 2; ++c) {
      const std::size_t dst = h * hd + c * half, src = h * hd + c;
      if (bias)  // one row of half values, every second source value
        out.push_back(sink<T>{dest + dst, 1, half, src, 0, 2});
      else  // half rows, every second source row
        out.push_back(sink<T>{dest + dst * in, half, in, src * in, 2 * in, 1});
    }
  return out;
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

/// load_errc::model for a cross-attention model (is_cross) and a format that
/// has no layout for key / value inputs of their own widths (gpt2, neox, llama).
template <class T>
error no_cross_layout(const attention_desc<T>& d, checkpoint_format format) {
  return make_error(load_errc::model, "",
                    std::string("checkpoint_format::") + to_string(format) +
                        " has no layout for key / value inputs of their own widths, but " +
                        d.model_name + " has d_in = " + std::to_string(d.d_in) + ", kdim = " +
                        std::to_string(d.key_dim) + ", vdim = " + std::to_string(d.value_dim) +
                        " (a cross-attention module loads from checkpoint_format::book or "
                        "pytorch_multihead: nn.MultiheadAttention's q_proj_weight, k_proj_weight, "
                        "v_proj_weight)");
}

/// The pytorch_multihead plan of a cross-attention model (is_cross): what
/// nn.MultiheadAttention(E, H, kdim=, vdim=) stores when kdim or vdim differs
/// from E (_qkv_same_embed_dim false): `q_proj_weight` [E][d_in],
/// `k_proj_weight` [E][kdim], `v_proj_weight` [E][vdim], `in_proj_bias` [3E]
/// (query, key, value blocks) when qkv_bias, `out_proj.weight`,
/// `out_proj.bias`; an `in_proj_weight` (the form of kdim = vdim = E) is a
/// load_errc::shape error naming the model's widths.
template <class T>
error plan_separate_projections(const attention_desc<T>& d, qkv_layout layout,
                                const std::string& prefix, plan<T>& p) {
  const std::size_t E = d.d_out;
  if (layout == qkv_layout::interleaved_per_head)
    return make_error(load_errc::layout, "",
                      "load_options::layout is qkv_layout::interleaved_per_head, but " +
                          d.model_name + " (d_in = " + std::to_string(d.d_in) + cross_widths(d) +
                          ") loads nn.MultiheadAttention's separate q_proj_weight, k_proj_weight "
                          "and v_proj_weight (no fused weight; in_proj_bias is contiguous)");
  const std::string widths = "d_in = " + std::to_string(d.d_in) + cross_widths(d);
  auto fused = other_tensor<T>(
      prefix + "in_proj_weight", role::forbidden,
      "nn.MultiheadAttention stores in_proj_weight when its key and value inputs are as wide "
      "as the query (kdim = vdim = embed_dim), but the model (" + d.model_name + ") has " +
          widths + ": PyTorch stores such a module as q_proj_weight " +
          shape_text({E, d.d_in}) + ", k_proj_weight " + shape_text({E, d.key_dim}) +
          " and v_proj_weight " + shape_text({E, d.value_dim}));
  fused.forbidden_code = load_errc::shape;
  p.tensors.push_back(std::move(fused));
  const char* names[3] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
  const linear_ref<T>* parts[3] = {&d.q[0], &d.k[0], &d.v[0]};
  for (std::size_t i = 0; i < 3; ++i) {
    auto w = weight_tensor<T>(prefix + names[i], {E, parts[i]->in},
                              {copy_sink(parts[i]->weight, E, parts[i]->in)});
    w.kv_input = i == 1 ? 'k' : i == 2 ? 'v' : '\0';
    p.tensors.push_back(std::move(w));
  }
  if (d.qkv_bias) {
    std::vector<sink<T>> b_sinks;
    for (std::size_t i = 0; i < 3; ++i) b_sinks.push_back(copy_sink(parts[i]->bias, 1, E, i * E));
    p.tensors.push_back(weight_tensor<T>(prefix + "in_proj_bias", {3 * E}, std::move(b_sinks),
                                         "the model has qkv_bias = true"));
  } else {
    p.tensors.push_back(other_tensor<T>(prefix + "in_proj_bias", role::forbidden,
                                        "the model has qkv_bias = false"));
  }
  add_linear(p, prefix + "out_proj", d.out_proj, false);
  return {};
}

/// The plan of `d`'s projections for `format` and the fused QKV `layout` (as
/// given or recorded; unspecified = the format's own), names prefixed with
/// `prefix` (make_plan adds the score parameters).
template <class T>
error make_projection_plan(const attention_desc<T>& d, checkpoint_format format,
                           qkv_layout layout, rope_layout rl, const std::string& prefix,
                           plan<T>& p) {
  using desc_kind = typename attention_desc<T>::kind;
  p.context_length = d.context_length;
  const std::size_t E = d.d_out;
  const std::size_t hd = d.d_out / (d.num_heads == 0 ? 1 : d.num_heads);
  // A grouped-query key/value weight: a shape error names both head counts.
  const auto kv_weight = [&](planned_tensor<T> t) {
    if (d.grouped) t.kv_head_dim = hd, t.kv_heads = d.num_kv_heads;
    return t;
  };
  switch (format) {
    case checkpoint_format::detect:  // resolved before (resolve_format); book's names
    case checkpoint_format::book: {
      if (layout == qkv_layout::interleaved_per_head)
        return make_error(load_errc::layout, "",
                          "load_options::layout is qkv_layout::interleaved_per_head, but "
                          "checkpoint_format::book stores W_query, W_key and W_value as separate "
                          "tensors (the layout applies to pytorch_multihead, gpt2 and neox)");
      // The walk's names with the prefix; a packed in_proj (nn.MultiheadAttention's
      // names) is stored as the book's W_query, W_key and W_value.
      using kind = typename walked_entry<T>::kind;
      constexpr std::string_view in_proj_weight = "in_proj_weight";
      const auto ends_with = [](const std::string& s, std::string_view end) {
        return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
      };
      for (const auto& e : d.walked) {
        const std::string name = prefix + e.name;
        if (e.type == kind::buffer) {
          if (ends_with(e.name, "mask")) p.tensors.push_back(other_tensor<T>(name, role::mask));
        } else if (ends_with(e.name, in_proj_weight)) {
          // the path of the module that owns in_proj_weight ("" or "attn.")
          const std::string owner = e.name.substr(0, e.name.size() - in_proj_weight.size());
          const std::string base = prefix + owner;
          const walked_entry<T>* bias = nullptr;
          for (const auto& b : d.walked)
            if (b.name == owner + "in_proj_bias") bias = &b;
          const std::size_t rows = static_cast<std::size_t>(e.shape[0] / 3);
          const std::size_t in = static_cast<std::size_t>(e.shape[1]);
          const char* parts[3] = {"W_query", "W_key", "W_value"};
          for (std::size_t i = 0; i < 3; ++i) {
            p.tensors.push_back(weight_tensor<T>(base + parts[i] + ".weight", {rows, in},
                                                 {copy_sink(e.data + i * rows * in, rows, in)}));
            if (bias != nullptr && bias->type == kind::parameter)
              p.tensors.push_back(weight_tensor<T>(base + parts[i] + ".bias", {rows},
                                                   {copy_sink(bias->data + i * rows, 1, rows)},
                                                   "the model has qkv_bias = true"));
            else
              p.tensors.push_back(other_tensor<T>(base + parts[i] + ".bias", role::forbidden,
                                                  "the model has qkv_bias = false"));
          }
        } else if (ends_with(e.name, "in_proj_bias")) {
          // planned with in_proj_weight
        } else if (e.type == kind::absent) {
          // An absent bias (qkv_bias = false) must not be in the file. An
          // absent score parameter (`sinks` of a model without that option)
          // is not planned: a file's tensor of that name is then an
          // unexpected tensor, as in the other formats.
          if (ends_with(e.name, ".bias"))
            p.tensors.push_back(other_tensor<T>(name, role::forbidden, "the model has qkv_bias = false"));
        } else {
          std::size_t n = 1;
          for (const auto x : e.shape) n *= static_cast<std::size_t>(x);
          const bool qkv = ends_with(e.name, "W_query.bias") || ends_with(e.name, "W_key.bias") ||
                           ends_with(e.name, "W_value.bias");
          const bool rotated = d.has_rope && (ends_with(e.name, "W_query.weight") ||
                                              ends_with(e.name, "W_key.weight") ||
                                              ends_with(e.name, "W_query.bias") ||
                                              ends_with(e.name, "W_key.bias"));
          const bool is_bias = e.shape.size() == 1;
          auto t = weight_tensor<T>(
              name, e.shape,
              rotated ? rope_sinks(e.data, static_cast<std::size_t>(e.shape[0]),
                                   is_bias ? 1 : static_cast<std::size_t>(e.shape[1]), hd, is_bias, rl)
                      : std::vector<sink<T>>{copy_sink(e.data, 1, n)},
              qkv ? "the model has qkv_bias = true" : "");
          // The book's GroupedQueryAttention (and Llama) have no out_proj bias.
          if (d.grouped && e.name == "out_proj.bias") t.kind = role::optional;
          if (ends_with(e.name, "W_key.weight") || ends_with(e.name, "W_value.weight")) {
            t = kv_weight(std::move(t));
            t.kv_input = ends_with(e.name, "W_key.weight") ? 'k' : 'v';
          }
          p.tensors.push_back(std::move(t));
        }
      }
      return {};
    }
    case checkpoint_format::llama: {
      if (d.type != desc_kind::multi)
        return make_error(load_errc::model, "",
                          "checkpoint_format::llama holds a multi-head attention with q_proj, "
                          "k_proj, v_proj and o_proj; load it into mha::grouped_query_attention "
                          "(or a multi-head attention), not into " + d.model_name);
      if (is_cross(d)) return no_cross_layout(d, format);
      if (layout != qkv_layout::unspecified)
        return make_error(load_errc::layout, "",
                          std::string("load_options::layout is qkv_layout::") + to_string(layout) +
                              ", but checkpoint_format::llama stores q_proj, k_proj and v_proj as "
                              "separate tensors (the layout applies to pytorch_multihead, gpt2 and neox)");
      const std::size_t kvw = d.num_kv_heads * hd;
      const char* names[3] = {"q_proj", "k_proj", "v_proj"};
      const linear_ref<T>* parts[3] = {&d.q[0], &d.k[0], &d.v[0]};
      for (std::size_t i = 0; i < 3; ++i) {
        const std::size_t rows = i == 0 ? E : kvw;
        const bool rotated = d.has_rope && i < 2;
        const rope_layout r = rotated ? rl : rope_layout::half;
        const std::string base = prefix + names[i];
        auto w = weight_tensor<T>(base + ".weight", {rows, d.d_in},
                                  rope_sinks(parts[i]->weight, rows, d.d_in, hd, false, r));
        p.tensors.push_back(i == 0 ? std::move(w) : kv_weight(std::move(w)));
        if (d.qkv_bias)
          p.tensors.push_back(weight_tensor<T>(base + ".bias", {rows},
                                               rope_sinks(parts[i]->bias, rows, 1, hd, true, r),
                                               "the model has qkv_bias = true"));
        else
          p.tensors.push_back(other_tensor<T>(base + ".bias", role::forbidden,
                                              "the model has qkv_bias = false"));
      }
      p.tensors.push_back(weight_tensor<T>(prefix + "o_proj.weight", {E, E},
                                           {copy_sink(d.out_proj.weight, E, E)}));
      auto o_bias = weight_tensor<T>(prefix + "o_proj.bias", {E}, {copy_sink(d.out_proj.bias, 1, E)});
      o_bias.kind = role::optional;  // Llama has none: zero
      p.tensors.push_back(std::move(o_bias));
      if (d.has_rope) {
        p.tensors.push_back(other_tensor<T>(prefix + "rotary_emb.inv_freq", role::ignored));
      } else {
        auto rotary = other_tensor<T>(
            prefix + "rotary_emb.inv_freq", role::forbidden,
            "the checkpoint applies rotary position embeddings to the queries and keys, but the "
            "model (" + d.model_name + ") has no RoPE: its outputs would differ");
        rotary.forbidden_code = load_errc::unexpected_tensor;
        p.tensors.push_back(std::move(rotary));
      }
      return {};
    }
    case checkpoint_format::pytorch_multihead:
    case checkpoint_format::gpt2:
    case checkpoint_format::neox: {
      const bool torch = format == checkpoint_format::pytorch_multihead;
      const bool gpt2 = format == checkpoint_format::gpt2;
      const char* fmt = to_string(format);
      if (d.type != desc_kind::multi)
        return make_error(load_errc::model, "",
                          std::string("checkpoint_format::") + fmt + " holds a packed multi-head "
                          "attention with out_proj; load it into mha::multi_head_attention, "
                          "mha::fused_multi_head_attention or mha::dynamic::multi_head_attention, "
                          "not into " + d.model_name);
      if (d.num_kv_heads != d.num_heads)
        return make_error(load_errc::model, "",
                          std::string("checkpoint_format::") + fmt + " packs as many key/value "
                          "heads as query heads, but " + d.model_name + " has num_heads = " +
                          std::to_string(d.num_heads) + ", num_kv_heads = " +
                          std::to_string(d.num_kv_heads));
      if (is_cross(d)) {
        if (!torch) return no_cross_layout(d, format);
        return plan_separate_projections(d, layout, prefix, p);
      }
      if (torch)  // the separate projections of a cross-attention checkpoint
        for (const char* name : {"k_proj_weight", "v_proj_weight", "q_proj_weight"}) {
          auto t = other_tensor<T>(
              prefix + name, role::forbidden,
              "nn.MultiheadAttention stores separate q_proj_weight, k_proj_weight and "
              "v_proj_weight when its kdim or vdim differs from embed_dim (a cross-attention "
              "checkpoint), but the model (" + d.model_name + ") has d_in = kdim = vdim = " +
                  std::to_string(d.d_in) + " and loads in_proj_weight " +
                  shape_text({3 * E, d.d_in}) +
                  "; load the file into a multi_head_attention with the file's KDim and VDim "
                  "(mha::dynamic: kv_dims)");
          t.forbidden_code = load_errc::shape;
          p.tensors.push_back(std::move(t));
        }
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

/// Builds the plan of `d` for `format` and the fused QKV `layout` (as given
/// or recorded; unspecified = the format's own), names prefixed with
/// `prefix`: the projections (make_projection_plan), then in every format but
/// the book's (whose names are the parameter walk's, which lists them) the
/// score parameters under their walk names: `sinks` [num_heads], as gpt-oss's
/// `self_attn.sinks`.
template <class T>
error make_plan(const attention_desc<T>& d, checkpoint_format format, qkv_layout layout,
                rope_layout rl, const std::string& prefix, plan<T>& p) {
  if (auto e = make_projection_plan(d, format, layout, rl, prefix, p)) return e;
  if (format != checkpoint_format::book && format != checkpoint_format::detect)
    for (const walked_entry<T>& e : d.walked)
      if (e.type == walked_entry<T>::kind::parameter && e.name == "sinks")
        p.tensors.push_back(weight_tensor<T>(prefix + e.name, e.shape,
                                             {copy_sink(e.data, 1, d.num_heads)}));
  return {};
}

// ------------------------------------------------------------ any described model

/// The attention hyperparameters of `m`: static members of a fixed-size
/// module (M::d_in), member functions of an mha::dynamic one (m.d_in()).
/// Of a grouped-query attention also num_kv_heads and whether it has RoPE
/// (M::has_rope, m.rope().enabled()); other models have num_kv_heads = num_heads.
/// The key / value widths from M::key_dim / m.key_dim() (and value_dim) when
/// the model has them, else d_in.
template <class M, class T>
void read_hyperparameters(const M& m, attention_desc<T>& d) {
  if constexpr (requires { m.d_in(); }) {
    d.d_in = m.d_in(), d.d_out = m.d_out(), d.context_length = m.context_length();
    d.num_heads = m.num_heads(), d.qkv_bias = m.qkv_bias();
  } else {
    d.d_in = M::d_in, d.d_out = M::d_out, d.context_length = M::context_length;
    d.num_heads = M::num_heads, d.qkv_bias = M::qkv_bias;
  }
  d.key_dim = d.d_in, d.value_dim = d.d_in;
  if constexpr (requires { m.key_dim(); m.value_dim(); }) {
    d.key_dim = m.key_dim(), d.value_dim = m.value_dim();
  } else if constexpr (requires { M::key_dim; M::value_dim; }) {
    d.key_dim = M::key_dim, d.value_dim = M::value_dim;
  }
  d.num_kv_heads = d.num_heads;
  if constexpr (requires { m.num_kv_heads(); m.rope().enabled(); }) {
    d.grouped = true, d.num_kv_heads = m.num_kv_heads(), d.has_rope = m.rope().enabled();
  } else if constexpr (requires { M::num_kv_heads; M::has_rope; }) {
    d.grouped = true, d.num_kv_heads = M::num_kv_heads, d.has_rope = M::has_rope;
  }
}

/// The shape of a parameter tensor (fixed or mha::dynamic).
template <class X>
std::vector<std::uint64_t> shape_of(const X& t) {
  if constexpr (requires { t.shape(); })
    return std::vector<std::uint64_t>(t.shape().begin(), t.shape().end());
  else
    return std::vector<std::uint64_t>(X::extents.begin(), X::extents.end());
}

/// Records the walk; checks the mha::dynamic layers on the way (a weight or
/// bias replaced by a tensor of another shape is a load_errc::model error).
template <class T>
struct plan_visitor {
  std::vector<walked_entry<T>>& out;
  error& failure;
  template <class X>
  void operator()(mha::detail::params::parameter_tag, std::string_view name, X& t) const {
    out.push_back({walked_entry<T>::kind::parameter, std::string(name), t.data(), shape_of(t)});
  }
  template <class X>
  void operator()(mha::detail::params::absent_tag, std::string_view name, X&) const {
    out.push_back({walked_entry<T>::kind::absent, std::string(name), nullptr, {}});
  }
  template <class X>
  void operator()(mha::detail::params::buffer_tag, std::string_view name, X&) const {
    out.push_back({walked_entry<T>::kind::buffer, std::string(name), nullptr, {}});
  }
  template <class X>
  void operator()(mha::detail::params::module_tag, std::string_view name, X& l) const {
    if constexpr (requires { l.check_parameters(); l.in_features(); l.out_features(); }) {
      const bool ok_w = l.weight.shape() == std::vector<std::size_t>{l.out_features(), l.in_features()};
      const bool ok_b = !l.has_bias() || l.bias.shape() == std::vector<std::size_t>{l.out_features()};
      if ((!ok_w || !ok_b) && !failure)
        failure = make_error(load_errc::model, "",
                             "the model's " + std::string(name) +
                                 " weight or bias was replaced by a tensor of another shape (weight " +
                                 shape_text(shape_of(l.weight)) + ")");
    }
  }
};

/// The rest of describe, once the walk has filled d.walked: the kind (a
/// `heads` list: the wrapper; an `out_proj`: a multi-head attention) and, for
/// the packed formats, the query/key/value/out_proj layers by their PyTorch
/// names (W_query.weight, ... or nn.MultiheadAttention's in_proj_weight),
/// each checked against the shape the hyperparameters give. One
/// instantiation per value type T, not per model type.
template <class T>
error describe_layers(attention_desc<T>& d) {
  const auto find = [&](const std::string& name) -> const walked_entry<T>* {
    for (const auto& e : d.walked)
      if (e.name == name && e.type == walked_entry<T>::kind::parameter) return &e;
    return nullptr;
  };
  bool wrapper = false;
  for (const auto& e : d.walked) wrapper = wrapper || e.name.rfind("heads.", 0) == 0;
  const walked_entry<T>* out_w = find("out_proj.weight");
  d.type = wrapper ? attention_desc<T>::kind::wrapper
                   : out_w ? attention_desc<T>::kind::multi : attention_desc<T>::kind::single;
  if (d.type != attention_desc<T>::kind::multi) return {};
  // The layers of a packed format: separate W_query/W_key/W_value, or one in_proj.
  // The packed plans size their copies from the hyperparameters, so every
  // layer must have the shape they give (a module whose members disagree with
  // its sizes is refused here, not written out of bounds).
  const std::size_t E = d.d_out, in = d.d_in;
  const auto mismatch = [&](const walked_entry<T>* e, std::vector<std::uint64_t> want,
                            const std::string& what) -> error {
    if (e != nullptr && e->shape == want) return {};
    return make_error(load_errc::model, "",
                      d.model_name + ": " + (e ? e->name + " is " + shape_text(e->shape)
                                               : what + " is absent") +
                          ", but d_in = " + std::to_string(in) + cross_widths(d) + ", d_out = " +
                          std::to_string(E) + " and qkv_bias = " + (d.qkv_bias ? "true" : "false") +
                          " give " + shape_text(want));
  };
  const walked_entry<T>* out_b = find("out_proj.bias");
  if (auto e = mismatch(out_w, {E, E}, "out_proj.weight")) return e;
  if (auto e = mismatch(out_b, {E}, "out_proj.bias")) return e;
  d.out_proj = linear_ref<T>{out_w->data, out_b->data, E, E, true};
  // a bias the module has while qkv_bias = false
  const auto extra_bias = [&](const walked_entry<T>* b) -> error {
    if (b == nullptr || d.qkv_bias) return {};
    return make_error(load_errc::model, "",
                      d.model_name + ": " + b->name + " is " + shape_text(b->shape) +
                          ", but the model has qkv_bias = false");
  };
  if (const walked_entry<T>* w = find("in_proj_weight")) {
    if (is_cross(d))  // one [3E][d_in] block cannot hold keys and values of other widths
      return make_error(load_errc::model, "",
                        d.model_name + " has in_proj_weight, but d_in = " + std::to_string(in) +
                            cross_widths(d) + " differ");
    const walked_entry<T>* b = find("in_proj_bias");
    if (auto e = mismatch(w, {3 * E, in}, "in_proj_weight")) return e;
    if (d.qkv_bias)
      if (auto e = mismatch(b, {3 * E}, "in_proj_bias")) return e;
    if (auto e = extra_bias(b)) return e;
    for (std::size_t i = 0; i < 3; ++i)
      (i == 0 ? d.q : i == 1 ? d.k : d.v)
          .push_back(linear_ref<T>{w->data + i * E * in, b ? b->data + i * E : nullptr, E, in,
                                   b != nullptr});
    d.fused = true;
    return {};
  }
  for (const char* part : {"W_query", "W_key", "W_value"}) {
    const walked_entry<T>* w = find(std::string(part) + ".weight");
    const walked_entry<T>* b = find(std::string(part) + ".bias");
    if (w == nullptr)
      return make_error(load_errc::model, "",
                        d.model_name + " has out_proj but no " + part +
                            ".weight or in_proj_weight parameter");
    // key/value: num_kv_heads * head_dim rows (E unless grouped-query)
    const std::size_t rows =
        part[2] == 'q' ? E : d.num_kv_heads * (E / (d.num_heads == 0 ? 1 : d.num_heads));
    // input features: d_in for the queries, kdim / vdim for the keys / values
    const std::size_t cols = part[2] == 'k' ? d.key_dim : part[2] == 'v' ? d.value_dim : in;
    if (auto e = mismatch(w, {rows, cols}, std::string(part) + ".weight")) return e;
    if (d.qkv_bias)
      if (auto e = mismatch(b, {rows}, std::string(part) + ".bias")) return e;
    if (auto e = extra_bias(b)) return e;
    (part[2] == 'q' ? d.q : part[2] == 'k' ? d.k : d.v)
        .push_back(linear_ref<T>{w->data, b ? b->data : nullptr, rows, cols, b != nullptr});
  }
  return {};
}

/// The description of `model` for planning, from its parameter walk: the
/// hyperparameters, the walked entries, the kind (a `heads` list: the
/// wrapper; an `out_proj`: a multi-head attention) and, for the packed
/// formats, the query/key/value/out_proj layers by their PyTorch names
/// (W_query.weight, ... or nn.MultiheadAttention's in_proj_weight).
template <class Model, class T>
error describe(Model& model, attention_desc<T>& d) {
  read_hyperparameters(model, d);
  d.model_name = std::string(mha::detail::params::module_name<Model>());
  if constexpr (requires { model.heads.size(); model.num_heads(); }) {  // a run-time heads list
    if (model.heads.size() != model.num_heads())
      return make_error(load_errc::model, "",
                        "the model's heads vector holds " + std::to_string(model.heads.size()) +
                            " heads, expected num_heads = " + std::to_string(model.num_heads()));
    for (std::size_t h = 0; h < model.heads.size(); ++h) {
      const auto& head = model.heads[h];
      if (head.d_in() != d.d_in || head.d_out() != d.d_out || head.qkv_bias() != d.qkv_bias)
        return make_error(load_errc::model, "",
                          "head " + std::to_string(h) + " has other sizes than the wrapper");
    }
  }
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  // An mha::dynamic module whose layers were replaced by ones of other sizes
  // or bias: its own check (the one every forward makes first), before any
  // size below is taken from the hyperparameters.
  if constexpr (requires { model.check_parameters(); }) {
    try {
      model.check_parameters();
    } catch (const std::invalid_argument& e) {
      return make_error(load_errc::model, "", std::string("the model is inconsistent: ") + e.what());
    }
  }
#endif
  error failure;
  plan_visitor<T> visit{d.walked, failure};
  mha::detail::params::walk(mha::detail::params::static_prefix{}, model, visit);
  if (failure) return failure;
  return describe_layers(d);
}

/// True for the model types the loader takes: a module with a
/// parameter_description() (mha/parameters.hpp) and the attention
/// hyperparameters (d_in, d_out, context_length, num_heads, qkv_bias).
template <class Model>
inline constexpr bool is_loadable_v =
    mha::detail::params::described<Model> && requires(const Model& m, attention_desc<typename Model::value_type>& d) {
      read_hyperparameters(m, d);
    };

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::io::detail

#include <mha/detail/macros_undef.hpp>
