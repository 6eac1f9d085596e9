// mha/mha.hpp -- umbrella header of the mha library.
//
// Fixed-size modules (namespace mha): no heap, no exceptions, no RTTI,
// constexpr. The runtime-sized twin (namespace mha::dynamic) uses std::vector
// and throws std::invalid_argument, so it is included only when exceptions are
// enabled; include <mha/dynamic.hpp> to require it.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <mha/block_layout.hpp>
#include <mha/attention_mask.hpp>
#include <mha/attention_scores.hpp>
#include <mha/attention_module.hpp>
#include <mha/block_view.hpp>
#include <mha/causal_attention.hpp>
#include <mha/config.hpp>
#include <mha/formats.hpp>
#include <mha/fused_multi_head_attention.hpp>
#include <mha/grouped_query_attention.hpp>
#include <mha/kv_cache.hpp>
#include <mha/linear.hpp>
#include <mha/multi_head_attention.hpp>
#include <mha/multi_head_attention_wrapper.hpp>
#include <mha/parameters.hpp>
#include <mha/rope.hpp>
#include <mha/score_parameters.hpp>
#include <mha/status.hpp>
#include <mha/tensor.hpp>
#include <mha/tensor_view.hpp>
#include <mha/version.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <mha/dynamic.hpp>
#endif

#endif  // MHA_DETAIL_NO_CXX20
