// test_golden.cpp -- every fixed-size and mha::dynamic module against the
// PyTorch golden fixtures in test/data/golden/ (made by tools/make_fixtures.py
// from the book's modules in tools/reference_modules.py; see the README there).
//
// Criterion (issue 2, section 5: float 1e-5 relative, double 1e-12):
//   |actual - expected| <= rtol * max(1, |expected|)
// with rtol = 1e-5 for float32 cases and 1e-12 for float64 cases, for every
// output element. Fixed and dynamic results must also be bit-identical (they
// share the kernels in mha/detail/kernels/kernels.hpp), and every forward overload of
// the fixed module must give the same bits.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/mha.hpp>

#include "state_dict.hpp"
#include "program_path.hpp"
#include "test_support.hpp"

namespace {

using json = nlohmann::json;

using mha_test::collect;
using mha_test::param_map;
using mha_test::param_ref;

/// Reads a {"shape", "data"} entry as doubles, checking the shape and that
/// float32 data are exactly representable as float.
template <class T>
std::vector<double> read_array(const json& j, const std::vector<std::size_t>& shape) {
  REQUIRE(j.at("shape").get<std::vector<std::size_t>>() == shape);
  auto data = j.at("data").get<std::vector<double>>();
  std::size_t n = 1;
  for (const auto e : shape) n *= e;
  REQUIRE(data.size() == n);
  std::size_t not_representable = 0;
  for (const double v : data)
    if (static_cast<double>(static_cast<T>(v)) != v) ++not_representable;
  REQUIRE(not_representable == 0);
  return data;
}

/// Copies every fixture parameter into the module; the fixture's names must
/// be exactly the module's parameter names.
template <class T>
void load_params(const json& params, param_map<T> targets) {
  std::set<std::string> fixture_names;
  for (const auto& [name, value] : params.items()) fixture_names.insert(name);
  std::set<std::string> module_names;
  for (const auto& [name, ref] : targets) module_names.insert(name);
  REQUIRE(fixture_names == module_names);
  for (auto& [name, ref] : targets) {
    INFO("parameter " << name);
    const auto data = read_array<T>(params.at(name), ref.shape);
    for (std::size_t i = 0; i < data.size(); ++i) ref.data[i] = static_cast<T>(data[i]);
  }
}

using mha_test::make_dynamic;
using mha_test::module_name;

template <class T>
void require_close(const T* actual, const std::vector<double>& expected, const char* what) {
  const auto c = mha_test::compare(actual, expected.data(), expected.size(),
                                   mha_test::reference_rtol<T>);
  INFO(what << ": " << c.describe());
  if (std::getenv("MHA_TEST_VERBOSE") != nullptr) WARN(what << ": " << c.describe());
  REQUIRE(c.violations == 0);
}

/// Runs one fixture case on module type M with batch B and N tokens.
template <class M, std::size_t B, std::size_t N>
void run_case(const json& fx) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::output_width;

  // The table entry must describe the fixture exactly.
  REQUIRE(fx.at("module").get<std::string>() == module_name<M>());
  REQUIRE(fx.at("dtype").get<std::string>() ==
          (std::is_same_v<T, float> ? "float32" : "float64"));
  REQUIRE(fx.at("d_in").get<std::size_t>() == M::d_in);
  REQUIRE(fx.at("d_out").get<std::size_t>() == M::d_out);
  REQUIRE(fx.at("context_length").get<std::size_t>() == M::context_length);
  REQUIRE(fx.at("num_heads").get<std::size_t>() == M::num_heads);
  REQUIRE(fx.at("qkv_bias").get<bool>() == M::qkv_bias);
  REQUIRE(fx.at("batch").get<std::size_t>() == B);
  REQUIRE(fx.at("tokens").get<std::size_t>() == N);

  // Fixed-size module and input, heap-allocated and value-initialised.
  auto model = std::make_unique<M>();
  param_map<T> fixed_params;
  collect(fixed_params, *model);
  load_params(fx.at("params"), fixed_params);

  auto x = std::make_unique<mha::tensor<T, B, N, M::d_in>>();
  const auto input = read_array<T>(fx.at("input"), {B, N, M::d_in});
  for (std::size_t i = 0; i < input.size(); ++i) x->data()[i] = static_cast<T>(input[i]);
  const auto expected = read_array<T>(fx.at("output"), {B, N, W});

  // Fixed: forward(x), operator(), forward(x, out), forward(x, out, ws).
  const auto y = model->forward(*x);
  static_assert(std::is_same_v<std::remove_const_t<decltype(y)>, mha::tensor<T, B, N, W>>);
  require_close(y.data(), expected, "fixed forward(x)");

  const auto y_call = (*model)(*x);
  REQUIRE(mha_test::same_bits(y, y_call));

  auto y_out = std::make_unique<mha::tensor<T, B, N, W>>();
  model->forward(*x, *y_out);
  REQUIRE(mha_test::same_bits(y, *y_out));

  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  auto y_ws = std::make_unique<mha::tensor<T, B, N, W>>();
  model->forward(*x, *y_ws, *ws);
  REQUIRE(mha_test::same_bits(y, *y_ws));
  model->forward(*x, *y_ws, *ws);  // the workspace is reusable
  REQUIRE(mha_test::same_bits(y, *y_ws));

