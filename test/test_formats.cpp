// test_formats.cpp -- <mha/formats.hpp>: float to binary16 and bfloat16 as
// PyTorch rounds them, ggml's Q8_0 blocks as its reference quantizer makes
// them (test/data/formats/, made by tools/make_format_fixtures.py), the
// exact conversions back to float, and the same bits in constant evaluation.
// Part of the per-target checks (docs/ci.md): the conversions are integer
// code and the quantizer IEEE float code, so every target gives these bits.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/formats.hpp>

#include "program_path.hpp"

namespace formats_test {  // (named: the file shares a unity translation unit)

using json = nlohmann::json;

const json& formats_fixture() {
  static const json doc = [] {
    const auto path = std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "formats" / "formats.json";
    std::ifstream in(path);
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return doc;
}

std::uint32_t hex(const json& j) { return static_cast<std::uint32_t>(std::stoul(j.get<std::string>(), nullptr, 16)); }
float float_of(const json& j) { return std::bit_cast<float>(hex(j)); }
std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

/// The binary16 patterns next to h (one ulp down and up in magnitude order,
/// as signed-magnitude integers), for the nearest-value property.
bool nearest_f16(float x, std::uint16_t h) {
  const double v = x, r = mha::to_float(mha::f16{h});
  const auto neighbour = [&](int step) -> double {
    const int magnitude = (h & 0x7FFF) + step;
    if (magnitude < 0 || magnitude > 0x7BFF) return std::numeric_limits<double>::infinity();
    return mha::to_float(mha::f16{static_cast<std::uint16_t>((h & 0x8000) | magnitude)});
  };
  const double err = std::fabs(v - r);
  for (int step : {-1, 1}) {
    const double other = std::fabs(v - neighbour(step));
    if (other < err) return false;
    if (other == err && (h & 1) != 0) return false;  // a tie goes to the even pattern
  }
  return true;
}

/// to_f16 / to_bf16 accept an argument of type V (false for double: deleted).
template <class V>
constexpr bool can_to_f16 = requires(V v) { mha::to_f16(v); };
template <class V>
constexpr bool can_to_bf16 = requires(V v) { mha::to_bf16(v); };

}  // namespace formats_test

using formats_test::bits;
using formats_test::float_of;
using formats_test::formats_fixture;
using formats_test::hex;

TEST_CASE("to_f16 and to_bf16 round as PyTorch's .half() and .to(torch.bfloat16)", "[formats]") {
  for (const char* key : {"f16", "bf16"}) {
    INFO(key);
    const auto& pairs = formats_fixture().at(key);
    REQUIRE(pairs.size() > 2000);
    std::size_t mismatches = 0;
    std::string first;
    for (const auto& p : pairs) {
      const float x = float_of(p.at(0));
      const auto expected = static_cast<std::uint16_t>(hex(p.at(1)));
      const std::uint16_t got =
          std::string(key) == "f16" ? mha::to_f16(x).bits : mha::to_bf16(x).bits;
      if (got != expected && mismatches++ == 0)
        first = p.at(0).get<std::string>() + " gave " + std::to_string(got) + ", PyTorch " +
                std::to_string(expected);
    }
    INFO("first mismatch: " << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("to_float is exact: every binary16 and bfloat16 pattern converts back to itself",
          "[formats]") {
  std::size_t f16_mismatches = 0, bf16_mismatches = 0;
  for (std::uint32_t i = 0; i <= 0xFFFF; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float hf = mha::to_float(mha::f16{h}), bf = mha::to_float(mha::bf16{h});
    const bool h_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    const bool b_nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
    // a NaN comes back quiet, with its sign and payload
    const auto h_back = static_cast<std::uint16_t>(h_nan ? h | 0x200 : h);
    const auto b_back = static_cast<std::uint16_t>(b_nan ? h | 0x40 : h);
    if (std::isnan(hf) != h_nan || mha::to_f16(hf).bits != h_back) ++f16_mismatches;
    if (std::isnan(bf) != b_nan || mha::to_bf16(bf).bits != b_back) ++bf16_mismatches;
  }
  CHECK(f16_mismatches == 0);
  CHECK(bf16_mismatches == 0);
  // values: 1, the largest binary16, its smallest subnormal, bfloat16's pi
  CHECK(mha::to_float(mha::f16{0x3C00}) == 1.0f);
  CHECK(mha::to_float(mha::f16{0x7BFF}) == 65504.0f);
  CHECK(mha::to_float(mha::f16{0x0001}) == 0x1p-24f);
  CHECK(mha::to_float(mha::bf16{0x4049}) == 3.140625f);
}

TEST_CASE("to_f16 gives the nearest binary16, ties to even, over a sweep of float patterns",
          "[formats]") {
  // every 65521st pattern below infinity (prime step: every exponent, varied
  // mantissas), positive and negative
  std::size_t checked = 0, wrong = 0;
  std::uint32_t first_wrong = 0;
  for (std::uint64_t p = 0; p < 0x7F800000u; p += 65521) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      const float x = std::bit_cast<float>(static_cast<std::uint32_t>(p) | sign);
      const std::uint16_t h = mha::to_f16(x).bits;
      const bool ok = std::fabs(x) >= 65520.0f ? (h & 0x7FFF) == 0x7C00 : formats_test::nearest_f16(x, h);
      if (!ok || (h & 0x8000) != (sign >> 16)) {
        if (wrong++ == 0) first_wrong = bits(x);
      }
      ++checked;
    }
  }
  INFO("first wrong input bits " << first_wrong);
  CHECK(checked > 60000);
  CHECK(wrong == 0);
}

TEST_CASE("a NaN stays a NaN: quiet, with its sign and the top bits of its payload", "[formats]") {
  const float signalling = std::bit_cast<float>(0xFF812345u);  // -sNaN, payload 0x012345
  CHECK(mha::to_f16(signalling).bits == (0xFC00 | 0x200 | (0x012345 >> 13)));
  CHECK(mha::to_bf16(signalling).bits == (0xFF81 | 0x40));
  CHECK(mha::to_f16(std::numeric_limits<float>::quiet_NaN()).bits == 0x7E00);
  CHECK(mha::to_bf16(std::numeric_limits<float>::quiet_NaN()).bits == 0x7FC0);
}

TEST_CASE("quantize_q8_0 gives ggml's reference blocks, dequantize_row_q8_0 their values",
          "[formats]") {
  const auto& blocks = formats_fixture().at("q8_0");
  REQUIRE(blocks.size() >= 16);
  std::vector<float> row;
  std::vector<mha::q8_0_block> expected_row;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    INFO("block " << b);
    const auto& fx = blocks[b];
    std::array<float, 32> x{}, y{};
    for (std::size_t j = 0; j < 32; ++j) x[j] = float_of(fx.at("x")[j]);
    const mha::q8_0_block q = mha::quantize_q8_0(x.data());
    mha::q8_0_block expected{mha::f16{static_cast<std::uint16_t>(hex(fx.at("d")))}, {}};
    for (std::size_t j = 0; j < 32; ++j) expected.qs[j] = fx.at("qs")[j].get<std::int8_t>();
    CHECK(q.d.bits == expected.d.bits);
    CHECK(q == expected);
    mha::dequantize_row_q8_0(&q, y.data(), 32);
    std::size_t y_mismatches = 0;
    for (std::size_t j = 0; j < 32; ++j) y_mismatches += bits(y[j]) != hex(fx.at("y")[j]);
    CHECK(y_mismatches == 0);
    row.insert(row.end(), x.begin(), x.end());
    expected_row.push_back(expected);
  }
  // a row of blocks: the blocks one by one
  std::vector<mha::q8_0_block> got(expected_row.size());
  mha::quantize_row_q8_0(row.data(), got.data(), row.size());
  CHECK(got == expected_row);
}

TEST_CASE("to_f16 and to_bf16 take a float, not a double (which would round twice)", "[formats]") {
  STATIC_REQUIRE(formats_test::can_to_f16<float> && formats_test::can_to_bf16<float>);
  STATIC_REQUIRE_FALSE(formats_test::can_to_f16<double>);
  STATIC_REQUIRE_FALSE(formats_test::can_to_bf16<double>);
}

TEST_CASE("the formats in constant evaluation: the same bits", "[formats]") {
  STATIC_REQUIRE(mha::to_f16(1.0f) == mha::f16{0x3C00});
  STATIC_REQUIRE(mha::to_f16(65520.0f) == mha::f16{0x7C00});
  STATIC_REQUIRE(mha::to_f16(0x1p-25f) == mha::f16{0x0000});
  STATIC_REQUIRE(mha::to_f16(0x1.8p-25f) == mha::f16{0x0001});
  STATIC_REQUIRE(mha::to_bf16(1.00390625f) == mha::bf16{0x3F80});  // 1 + 2^-8: the tie goes to even
  STATIC_REQUIRE(mha::to_float(mha::f16{0x0001}) == 0x1p-24f);
  constexpr auto block = [] {
    std::array<float, 32> x{};
    x[0] = 127.0f;
    x[1] = 2.5f;
    x[2] = -2.5f;
    x[3] = 0.49999997f;
    return mha::quantize_q8_0(x.data());
  }();
  STATIC_REQUIRE(block.d == mha::f16{0x3C00});
  STATIC_REQUIRE(block.qs[0] == 127);
  STATIC_REQUIRE(block.qs[1] == 3);   // halves away from zero (roundf), not to even
  STATIC_REQUIRE(block.qs[2] == -3);
  STATIC_REQUIRE(block.qs[3] == 0);
  // and at run time, the same block
  std::array<float, 32> x{};
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 0.49999997f;
  CHECK(mha::quantize_q8_0(x.data()) == block);
  // a half-grid block, (k + 1/2) * 0.37 with x[0] = 127 * 0.37: products
  // within an ulp of a half, in constant evaluation and at run time
  constexpr auto grid = [](float s) {
    std::array<float, 32> v{};
    v[0] = 127.0f * s;
    for (std::size_t j = 1; j < 32; ++j)
      v[j] = (static_cast<float>(static_cast<int>(j * 37 % 251) - 125) + 0.5f) * s;
    return v;
  };
  constexpr auto grid_block = [&] { return mha::quantize_q8_0(grid(0.37f).data()); }();
  volatile float scale = 0.37f;  // (not folded)
  CHECK(mha::quantize_q8_0(grid(scale).data()) == grid_block);
}

TEST_CASE("quantize_q8_0 outside its preconditions: defined quants, no undefined conversion",
          "[formats]") {
  std::array<float, 32> x{};
  x[0] = std::numeric_limits<float>::infinity();  // d infinite, id 0: 0 * inf is NaN
  x[1] = 1.0f;
  const mha::q8_0_block q = mha::quantize_q8_0(x.data());
  CHECK(q.d.bits == 0x7C00);
  CHECK(q.qs[0] == 0);  // NaN quant: 0
  CHECK(q.qs[1] == 0);
  std::array<float, 32> tiny{};
  tiny[0] = 0x1p-140f;  // 1 / d overflows: x * id is infinite
  const mha::q8_0_block t = mha::quantize_q8_0(tiny.data());
  CHECK(t.qs[0] == 127);
  CHECK(t.qs[1] == 0);  // 0 * inf: NaN, quant 0
}
