// Malformed and mismatching safetensors files (issue 5, section 4): every case
// gives mha::io::load_error with a clear message, never a crash or an
// out-of-bounds read (run under ASan), and leaves the model byte-for-byte
// unchanged. The files are made here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "test_helpers.hpp"

using mha::io::checkpoint_format;
using mha::io::load_errc;
using mha::io::load_options;
using namespace mha_io_test;

namespace {

// The model of most cases: book MultiHeadAttention(d_in 3, d_out 4, context 5, 2 heads, qkv bias).
using model_t = mha::multi_head_attention<float, 3, 4, 5, 2, true>;

/// "<prefix><n>": a case name. (Built by appending: `"prefix" + std::to_string(n)`
/// trips GCC 12's -Wrestrict false positive inside libstdc++'s string insert
/// on 32-bit ARM at -O2, GCC bug 105651.)
std::string numbered(const char* prefix, int n) {
  std::string name = prefix;
  name += std::to_string(n);
  return name;
}

std::string le_u64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto u = std::bit_cast<std::uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) s[4 * i + static_cast<std::size_t>(b)] = static_cast<char>((u >> (8 * b)) & 0xFF);
  }
  return s;
}

struct tensor_spec {
  std::string name;
  std::string dtype = "F32";
  std::vector<std::uint64_t> shape;  // safetensors extents are 64-bit on every target
  std::string bytes;
};

std::string shape_json(const std::vector<std::uint64_t>& shape) {
  std::ostringstream s;  // (not "[" + ...: g++ 12 -O2 gives a false -Wrestrict on that)
  s << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? "," : "") << shape[i];
  s << ']';
  return s.str();
}

/// A file from a raw header text and data section.
std::string raw_file(const std::string& header, const std::string& data) {
  return le_u64(header.size()) + header + data;
}

/// Header text and data of well-formed tensors stored back to back;
/// metadata_entries: more `"key":"value"` entries of __metadata__ after
/// "format", comma-separated (none by default).
std::pair<std::string, std::string> header_and_data(const std::vector<tensor_spec>& ts,
                                                    const std::string& metadata_entries = "") {
  std::ostringstream h;
  h << R"({"__metadata__":{"format":"pt")" << (metadata_entries.empty() ? "" : ",")
    << metadata_entries << "}";
  std::string data;
  for (const auto& t : ts) {
    h << ",\"" << t.name << R"(":{"dtype":")" << t.dtype << R"(","shape":)" << shape_json(t.shape)
      << R"(,"data_offsets":[)" << data.size() << ',' << data.size() + t.bytes.size() << "]}";
    data += t.bytes;
  }
  h << '}';
  return {h.str(), data};
}
std::string make_file(const std::vector<tensor_spec>& ts) {
  auto [h, d] = header_and_data(ts);
  return raw_file(h, d);
}

std::vector<float> iota(std::size_t n, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + 0.01f * static_cast<float>(i);
  return v;
}

/// The tensors of a valid checkpoint for model_t (book names, F32).
std::vector<tensor_spec> valid_tensors() {
  std::vector<tensor_spec> ts;
  float s = 0.1f;
  for (const char* p : {"W_query", "W_key", "W_value"}) {
    ts.push_back({std::string(p) + ".weight", "F32", {4, 3}, f32_bytes(iota(12, s))});
    ts.push_back({std::string(p) + ".bias", "F32", {4}, f32_bytes(iota(4, -s))});
    s += 0.2f;
  }
  ts.push_back({"out_proj.weight", "F32", {4, 4}, f32_bytes(iota(16, 0.5f))});
  ts.push_back({"out_proj.bias", "F32", {4}, f32_bytes(iota(4, -0.5f))});
  std::vector<float> mask(25);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 5; ++c) mask[r * 5 + c] = c > r ? 1.0f : 0.0f;
  ts.push_back({"mask", "F32", {5, 5}, f32_bytes(mask)});
  return ts;
}

tensor_spec* find(std::vector<tensor_spec>& ts, const std::string& name) {
  for (auto& t : ts)
    if (t.name == name) return &t;
  FAIL("no tensor " << name);
  return nullptr;
}

