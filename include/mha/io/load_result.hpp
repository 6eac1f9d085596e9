// mha/io/load_result.hpp -- options and error reporting of the weight loaders.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <stdexcept>
#endif

namespace mha::io {

/// Tensor naming and layout convention of a checkpoint (see docs/loading-weights.md).
enum class checkpoint_format {
  /// The book's chapter-3 modules: `W_query.weight`, `W_key.weight`,
  /// `W_value.weight` [d_out][d_in] (+ `.bias` [d_out] when qkv_bias),
  /// `out_proj.weight` [d_out][d_out], `out_proj.bias` [d_out]; wrapper heads
  /// as `heads.{h}.W_query.weight`, ...; the optional `mask` buffer
  /// (`heads.{h}.mask`) [context_length][context_length] is checked.
  book,
  /// torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True) used with a
  /// causal attn_mask: `in_proj_weight` [3E][E] (query, key, value blocks),
  /// `in_proj_bias` [3E], `out_proj.weight` [E][E], `out_proj.bias` [E].
  /// With kdim or vdim != E (a cross-attention module, model
  /// multi_head_attention<..., KDim, VDim> or the dynamic one with kv_dims),
  /// PyTorch's separate names instead of `in_proj_weight`: `q_proj_weight`
  /// [E][E], `k_proj_weight` [E][kdim], `v_proj_weight` [E][vdim]; a file of
  /// the other form is a load_errc::shape error.
  pytorch_multihead,
  /// Hugging Face GPT-2 attention (usually with a prefix like "h.0.attn."):
  /// `c_attn.weight` [E][3E] and `c_proj.weight` [E][E] in Conv1D layout
  /// ([in][out], transposed relative to nn.Linear), `c_attn.bias` [3E],
  /// `c_proj.bias` [E]; the `bias` and `masked_bias` buffers are ignored.
  gpt2,
  /// GPT-NeoX (Hugging Face GPTNeoXAttention) and Megatron-LM attention:
  /// `query_key_value.weight` [3E][d_in] (nn.Linear layout) and
  /// `query_key_value.bias` [3E] with the rows in a layout that must be given
  /// (load_options::layout) or recorded in the file's `__metadata__`
  /// (`qkv_layout`); GPT-NeoX and Megatron-LM store qkv_layout::interleaved_per_head.
  /// `dense.weight` [E][E], `dense.bias` [E]; the `bias` and `masked_bias`
  /// buffers are ignored; a `rotary_emb.inv_freq` buffer is an error (rotary
  /// position embeddings are not part of mha's attention).
  neox,
  /// Hugging Face LlamaAttention / MistralAttention / Qwen2Attention (usually
  /// with a prefix like "model.layers.0.self_attn."), loaded into
  /// mha::grouped_query_attention (or a multi-head model: num_kv_heads =
  /// num_heads): `q_proj.weight` [num_heads*head_dim][d_in], `k_proj.weight`,
  /// `v_proj.weight` [num_kv_heads*head_dim][d_in], `o_proj.weight`
  /// [d_out][num_heads*head_dim]; `q_proj.bias`, `k_proj.bias`, `v_proj.bias`
  /// exactly when the model has qkv_bias (Qwen2), else load_errc::qkv_bias;
  /// `o_proj.bias` optional (Llama has none: out_proj.bias is then set to
  /// zero). Q/K rows in the rotate-half RoPE layout unless
  /// load_options::rope_layout says otherwise; a `rotary_emb.inv_freq`
  /// buffer is ignored for a model with RoPE and an error without.
  llama,
  /// Not a format of its own (load_options' default): the loader takes the
  /// file's `__metadata__` `checkpoint_format` when it records one, else the
  /// format whose tensor names the file has under the prefix: `in_proj_weight`
  /// or `q_proj_weight` is pytorch_multihead, `c_attn.weight` gpt2, `query_key_value.weight`
  /// neox, `q_proj.weight` llama, anything else book.
  detect,
};

/// Readable name of a checkpoint_format ("book", "pytorch_multihead", "gpt2",
/// "neox", "llama", "detect"): for the five formats also their value in a file's `__metadata__` (`checkpoint_format`).
constexpr const char* to_string(checkpoint_format f) noexcept {
  switch (f) {
    case checkpoint_format::book: return "book";
    case checkpoint_format::pytorch_multihead: return "pytorch_multihead";
    case checkpoint_format::gpt2: return "gpt2";
    case checkpoint_format::neox: return "neox";
    case checkpoint_format::llama: return "llama";
    case checkpoint_format::detect: return "detect";
  }
  return "unknown";
}

/// Row order of a fused query/key/value weight [3E][d_in] (and bias [3E]) of
/// E = num_heads * head_dim output features per part (for gpt2's transposed
/// `c_attn.weight` [d_in][3E]: the column order).
enum class qkv_layout {
  /// The format's own layout: contiguous for pytorch_multihead and gpt2 (their
  /// producers define it); for neox the `qkv_layout` of the file's
  /// `__metadata__`, or an error (load_errc::layout) when the file has none.
  unspecified,
  /// [Q; K; V]: rows [0, E) are the queries of all heads (head h at rows
  /// [h*head_dim, (h+1)*head_dim)), [E, 2E) the keys, [2E, 3E) the values
  /// (nn.MultiheadAttention's in_proj_weight, GPT-2's c_attn).
  contiguous,
  /// Per head: rows [3h*head_dim, 3h*head_dim + head_dim) are head h's
  /// queries, the next head_dim rows its keys, then its values ([q_h0; k_h0;
  /// v_h0; q_h1; ...]: GPT-NeoX's and Megatron-LM's query_key_value, which
  /// view the product as [B][N][num_heads][3*head_dim]). Needs the model's
  /// head count to be the checkpoint's.
  interleaved_per_head,
};

/// Readable name of a qkv_layout ("unspecified", "contiguous",
/// "interleaved_per_head"): also its value in a file's `__metadata__` (`qkv_layout`).
constexpr const char* to_string(qkv_layout l) noexcept {
  switch (l) {
    case qkv_layout::unspecified: return "unspecified";
    case qkv_layout::contiguous: return "contiguous";
    case qkv_layout::interleaved_per_head: return "interleaved_per_head";
  }
  return "unknown";
}

/// Row order of the query and key projections of a checkpoint with rotary
/// position embeddings (RoPE), within each head of head_dim rows.
enum class rope_layout {
  /// Rotate-half: feature i is rotated with feature i + head_dim/2 (Hugging
  /// Face's rotate_half, the book's Llama chapter, mha's RoPE). Loaded as stored.
  half,
  /// Adjacent pairs: features (2i, 2i+1) are rotated together (Meta's original
  /// Llama checkpoints, consolidated.*.pth, whose apply_rotary_emb views pairs
  /// as complex numbers). The loader permutes the rows of the query weight
  /// (per query head) and the key weight (per key/value head), and of their
  /// biases, into the half layout: destination row h*head_dim + c*(head_dim/2)
  /// + i <- source row h*head_dim + 2i + c (c in {0, 1}, i < head_dim/2), the
  /// inverse of `permute` in Hugging Face's convert_llama_weights_to_hf.py.
  /// Needs a model with RoPE and an even head_dim (else load_errc::layout).
  interleaved,
};

/// Readable name of a rope_layout ("half", "interleaved").
constexpr const char* to_string(rope_layout l) noexcept {
  switch (l) {
    case rope_layout::half: return "half";
    case rope_layout::interleaved: return "interleaved";
  }
  return "unknown";
}

/// What went wrong in a load (load_errc::none on success).
enum class load_errc {
  none = 0,
  io,                 ///< missing path, a directory, unreadable, or empty file
  truncated,          ///< file shorter than its header length says / than 8 bytes
  header,             ///< header length absurd, not JSON, not an object, wrong field type, duplicate name
  dtype,              ///< unknown dtype, or a dtype a weight cannot have
  offsets,            ///< data_offsets out of range, reversed, overlapping, leaving gaps, or not matching dtype x shape
  missing_tensor,     ///< the model needs a tensor the file does not have
  unexpected_tensor,  ///< strict mode: a tensor under the prefix that the model does not use
  shape,              ///< tensor shape differs from the model's
  qkv_bias,           ///< file and model disagree on the query/key/value bias
  non_finite,         ///< NaN or infinity (or a value out of T's range) in a weight
  mask,               ///< the book's `mask` buffer is not the causal mask of the model's context_length
  model,              ///< the model cannot take this format (e.g. no out_proj), or its run-time shapes are inconsistent
  hyperparameter,     ///< the file's __metadata__ (num_heads, d_in, ...) or load_options::expected_num_heads disagree with the model or the options
  layout,             ///< the fused QKV layout is neither given nor recorded (neox), or given for a format without a fused weight; rope_layout::interleaved for a model without RoPE or with an odd head_dim
};

/// Readable name of a load_errc ("shape", "missing_tensor", ...).
constexpr const char* to_string(load_errc e) noexcept {
  switch (e) {
    case load_errc::none: return "none";
    case load_errc::io: return "io";
    case load_errc::truncated: return "truncated";
    case load_errc::header: return "header";
    case load_errc::dtype: return "dtype";
    case load_errc::offsets: return "offsets";
    case load_errc::missing_tensor: return "missing_tensor";
    case load_errc::unexpected_tensor: return "unexpected_tensor";
    case load_errc::shape: return "shape";
    case load_errc::qkv_bias: return "qkv_bias";
    case load_errc::non_finite: return "non_finite";
    case load_errc::mask: return "mask";
    case load_errc::model: return "model";
    case load_errc::hyperparameter: return "hyperparameter";
    case load_errc::layout: return "layout";
  }
  return "unknown";
}

/// Options of a load. Strict by default.
///
/// Hyperparameters: a safetensors file records tensor shapes but not the head
/// count, so a checkpoint of 4 heads loads into a model of 8 heads (same d_in,
/// d_out) without a shape error and gives wrong outputs. The loader checks the
/// `__metadata__` keys `num_heads`, `num_kv_heads`, `d_in`, `d_out`, `kdim`, `vdim`, `qkv_bias`,
/// `checkpoint_format` and `qkv_layout` against the model and the options when
/// the file has them (a `context_length` below the model's is a warning: no
/// weight depends on it) (tools/ writes them; see
/// docs/loading-weights.md), and `expected_num_heads` when it is not 0. For a
/// multi-head model when neither is available, the head count cannot be
/// verified: load_result::warnings says so.
struct load_options {
  /// Naming/layout convention; by default detected from the file (see
  /// checkpoint_format::detect).
  checkpoint_format format = checkpoint_format::detect;
  std::string prefix;               ///< prepended to every tensor name, e.g. "h.0.attn."
  bool allow_extra_tensors = false; ///< accept tensors under `prefix` that the model does not use
  bool allow_non_finite = false;    ///< accept NaN/inf (and values overflowing T) in weights
  /// Row order of the fused QKV weight (pytorch_multihead, gpt2, neox); see qkv_layout.
  qkv_layout layout = qkv_layout::unspecified;
  /// Row order of the query/key weights and biases for RoPE (book and llama
  /// formats); see mha::io::rope_layout. Default: as stored (rotate-half).
  mha::io::rope_layout rope_layout = mha::io::rope_layout::half;
  /// The checkpoint's head count when you know it (e.g. from the model's
  /// config.json) and the file does not record it: the load fails
  /// (load_errc::hyperparameter) unless the model has this many heads. 0: not given.
  std::size_t expected_num_heads = 0;
  /// Do not read the hyperparameters of `__metadata__` (for files whose
  /// metadata uses these keys for something else).
  bool ignore_metadata = false;
};

/// Outcome of a load: `ok()` or an error code with a message that names the
/// file, the tensor (when one is involved) and what was wrong; on success,
/// possibly warnings (e.g. that the head count could not be verified).
struct load_result {
  load_errc code = load_errc::none;  ///< load_errc::none on success
  std::string message;               ///< full message, empty on success
  std::string tensor;                ///< full name of the offending tensor, if any
  /// Facts the loader could not check on a successful load, each a full
  /// message "mha::io: <file>: warning: ..." (empty when everything was checked).
  std::vector<std::string> warnings;

  /// True when the model was loaded.
  bool ok() const noexcept { return code == load_errc::none; }
  /// Same as ok().
  explicit operator bool() const noexcept { return ok(); }
};

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
/// Thrown by mha::io::load_safetensors. what() names the file, the tensor and
/// what was wrong; code() and tensor() give the same facts for programs.
class load_error : public std::runtime_error {
 public:
  explicit load_error(const load_result& r)
      : std::runtime_error(r.message), code_(r.code), tensor_(r.tensor) {}
  /// What went wrong.
  load_errc code() const noexcept { return code_; }
  /// Full name of the offending tensor, or "" when no single tensor is at fault.
  const std::string& tensor() const noexcept { return tensor_; }

 private:
  load_errc code_;
  std::string tensor_;
};
#endif

}  // namespace mha::io

#endif  // MHA_DETAIL_NO_CXX20
