// mha/score_parameters.hpp -- the learned parameters of a module's score
// options (mha::attention_scores), held by the fixed-size attention modules.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

#include <boost/hana/string.hpp>

#include <mha/attention_scores.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

namespace mha {

/// The learned parameters of the score options Scores of a module with
/// NumHeads query heads: the member `score_params` of multi_head_attention,
/// fused_multi_head_attention and grouped_query_attention. No option of
/// mha::attention_scores has parameters yet, so it holds none; an option with
/// parameters adds its tensors here (each an mha::tensor, or mha::no_bias when
/// the option is off), and the module's parameter walk lists them under their
/// own names (mha/parameters.hpp: the module's `named_parameters()`, without a
/// prefix). An aggregate; value-initialisation gives zeros.
template <class T, std::size_t NumHeads, attention_scores Scores>
struct score_parameters {
  /// For mha::for_each_parameter (its entries appear in the module's walk
  /// without a prefix).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(BOOST_HANA_STRING("mha::score_parameters"));
  }
};

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
