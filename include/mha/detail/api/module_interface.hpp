// mha/detail/api/module_interface.hpp -- the types behind the forward() overload
// set of the fixed-size attention modules (detail/api/forward_overloads.inc): the
// input shape traits, the output type and the workspace.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/engine/attention.hpp>
#include <mha/detail/kernels/dropout.hpp>
#include <mha/detail/arch/stack_bound.hpp>
#include <mha/detail/kernels/token_major.hpp>
#include <mha/kv_cache.hpp>
#include <mha/status.hpp>
#include <mha/tensor.hpp>
#include <mha/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {

/// Shape facts of an input tensor<U, E...>: rank 3 is [batch][tokens][features],
/// rank 2 is [tokens][features] (batch 1). Other ranks give zeros so that the
/// module's own static_assert, not an index error, is what the user sees.
template <std::size_t... E>
struct input_shape {
  static constexpr std::size_t nth(std::size_t i) noexcept {
    const std::size_t ext[] = {E..., 0, 0, 0};
    return ext[i];
  }
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr bool rank_ok = rank == 2 || rank == 3;
  static constexpr std::size_t batch = rank == 3 ? nth(0) : 1;
  static constexpr std::size_t tokens = rank == 3 ? nth(1) : (rank == 2 ? nth(0) : 0);
  static constexpr std::size_t features = rank_ok ? nth(rank - 1) : 0;
};

template <class X>
struct tensor_shape_of;
template <class U, std::size_t... E>
struct tensor_shape_of<tensor<U, E...>> : input_shape<E...> {
  using element_type = U;
};
/// input_shape of a tensor or tensor_view type (element_type without const).
template <class X>
struct shape_of : tensor_shape_of<as_tensor_t<X>> {};

/// The input rules of a fixed-size module's forward, for the shape facts S of
/// an input (shape_of), the module's T, DIn and ContextLength: element type,
/// rank 2 or 3, last extent DIn, 1 <= N <= ContextLength (and batch >= 1).
/// The forward overloads static_assert each rule with its message and gate
/// their bodies on self_attention_rules::input_ok, which reads this
/// conjunction, as mha::can_forward_v does. A rule added to the
/// static_asserts must be added here (test_introspection checks the trait on
/// each rule's failing shape).
template <class S, class T, std::size_t DIn, std::size_t ContextLength>
inline constexpr bool forward_input_ok =
    same_element_type<typename S::element_type, T> && rank_is_2_or_3<S::rank> &&
    equals<S::features, DIn> && at_most<S::tokens, ContextLength> && S::tokens > 0 &&
    S::batch > 0;

/// Self-attention's dimension rule: forward(x) projects keys and values from
/// x, so the module's key_dim and value_dim (multi_head_attention's KDim and
/// VDim; every other module's equal d_in) must equal DIn. The forward
/// overloads static_assert it before the input rules; mha::can_forward_v
/// reads it too.
template <std::size_t KeyDim, std::size_t ValueDim, std::size_t DIn>
inline constexpr bool self_attention_dims_ok = KeyDim == DIn && ValueDim == DIn;

/// Inference or training mode of one forward call (training draws dropout
/// decisions from `seed`, see dropout_state), chosen at run time: the calls
/// with a training overload, the padded batch and the attention weights.
struct forward_mode {
  bool training = false;
  std::uint64_t seed = 0;
};

/// An inference call that asks for no attention weights (forward(x),
/// forward(x, out), forward(x, out, ws), forward(x, n, out, ws)): no dropout,
/// known at compile time (`training` is std::false_type), so the kernels the
/// call runs are chosen by the types alone and an inference-only program
/// compiles and links only those (issue 10, item 3: a float causal module
/// served by the token-major kernels does not instantiate the general path).
struct inference_mode {
  [[no_unique_address]] std::false_type training{};
  std::uint64_t seed = 0;
};