/// A temporary directory for the files of this test run.
const std::filesystem::path& tmp_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("mha_io_malformed_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}
std::filesystem::path write_tmp(const std::string& name, const std::string& bytes) {
  const auto p = tmp_dir() / name;
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

/// A model whose every byte is a known pattern (so "unchanged" is meaningful).
std::unique_ptr<model_t> patterned_model() {
  auto m = std::make_unique<model_t>();
  float v = 7.0f;
  for (auto* t : {m->w_query.weight.data(), m->w_key.weight.data(), m->w_value.weight.data()})
    for (std::size_t i = 0; i < 12; ++i) t[i] = (v += 0.5f);
  for (auto* t : {m->w_query.bias.data(), m->w_key.bias.data(), m->w_value.bias.data()})
    for (std::size_t i = 0; i < 4; ++i) t[i] = (v += 0.5f);
  for (auto& x : m->out_proj.weight.elements) x = (v += 0.5f);
  for (auto& x : m->out_proj.bias.elements) x = (v += 0.5f);
  return m;
}

/// Loads `bytes` (as a file and from memory) into a patterned model and checks
/// the error: load_error of `code` whose message contains every `needles`
/// entry and the file name; the model is unchanged.
template <class Model = model_t>
void expect_error(const std::string& case_name, const std::string& bytes, load_errc code,
                  std::vector<std::string> needles, load_options opt = {},
                  std::unique_ptr<Model> model = nullptr) {
  INFO("case " << case_name);
  if (!model) {
    if constexpr (std::is_same_v<Model, model_t>) model = patterned_model();
    else model = std::make_unique<Model>();
  }
  const auto before = model_bytes(*model);
  const auto path = write_tmp(case_name + ".safetensors", bytes);
  try {
    mha::io::load_safetensors(path, *model, opt);
    FAIL("no load_error for " << case_name);
  } catch (const mha::io::load_error& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(e.code() == code);
    CHECK(msg.find(path.string()) != std::string::npos);
    for (const auto& n : needles) CHECK(msg.find(n) != std::string::npos);
  }
  CHECK(model_bytes(*model) == before);
  const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *model, opt, "blob");
  CHECK(!r.ok());
  CHECK(r.code == code);
  CHECK(r.message.find("blob") != std::string::npos);
  CHECK(model_bytes(*model) == before);
}

}  // namespace

TEST_CASE("the valid base file loads (sanity of the generator)", "[io][malformed]") {
  auto m = patterned_model();
  const auto path = write_tmp("valid.safetensors", make_file(valid_tensors()));
  REQUIRE_NOTHROW(mha::io::load_safetensors(path, *m));
  CHECK(m->w_key.weight(0, 1) == iota(12, 0.3f)[1]);
  CHECK(m->out_proj.bias(3) == iota(4, -0.5f)[3]);
}

TEST_CASE("missing path, directory, empty file", "[io][malformed]") {
  auto m = patterned_model();
  const auto before = model_bytes(*m);
  for (const auto& [path, needle] :
       {std::pair{tmp_dir() / "does_not_exist.safetensors", std::string("no such file")},
        std::pair{tmp_dir(), std::string("is a directory")}}) {
    try {
      mha::io::load_safetensors(path, *m);
      FAIL("no error");
    } catch (const mha::io::load_error& e) {
      INFO(e.what());
      CHECK(e.code() == load_errc::io);
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
      CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    }
  }
  CHECK(model_bytes(*m) == before);
  expect_error("empty", "", load_errc::io, {"empty file"});
}

TEST_CASE("truncated files: every prefix of a valid file is rejected", "[io][malformed]") {
  const std::string full = make_file(valid_tensors());
  expect_error("short", full.substr(0, 5), load_errc::truncated, {"5 bytes", "8-byte"});
  expect_error("cut_in_header", full.substr(0, 40), load_errc::truncated, {"header length"});
  expect_error("cut_in_data", full.substr(0, full.size() - 3), load_errc::offsets, {"out of range"});
  auto before = model_bytes(*patterned_model());
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto m = patterned_model();
    const auto r = mha::io::try_load_safetensors_memory(full.data(), n, *m);
    INFO("prefix of " << n << " bytes: " << r.message);
    CHECK(!r.ok());
    CHECK(model_bytes(*m) == before);
  }
}

