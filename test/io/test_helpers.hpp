// test/io/test_helpers.hpp -- shared helpers of the safetensors loader tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>

namespace mha_io_test {

inline std::filesystem::path data_dir() { return MHA_SAFETENSORS_DIR; }
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
