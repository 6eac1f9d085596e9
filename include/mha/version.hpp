// mha/version.hpp -- library version.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#define MHA_VERSION_MAJOR 0
#define MHA_VERSION_MINOR 1
#define MHA_VERSION_PATCH 0

namespace mha {
/// Library version as "major.minor.patch".
inline constexpr const char version[] = "0.1.0";
}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
