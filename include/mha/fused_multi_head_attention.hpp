// mha/fused_multi_head_attention.hpp -- multi-head attention whose query, key
// and value weights are stored as one fused [3*DOut][DIn] matrix.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>
#include <utility>

#include <mha/block_layout.hpp>
#include <mha/block_view.hpp>
#include <mha/detail/attention.hpp>
#include <mha/detail/kernels.hpp>
#include <mha/detail/math.hpp>
#include <mha/detail/module_interface.hpp>
#include <mha/linear.hpp>
#include <mha/multi_head_attention.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>
#include <mha/detail/forward_overloads.hpp>

namespace mha {

/// The book's MultiHeadAttention (Raschka, section 3.6.2) with the packed QKV
/// storage of torch.nn.MultiheadAttention (`in_proj_weight`) and GPT-2
/// (`c_attn`): one Linear `w_qkv` with weight [3*DOut][DIn] whose row blocks
/// 0, 1, 2 are W_query, W_key and W_value ([DOut][DIn] each, PyTorch layout),
/// and bias [3*DOut] (query, key, value blocks) when QkvBias.
///
///   Q, K, V = x W^T (+ b) with W the row blocks 0, 1, 2 of w_qkv.weight
///   (read in place: one product each, over contiguous rows, no copy)
///   head h: columns [h*head_dim, (h+1)*head_dim) of Q, K, V; then as
///   multi_head_attention: causal softmax(Q_h K_h^T / sqrt(head_dim)) V_h,
///   concatenated and projected by out_proj.
///
/// It runs the same orchestration and kernels as multi_head_attention
/// (detail/attention.hpp: the token-major and register-tiled paths, the
/// run-time-count and KV-cache calls) and gives the same bits.
///
/// W_query/W_key/W_value are views of the fused storage: w_query(), w_key(),
/// w_value() return [DOut][DIn] block_views (a weight split with 3 blocks), and
/// head_weights<H>() head H's [head_dim][DIn] rows of each. Results are
/// bit-identical to multi_head_attention with the same weights.
///
/// Members: `w_qkv` (linear<T, DIn, 3*DOut, QkvBias>), `out_proj`
/// (linear<T, DOut, DOut, true>), `dropout`. An aggregate; value-initialised
/// weights are zero. Compile-time errors as multi_head_attention.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias = false>
struct fused_multi_head_attention {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "mha::fused_multi_head_attention: T must be float or double");
  static_assert(DIn > 0, "mha::fused_multi_head_attention: DIn must be greater than 0");
  static_assert(DOut > 0, "mha::fused_multi_head_attention: DOut must be greater than 0");
  static_assert(ContextLength > 0,
                "mha::fused_multi_head_attention: ContextLength must be greater than 0");
  static_assert(NumHeads > 0, "mha::fused_multi_head_attention: NumHeads must be greater than 0");
  static_assert(NumHeads == 0 || DOut % NumHeads == 0,
                "mha::fused_multi_head_attention: DOut must be divisible by NumHeads");

  using value_type = T;
  static constexpr std::size_t d_in = DIn;
  static constexpr std::size_t d_out = DOut;
  static constexpr std::size_t context_length = ContextLength;
  static constexpr std::size_t num_heads = NumHeads;
  static constexpr std::size_t head_dim = DOut / (NumHeads == 0 ? 1 : NumHeads);
  static constexpr std::size_t output_width = DOut;
  static constexpr bool qkv_bias = QkvBias;
  /// Same count as multi_head_attention: 3*(DOut*DIn + (QkvBias ? DOut : 0)) + DOut*DOut + DOut.
  static constexpr std::size_t parameter_count =
      linear<T, DIn, 3 * DOut, QkvBias>::parameter_count + linear<T, DOut, DOut, true>::parameter_count;
  /// sqrt(head_dim) as a T: the scores are divided by it.
  static constexpr T score_divisor = detail::sqrt(static_cast<T>(head_dim));

  /// Layout of block `Part` (0 query, 1 key, 2 value) of the fused weight: rows
  /// [Part*DOut, (Part+1)*DOut) of [3*DOut][DIn].
  template <std::size_t Part>
  using qkv_weight_layout = weight_split_layout<Part, 3, 3 * DOut, DIn>;
  /// Layout of head H's rows of block Part: rows [Part*DOut + H*head_dim, ... + head_dim).
  template <std::size_t Part, std::size_t H>
  using head_weight_layout = weight_split_layout<Part * NumHeads + H, 3 * NumHeads, 3 * DOut, DIn>;
  /// Layout of head H's queries (Part 0), keys (1) or values (2) inside the
  /// fused [Batch][Tokens][3*DOut] product: a head_layout with 3*NumHeads blocks.
  template <std::size_t Part, std::size_t H, std::size_t Batch, std::size_t Tokens>
  using qkv_head_layout = head_layout<Part * NumHeads + H, 3 * NumHeads, Batch, Tokens, 3 * DOut>;

