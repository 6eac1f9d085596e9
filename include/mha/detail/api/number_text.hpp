// mha/detail/api/number_text.hpp -- floating-point numbers in error messages.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <charconv>
#include <concepts>
#include <string>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// `v` as the shortest text that reads back as the same value of F
/// (std::to_chars without a precision): "1.0000001" for the float or double
/// 1.0000001, "0.5", "1e+100", "nan", "-inf". std::to_string would print six
/// decimals ("1.000000"), hiding why a number just above a bound was refused.
template <std::floating_point F>
std::string number_text(F v) {
  // 64 bytes hold the shortest form of any float, double or long double (at
  // most 36 digits, a sign, a point and an exponent such as e-4966)
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