TEST_CASE("header length larger than the file or absurd", "[io][malformed]") {
  auto [h, d] = header_and_data(valid_tensors());
  expect_error("len_too_big", le_u64(h.size() + d.size() + 1) + h + d, load_errc::truncated,
               {"larger than"});
  expect_error("len_absurd", le_u64(std::uint64_t{1} << 62) + h + d, load_errc::header,
               {"exceeds the limit"});
  expect_error("len_max", le_u64(std::numeric_limits<std::uint64_t>::max()) + h + d,
               load_errc::header, {"exceeds the limit"});
  expect_error("len_zero", le_u64(0) + h + d, load_errc::header, {"JSON object"});
}

TEST_CASE("header not JSON, not an object, wrong field types", "[io][malformed]") {
  const std::string w = R"("W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[0,48]})";
  const std::string data(48, '\0');
  expect_error("not_json", raw_file("{\"a\": [1, 2", data), load_errc::header, {"not valid JSON"});
  expect_error("nul_then_garbage", raw_file(std::string("{}\0 not json {{{", 16), data),
               load_errc::header, {"not valid JSON", "NUL"});
  expect_error("garbage", raw_file(std::string("\x01\xff\xfe garbage", 12), data), load_errc::header,
               {"not valid JSON"});
  expect_error("array", raw_file("[1, 2, 3]", ""), load_errc::header, {"array, not an object"});
  expect_error("number", raw_file("42      ", ""), load_errc::header, {"not an object"});
  expect_error("entry_not_object", raw_file(R"({"W_query.weight": 5})", ""), load_errc::header,
               {"W_query.weight", "not an object"});
  const std::vector<std::pair<std::string, std::string>> bad_fields = {
      {R"({"W_query.weight":{"dtype":32,"shape":[4,3],"data_offsets":[0,48]}})", "'dtype' is a JSON number"},
      {R"({"W_query.weight":{"dtype":"F32","shape":"4x3","data_offsets":[0,48]}})", "'shape' is a JSON string"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,-3],"data_offsets":[0,48]}})", "negative number"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3.5],"data_offsets":[0,48]}})", "not a non-negative integer"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,[3]],"data_offsets":[0,48]}})", "not a non-negative integer"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":{"a":0}}})", "'data_offsets' is a JSON object"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[48]}})", "1 elements, not 2"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[0,"48"]}})", "two non-negative integers"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[-8,40]}})", "two non-negative integers"},
      {R"({"W_query.weight":{"shape":[4,3],"data_offsets":[0,48]}})", "no 'dtype'"},
      {R"({"W_query.weight":{"dtype":"F32","data_offsets":[0,48]}})", "no 'shape'"},
      {R"({"W_query.weight":{"dtype":"F32","shape":[4,3]}})", "no 'data_offsets'"},
      {"{\"__metadata__\":[1]," + w + "}", "__metadata__ is a JSON array"},
      {"{\"__metadata__\":{\"n\":1}," + w + "}", "value of 'n' is a JSON number"},
  };
  int i = 0;
  for (const auto& [header, needle] : bad_fields)
    expect_error(numbered("field_", i++), raw_file(header, data), load_errc::header, {needle});
}

TEST_CASE("unknown dtype, or a dtype a weight cannot have", "[io][malformed]") {
  auto ts = valid_tensors();
  find(ts, "W_key.weight")->dtype = "F33";
  expect_error("unknown_dtype", make_file(ts), load_errc::dtype, {"W_key.weight", "unknown dtype 'F33'"});
  ts = valid_tensors();
  find(ts, "W_key.weight")->dtype = "I32";  // same byte size, integer dtype
  expect_error("int_dtype", make_file(ts), load_errc::dtype, {"W_key.weight", "I32"});
}

