// mha/detail/forward_overloads.hpp -- MHA_DETAIL_FORWARD_OVERLOADS, the
// forward() overload set shared by the fixed-size attention modules, with
// their compile-time shape contracts. No include guard: an internal macro,
// defined again by every module header after its #includes and removed at
// its end by <mha/detail/macros_undef.hpp> (see detail/macros.hpp). The module
// headers include it after <mha/detail/module_interface.hpp>, which declares
// the library entities the macro uses. Every member function it defines
// carries MHA_DETAIL_ISA_TAG (the ISA's ABI tag, detail/macros.hpp): the
// modules are the same types in every translation unit, their forward calls
// are not.
#include <cstddef>
#include <cstdint>
#include <type_traits>

// The overload set of forward() for a fixed-size attention module, with the
// module's name in every contract message. The module provides value_type,
// d_in, context_length, num_heads, head_dim, output_width (= num_heads *
// head_dim: the width of Q, K, V and of the output) and a private
// `constexpr auto spec_() const noexcept` returning its detail::attention_spec
// (detail/attention.hpp; its return type carries the ISA's ABI tag, so
// spec_() is renamed per ISA too); the macro defines `workspace<B, N>`,
// `kv_cache<B>` and every forward overload on top of the one orchestration.
// `parameters_valid_` is true when the class-level contracts hold (when they
// do not, the class's static_asserts have fired and no forward body is
// instantiated, so no second error follows).
//
// Contract order (the first failing one is the first error the user sees):
// element type, rank, last extent == DIn, N <= ContextLength, then output
// shape, workspace shape, KV-cache batch and the stack limit. Each forward
// body runs only if all contracts hold (`if constexpr`), so a broken contract
// gives one error, not a cascade.
#define MHA_DETAIL_FORWARD_OVERLOADS(NAME)                                                          \
 public:                                                                                            \
  /** Intermediates of forward calls on `Batch` sequences of up to `Tokens`  */                    \
  /** tokens (see detail::attention_workspace): value-initialise once and    */                    \
  /** reuse; contents between calls unspecified.                             */                    \
  template <std::size_t Batch, std::size_t Tokens>                                                  \
  using workspace = ::mha::detail::attention_workspace<value_type, Batch, Tokens, d_in,            \
                                                       output_width, context_length>;              \
  /** Keys and values of `Batch` sequences for the cached forward, room for  */                    \
  /** context_length tokens each (see mha::kv_cache).                        */                    \
  template <std::size_t Batch>                                                                      \
  using kv_cache = ::mha::kv_cache<value_type, Batch, num_heads, head_dim, context_length>;        \
                                                                                                    \
 private:                                                                                           \
  static constexpr bool parameters_valid_ =                                                         \
      (std::is_same_v<value_type, float> || std::is_same_v<value_type, double>) && d_in > 0 &&      \
      context_length > 0 && num_heads > 0 && head_dim > 0 && head_dim * num_heads == output_width;  \
  template <class X>                                                                                \
  static consteval bool check_input_() noexcept {                                                   \
    using S = ::mha::detail::shape_of<X>;                                                           \
    if constexpr (!parameters_valid_) return false; /* the class's own error came first */ else {    \
    static_assert(::mha::detail::same_element_type<typename S::element_type, value_type>,           \
                  "mha::" NAME "::forward: input element type must equal the module's T "          \
                  "(no implicit float/double conversion)");                                         \
    static_assert(::mha::detail::rank_is_2_or_3<S::rank>,                                           \
                  "mha::" NAME "::forward: input must have rank 3 [batch][tokens][d_in] or rank 2 " \
                  "[tokens][d_in]");                                                                \
    if constexpr (S::rank_ok) {                                                                     \
      static_assert(::mha::detail::equals<S::features, d_in>,                                       \
                    "mha::" NAME "::forward: input last extent must equal DIn");                    \
      static_assert(::mha::detail::at_most<S::tokens, context_length>,                              \
                    "mha::" NAME "::forward: token count N must not exceed ContextLength");         \
      return parameters_valid_ &&                                                                   \
             ::mha::detail::same_element_type<typename S::element_type, value_type> &&              \
             S::features == d_in && S::tokens <= context_length &&                                  \
             S::tokens > 0 && S::batch > 0; /* a zero extent: mha::tensor reported it */            \
    } else {                                                                                        \
      return false;                                                                                 \
    }                                                                                               \
    }                                                                                               \
  }                                                                                                 \
  template <class X, class Y>                                                                       \
  static consteval bool check_output_() noexcept {                                                  \
    if constexpr (!check_input_<X>()) {                                                             \
      return false;                                                                                 \
    } else {                                                                                        \
      using expected = ::mha::detail::output_for_t<value_type, output_width, X>;                    \
      static_assert(::mha::detail::same_tensor_type<Y, expected>,                                   \
                    "mha::" NAME "::forward: output must be a tensor<T, B, N, output_width> "      \
                    "(or <T, N, output_width> for a rank-2 input)");                                \
      return std::is_same_v<Y, expected>;                                                           \
    }                                                                                               \
  }                                                                                                 \
  template <class X, std::size_t WB, std::size_t WN>                                                \
  static consteval bool check_workspace_() noexcept {                                               \
    using S = ::mha::detail::shape_of<X>;                                                           \
    static_assert(::mha::detail::workspace_matches_input<WB, WN, S::batch, S::tokens>,              \
                  "mha::" NAME "::forward: workspace must be workspace<B, N> for the input's "     \
                  "batch B and token count N");                                                     \
    return WB == S::batch && WN == S::tokens;                                                       \
  }                                                                                                 \
  template <class X, class Y, std::size_t WB, std::size_t WN>                                       \
  static consteval bool check_call_() noexcept {                                                    \
    if constexpr (!check_output_<X, Y>())                                                           \
      return false;                                                                                 \
    else                                                                                            \
      return check_workspace_<X, WB, WN>();                                                         \
  }                                                                                                 \
  template <class X, std::size_t CB>                                                                \
  static consteval bool check_cache_() noexcept {                                                   \
    using S = ::mha::detail::shape_of<X>;                                                           \
    static_assert(::mha::detail::cache_matches_input<CB, S::batch>,                                 \
                  "mha::" NAME "::forward: the KV cache must be kv_cache<B> for the input's "      \
                  "batch B");                                                                       \
    return CB == S::batch;                                                                          \
  }                                                                                                 \
  /* The whole-sequence forward of the first n (a size_c or a run-time count) */                   \
  /* token rows of each of Batch sequences of Tokens rows.                    */                   \
  template <std::size_t Batch, std::size_t Tokens, class N>                                         \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void run_(const value_type* x, N n, value_type* out, workspace<Batch, Tokens>& ws,      \
                      ::mha::detail::forward_mode mode) const noexcept {                            \
    ::mha::detail::forward_sequence<Tokens>(                                                        \
        spec_(), x, Tokens * d_in, ::mha::detail::size_c<Batch>{}, n, out, Tokens * output_width,  \
        ws.storage, ws.storage + workspace<Batch, Tokens>::general_scores_offset, mode.training,    \
        mode.seed);                                                                                 \
  }                                                                                                 \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void forward_stack_(const tensor<U, E...>& x, tensor<V, F...>& out,                     \
                                ::mha::detail::forward_mode mode) const noexcept {                  \
    if constexpr (check_output_<tensor<U, E...>, tensor<V, F...>>()) {                              \
      using S = ::mha::detail::input_shape<E...>;                                                   \
      using ws_t = workspace<S::batch, S::tokens>;                                                  \
      static_assert(::mha::detail::at_most<sizeof(ws_t), MHA_STACK_WORKSPACE_LIMIT>,                \
                    "mha::" NAME "::forward: the workspace for this batch and token count "        \
                    "exceeds MHA_STACK_WORKSPACE_LIMIT bytes; pass a caller-owned workspace: "     \
                    "forward(x, out, ws)");                                                         \
      if constexpr (sizeof(ws_t) <= MHA_STACK_WORKSPACE_LIMIT) {                                    \
        ws_t ws;                                                                                    \
        run_<S::batch, S::tokens>(x.data(), ::mha::detail::size_c<S::tokens>{}, out.data(), ws,    \
                                  mode);                                                            \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
                                                                                                    \
 public:                                                                                            \
  /** Inference forward (no dropout). x: [B][N][d_in] or [N][d_in], with      */                   \
  /** 1 <= N <= context_length (compile-time checked). Returns [B][N][output_ */                   \
  /** width] (or [N][output_width]). Intermediates live on the stack (bounded */                   \
  /** by MHA_STACK_WORKSPACE_LIMIT); no heap allocation.                      */                   \
  template <class U, std::size_t... E>                                                              \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr auto forward(const tensor<U, E...>& x) const noexcept {                                 \
    typename ::mha::detail::output_for<value_type, output_width, E...>::type out;                   \
    if constexpr (check_input_<tensor<U, E...>>())                                                  \
      forward_stack_(x, out, ::mha::detail::forward_mode{});                                        \
    return out;                                                                                     \
  }                                                                                                 \
  /** Same as forward(x) (PyTorch's module(x)). */                                                  \
  template <class U, std::size_t... E>                                                              \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr auto operator()(const tensor<U, E...>& x) const noexcept {                              \
    return forward(x);                                                                              \
  }                                                                                                 \
  /** Inference forward into a caller-provided `out` of the output shape. */                        \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void forward(const tensor<U, E...>& x, tensor<V, F...>& out) const noexcept {           \
    forward_stack_(x, out, ::mha::detail::forward_mode{});                                          \
  }                                                                                                 \
  /** Inference forward with a caller-owned workspace `ws` (type             */                     \
  /** workspace<B, N>, e.g. in static storage or from std::make_unique), so   */                    \
  /** stack use is bounded by the shapes: at most one packed weight panel    */                    \
  /** (32 KiB) and, on the token-major path, N score vectors (16 KiB).       */                    \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t WB, std::size_t WN>   \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void forward(const tensor<U, E...>& x, tensor<V, F...>& out,                            \
                         workspace<WB, WN>& ws) const noexcept {                                    \
    if constexpr (check_call_<tensor<U, E...>, tensor<V, F...>, WB, WN>())                          \
      run_<WB, WN>(x.data(), ::mha::detail::size_c<WN>{}, out.data(), ws,                           \
                   ::mha::detail::forward_mode{});                                                  \
  }                                                                                                 \
  /** Inference forward of a run-time token count: x [B][Max][d_in] (or       */                   \
  /** [Max][d_in]), out [B][Max][output_width], ws workspace<B, Max>, Max <=  */                   \
  /** context_length at compile time. Computes the causal forward of the     */                    \
  /** first n token rows of each sequence and writes the first n rows of each */                   \
  /** sequence of out; rows n..Max-1 of out are untouched and those of x are  */                   \
  /** never read. The rows equal, bit for bit, those of the compile-time      */                   \
  /** forward on the same n tokens; the cost follows n, and one instantiation */                   \
  /** serves every n. Returns status::bad_token_count (nothing written) for   */                   \
  /** n == 0 or n > Max, else status::ok. No heap.                            */                   \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t WB, std::size_t WN>   \
  [[nodiscard]] MHA_DETAIL_ISA_TAG                                                                  \
  constexpr ::mha::status forward(const tensor<U, E...>& x, std::size_t n,                          \
                                                tensor<V, F...>& out,                               \
                                                workspace<WB, WN>& ws) const noexcept {             \
    if constexpr (check_call_<tensor<U, E...>, tensor<V, F...>, WB, WN>()) {                        \
      if (n == 0 || n > WN) return ::mha::status::bad_token_count;                                  \
      run_<WB, WN>(x.data(), n, out.data(), ws, ::mha::detail::forward_mode{});                     \
    }                                                                                               \
    return ::mha::status::ok;                                                                       \
  }                                                                                                 \
  /** KV-cache forward (inference): appends the first n token rows of each of */                   \
  /** the B sequences of x ([B][Max][d_in] or [Max][d_in]) to `cache` at      */                   \
  /** positions cache.size() .. cache.size()+n-1 and writes their outputs to  */                   \
  /** the first n rows of each sequence of out ([B][Max][output_width]); the  */                   \
  /** token at position p attends to cached positions 0..p (a prefill when    */                   \
  /** the cache is empty, a decode step when n == 1). The rows equal rows     */                   \
  /** size()..size()+n-1 of a plain forward over all tokens so far, to        */                   \
  /** rounding (a decode step sums in another order, see detail/gemv.hpp).    */                   \
  /** Returns status::bad_token_count for n == 0 or n > Max, then            */                     \
  /** status::cache_full if size() + n > context_length; either writes       */                     \
  /** nothing. noexcept, no heap; ws is workspace<B, Max>, cache kv_cache<B>. */                   \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t CB, std::size_t WB,   \
            std::size_t WN>                                                                         \
  [[nodiscard]] MHA_DETAIL_ISA_TAG                                                                  \
  ::mha::status forward(const tensor<U, E...>& x, std::size_t n,                                    \
                                      tensor<V, F...>& out, kv_cache<CB>& cache,                    \
                                      workspace<WB, WN>& ws) const noexcept {                       \
    if constexpr (check_call_<tensor<U, E...>, tensor<V, F...>, WB, WN>()) {                        \
      if constexpr (check_cache_<tensor<U, E...>, CB>()) {                                          \
        if (n == 0 || n > WN) return ::mha::status::bad_token_count;                                \
        if (n > context_length - cache.size()) return ::mha::status::cache_full;                    \
        ::mha::detail::forward_cached(                                                              \
            spec_(), x.data(), WN * d_in, ::mha::detail::size_c<WB>{}, n, out.data(),               \
            WN * output_width, ::mha::detail::kv_cache_access::store(cache), cache.size(),          \
            ws.storage, ws.storage + workspace<WB, WN>::cached_scores_offset, context_length);      \
        ::mha::detail::kv_cache_access::grow(cache, n);                                             \
      }                                                                                             \
    }                                                                                               \
    return ::mha::status::ok;                                                                       \
  }                                                                                                 \
  /** The KV-cache forward has no training mode: a compile-time error. */                           \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t CB, std::size_t WB,   \
            std::size_t WN>                                                                         \
  MHA_DETAIL_ISA_TAG                                                                                \
  ::mha::status forward_training(const tensor<U, E...>&, std::size_t, tensor<V, F...>&,             \
                                 kv_cache<CB>&, workspace<WB, WN>&, std::uint64_t) const noexcept { \
    static_assert(::mha::detail::always_false<U>,                                                   \
                  "mha::" NAME "::forward_training: the KV-cache forward is inference only (no "   \
                  "dropout); use forward(x, n, out, cache, ws)");                                   \
    return ::mha::status::ok;                                                                       \
  }                                                                                                 \
  /** Training-mode forward: dropout with probability `dropout` on the        */                    \
  /** attention weights, kept weights scaled by 1/(1-p), rows not             */                    \
  /** renormalised (torch.nn.Dropout in train()). Deterministic for a seed.   */                    \
  template <class U, std::size_t... E>                                                              \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr auto forward_training(const tensor<U, E...>& x, std::uint64_t seed) const noexcept {    \
    typename ::mha::detail::output_for<value_type, output_width, E...>::type out;                   \
    if constexpr (check_input_<tensor<U, E...>>())                                                  \
      forward_stack_(x, out, ::mha::detail::forward_mode{true, seed});                              \
    return out;                                                                                     \
  }                                                                                                 \
  /** Training-mode forward into a caller-provided `out` (stack workspace). */                     \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void forward_training(const tensor<U, E...>& x, tensor<V, F...>& out,                   \
                                  std::uint64_t seed) const noexcept {                              \
    forward_stack_(x, out, ::mha::detail::forward_mode{true, seed});                                \
  }                                                                                                 \
  /** Training-mode forward into `out` with a caller-owned workspace. */                            \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t WB, std::size_t WN>   \
  MHA_DETAIL_ISA_TAG                                                                                \
  constexpr void forward_training(const tensor<U, E...>& x, tensor<V, F...>& out,                   \
                                  workspace<WB, WN>& ws, std::uint64_t seed) const noexcept {       \
    if constexpr (check_call_<tensor<U, E...>, tensor<V, F...>, WB, WN>())                          \
      run_<WB, WN>(x.data(), ::mha::detail::size_c<WN>{}, out.data(), ws,                           \
                   ::mha::detail::forward_mode{true, seed});                                        \
  }
