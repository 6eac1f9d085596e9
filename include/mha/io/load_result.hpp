// mha/io/load_result.hpp -- options and error reporting of the weight loaders.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <string>
#include <utility>

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
  pytorch_multihead,
  /// Hugging Face GPT-2 attention (usually with a prefix like "h.0.attn."):
  /// `c_attn.weight` [E][3E] and `c_proj.weight` [E][E] in Conv1D layout
  /// ([in][out], transposed relative to nn.Linear), `c_attn.bias` [3E],
  /// `c_proj.bias` [E]; the `bias` and `masked_bias` buffers are ignored.
  gpt2,
};

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
  }
  return "unknown";
}

/// Options of a load. Strict by default.
struct load_options {
  checkpoint_format format = checkpoint_format::book;  ///< naming/layout convention
  std::string prefix;               ///< prepended to every tensor name, e.g. "h.0.attn."
  bool allow_extra_tensors = false; ///< accept tensors under `prefix` that the model does not use
  bool allow_non_finite = false;    ///< accept NaN/inf (and values overflowing T) in weights
};

/// Outcome of a non-throwing load: `ok()` or an error code with a message that
/// names the file, the tensor (when one is involved) and what was wrong.
struct load_result {
  load_errc code = load_errc::none;  ///< load_errc::none on success
  std::string message;               ///< full message, empty on success
  std::string tensor;                ///< full name of the offending tensor, if any

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