TEST_CASE("shape / dtype / byte range mismatch", "[io][malformed]") {
  auto ts = valid_tensors();
  find(ts, "W_value.weight")->shape = {4, 4};  // 64 bytes needed, 48 stored
  expect_error("size_mismatch", make_file(ts), load_errc::offsets,
               {"W_value.weight", "holds 48 bytes", "needs 64"});
  ts = valid_tensors();
  find(ts, "W_value.weight")->dtype = "F64";
  expect_error("dtype_size_mismatch", make_file(ts), load_errc::offsets, {"W_value.weight", "F64"});
  ts = valid_tensors();
  // (2^62 x 8 elements: the element count overflows 64 bits, on 32-bit targets too)
  find(ts, "W_value.weight")->shape = {std::uint64_t{1} << 62, 8};
  expect_error("shape_overflow", make_file(ts), load_errc::offsets, {"overflows"});
  // Consistent entry, but not the model's shape.
  ts = valid_tensors();
  find(ts, "W_value.weight")->shape = {3, 4};
  expect_error("wrong_shape", make_file(ts), load_errc::shape,
               {"W_value.weight", "[3][4] in the file, expected [4][3]"});
}

TEST_CASE("data_offsets out of range, reversed, overlapping, gaps, uncovered bytes", "[io][malformed]") {
  const std::string a = R"("W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":)";
  const std::string b = R"("W_key.weight":{"dtype":"F32","shape":[4,3],"data_offsets":)";
  const std::string data96(96, '\0');
  expect_error("out_of_range", raw_file("{" + a + "[0,48]}," + b + "[48,96]}}", data96.substr(0, 90)),
               load_errc::offsets, {"W_key.weight", "out of range", "90 bytes"});
  expect_error("huge_offsets", raw_file("{" + a + "[18446744073709551600,18446744073709551615]}}", data96),
               load_errc::offsets, {"W_query.weight"});
  expect_error("reversed", raw_file("{" + a + "[48,0]}}", data96.substr(0, 48)), load_errc::offsets,
               {"W_query.weight", "reversed"});
  expect_error("overlap", raw_file("{" + a + "[0,48]}," + b + "[40,88]}}", data96.substr(0, 88)),
               load_errc::offsets, {"W_key.weight", "overlap", "W_query.weight"});
  expect_error("same_range", raw_file("{" + a + "[0,48]}," + b + "[0,48]}}", data96.substr(0, 48)),
               load_errc::offsets, {"overlap"});
  expect_error("gap", raw_file("{" + a + "[0,48]}," + b + "[52,100]}}", std::string(100, '\0')),
               load_errc::offsets, {"gap", "[48, 52)"});
  expect_error("trailing", raw_file("{" + a + "[0,48]}}", data96), load_errc::offsets,
               {"cover 48 of the 96 bytes"});
  expect_error("leading", raw_file("{" + a + "[48,96]}}", data96), load_errc::offsets, {"gap", "[0, 48)"});
}

TEST_CASE("duplicate names", "[io][malformed]") {
  auto [h, d] = header_and_data(valid_tensors());
  // Repeat the first tensor's entry under the same name at the end.
  const std::string dup = R"(,"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[0,48]})";
  const std::string h2 = h.substr(0, h.size() - 1) + dup + "}";
  expect_error("duplicate", raw_file(h2, d), load_errc::header, {"duplicate", "W_query.weight"});
  // A key repeated inside a tensor's entry is reported under the tensor's name
  // (it was reported as a tensor named 'dtype').
  const std::string h3 =
      R"({"W_query.weight":{"dtype":"F32","dtype":"F16","shape":[4,3],"data_offsets":[0,48]}})";
  expect_error("duplicate_field", raw_file(h3, std::string(48, '\0')), load_errc::header,
               {"tensor 'W_query.weight': ", "duplicate key 'dtype' in the entry"});
  {
    const std::string f = raw_file(h3, std::string(48, '\0'));
    auto m = patterned_model();
    const auto r3 = mha::io::try_load_safetensors_memory(f.data(), f.size(), *m);
    CHECK(r3.tensor == "W_query.weight");
  }
  // In __metadata__: named as such, no tensor.
  const std::string h4 =
      R"({"__metadata__":{"format":"pt","format":"np"},"W_query.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[0,48]}})";
  {
    const std::string f = raw_file(h4, std::string(48, '\0'));
    expect_error("duplicate_metadata", f, load_errc::header,
                 {"duplicate key 'format' in __metadata__"});
    auto m = patterned_model();
    CHECK(mha::io::try_load_safetensors_memory(f.data(), f.size(), *m).tensor.empty());
  }
  // The same key in two different entries is not a duplicate.
  const std::string h5 =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  {
    const std::string f = raw_file(h5, std::string(8, '\0'));
    mha::io::detail::memory_source src(f.data(), f.size());
    mha::io::detail::header_info info;
    const auto e = mha::io::detail::parse_header(src, info);
    INFO(e.what);
    CHECK(!e);
  }
}

