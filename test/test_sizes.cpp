// test_sizes.cpp -- the object sizes the documentation states (issue 11, 2.4)
// are the sizes the compiler gives, so the docs cannot drift from the code.
//
// README.md, docs/design.md and docs/streaming.md carry tables of sizes between
// the markers `<!-- sizes: checked by test/test_sizes.cpp -->` and
// `<!-- /sizes -->`; each row is `| `<type>` | <bytes, with commas> | ... |`.
// Every row's type must be one of the types below (spelled as in the macro
// call), and its bytes must equal sizeof; every file must have such a table.
// A row whose size depends on the pointer width (a std::size_t member) states
// both: `6,291,464 (6,291,460 on 32-bit targets)`; a 32-bit target (armhf,
// Cortex-M) checks the second number, a 64-bit one the first.
// The GPT-2 numbers are also static_asserts (a compile-time guard).
#include <catch2/catch.hpp>

#include <cstddef>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <mha/mha.hpp>

#include "program_path.hpp"

namespace {

/// "<type spelled as in the docs>" -> sizeof(type).
#define MHA_TEST_SIZE(...) \
  { #__VA_ARGS__, sizeof(__VA_ARGS__) }

const std::map<std::string, std::size_t>& known_sizes() {
  static const std::map<std::string, std::size_t> sizes{
      MHA_TEST_SIZE(mha::multi_head_attention<float, 768, 768, 1024, 12>),
      MHA_TEST_SIZE(mha::multi_head_attention<float, 768, 768, 1024, 12, true>),
      MHA_TEST_SIZE(mha::fused_multi_head_attention<float, 768, 768, 1024, 12, true>),
      MHA_TEST_SIZE(mha::multi_head_attention<float, 768, 768, 1024, 12>::workspace<1, 1024>),
      MHA_TEST_SIZE(mha::multi_head_attention<float, 768, 768, 1024, 12>::workspace<1, 1>),
      MHA_TEST_SIZE(mha::multi_head_attention<float, 768, 768, 1024, 12>::kv_cache<1>),
      MHA_TEST_SIZE(mha::tensor<float, 1, 1024, 768>),
      MHA_TEST_SIZE(mha::multi_head_attention<float, 3, 2, 6, 2>),
  };
  return sizes;
}
#undef MHA_TEST_SIZE

using gpt2 = mha::multi_head_attention<float, 768, 768, 1024, 12>;
static_assert(sizeof(gpt2) == 9440260);  // (3 * 768 * 768 + 768 * 768 + 768) floats + dropout
static_assert(sizeof(gpt2) == (gpt2::parameter_count + 1) * sizeof(float));
static_assert(sizeof(mha::fused_multi_head_attention<float, 768, 768, 1024, 12, true>) ==
              sizeof(mha::multi_head_attention<float, 768, 768, 1024, 12, true>));
static_assert(sizeof(gpt2::kv_cache<1>) == 2 * 768 * 1024 * sizeof(float) + sizeof(std::size_t));
// A rolling cache (window 128 of 1024 positions) holds 2 * 128 - 1 + 8 columns and its first position.
using gpt2_window = mha::multi_head_attention<float, 768, 768, 1024, 12, false,
                                              mha::attention_scores{.sliding_window = 128}>;
static_assert(gpt2_window::kv_cache<1>::rolling && gpt2_window::kv_cache<1>::capacity == 263);
static_assert(sizeof(gpt2_window::kv_cache<1>) ==
              2 * 768 * 263 * sizeof(float) + 2 * sizeof(std::size_t));
static_assert(sizeof(gpt2_window) == sizeof(gpt2));
// A bias-less layer stores its weight and nothing else.
static_assert(sizeof(mha::linear<float, 768, 768, false>) == 768 * 768 * sizeof(float));
static_assert(sizeof(mha::linear<float, 3, 2, false>) == sizeof(mha::tensor<float, 2, 3>));
static_assert(sizeof(mha::linear<double, 3, 2, true>) == 8 * sizeof(double));

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct size_row {
  std::string type;
  std::size_t bytes;     // on 64-bit targets
  std::size_t bytes_32;  // on 32-bit targets (the same unless the row says otherwise)
};

std::size_t parse_bytes(std::string digits) {
  std::erase(digits, ',');
  return static_cast<std::size_t>(std::stoull(digits));
}

/// The rows of every size table of a Markdown text.
std::vector<size_row> size_rows(const std::string& text) {
  std::vector<size_row> rows;
  const std::string begin = "<!-- sizes: checked by test/test_sizes.cpp -->";
  const std::string end = "<!-- /sizes -->";
  const std::regex row(
      R"(^\|\s*`([^`]+)`[^|]*\|\s*([0-9,]+)(?:\s*\(([0-9,]+) on 32-bit targets\))?\s*\|)");
  for (std::size_t at = text.find(begin); at != std::string::npos; at = text.find(begin, at + 1)) {
    const std::size_t stop = text.find(end, at);
    REQUIRE(stop != std::string::npos);
    std::istringstream block(text.substr(at, stop - at));
    for (std::string line; std::getline(block, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, row)) continue;
      const std::size_t bytes = parse_bytes(m[2]);
      rows.push_back({m[1], bytes, m[3].matched ? parse_bytes(m[3]) : bytes});
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("every object size stated in the docs is the compiler's sizeof", "[docs]") {
  for (const char* file : {"README.md", "docs/design.md", "docs/streaming.md"}) {
    INFO(file);
    const std::string text = read_file(mha_test::program_relative(MHA_SOURCE_DIR) + "/" + file);
    REQUIRE(!text.empty());
    const auto rows = size_rows(text);
    REQUIRE(rows.size() >= 4);
    for (const auto& r : rows) {
      INFO(r.type);
      const auto it = known_sizes().find(r.type);
      REQUIRE(it != known_sizes().end());  // add the type to known_sizes()
      CHECK((sizeof(std::size_t) == 4 ? r.bytes_32 : r.bytes) == it->second);
    }
  }
}

TEST_CASE("the size-table parser reads rows and ignores text outside the markers", "[docs]") {
  const auto rows = size_rows(
      "| `a` | 1 |\n<!-- sizes: checked by test/test_sizes.cpp -->\n| object | bytes |\n"
      "| --- | ---: |\n| `mha::x<1, 2>` (note) | 9,440,260 | text |\n"
      "| `mha::y` | 6,291,464 (6,291,460 on 32-bit targets) |\n<!-- /sizes -->\n| `b` | 2 |\n");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].type == "mha::x<1, 2>");
  CHECK(rows[0].bytes == 9440260);
  CHECK(rows[0].bytes_32 == 9440260);
  CHECK(rows[1].type == "mha::y");
  CHECK(rows[1].bytes == 6291464);
  CHECK(rows[1].bytes_32 == 6291460);
}
