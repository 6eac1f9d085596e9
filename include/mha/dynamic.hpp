// mha/dynamic.hpp -- the runtime-sized twin (namespace mha::dynamic): same
// modules, members and arithmetic as the fixed-size ones, sizes chosen at run
// time, std::vector storage, std::invalid_argument on bad shapes. The baseline
// the fixed-size library is benchmarked against. Needs exceptions.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <mha/dynamic/causal_attention.hpp>
#include <mha/dynamic/grouped_query_attention.hpp>
#include <mha/dynamic/kv_cache.hpp>
#include <mha/dynamic/linear.hpp>
#include <mha/dynamic/multi_head_attention.hpp>
#include <mha/dynamic/multi_head_attention_wrapper.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/tensor_view.hpp>
#include <mha/dynamic/workspace.hpp>

#endif  // MHA_DETAIL_NO_CXX20