TEST_CASE("a UTF-8 byte order mark before the JSON header is rejected", "[io][malformed]") {
  auto [h, d] = header_and_data(valid_tensors());
  // nlohmann-json skips a leading BOM; the header must start with the JSON text.
  expect_error("bom", raw_file("\xEF\xBB\xBF" + h, d), load_errc::header,
               {"byte order mark", "EF BB BF"});
  // (the same header without the BOM loads)
  auto m = patterned_model();
  const auto ok = raw_file(h, d);
  CHECK(mha::io::try_load_safetensors_memory(ok.data(), ok.size(), *m).ok());
}

TEST_CASE("zero-element shapes with huge extents: rejected in every order", "[io][malformed]") {
  // The product of the non-zero extents must fit in 64 bits whatever the
  // position of the zero ([0][2^63][2^63] passed, [2^63][2^63][0] did not).
  const std::string big = std::to_string(std::uint64_t{1} << 63);
  int i = 0;
  for (const std::string& shape : {"[0," + big + "," + big + "]", "[" + big + ",0," + big + "]",
                                   "[" + big + "," + big + ",0]"}) {
    const std::string header =
        R"({"W_query.weight":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})";
    expect_error(numbered("zero_huge_", i++), raw_file(header, ""), load_errc::offsets,
                 {"W_query.weight", "overflows 64 bits"});
  }
  // A zero-element shape of modest extents stays valid (it holds no bytes).
  const std::string header =
      R"({"empty":{"dtype":"F32","shape":[0,1000000],"data_offsets":[0,0]}})";
  const std::string f = raw_file(header, "");
  mha::io::detail::memory_source src(f.data(), f.size());
  mha::io::detail::header_info info;
  const auto e = mha::io::detail::parse_header(src, info);
  INFO(e.what);
  CHECK(!e);
}

TEST_CASE("non-finite values: an error unless allowed", "[io][malformed]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int i = 0;
  for (const float bad : {nan, inf, -inf}) {
    auto ts = valid_tensors();
    auto v = iota(4, -0.5f);
    v[2] = bad;
    find(ts, "out_proj.bias")->bytes = f32_bytes(v);  // the last weight the loader reads
    const auto file = make_file(ts);
    expect_error(numbered("nonfinite_", i++), file, load_errc::non_finite,
                 {"out_proj.bias", "element 2", std::isnan(bad) ? "NaN" : "infinite"});
    load_options allow;
    allow.allow_non_finite = true;
    auto m = patterned_model();
    const auto r = mha::io::try_load_safetensors_memory(file.data(), file.size(), *m, allow);
    INFO(r.message);
    CHECK(r.ok());
    const bool same = std::isnan(bad) ? std::isnan(m->out_proj.bias(2)) : m->out_proj.bias(2) == bad;
    CHECK(same);
  }
  // F16 infinity (0x7C00) and an F64 value beyond float's range.
  auto ts = valid_tensors();
  auto* b = find(ts, "W_query.bias");
  b->dtype = "F16";
  b->bytes = std::string("\x00\x3c\x00\x7c\x00\x00\x00\x00", 8);
  expect_error("f16_inf", make_file(ts), load_errc::non_finite, {"W_query.bias", "element 1"});
  ts = valid_tensors();
  b = find(ts, "W_query.bias");
  b->dtype = "F64";
  b->bytes.assign(32, '\0');
  const auto big = std::bit_cast<std::uint64_t>(1e300);
  for (int k = 0; k < 8; ++k) b->bytes[8 + static_cast<std::size_t>(k)] = static_cast<char>((big >> (8 * k)) & 0xFF);
  expect_error("f64_overflow", make_file(ts), load_errc::non_finite, {"W_query.bias", "range"});
}

