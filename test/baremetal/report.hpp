// report.hpp -- helpers shared by the bare-metal test programs: output
// checksums and the comparisons with a reference within a tolerance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mha_baremetal.hpp"

namespace bm_report {

/// FNV-1a (32 bits) of the bytes of n floats: equal checksums, equal bits.
inline std::uint32_t checksum(const float* p, std::size_t n) noexcept {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    for (int byte = 0; byte < 4; ++byte) {
      h ^= (bits >> (8 * byte)) & 0xffu;
      h *= 16777619u;
    }
  }
  return h;
}

/// Largest |a - b| over n elements.
inline double max_abs_diff(const float* a, const float* b, std::size_t n) noexcept {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    const double ad = d < 0 ? -d : d;
    if (ad > m) m = ad;
  }
  return m;
}

/// Elements with |a - ref| > rtol * max(1, |ref|) (PyTorch-style relative
/// tolerance with an absolute floor of rtol).
inline std::size_t violations(const float* a, const float* ref, std::size_t n, double rtol) noexcept {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = static_cast<double>(ref[i]);
    const double d = static_cast<double>(a[i]) - r;
    const double mag = r < 0 ? -r : r;
    if ((d < 0 ? -d : d) > rtol * (mag > 1 ? mag : 1)) ++count;
  }
  return count;
}

/// "<label>: <value>\n"
inline void line(const char* label, unsigned long value) noexcept {
  mha_bm::write(label);
  mha_bm::write(": ");
  mha_bm::write_uint(value);
  mha_bm::write("\n");
}

}  // namespace bm_report
