// mha/detail/api/dynamic_checks.hpp -- run-time shape checks of mha::dynamic.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>

#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <mha/dynamic/linear.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/detail/api/dynamic_output_check.hpp>
#include <mha/detail/api/number_text.hpp>
#include <mha/dynamic/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// Batch and token count of a validated input.
struct dynamic_input_shape {
  std::size_t batch;
  std::size_t tokens;
};

/// Checks that x (a tensor's or the caller's memory) is [B][N][d_in] or
/// [N][d_in] with 1 <= N <= context_length; throws std::invalid_argument
/// naming `api` and the sizes otherwise.
template <class T>
dynamic_input_shape check_dynamic_input(const char* api,
                                        const dynamic::tensor_view<const T>& x, std::size_t d_in,
                                        std::size_t context_length) {
  const auto s = x.shape();
  // built only on the error path: a valid call allocates nothing
  const auto where = [&] { return std::string(api) + "::forward: input " + dynamic::shape_string(s); };
  if (s.size() != 2 && s.size() != 3)
    throw std::invalid_argument(where() + " has rank " + std::to_string(s.size()) +
                                ", expected rank 3 [batch][tokens][d_in] or 2 [tokens][d_in]");
  if (s.back() != d_in)
    throw std::invalid_argument(where() + " has last extent " + std::to_string(s.back()) +
                                ", expected d_in = " + std::to_string(d_in));
  const std::size_t batch = s.size() == 3 ? s[0] : 1;
  const std::size_t tokens = s[s.size() - 2];
  if (batch == 0) throw std::invalid_argument(where() + " has batch size 0");
  if (tokens == 0 || tokens > context_length)
    throw std::invalid_argument(where() + " has " + std::to_string(tokens) +
                                " tokens, expected 1 <= tokens <= context_length = " +
                                std::to_string(context_length));
  return {batch, tokens};
}

/// Marks a module's own member layer in check_dynamic_linear (no head index).
inline constexpr std::size_t no_head = static_cast<std::size_t>(-1);

/// Checks a module's constructor sizes before its member layers are built, so
/// the error names the module (std::invalid_argument "<api>: d_in must be
/// greater than 0", and the same for d_out and context_length); returns d_in.
MHA_DETAIL_ISA_TAG inline std::size_t check_dynamic_sizes(const char* api, std::size_t d_in,
                                                       std::size_t d_out,
                                                       std::size_t context_length) {
  const char* zero = d_in == 0             ? "d_in"
                     : d_out == 0          ? "d_out"
                     : context_length == 0 ? "context_length"
                                           : nullptr;
  if (zero != nullptr)
    throw std::invalid_argument(std::string(api) + ": " + zero + " must be greater than 0");
  return d_in;
}

/// a * b, or std::length_error ("<api>: <what> of a * b elements overflows
/// std::size_t") when the product does not fit (the run-time sizes of a
/// workspace or KV cache: a context_length near SIZE_MAX / width).
MHA_DETAIL_ISA_TAG inline std::size_t checked_product(const char* api, const char* what,
                                                      std::size_t a, std::size_t b) {
  if (a != 0 && b > static_cast<std::size_t>(-1) / a)
    throw std::length_error(std::string(api) + ": " + what + " of " + std::to_string(a) + " * " +
                            std::to_string(b) + " elements overflows std::size_t");
  return a * b;
}

/// Checks a dropout probability is in [0, 1] (std::invalid_argument naming
/// `api` and, for head `head` of a wrapper, "heads[1].dropout").
template <class T>
void check_dynamic_dropout(const char* api, T p, std::size_t head = no_head) {
  if (!(p >= T(0) && p <= T(1)))
    throw std::invalid_argument(
        std::string(api) + ": " +
        (head == no_head ? std::string() : "heads[" + std::to_string(head) + "].") +
        "dropout probability " + number_text(p) + " must be in [0, 1]");
}

/// Checks that a module's member layer `name` (possibly replaced by the user)
/// is linear(in, out, bias) with parameters of those shapes; throws
/// std::invalid_argument naming `api`, the member (`w_query`, or
/// `heads[1].w_query` for head 1 of a wrapper, and `.weight` / `.bias`) and
/// the sizes otherwise, e.g. "mha::dynamic::multi_head_attention:
/// w_query.weight is [3][2], expected [2][3]".
template <class T>
void check_dynamic_linear(const char* api, const char* name, const dynamic::linear<T>& l,
                          std::size_t in, std::size_t out, bool bias, std::size_t head = no_head) {
  // built only on the error path: a valid call allocates nothing
  const auto member = [&] {
    return std::string(api) + ": " +
           (head == no_head ? std::string() : "heads[" + std::to_string(head) + "].") + name;
  };
  if (l.in_features() != in || l.out_features() != out || l.has_bias() != bias)
    throw std::invalid_argument(
        member() + " is linear(" + std::to_string(l.in_features()) + ", " +
        std::to_string(l.out_features()) + (l.has_bias() ? ", bias" : ", no bias") +
        "), expected linear(" + std::to_string(in) + ", " + std::to_string(out) +
        (bias ? ", bias" : ", no bias") + ")");
  l.check_parameters([&] { return member() + "."; });
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