/// The `training` of an inference call whose path is still chosen at run time
/// (a padded batch, the attention weights, cross-attention: the general path
/// or the token-major kernels by the call's arguments): false, and known to be
/// false at compile time, so no dropout code is compiled for it
/// (make_dropout gives no_dropout_state).
struct inference_any_path : std::false_type {};

/// The mode of such a call (forward(x, lengths, out, ws),
/// forward_with_weights(...), the cross-attention forwards without training).
struct inference_any_path_mode {
  [[no_unique_address]] inference_any_path training{};
  std::uint64_t seed = 0;
};

/// The attention-weight tensors of a fixed-size forward with PyTorch's
/// need_weights=True, for an input of rank Rank and a workspace of B
/// sequences of N tokens (PyTorch's shapes): per head (average_attn_weights=
/// False) [B][H][N][N], or [H][N][N] for a rank-2 input; the head average
/// [B][N][N], or [N][N] (cross-attention: NKeys key columns instead of N).
template <class T, std::size_t H, std::size_t Rank, std::size_t B, std::size_t N,
          std::size_t NKeys = N>
struct weights_types {
  using per_head =
      std::conditional_t<Rank == 3, tensor<T, B, H, N, NKeys>, tensor<T, H, N, NKeys>>;
  using average = std::conditional_t<Rank == 3, tensor<T, B, N, NKeys>, tensor<T, N, NKeys>>;
};

/// Output tensor type for an input of shape E... and output width W.
template <class T, std::size_t W, std::size_t... E>
struct output_for {
  using S = input_shape<E...>;
  static constexpr std::size_t w = W > 0 ? W : 1;  // W == 0 was reported by the module
  using U = element_or_float<T>;                    // so was a T other than float or double
  using type = std::conditional_t<S::rank == 3, tensor<U, (S::batch > 0 ? S::batch : 1),
                                                       (S::tokens > 0 ? S::tokens : 1), w>,
                                  tensor<U, (S::tokens > 0 ? S::tokens : 1), w>>;
};

template <class T, std::size_t W, class X>
struct output_for_tensor;
template <class T, std::size_t W, class U, std::size_t... E>
struct output_for_tensor<T, W, tensor<U, E...>> : output_for<T, W, E...> {};
/// Output tensor type of a module of width W for the input tensor (or
/// tensor_view) type X.
template <class T, std::size_t W, class X>
using output_for_t = typename output_for_tensor<T, W, as_tensor_t<X>>::type;

/// Intermediates of one forward call of a fixed-size attention module for
/// `Batch` sequences of up to `Tokens` tokens, in one array `storage`
/// (contents between calls unspecified; value-initialise it, e.g.
/// `workspace<B, N> ws{}` or std::make_unique, and reuse it). It holds the
/// largest of:
///  * the general path, one sequence at a time: Q, K^T, V and the
///    concatenated context of Tokens tokens ([Tokens][Width] each, K
///    transposed) plus one block of gemm::mr score rows of Tokens keys;
///  * the token-major path (float inference, N <= token_major::tokens_limit,
///    sized here for up to max_tokens so that it suits every target):
///    the transposed intermediates [features][Batch * padded tokens], sized
///    for the widest vector any target has, so the type is the same in every
///    translation unit whatever its -m flags;
///  * a KV-cache call: the queries and the context of all Batch * Tokens new
///    rows plus gemm::mr score rows of ContextLength keys.
///
/// The sizes live in the storage-free base attention_workspace_sizes, which
/// mha::can_forward_v reads without instantiating the storage (and its
/// MHA_MAX_INLINE_BYTES check).
template <class T, std::size_t Batch, std::size_t Tokens, std::size_t DIn, std::size_t Width,
          std::size_t ContextLength>