TEST_CASE("__metadata__ counts past 32 bits are mismatches on every target", "[io][malformed]") {
  // Found by a breaker trial: parse_count read into std::size_t, so on 32-bit
  // ARM "4294967298" wrapped to 2, matched the model's num_heads and loaded
  // (without even the "head count not verified" warning).
  const auto with_metadata = [](const std::string& entries) {
    auto [h, d] = header_and_data(valid_tensors(), entries);
    return raw_file(h, d);
  };
  expect_error("num_heads_2_pow_32_plus_2", with_metadata(R"("num_heads":"4294967298")"),
               load_errc::hyperparameter,
               {"__metadata__ 'num_heads' is 4294967298 in the file, expected 2"});
  expect_error("d_in_2_pow_32_plus_3", with_metadata(R"("d_in":"4294967299")"),
               load_errc::hyperparameter,
               {"__metadata__ 'd_in' is 4294967299 in the file, expected 3"});
  expect_error("d_out_20_digits", with_metadata(R"("d_out":"18446744073709551620")"),
               load_errc::hyperparameter, {"'d_out'", "not a non-negative integer"});
  // a context_length past 32 bits is longer than the model's: loads, no warning
  const auto longer = with_metadata(R"("num_heads":"2","context_length":"4294967301")");
  auto m = patterned_model();
  const auto r = mha::io::try_load_safetensors_memory(longer.data(), longer.size(), *m);
  CHECK(r.ok());
  CHECK(r.warnings.empty());
  // and one that wraps to less than the model's 5 on 32 bits (2^32 + 1 -> 1) is
  // still longer than it
  const auto wraps = with_metadata(R"("num_heads":"2","context_length":"4294967297")");
  const auto r2 = mha::io::try_load_safetensors_memory(wraps.data(), wraps.size(), *m);
  CHECK(r2.ok());
  CHECK(r2.warnings.empty());
}

TEST_CASE("strictness: missing, unexpected, qkv bias mismatch, mask", "[io][malformed]") {
  auto ts = valid_tensors();
  ts.erase(ts.begin() + 6);  // out_proj.weight
  expect_error("missing", make_file(ts), load_errc::missing_tensor, {"out_proj.weight", "missing"});

  ts = valid_tensors();
  ts.push_back({"extra.weight", "F32", {2}, f32_bytes({1.0f, 2.0f})});
  const auto extra = make_file(ts);
  expect_error("unexpected", extra, load_errc::unexpected_tensor, {"extra.weight", "allow_extra_tensors"});
  load_options allow;
  allow.allow_extra_tensors = true;
  auto m = patterned_model();
  CHECK(mha::io::try_load_safetensors_memory(extra.data(), extra.size(), *m, allow).ok());
  // Outside the prefix, extra tensors are always fine.
  load_options pre;
  pre.prefix = "attn.";
  std::vector<tensor_spec> prefixed;
  for (auto t : valid_tensors()) {
    t.name = "attn." + t.name;
    prefixed.push_back(t);
  }
  prefixed.push_back({"other.weight", "F32", {1}, f32_bytes({1.0f})});
  const auto pf = make_file(prefixed);
  CHECK(mha::io::try_load_safetensors_memory(pf.data(), pf.size(), *m, pre).ok());
  prefixed.push_back({"attn.other", "F32", {1}, f32_bytes({1.0f})});
  expect_error("unexpected_prefixed", make_file(prefixed), load_errc::unexpected_tensor, {"attn.other"},
               pre);

  // File has biases, model has none.
  expect_error<mha::multi_head_attention<float, 3, 4, 5, 2, false>>(
      "bias_in_file", make_file(valid_tensors()), load_errc::qkv_bias,
      {"W_query.bias", "qkv_bias = false"});
  // Model has biases, file has none.
  ts = valid_tensors();
  ts.erase(ts.begin() + 3);  // W_key.bias
  expect_error("bias_missing", make_file(ts), load_errc::qkv_bias, {"W_key.bias", "qkv_bias = true"});

  // The mask must be the causal mask of the model's context_length.
  ts = valid_tensors();
  std::vector<float> mask(25, 0.0f);
  find(ts, "mask")->bytes = f32_bytes(mask);
  expect_error("mask_values", make_file(ts), load_errc::mask, {"mask", "[0][1]"});
  ts = valid_tensors();
  find(ts, "mask")->shape = {1, 25};
  expect_error("mask_shape", make_file(ts), load_errc::mask, {"mask", "context_length"});
  ts = valid_tensors();
  ts.pop_back();  // no mask: fine
  const auto nomask = make_file(ts);
  CHECK(mha::io::try_load_safetensors_memory(nomask.data(), nomask.size(), *m).ok());

  // A format the model cannot hold.
  load_options g;
  g.format = checkpoint_format::gpt2;
  expect_error<mha::causal_attention<float, 3, 4, 5, true>>("format_model", make_file(valid_tensors()),
                                                            load_errc::model, {"causal_attention"}, g);
}

