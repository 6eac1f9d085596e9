// mha/attention_mask.hpp -- which keys a query attends to: causal (the book's
// default) or all of them (encoder / ViT self-attention).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

namespace mha {

/// Which keys each query attends to, a template parameter of every attention
/// module (the last one, defaulted to `causal`; mirrored as the module's
/// `static constexpr attention_mask mask` and `static constexpr bool
/// is_causal`).
///
/// - `causal`: the query at position i attends to the keys at positions
///   0..i; the scores above the diagonal are masked to -inf before the
///   softmax (Raschka, section 3.5.1: `masked_fill_(mask.bool(), -inf)` with
///   `torch.triu(..., diagonal=1)`; PyTorch's scaled_dot_product_attention
///   with `is_causal=True`). The book's behaviour and the default.
/// - `none`: every query attends to every key of its sequence (encoder and
///   vision-transformer self-attention; `torch.nn.MultiheadAttention` called
///   without `attn_mask`, `is_causal=False`). Such a module has no KV-cache
///   forward (a compile-time error): a cache holds only earlier tokens, and
///   a non-causal token also attends to later ones.
enum class attention_mask : unsigned char {
  causal,  ///< keys 0..i for the query at position i (default)
  none,    ///< every key
};

/// "causal" or "none": a NUL-terminated string in static storage.
constexpr const char* to_string(attention_mask m) noexcept {
  return m == attention_mask::causal ? "causal" : "none";
}

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
