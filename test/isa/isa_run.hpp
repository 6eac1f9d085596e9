// isa_run.hpp -- the interface between test/isa/isa_main.cpp and the
// translation units built from isa_tu.cpp with different instruction sets
// (see test/isa/CMakeLists.txt). Plain data only: no standard-library
// template is shared between the translation units, so the test's own code
// cannot collide across them.
#pragma once

#include <cstddef>

namespace isa_test {

/// What one translation unit computed.
struct run {
  const char* isa_namespace = nullptr;  ///< mha::detail::isa_name of the unit
  std::size_t count = 0;                ///< float outputs written
  float values[16384] = {};             ///< every float output, in a fixed order
  std::size_t double_count = 0;         ///< double outputs written
  double double_values[2048] = {};      ///< every double output, in a fixed order
  /// Outputs that must be bit-identical within the unit (fixed-size vs
  /// mha::dynamic, multi_head_attention vs its fused twin) but were not.
  std::size_t twin_mismatches = 0;
  const char* first_mismatch = nullptr;  ///< which comparison failed first
};

}  // namespace isa_test