struct attention_workspace_sizes {
  static constexpr std::size_t batch = Batch;    ///< sequences per call
  static constexpr std::size_t tokens = Tokens;  ///< largest token count per sequence
  /// The sizes below fit the largest object in bytes (PTRDIFF_MAX, with a
  /// factor for their sums); false for absurd shapes (a ContextLength near
  /// PTRDIFF_MAX / width),
  /// which attention_workspace refuses with a static_assert.
  static constexpr bool fits = product_fits<8 * sizeof(T), Tokens, (Width > 0 ? Width : 1)> &&
                               product_fits<8 * sizeof(T), Batch, Tokens, (Width > 0 ? Width : 1)> &&
                               product_fits<2 * gemm::mr * sizeof(T), ContextLength>;
  /// Elements of the general path.
  static constexpr std::size_t general_elements = 4 * Tokens * Width + gemm::mr * Tokens;
  /// Elements of the token-major path (0 for double).
  static constexpr std::size_t token_major_elements =
      std::is_same_v<T, float>
          ? token_major::workspace_elements<
                T, Batch, (Tokens < token_major::max_tokens ? Tokens : token_major::max_tokens),
                DIn, Width>
          : 0;
  /// Elements of a KV-cache call.
  static constexpr std::size_t cached_elements =
      2 * Batch * Tokens * Width + gemm::mr * ContextLength;
  /// Elements of `storage`: the largest of the three.
  static constexpr std::size_t storage_elements = [] {
    std::size_t n = general_elements;
    if (token_major_elements > n) n = token_major_elements;
    if (cached_elements > n) n = cached_elements;
    return n;
  }();
  /// Elements of `storage` as a constant and a call, like mha::tensor::size:
  /// `W::size` converts to std::size_t, `ws.size()` / `W::size()` call it.
  static constexpr std::integral_constant<std::size_t, storage_elements> size{};
  /// Where a KV-cache call's score rows start (after the rows' Q and context).
  static constexpr std::size_t cached_scores_offset = 2 * Batch * Tokens * Width;
  /// Where the general path's score rows start.
  static constexpr std::size_t general_scores_offset = 4 * Tokens * Width;
  /// Bytes of `storage` (sizeof of the workspace).
  static constexpr std::size_t storage_bytes = sizeof(T) * storage_elements;
  /// A bound, the same on every target, of the stack that a forward call for
  /// Batch x Tokens puts on the stack besides its workspace, its input and its
  /// output (detail/arch/stack_bound.hpp): the general path's packed weight panel
  /// (depth max(DIn, Width), at most 32 KiB), the token-major path's score
  /// vectors (float: min(Tokens, token_major::max_tokens) tokens, at most 16
  /// KiB; both counted, as both paths may be inlined into one frame) and an
  /// allowance for the kernels' register tiles (4 KiB). The arrays are
  /// bounded by construction (each kernel static_asserts its own); the rest of
  /// a frame (spills, saved registers, the locals of an unoptimised build) is
  /// the compiler's and is not (measure it with -fstack-usage).
  static constexpr std::size_t frame_bytes =
      stack_bound::gemm_panel<(DIn > Width ? DIn : Width)> +
      (std::is_same_v<T, float>
           ? stack_bound::score_vectors<
                 T, (Tokens < token_major::max_tokens ? Tokens : token_major::max_tokens)>
           : 0) +
      stack_bound::register_tiles;
  /// What forward(x, out) and forward_training(x, out, seed) put on the stack:
  /// the workspace and the frame bound. forward(x) and forward_training(x,
  /// seed) add the output they return. MHA_STACK_WORKSPACE_LIMIT bounds these.
  static constexpr std::size_t stack_bytes = storage_bytes + frame_bytes;
};
template <class T, std::size_t Batch, std::size_t Tokens, std::size_t DIn, std::size_t Width,
          std::size_t ContextLength>
