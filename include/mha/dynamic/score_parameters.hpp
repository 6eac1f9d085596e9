// mha/dynamic/score_parameters.hpp -- the learned parameters of an
// mha::dynamic module's score options (mha::attention_scores).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

#include <boost/hana/string.hpp>

#include <mha/attention_scores.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/dynamic/tensor.hpp>

namespace mha::dynamic {

/// The learned parameters of the score options Scores (mha::attention_scores)
/// of an mha::dynamic module: the member `score_params` of
/// dynamic::multi_head_attention and dynamic::grouped_query_attention, the
/// twin of mha::score_parameters (the same names in the parameter walk). No
/// option has parameters yet, so it holds none.
template <class T, attention_scores Scores>
struct score_parameters {
  /// The parameters of a module with num_heads query heads, zero-initialised.
  explicit score_parameters(std::size_t num_heads) { static_cast<void>(num_heads); }
  /// For mha::for_each_parameter (its entries appear in the module's walk
  /// without a prefix).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(BOOST_HANA_STRING("mha::dynamic::score_parameters"));
  }
  /// Throws std::invalid_argument naming `api` when a parameter (replaced by
  /// the user) does not have the shape of num_heads query heads.
  void check(const char* api, std::size_t num_heads) const {
    static_cast<void>(api);
    static_cast<void>(num_heads);
  }
};

}  // namespace mha::dynamic

#endif  // MHA_DETAIL_NO_CXX20