  linear<T, DIn, 3 * DOut, QkvBias> w_qkv;  ///< weight [3*DOut][DIn] = [W_query; W_key; W_value]
  linear<T, DOut, DOut, true> out_proj;     ///< out_proj: weight [DOut][DOut], bias [DOut]
  T dropout = T(0);                         ///< dropout probability (training only)

  /// W_query: read-only [DOut][DIn] view of rows [0, DOut) of w_qkv.weight.
  constexpr auto w_query() const noexcept { return block_view<const T, qkv_weight_layout<0>>(w_qkv.weight); }
  /// W_key: read-only [DOut][DIn] view of rows [DOut, 2*DOut) of w_qkv.weight.
  constexpr auto w_key() const noexcept { return block_view<const T, qkv_weight_layout<1>>(w_qkv.weight); }
  /// W_value: read-only [DOut][DIn] view of rows [2*DOut, 3*DOut) of w_qkv.weight.
  constexpr auto w_value() const noexcept { return block_view<const T, qkv_weight_layout<2>>(w_qkv.weight); }
  /// W_query: writable [DOut][DIn] view of rows [0, DOut) of w_qkv.weight.
  constexpr auto w_query() noexcept { return block_view<T, qkv_weight_layout<0>>(w_qkv.weight); }
  /// W_key: writable [DOut][DIn] view of rows [DOut, 2*DOut) of w_qkv.weight.
  constexpr auto w_key() noexcept { return block_view<T, qkv_weight_layout<1>>(w_qkv.weight); }
  /// W_value: writable [DOut][DIn] view of rows [2*DOut, 3*DOut) of w_qkv.weight.
  constexpr auto w_value() noexcept { return block_view<T, qkv_weight_layout<2>>(w_qkv.weight); }

  /// Head H's weight split: read-only [head_dim][DIn] views of its rows of
  /// W_query, W_key and W_value inside the fused weight. Error if H >= NumHeads.
  template <std::size_t H>
  struct head_weights_type {
    block_view<const T, head_weight_layout<0, H>> query;
    block_view<const T, head_weight_layout<1, H>> key;
    block_view<const T, head_weight_layout<2, H>> value;
  };
  /// Head H's weight split (see head_weights_type).
  template <std::size_t H>
  constexpr head_weights_type<H> head_weights() const noexcept {
    static_assert(H < NumHeads,
                  "mha::fused_multi_head_attention::head_weights: H must be less than NumHeads");
    return {block_view<const T, head_weight_layout<0, H>>(w_qkv.weight),
            block_view<const T, head_weight_layout<1, H>>(w_qkv.weight),
            block_view<const T, head_weight_layout<2, H>>(w_qkv.weight)};
  }

 private:
  /// Block `Part` (0 query, 1 key, 2 value) of the fused bias, as a kernel bias argument.
  constexpr auto part_bias_(std::size_t part) const noexcept {
    if constexpr (QkvBias)
      return detail::present_bias<T>{w_qkv.bias.data() + part * DOut};
    else
      return nullptr;
  }
  /// The module for the orchestration (detail/attention.hpp): as
  /// multi_head_attention, with W_query, W_key and W_value the row blocks 0,
  /// 1, 2 of the fused weight (each [DOut][DIn], contiguous rows).
  constexpr auto spec_() const noexcept {
    constexpr std::size_t block = DOut * DIn;
    return detail::make_spec<T>(
        detail::size_c<DIn>{}, detail::size_c<head_dim>{}, detail::size_c<NumHeads>{},
        detail::size_c<1>{},
        [this](auto) {
          return detail::qkv_weights<T, decltype(part_bias_(0))>{
              w_qkv.weight.data(), part_bias_(0), w_qkv.weight.data() + block, part_bias_(1),
              w_qkv.weight.data() + 2 * block, part_bias_(2), dropout};
        },
        detail::out_weights<T, detail::present_bias<T>>{out_proj.weight.data(),
                                                        detail::present_bias<T>{out_proj.bias.data()}},
        score_divisor);
  }

 public:
  MHA_DETAIL_FORWARD_OVERLOADS("fused_multi_head_attention")
};

/// The fused twin of `m`: w_qkv.weight = [m.w_query.weight; m.w_key.weight;
/// m.w_value.weight] (and the biases likewise), same out_proj and dropout. The
/// result computes bit-identical outputs. Usable in constant expressions.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias>
MHA_DETAIL_ISA_TAG
constexpr fused_multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias> fuse_qkv(
    const multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias>& m) noexcept {
  fused_multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias> f{};
  const linear<T, DIn, DOut, QkvBias>* parts[3] = {&m.w_query, &m.w_key, &m.w_value};
  for (std::size_t p = 0; p < 3; ++p) {
    for (std::size_t i = 0; i < DOut * DIn; ++i) f.w_qkv.weight.elements[p * DOut * DIn + i] = parts[p]->weight.elements[i];
    if constexpr (QkvBias)
      for (std::size_t i = 0; i < DOut; ++i) f.w_qkv.bias.elements[p * DOut + i] = parts[p]->bias.elements[i];
  }
  f.out_proj = m.out_proj;
  f.dropout = m.dropout;
  return f;
}

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
