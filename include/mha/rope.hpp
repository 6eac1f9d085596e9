// mha/rope.hpp -- the position-encoding choice of mha::grouped_query_attention:
// mha::no_rope or mha::rope<ThetaBase>.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>

namespace mha {

/// No position encoding inside the attention module (the book's GPT: learned
/// position embeddings are added to the input before it).
struct no_rope {
  static constexpr bool enabled = false;
  static constexpr std::size_t theta_base = 0;
};

/// Rotary position embeddings with base `ThetaBase` (Llama 2: 10000, Llama 3:
/// 500000), applied to every query and key head by position, as the book's
/// Llama code does (Raschka, LLMs from scratch, ch05/07_gpt_to_llama:
/// compute_rope_params / apply_rope, "rotate half" layout as Hugging Face;
/// RoFormer, Su et al. 2021). Position p of a token is its index in the
/// sequence, or cache.size() + i for the i-th new token of a KV-cache call.
/// An integer because clang 14 has no floating-point template arguments;
/// Llama 3.1's frequency scaling is not supported. ThetaBase must be > 1
/// (compile-time error in the module otherwise).
template <std::size_t ThetaBase = 10000>
struct rope {
  static constexpr bool enabled = true;
  static constexpr std::size_t theta_base = ThetaBase;
};

namespace detail {
template <class R>
inline constexpr bool is_rope_choice = false;
template <>
inline constexpr bool is_rope_choice<no_rope> = true;
template <std::size_t Theta>
inline constexpr bool is_rope_choice<rope<Theta>> = true;
}  // namespace detail

/// mha::no_rope or an mha::rope<ThetaBase>.
template <class R>
concept rope_choice = detail::is_rope_choice<R>;

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