struct attention_workspace
    : attention_workspace_sizes<T, Batch, Tokens, DIn, Width, ContextLength> {
  using sizes_type = attention_workspace_sizes<T, Batch, Tokens, DIn, Width, ContextLength>;
  static_assert(sizes_type::fits,
                "mha::workspace: its size in bytes exceeds the largest object size, PTRDIFF_MAX "
                "(ContextLength, the token count or the width is too large)");
  T storage[sizes_type::fits ? sizes_type::storage_elements : 1];  ///< the intermediates
  static_assert(detail::within_inline_limit<sizeof(storage), MHA_DETAIL_MAX_INLINE_BYTES()>,
                "mha::workspace: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, limit); "
                "the limit refuses the type wherever the object lives, like Eigen's stack "
                "allocation limit: keep large workspaces in owned storage (std::make_unique) in "
                "code built without MHA_MAX_INLINE_BYTES, or use mha::dynamic");
};

/// The rules of the self-attention forwards of detail/api/forward_overloads.inc
/// (forward(x), forward(x, out), their training twins and the forwards with a
/// caller-owned workspace) for a module of element type T, d_in DIn, key_dim
/// KeyDim, value_dim ValueDim, ContextLength and output_width Width, each
/// computed once: the overloads gate their bodies on them (after the
/// static_asserts that give each rule's message) and mha::can_forward_v
/// reads the same members without asserting, so the two cannot disagree.
/// Nothing here instantiates an argument's type. Limit is
/// MHA_DETAIL_MAX_INLINE_BYTES() where a member is read.
template <class T, std::size_t DIn, std::size_t KeyDim, std::size_t ValueDim,
          std::size_t ContextLength, std::size_t Width>
struct self_attention_rules {
  /// An input of type X: a fixed_tensor_like of a valid type (fixed_type_ok:
  /// no zero extent, within Limit), the module's dimensions
  /// (self_attention_dims_ok) and the input rules (forward_input_ok).
  template <class X, std::size_t Limit>
  static consteval bool input_ok() noexcept {
    if constexpr (!fixed_tensor_like<X>)
      return false;
    else
      return fixed_type_ok<X, Limit> && self_attention_dims_ok<KeyDim, ValueDim, DIn> &&
             forward_input_ok<shape_of<X>, T, DIn, ContextLength>;
  }
  /// The output tensor type for an input of type X.
  template <class X>
  using output_type = output_for_t<T, Width, X>;
  /// input_ok, and `out` of type Y (as forward's forwarding reference
  /// deduces it) a valid, writable output of output_type<X>
  /// (output_argument_ok).
  template <class X, class Y, std::size_t Limit>
  static consteval bool output_ok() noexcept {
    if constexpr (!input_ok<X, Limit>())
      return false;
    else
      return output_argument_ok<Y, output_type<X>, Limit>();
  }
  /// The sizes of workspace<B, N> for X's batch B and token count N (the
  /// workspace a forward without one puts on the stack), without its storage.
  /// Precondition: input_ok.
  template <class X>
  using workspace_sizes = attention_workspace_sizes<T, shape_of<X>::batch, shape_of<X>::tokens,
                                                    DIn, Width, ContextLength>;
  /// workspace<B, N> for X is a valid type: its static_asserts (its bytes
  /// within PTRDIFF_MAX and within Limit) hold. Precondition: input_ok.
  template <class X, std::size_t Limit>
  static consteval bool workspace_ok() noexcept {
    using W = workspace_sizes<X>;
    if constexpr (!W::fits)
      return false;
    else
      return within_inline_limit<W::storage_bytes, Limit>;
  }
  /// The stack use of a forward without a caller-owned workspace: the
  /// workspace and the frame bound (workspace_sizes<X>::stack_bytes), plus the
  /// output when the call returns it (Returns). Precondition: workspace_ok.
  template <class X, bool Returns>
  static constexpr std::size_t stack_bytes =
      workspace_sizes<X>::stack_bytes + (Returns ? tensor_bytes<output_type<X>> : 0);
  /// A forward without a caller-owned workspace (forward(x): Y the output it
  /// returns, output_type<X>&, and Returns; forward(x, out): Y out's type as
  /// forward deduces it) compiles, by the rules its body reads in this order:
  /// output_ok, workspace_ok, then stack_bytes within MHA_STACK_WORKSPACE_LIMIT.
  template <class X, class Y, bool Returns, std::size_t Limit>
  static consteval bool stack_forward_ok() noexcept {
    if constexpr (!output_ok<X, Y, Limit>())
      return false;
    else if constexpr (!workspace_ok<X, Limit>())
      return false;
    else
      return stack_bytes<X, Returns> <= MHA_STACK_WORKSPACE_LIMIT;
  }
  /// forward(x) (no Out) or forward(x, out) (one Out: out's type as forward's
  /// forwarding reference deduces it) compiles: stack_forward_ok. What
  /// mha::can_forward_v reads.
  template <class X, std::size_t Limit, class... Out>
  static consteval bool forward_ok() noexcept {
    if constexpr (!input_ok<X, Limit>())
      return false;
    else if constexpr (sizeof...(Out) == 0)
      return stack_forward_ok<X, output_type<X>&, true, Limit>();
    else
      return (stack_forward_ok<X, Out, false, Limit>() && ...);
  }
};

