// test_kv_cache_gpt2.cpp -- the KV-cache fixture case at GPT-2 width,
// kv_mha_f32_gpt2 (mha::multi_head_attention<float, 768, 768, 24, 12, false>,
// batch 1): the checks every case of test_kv_cache.cpp's fixture table gets
// (kv_cache_checks.hpp: against PyTorch, fixed == fuse_qkv() == mha::dynamic
// bit for bit, (a), (b), (d), (f); the same tolerances), in a program of its
// own so that the sanitizer presets can compile it at -O1 (test/CMakeLists.txt).
// Its CTest names carry test_kv_cache's prefix: "test_kv_cache/kv_mha_f32_gpt2: ...".
#include <catch2/catch.hpp>

#include <mha/mha.hpp>

#include "kv_cache_checks.hpp"

namespace {
using gpt2_width = mha::multi_head_attention<float, 768, 768, 24, 12, false>;
}  // namespace

TEST_CASE("kv_mha_f32_gpt2: cached forwards match the PyTorch KV-cache fixture, fixed == dynamic",
          "[kv_cache][golden]") {
  run_case<gpt2_width, 1>(kv_gpt2_case, part::outputs);
}

TEST_CASE("kv_mha_f32_gpt2: bad token counts, a full cache and bad shapes leave outputs and cache untouched",
          "[kv_cache][errors]") {
  run_case<gpt2_width, 1>(kv_gpt2_case, part::errors);
}