  // Rank-2 overloads, [N][DIn] -> [N][W], for batch-1 cases.
  if constexpr (B == 1) {
    mha::tensor<T, N, M::d_in> x2{};
    std::copy(x->begin(), x->end(), x2.begin());
    const auto y2 = model->forward(x2);
    static_assert(std::is_same_v<std::remove_const_t<decltype(y2)>, mha::tensor<T, N, W>>);
    require_close(y2.data(), expected, "fixed rank-2 forward(x)");
    REQUIRE(mha_test::same_bits(y.data(), y2.data(), y2.size));

    auto ws2 = std::make_unique<typename M::template workspace<1, N>>();
    mha::tensor<T, N, W> y2_ws{};
    model->forward(x2, y2_ws, *ws2);
    REQUIRE(mha_test::same_bits(y2, y2_ws));
  }

  // mha::dynamic, parameters loaded from the fixture independently.
  auto dyn = make_dynamic<M>();
  param_map<T> dynamic_params;
  collect(dynamic_params, dyn);
  load_params(fx.at("params"), dynamic_params);

  const auto dx = mha_test::to_dynamic(*x);
  const auto dy = dyn.forward(dx);
  REQUIRE(dy.shape() == std::vector<std::size_t>{B, N, W});
  require_close(dy.data(), expected, "dynamic forward(x)");
  REQUIRE(mha_test::same_bits(y, dy));  // fixed == dynamic, bit for bit

  mha::dynamic::tensor<T> dy_ws({B, N, W});
  mha::dynamic::workspace<T> dws;
  dyn.forward(dx, dy_ws, dws);
  REQUIRE(mha_test::same_bits(y, dy_ws));

  if constexpr (B == 1) {
    mha::dynamic::tensor<T> dx2({N, M::d_in});
    std::copy(dx.begin(), dx.end(), dx2.begin());
    const auto dy2 = dyn.forward(dx2);
    REQUIRE(dy2.shape() == std::vector<std::size_t>{N, W});
    REQUIRE(mha_test::same_bits(y.data(), dy2.data(), y.size));
  }
}

using case_fn = void (*)(const json&);
struct golden_case {
  std::string_view name;
  case_fn run;
};

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool Bias>
using ca = mha::causal_attention<T, DIn, DOut, Ctx, Bias>;
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool Bias>
using wrap = mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, Bias>;
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool Bias>
using mhat = mha::multi_head_attention<T, DIn, DOut, Ctx, H, Bias>;

// The 12 cases of test/data/golden/README.md: name -> module type, B, N.
// run_case checks each entry against the fixture's own metadata.
constexpr golden_case golden_cases[] = {
    {"ca_f32_book_shape", &run_case<ca<float, 3, 2, 6, false>, 2, 6>},
    {"ca_f64_din5_dout7_bias", &run_case<ca<double, 5, 7, 8, true>, 3, 5>},
    {"ca_f32_n1", &run_case<ca<float, 4, 4, 4, false>, 2, 1>},
    {"wrap_f32_h3_bias", &run_case<wrap<float, 6, 3, 8, 3, true>, 2, 7>},
    {"wrap_f64_din8_dout2", &run_case<wrap<double, 8, 2, 5, 2, false>, 1, 5>},
    {"wrap_f32_n1_ex32", &run_case<wrap<float, 3, 1, 6, 2, false>, 2, 1>},
    {"mha_f32_h3_bias_full", &run_case<mhat<float, 5, 6, 9, 3, true>, 2, 9>},
    {"mha_f64_din12_dout8_h4", &run_case<mhat<double, 12, 8, 10, 4, false>, 3, 6>},
    {"mha_f32_n1_h2", &run_case<mhat<float, 4, 4, 3, 2, false>, 1, 1>},
    {"mha_f64_h5_bias", &run_case<mhat<double, 10, 15, 7, 5, true>, 2, 4>},
    {"mha_f32_din48_dout64_h4", &run_case<mhat<float, 48, 64, 40, 4, true>, 2, 33>},
    {"mha_f32_din64_dout32_h8", &run_case<mhat<float, 64, 32, 32, 8, false>, 1, 32>},
};

const std::filesystem::path golden_dir = std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "golden";

json load_fixture(std::string_view name) {
  const auto path = golden_dir / (std::string(name) + ".json");
  INFO("fixture " << path.string());
  REQUIRE(std::filesystem::is_regular_file(path));
  std::ifstream in(path);
  REQUIRE(in.good());
  json fx = json::parse(in);  // throws (and fails the test) on malformed JSON
  REQUIRE(fx.at("name").get<std::string>() == name);
  REQUIRE_FALSE(fx.at("generated_by").get<std::string>().empty());
  return fx;
}

}  // namespace

TEST_CASE("golden fixture files and the case table agree", "[golden]") {
  REQUIRE(std::filesystem::is_directory(golden_dir));
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir))
    if (entry.path().extension() == ".json") files.insert(entry.path().stem().string());
  std::set<std::string> table;
  for (const auto& c : golden_cases) table.insert(std::string(c.name));
  REQUIRE(table.size() == std::size(golden_cases));  // no duplicate entries
  for (const auto& t : table) {
    INFO("case in the table without a fixture file: " << t);
    CHECK(files.count(t) == 1);
  }
  for (const auto& f : files) {
    INFO("fixture file without a table entry: " << f << ".json");
    CHECK(table.count(f) == 1);
  }
  REQUIRE(files == table);
}

TEST_CASE("fixed and dynamic modules match the PyTorch golden fixtures", "[golden]") {
  for (const auto& c : golden_cases) {
    DYNAMIC_SECTION(c.name) {
      const json fx = load_fixture(c.name);
      c.run(fx);
    }
  }
}
