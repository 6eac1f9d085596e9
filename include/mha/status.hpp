// mha/status.hpp -- result of the fixed-size calls that take run-time counts
// or sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

namespace mha {

/// Result of the fixed-size calls that take a run-time count or size: the
/// forward calls whose token count is a run-time value (`forward(x, n, out,
/// ws)`, `forward(x, n, out, cache, ws)`) and mha::load_parameters(model,
/// values). They are noexcept and return it [[nodiscard]]. On any value but
/// `ok` the call has written nothing (neither the output, the KV cache nor
/// the model), so the caller can go on with the same objects.
enum class status {
  ok,               ///< the call did its work
  bad_token_count,  ///< n == 0, or n larger than the input tensor's token extent
  cache_full,       ///< the KV cache cannot hold n more tokens (size() + n > ContextLength; a rolling cache with RoPE too, one without RoPE never)
  bad_size,         ///< load_parameters: values.size() is not the model's parameter count
};

/// The enumerator's name, "ok", "bad_token_count", "cache_full" or "bad_size": a
/// NUL-terminated string in static storage (a const char*, not a std::string).
constexpr const char* to_string(status s) noexcept {
  switch (s) {
    case status::ok: return "ok";
    case status::bad_token_count: return "bad_token_count";
    case status::cache_full: return "cache_full";
    case status::bad_size: return "bad_size";
  }
  return "unknown";
}

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