TEST_CASE("dynamic models are also left unchanged on error", "[io][malformed]") {
  mha::dynamic::multi_head_attention<float> m(3, 4, 5, 2, true);
  for (auto& x : m.w_value.weight) x = 3.0f;
  const auto before = m.w_value.weight;
  auto ts = valid_tensors();
  auto v = iota(4, -0.5f);
  v[0] = std::numeric_limits<float>::infinity();
  find(ts, "out_proj.bias")->bytes = f32_bytes(v);
  const auto file = make_file(ts);
  const auto r = mha::io::try_load_safetensors_memory(file.data(), file.size(), m);
  CHECK(r.code == load_errc::non_finite);
  CHECK(m.w_value.weight == before);
  // A dynamic model whose weights were replaced by tensors of another shape.
  m.w_key.weight = mha::dynamic::tensor<float>({2, 2});
  const auto good = make_file(valid_tensors());
  CHECK(mha::io::try_load_safetensors_memory(good.data(), good.size(), m).code == load_errc::model);
}

TEST_CASE("random corruption never crashes and never half-loads", "[io][malformed]") {
  const std::string full = make_file(valid_tensors());
  std::mt19937 rng(12345);
  const auto before = model_bytes(*patterned_model());
  int loaded = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string f = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const std::size_t pos = rng() % f.size();
      f[pos] = static_cast<char>(rng() & 0xFF);
    }
    auto m = patterned_model();
    const auto r = mha::io::try_load_safetensors_memory(f.data(), f.size(), *m);
    if (r.ok()) {
      ++loaded;  // e.g. a flipped mantissa bit: a valid file
    } else {
      INFO(r.message);
      CHECK(!r.message.empty());
      CHECK(model_bytes(*m) == before);
    }
  }
  CHECK(loaded < 3000);
}

TEST_CASE("a self-attention checkpoint into a module with its own kdim / vdim: a shape error, nothing written",
          "[io][malformed][cross]") {
  // (loading the matching checkpoints: test_safetensors_pytorch.cpp, [cross])
  using cross_t = mha::multi_head_attention<float, 3, 4, 5, 2, true, mha::attention_mask::none, 5, 3>;
  expect_error<cross_t>("cross_kdim", make_file(valid_tensors()), load_errc::shape,
                        {"tensor 'W_key.weight'", "shape [4][3] in the file, expected [4][5]",
                         "(d_in 3, kdim 5, vdim 3, d_out 4)",
                         "its 3 columns are the checkpoint's key input width (kdim), the model's kdim is 5"});
  auto d = std::make_unique<mha::dynamic::multi_head_attention<float, mha::attention_mask::none>>(
      3, 4, 5, 2, true, mha::dynamic::kv_dims{3, 7});
  const auto bytes = make_file(valid_tensors());
  const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *d);
  INFO(r.message);
  CHECK(r.code == load_errc::shape);
  CHECK(r.tensor == "W_value.weight");
  CHECK(r.message.find("the model's vdim is 7") != std::string::npos);
  CHECK(std::all_of(d->w_value.weight.data(), d->w_value.weight.data() + 28, [](float v) { return v == 0.0f; }));
}
