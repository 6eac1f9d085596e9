// mha/dynamic/score_parameters.hpp -- the learned parameters of an
// mha::dynamic module's score options (mha::attention_scores).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/hana/string.hpp>

#include <mha/attention_scores.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/dynamic/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// The learned parameters of the score options Scores (mha::attention_scores)
/// of an mha::dynamic module: the member `score_params` of
/// dynamic::multi_head_attention and dynamic::grouped_query_attention, the
/// twin of mha::score_parameters (the same names in the parameter walk).
template <class T, attention_scores Scores>
struct score_parameters {
  /// The parameters of a module with num_heads query heads, zero-initialised.
  MHA_DETAIL_ISA_TAG explicit score_parameters(std::size_t num_heads)
      : sinks(std::vector<std::size_t>{Scores.sinks ? num_heads : 0}) {}
  // (copies, moves and destruction carry the ISA's ABI tag: their code moves
  // T values; docs/design.md, "ISA namespaces")
  MHA_DETAIL_ISA_TAG score_parameters(const score_parameters&) = default;
  MHA_DETAIL_ISA_TAG score_parameters(score_parameters&&) = default;
  MHA_DETAIL_ISA_TAG score_parameters& operator=(const score_parameters&) = default;
  MHA_DETAIL_ISA_TAG score_parameters& operator=(score_parameters&&) = default;
  MHA_DETAIL_ISA_TAG ~score_parameters() = default;
  /// Scores.sinks: head h's sink logit at sinks[h] ([num_heads]); otherwise
  /// of shape {0} and absent from the parameter walk.
  tensor<T> sinks;
  /// For mha::for_each_parameter (its entries appear in the module's walk
  /// without a prefix).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(BOOST_HANA_STRING("mha::dynamic::score_parameters"),
                            detail::optional_member(BOOST_HANA_STRING("sinks"),
                                                    &score_parameters::sinks,
                                                    [](const score_parameters&) {
                                                      return Scores.sinks;
                                                    }));
  }
  /// Throws std::invalid_argument naming `api` when a parameter (replaced by
  /// the user) does not have the shape of num_heads query heads.
  MHA_DETAIL_ISA_TAG void check(const char* api, std::size_t num_heads) const {
    if constexpr (Scores.sinks)
      if (sinks.rank() != 1 || sinks.shape()[0] != num_heads)  // (allocates nothing)
        throw std::invalid_argument(std::string(api) + ": score_params.sinks has shape " +
                                    dynamic::shape_string(sinks.shape()) + ", expected [" +
                                    std::to_string(num_heads) + "] (one per head)");
    static_cast<void>(api);
    static_cast<void>(num_heads);
  }
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
