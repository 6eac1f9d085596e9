// test/io/test_helpers.hpp -- shared helpers of the safetensors loader tests.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <mha/io/safetensors.hpp>

#include "../program_path.hpp"

namespace mha_io_test {

inline std::filesystem::path data_dir() { return mha_test::program_relative(MHA_SAFETENSORS_DIR); }
inline std::filesystem::path data_file(const std::string& name) { return data_dir() / name; }

/// Tensor `name` of a safetensors file converted to T, read with the
/// library's own validated reader (used for the PyTorch inputs/outputs).
template <class T>
std::vector<T> read_tensor(const std::filesystem::path& path, const std::string& name) {
  mha::io::detail::file_source src;
  auto err = src.open(path);
  INFO(path.string() << ": " << err.what);
  REQUIRE(!err);
  mha::io::detail::header_info h;
  err = mha::io::detail::parse_header(src, h);
  INFO(err.what);
  REQUIRE(!err);
  const auto* e = h.find(name);
  INFO("tensor " << name);
  REQUIRE(e != nullptr);
  std::vector<T> out;
  err = mha::io::detail::read_converted<T>(src, h, *e, true, out);
  REQUIRE(!err);
  return out;
}

inline std::vector<unsigned char> file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// The bytes of a file as a string.
inline std::string file_bytes_string(const std::filesystem::path& p) {
  const auto b = file_bytes(p);
  return {b.begin(), b.end()};
}

/// The safetensors file `bytes` with its `__metadata__` replaced by `metadata`
/// (removed when `metadata` is null); tensors and data unchanged.
inline std::string with_metadata(const std::vector<unsigned char>& bytes,
                                 const nlohmann::json& metadata) {
  REQUIRE(bytes.size() >= 8);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{bytes[static_cast<std::size_t>(i)]} << (8 * i);
  REQUIRE(n <= bytes.size() - 8);
  auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  header.erase("__metadata__");
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  out += text;
  out.append(bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), bytes.end());
  return out;
}

/// One tensor of a file written by the tests: name, shape, values (stored as F32 or F64).
struct f_tensor {
  std::string name;
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

/// Bytes of a safetensors file holding `tensors` as `dtype` ("F32" or "F64")
/// back to back, with `metadata` (none when null).
inline std::string make_safetensors(const std::vector<f_tensor>& tensors, const std::string& dtype,
                                    const nlohmann::json& metadata = nullptr) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& t : tensors) {
    const std::size_t begin = data.size();
    for (const double v : t.values) {
      const std::uint64_t bits = dtype == "F64" ? std::bit_cast<std::uint64_t>(v)
                                                : std::bit_cast<std::uint32_t>(static_cast<float>(v));
      for (std::size_t b = 0; b < (dtype == "F64" ? 8u : 4u); ++b)
        data.push_back(static_cast<char>((bits >> (8 * b)) & 0xFF));
    }
    header[t.name] = {{"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return out + text + data;
}

/// Bytes of a model object (to check that a failed load left it unchanged).
template <class Model>
std::vector<unsigned char> model_bytes(const Model& m) {
  const auto* p = reinterpret_cast<const unsigned char*>(&m);
  return {p, p + sizeof(Model)};
}

/// |actual - expected| <= 1e-5 * |expected| (+1e-6 absolute near zero).
template <class A, class E>
void check_close(const A& actual, const E& expected, double rel = 1e-5, double abs = 1e-6) {
  REQUIRE(static_cast<std::size_t>(std::distance(actual.begin(), actual.end())) == expected.size());
  std::size_t i = 0;
  for (auto it = actual.begin(); it != actual.end(); ++it, ++i) {
    INFO("element " << i);
    CHECK(static_cast<double>(*it) ==
          Approx(static_cast<double>(expected[i])).epsilon(rel).margin(abs));
  }
}

}  // namespace mha_io_test
