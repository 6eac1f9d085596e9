// mha/score_parameters.hpp -- the learned parameters of a module's score
// options (mha::attention_scores), held by the fixed-size attention modules.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>

#include <boost/hana/string.hpp>

#include <mha/attention_scores.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

namespace mha {

/// The learned parameters of the score options Scores of a module with
/// NumHeads query heads: the member `score_params` of multi_head_attention,
/// fused_multi_head_attention and grouped_query_attention. Each option with
/// parameters has its tensor here (an mha::tensor, or no storage when the
/// option is off), and the module's parameter walk lists them under their own
/// names (mha/parameters.hpp: the module's `named_parameters()`, without a
/// prefix). An aggregate; value-initialisation gives zeros.
namespace detail {
/// An option's parameter when the option is off: no storage, not in the walk.
/// (Its own empty type: an mha::no_bias here could not share an address with
/// the module's other no_bias members, so score_params would take a byte.)
struct absent_score_parameter {};
}  // namespace detail

template <class T, std::size_t NumHeads, attention_scores Scores>
struct score_parameters {
  /// Scores.sinks: head h's sink logit s_h at sinks[h] ([NumHeads]; gpt-oss's
  /// `self_attn.sinks`); otherwise absent.
  // ([[no_unique_address]]: without the option the struct is empty, and the
  // modules' score_params take no storage)
  [[no_unique_address]] std::conditional_t<Scores.sinks, tensor<T, NumHeads>,
                                           detail::absent_score_parameter> sinks{};
  /// For mha::for_each_parameter (its entries appear in the module's walk
  /// without a prefix).
  static constexpr auto parameter_description() noexcept {
    if constexpr (Scores.sinks)
      return detail::describe(BOOST_HANA_STRING("mha::score_parameters"),
                              detail::member(BOOST_HANA_STRING("sinks"), &score_parameters::sinks));
    else
      return detail::describe(BOOST_HANA_STRING("mha::score_parameters"));
  }
};

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
