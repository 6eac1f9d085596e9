// benchmark/streaming.hpp -- the streaming benchmarks (bench_streaming.cpp).
#pragma once

#include <string>
#include <vector>

namespace bench {
/// Registers BM_decode, BM_forward_n and BM_bytes (cross-checking their
/// outputs first; exits on a disagreement) and appends the cross-check lines
/// to `report`. Skipped when MHA_BENCH_CONFIGS is set and does not name
/// "streaming".
void register_streaming(std::vector<std::string>& report);
}  // namespace bench