/// The rules of the cross-attention forwards of detail/api/forward_overloads.inc
/// (forward(query, key, value, out, ws), with key lengths, with attention
/// weights) for a module of element type T, d_in DIn, key_dim KeyDim,
/// value_dim ValueDim, ContextLength and output_width Width, Causal its mask,
/// computed once: the overloads static_assert each rule with its message and
/// gate their bodies on forward_ok. Q, K and V are fixed_tensor_like; Limit
/// is MHA_DETAIL_MAX_INLINE_BYTES() where a member is read.
template <class T, std::size_t DIn, std::size_t KeyDim, std::size_t ValueDim,
          std::size_t ContextLength, std::size_t Width, bool Causal>
struct cross_attention_rules {
  /// A non-causal module; query [B][Nq][DIn], key [B][Nkv][KeyDim] and value
  /// [B][Nkv][ValueDim] of element type T, all rank 3 or all rank 2 (B = 1),
  /// of valid tensor or view types (fixed_type_ok with Limit: no zero
  /// extent), with Nq and Nkv at most ContextLength: each input by
  /// self-attention's input rule (forward_input_ok) with its own last extent,
  /// and the three agreeing on B, key and value on Nkv.
  template <class Q, class K, class V, std::size_t Limit>
  static consteval bool inputs_ok() noexcept {
    using SQ = shape_of<Q>;
    using SK = shape_of<K>;
    using SV = shape_of<V>;
    if constexpr (Causal || !SQ::rank_ok || SK::rank != SQ::rank || SV::rank != SQ::rank)
      return false;
    else
      return fixed_type_ok<Q, Limit> && fixed_type_ok<K, Limit> && fixed_type_ok<V, Limit> &&
             forward_input_ok<SQ, T, DIn, ContextLength> &&
             forward_input_ok<SK, T, KeyDim, ContextLength> &&
             forward_input_ok<SV, T, ValueDim, ContextLength> && SK::batch == SQ::batch &&
             SV::batch == SQ::batch && SK::tokens == SV::tokens;
  }
  /// The output tensor type for a query of type Q: [B][Nq][Width] (or [Nq][Width]).
  template <class Q>
  using output_type = output_for_t<T, Width, Q>;
  /// inputs_ok; `out` of type Y (as forward's forwarding reference deduces
  /// it) writable, of output_type<Q>; the workspace workspace<WB, WN> with
  /// WB = B and WN = max(Nq, Nkv) (cross_workspace<B, Nq, Nkv>).
  template <class Q, class K, class V, class Y, std::size_t WB, std::size_t WN, std::size_t Limit>
  static consteval bool forward_ok() noexcept {
    using SQ = shape_of<Q>;
    using SK = shape_of<K>;
    if constexpr (!inputs_ok<Q, K, V, Limit>() || !writable_output<Y>)
      return false;
    else
      return std::is_same_v<as_tensor_t<Y>, output_type<Q>> && WB == SQ::batch &&
             WN == (SQ::tokens > SK::tokens ? SQ::tokens : SK::tokens);
  }
};

}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
