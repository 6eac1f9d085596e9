// Named parameters (mha/parameters.hpp): mha::for_each_parameter,
// mha::parameter_names and mha::load_parameters against PyTorch's
// named_parameters() of the book's classes and torch.nn.MultiheadAttention
// (fixture test/data/parameters/parameters.json, made by
// tools/make_parameter_fixtures.py): names, order and shapes of every
// fixed-size module and its mha::dynamic twin, const and non-const; the
// models filled from PyTorch's flattened parameters give PyTorch's outputs; a
// wrong size writes nothing (fixed: status::bad_size, dynamic:
// std::invalid_argument naming both sizes); the names at compile time; the
// mha::dynamic modules' parameter_count() is PyTorch's numel() sum;
// mha::copy_parameters between element types and between fixed-size and
// mha::dynamic modules gives PyTorch's outputs, and a mismatch writes nothing.
// (A module loaded by its description alone: test/io/test_safetensors_pytorch.cpp.)
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/mha.hpp>

#include "program_path.hpp"
#include "test_support.hpp"

namespace {

using json = nlohmann::json;

// ------------------------------------------------------------ compile time

using ca_t = mha::causal_attention<float, 3, 2, 6>;
static_assert(mha::parameter_names<ca_t>.size() == 3);
static_assert(mha::parameter_names<ca_t>[0] == "W_query.weight");
static_assert(mha::parameter_names<ca_t>[2] == "W_value.weight");
static_assert(mha::parameter_names<const ca_t> == mha::parameter_names<ca_t>);
using wrap_t = mha::multi_head_attention_wrapper<double, 3, 1, 4, 11, true>;
static_assert(mha::parameter_names<wrap_t>.size() == 66);
static_assert(mha::parameter_names<wrap_t>[1] == "heads.0.W_query.bias");
static_assert(mha::parameter_names<wrap_t>[65] == "heads.10.W_value.bias");
using fused_t = mha::fused_multi_head_attention<float, 4, 4, 5, 2>;  // no qkv bias
static_assert(mha::parameter_names<fused_t> ==
              std::array<std::string_view, 3>{"in_proj_weight", "out_proj.weight", "out_proj.bias"});
static_assert(mha::parameter_names<mha::linear<float, 3, 2>> ==
              std::array<std::string_view, 2>{"weight", "bias"});
static_assert(mha::parameter_names<mha::linear<float, 3, 2, false>>.size() == 1);
// parameter_count is the walk's sum; the book's formula (Exercise 3.3 at GPT-2 size).
static_assert(mha::multi_head_attention<float, 768, 768, 1024, 12>::parameter_count == 2360064);
static_assert(fused_t::parameter_count == 3 * 16 + 16 + 4);
static_assert(wrap_t::parameter_count == 11 * 3 * (3 + 1));

/// The walk and load_parameters in a constant expression: the value of
/// out_proj.bias[1] after loading 0, 1, 2, ... (it is the last-but-... element).
constexpr float loaded_in_constexpr() {
  mha::multi_head_attention<float, 3, 4, 5, 2, true> m{};
  float values[decltype(m)::parameter_count] = {};
  for (std::size_t i = 0; i < decltype(m)::parameter_count; ++i) values[i] = static_cast<float>(i);
  if (mha::load_parameters(m, values) != mha::status::ok) return -1;
  return m.out_proj.bias(1);
}
static_assert(loaded_in_constexpr() == 3 * (12 + 4) + 16 + 1);

/// copy_parameters between fixed-size modules in a constant expression: float
/// into double, every element converted (checked against the loaded values).
constexpr bool copied_in_constexpr() {
  mha::multi_head_attention<float, 3, 4, 5, 2, true> f{};
  float values[decltype(f)::parameter_count] = {};
  for (std::size_t i = 0; i < decltype(f)::parameter_count; ++i)
    values[i] = static_cast<float>(i) / 8.0f;
  if (mha::load_parameters(f, values) != mha::status::ok) return false;
  mha::multi_head_attention<double, 3, 4, 5, 2, true> d{};
  mha::copy_parameters(f, d);
  std::size_t at = 0;
  bool same = true;
  mha::for_each_parameter(d, [&](std::string_view, const auto& t) {
    for (const double e : t) same = same && e == static_cast<double>(values[at++]);
  });
  return same && at == decltype(f)::parameter_count;
}
static_assert(copied_in_constexpr());
static_assert(noexcept(mha::copy_parameters(std::declval<const ca_t&>(),
                                            std::declval<mha::causal_attention<double, 3, 2, 6>&>())));

// ------------------------------------------------------------ the fixture

const json& fixture() {
  static const json j = [] {
    std::ifstream in(mha_test::program_relative(MHA_TEST_DATA_DIR) + "/parameters/parameters.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return j;
}
const json& fixture_case(std::string_view name) {
  for (const auto& c : fixture().at("cases"))
    if (c.at("name").get<std::string>() == name) return c;
  FAIL("no fixture case " << name);
  throw std::logic_error("unreachable");
}

/// (name, shape) of every parameter for_each_parameter visits.
struct visited {
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> shapes;
};
template <class T, std::size_t... E>
std::vector<std::size_t> shape_of(const mha::tensor<T, E...>&) {
  return {E...};
}
template <class T>
std::vector<std::size_t> shape_of(const mha::dynamic::tensor<T>& t) {
  return t.shape();
}
template <class M>
visited walk(M& m) {
  visited v;
  mha::for_each_parameter(m, [&](std::string_view name, auto& t) {
    // the member itself: const exactly when the model is
    static_assert(std::is_const_v<std::remove_reference_t<decltype(t)>> == std::is_const_v<M>);
    v.names.emplace_back(name);
    v.shapes.push_back(shape_of(t));
  });
  return v;
}

template <class M>
void check_names_and_shapes(M& m, const json& c) {
  const visited v = walk(m);
  CHECK(v.names == c.at("names").get<std::vector<std::string>>());
  CHECK(v.shapes == c.at("shapes").get<std::vector<std::vector<std::size_t>>>());
  const visited cv = walk(std::as_const(m));
  CHECK(cv.names == v.names);
  CHECK(cv.shapes == v.shapes);
}

template <class T>
std::vector<T> values_of(const json& j) {
  std::vector<T> v;
  for (const double d : j.get<std::vector<double>>()) v.push_back(static_cast<T>(d));
  return v;
}

/// actual (as many values as expected) within rtol of PyTorch's `expected`.
template <class T>
void require_close(const T* actual, const json& expected,
                   double rtol = mha_test::reference_rtol<T>) {
  const auto e = expected.get<std::vector<double>>();
  const auto c = mha_test::compare(actual, e.data(), e.size(), rtol);
  INFO(c.describe());
  REQUIRE(c.violations == 0);
}

/// The mha::dynamic twin of M (none for the fused module).
template <class M>
auto dynamic_twin() {
  using T = typename M::value_type;
  if constexpr (std::is_same_v<M, mha::causal_attention<T, M::d_in, M::d_out, M::context_length,
                                                        M::qkv_bias>>)
    return mha::dynamic::causal_attention<T>(M::d_in, M::d_out, M::context_length, M::qkv_bias);
  else if constexpr (requires { typename M::head_type; })
    return mha::dynamic::multi_head_attention_wrapper<T>(M::d_in, M::d_out, M::context_length,
                                                         M::num_heads, M::qkv_bias);
  else
    return mha::dynamic::multi_head_attention<T>(M::d_in, M::d_out, M::context_length,
                                                 M::num_heads, M::qkv_bias);
}

template <class M, std::size_t B, std::size_t N>
void run_case(std::string_view name) {
  using T = typename M::value_type;
  const json& c = fixture_case(name);
  INFO("case " << name);
  REQUIRE(c.at("d_in").get<std::size_t>() == M::d_in);
  REQUIRE(c.at("num_heads").get<std::size_t>() == M::num_heads);
  REQUIRE(c.at("qkv_bias").get<bool>() == M::qkv_bias);
  REQUIRE(c.at("batch").get<std::size_t>() == B);
  REQUIRE(c.at("tokens").get<std::size_t>() == N);
  const auto flat = values_of<T>(c.at("flat"));
  const auto input = values_of<T>(c.at("input"));

  // Fixed-size: names, order, shapes; the compile-time list is the same.
  auto m = std::make_unique<M>();
  check_names_and_shapes(*m, c);
  const auto& names = mha::parameter_names<M>;
  CHECK(std::vector<std::string>(names.begin(), names.end()) ==
        c.at("names").get<std::vector<std::string>>());
  REQUIRE(flat.size() == M::parameter_count);

  // A wrong size writes nothing (the model holds a pattern first).
  const std::vector<T> pattern(flat.size(), T(0.25));
  REQUIRE(mha::load_parameters(*m, pattern) == mha::status::ok);
  const auto before = std::make_unique<M>(*m);
  const std::span<const T> all(flat);
  CHECK(mha::load_parameters(*m, all.first(flat.size() - 1)) == mha::status::bad_size);
  std::vector<T> longer(flat);
  longer.push_back(T(1));
  CHECK(mha::load_parameters(*m, longer) == mha::status::bad_size);
  CHECK(mha::load_parameters(*m, {}) == mha::status::bad_size);
  CHECK(std::memcmp(m.get(), before.get(), sizeof(M)) == 0);

  // Filled from PyTorch's flattened parameters: PyTorch's output.
  REQUIRE(mha::load_parameters(*m, flat) == mha::status::ok);
  mha::tensor<T, B, N, M::d_in> x{};
  std::copy(input.begin(), input.end(), x.begin());
  const auto y = m->forward(x);
  REQUIRE(static_cast<std::size_t>(y.end() - y.begin()) == c.at("output").size());
  require_close(y.data(), c.at("output"));

  // mha::dynamic: the same walk, the same load.
  if constexpr (!requires { m->w_qkv; }) {
    auto d = dynamic_twin<M>();
    check_names_and_shapes(d, c);
    mha::load_parameters(d, pattern);
    const auto d_before = d.forward(mha_test::to_dynamic(x));
    try {
      mha::load_parameters(d, all.first(flat.size() - 1));
      FAIL("no exception");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("mha::load_parameters") != std::string::npos);
      CHECK(what.find(std::to_string(flat.size() - 1)) != std::string::npos);
      CHECK(what.find(std::to_string(flat.size())) != std::string::npos);
    }
    CHECK(d.forward(mha_test::to_dynamic(x)) == d_before);  // nothing written
    // parameter_count() by the walk: PyTorch's numel() sum (the flat vector's length)
    CHECK(d.parameter_count() == flat.size());
    mha::load_parameters(d, flat);
    const auto dy = d.forward(mha_test::to_dynamic(x));
    require_close(dy.data(), c.at("output"));
    CHECK(mha_test::same_bits(y, dy));
  }
}

/// Appends the elements as doubles (out of line: one copy for every model type).
[[gnu::noinline]] void append(std::vector<double>& v, std::span<const float> e) {
  v.insert(v.end(), e.begin(), e.end());
}
[[gnu::noinline]] void append(std::vector<double>& v, std::span<const double> e) {
  v.insert(v.end(), e.begin(), e.end());
}
/// Every parameter element of m, in walk order, as doubles (exact for float).
template <class M>
std::vector<double> flattened(const M& m) {
  std::vector<double> v;
  mha::for_each_parameter(m, [&](std::string_view, const auto& t) {
    append(v, std::span(t.begin(), t.end()));
  });
  return v;
}

/// The forward of the fixed-size module m on the fixture's input, within
/// float's tolerance of PyTorch's output (float32 values, so also for a double
/// model); returns the output.
template <class M, std::size_t B, std::size_t N>
auto forward_matches(const M& m, const json& c) {
  using T = typename M::value_type;
  const auto input = values_of<T>(c.at("input"));
  mha::tensor<T, B, N, M::d_in> x{};
  std::copy(input.begin(), input.end(), x.begin());
  auto y = m.forward(x);
  REQUIRE(static_cast<std::size_t>(y.end() - y.begin()) == c.at("output").size());
  require_close(y.data(), c.at("output"), mha_test::reference_rtol<float>);
  return y;
}
/// copy_parameters along fixed float -> fixed double -> fixed float, and
/// fixed float -> dynamic double -> dynamic float -> fixed float, and dynamic
/// double -> fixed double (MF, MD: the fixture case's module with float and
/// double; no mha::dynamic steps for the fused module, which has no twin): the
/// same parameters at each step (element by element through the walk), and
/// PyTorch's output from the fixed float model copied back from double, and,
/// when FixedDoubleForward, from the fixed double ones (made from the fixed
/// float and from the dynamic double model). The forwards of double modules
/// are not run for every case: each is one more instantiation of the kernels
/// for this file to compile (the dynamic double forward alone was a third of
/// its growth; test_golden runs it against PyTorch).
template <class MF, class MD, std::size_t B, std::size_t N, bool FixedDoubleForward>
void copy_case(std::string_view name) {
  const json& c = fixture_case(name);
  INFO("case " << name);
  const auto flat = values_of<float>(c.at("flat"));
  auto f = std::make_unique<MF>();
  REQUIRE(mha::load_parameters(*f, flat) == mha::status::ok);
  const std::vector<double> loaded = flattened(*f);

  auto fd = std::make_unique<MD>();
  mha::copy_parameters(*f, *fd);  // fixed -> fixed, float -> double
  CHECK(flattened(*fd) == loaded);
  auto back = std::make_unique<MF>();
  mha::copy_parameters(*fd, *back);  // double -> float: the same floats
  CHECK(flattened(*back) == loaded);
  forward_matches<MF, B, N>(*back, c);

  if constexpr (!requires { f->w_qkv; }) {
    auto same = dynamic_twin<MF>();
    mha::copy_parameters(*f, same);  // fixed -> dynamic, float -> float: identical parameters
    CHECK(flattened(same) == loaded);
    auto dd = dynamic_twin<MD>();
    mha::copy_parameters(*f, dd);  // fixed float -> dynamic double
    CHECK(flattened(dd) == loaded);
    auto df = dynamic_twin<MF>();
    mha::copy_parameters(dd, df);  // dynamic -> dynamic, double -> float
    CHECK(flattened(df) == loaded);
    auto f2 = std::make_unique<MF>();
    mha::copy_parameters(df, *f2);  // dynamic -> fixed
    CHECK(flattened(*f2) == loaded);
    auto fd2 = std::make_unique<MD>();
    mha::copy_parameters(dd, *fd2);  // dynamic double -> fixed double
    CHECK(flattened(*fd2) == loaded);
    if constexpr (FixedDoubleForward)
      CHECK(mha_test::same_bits(forward_matches<MD, B, N>(*fd, c), forward_matches<MD, B, N>(*fd2, c)));
  }
}

/// copy_parameters(from, to) throws std::invalid_argument with exactly
/// `message` and leaves `to` as it was.
template <class From, class To>
void copy_rejected(const From& from, To& to, const std::string& message) {
  mha::for_each_parameter(to, [](std::string_view, auto& t) {
    for (auto& e : t) e = 0.25f;
  });
  const std::vector<double> before = flattened(to);
  try {
    mha::copy_parameters(from, to);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == message);
  }
  CHECK(flattened(to) == before);
}

}  // namespace

TEST_CASE("named parameters match PyTorch's named_parameters() and load from its flat vector",
          "[parameters]") {
  run_case<mha::causal_attention<float, 3, 2, 6>, 2, 4>("ca");
  run_case<mha::causal_attention<float, 5, 4, 6, true>, 1, 5>("ca_bias");
  run_case<mha::multi_head_attention_wrapper<float, 4, 2, 5, 3, true>, 2, 3>("wrap_bias");
  run_case<mha::multi_head_attention<float, 6, 4, 7, 2>, 2, 5>("mha");
  run_case<mha::multi_head_attention<float, 3, 6, 5, 3, true>, 1, 4>("mha_bias");
  run_case<mha::fused_multi_head_attention<float, 8, 8, 6, 2, true>, 2, 6>("fused_bias");
}

TEST_CASE("the dynamic walk follows run-time facts: bias, head count", "[parameters]") {
  mha::dynamic::multi_head_attention_wrapper<double> w(3, 2, 4, 2, false);
  std::vector<std::string> names;
  mha::for_each_parameter(w, [&](std::string_view n, auto&) { names.emplace_back(n); });
  CHECK(names == std::vector<std::string>{"heads.0.W_query.weight", "heads.0.W_key.weight",
                                          "heads.0.W_value.weight", "heads.1.W_query.weight",
                                          "heads.1.W_key.weight", "heads.1.W_value.weight"});
  mha::dynamic::linear<float> l(3, 2, true);
  std::size_t n = 0;
  mha::for_each_parameter(l, [&](std::string_view name, auto& t) {
    CHECK(name == (n == 0 ? "weight" : "bias"));
    n += t.size();
  });
  CHECK(n == l.parameter_count());
}

TEST_CASE("mha::dynamic parameter_count() is PyTorch's numel() sum", "[parameters]") {
  // the attention modules: run_case above; the linear layers of a fixture case
  const json& c = fixture_case("ca_bias");  // W_query.weight [4][5], W_query.bias [4]
  const auto shapes = c.at("shapes").get<std::vector<std::vector<std::size_t>>>();
  const std::size_t out = shapes.at(0).at(0), in = shapes.at(0).at(1);
  CHECK(mha::dynamic::linear<float>(in, out, true).parameter_count() ==
        shapes[0][0] * shapes[0][1] + shapes[1][0]);
  CHECK(mha::dynamic::linear<double>(in, out, false).parameter_count() == shapes[0][0] * shapes[0][1]);
  // the sum of every visited tensor's present size
  mha::dynamic::multi_head_attention_wrapper<float> w(3, 2, 4, 2, true);
  const std::size_t walked = flattened(w).size();
  CHECK(w.parameter_count() == walked);
  w.heads.pop_back();
  CHECK(w.parameter_count() == walked / 2);
}

TEST_CASE("copy_parameters converts element types between fixed-size and mha::dynamic modules",
          "[parameters]") {
  // bias and heads in the walk: the wrapper; no bias: mha (the other fixture
  // cases' modules would add instantiations of the kernels for double)
  copy_case<mha::multi_head_attention_wrapper<float, 4, 2, 5, 3, true>,
            mha::multi_head_attention_wrapper<double, 4, 2, 5, 3, true>, 2, 3, false>("wrap_bias");
  copy_case<mha::multi_head_attention<float, 6, 4, 7, 2>, mha::multi_head_attention<double, 6, 4, 7, 2>,
            2, 5, true>("mha");
  copy_case<mha::fused_multi_head_attention<float, 8, 8, 6, 2, true>,
            mha::fused_multi_head_attention<double, 8, 8, 6, 2, true>, 2, 6, false>("fused_bias");
}

TEST_CASE("copy_parameters rounds double to the nearest float", "[parameters]") {
  mha::dynamic::linear<double> d(3, 2, true);
  for (std::size_t i = 0; i < d.weight.size(); ++i)
    d.weight.data()[i] = 1.0 / static_cast<double>(i + 3);  // not representable as float
  for (std::size_t i = 0; i < d.bias.size(); ++i) d.bias.data()[i] = -1.0 / 3.0;
  mha::linear<float, 3, 2> f{};
  mha::copy_parameters(d, f);
  std::vector<double> rounded;
  for (const double v : flattened(d)) rounded.push_back(static_cast<double>(static_cast<float>(v)));
  CHECK(flattened(f) == rounded);
  CHECK(flattened(f) != flattened(d));
}

TEST_CASE("copy_parameters between other modules throws, naming the difference, and writes nothing",
          "[parameters]") {
  using dmha = mha::dynamic::multi_head_attention<float>;
  const dmha from(6, 4, 7, 2);
  dmha heads4(6, 4, 7, 4);  // the same parameters; another num_heads would compute something else
  copy_rejected(from, heads4,
                "mha::copy_parameters: num_heads is 2 in the source, 4 in the destination");
  dmha context(6, 4, 8, 2);
  copy_rejected(from, context,
                "mha::copy_parameters: context_length is 7 in the source, 8 in the destination");
  dmha bias(6, 4, 7, 2, true);
  copy_rejected(from, bias,
                "mha::copy_parameters: parameter 1 is W_key.weight [4][6] in the source, "
                "W_query.bias [4] in the destination");
  const auto fixed = std::make_unique<mha::multi_head_attention<double, 6, 4, 7, 2, true>>();
  dmha no_bias(6, 4, 7, 2);
  copy_rejected(*fixed, no_bias,
                "mha::copy_parameters: parameter 1 is W_query.bias [4] in the source, "
                "W_key.weight [4][6] in the destination");
  mha::dynamic::multi_head_attention_wrapper<float> wrapper(6, 2, 7, 2);
  copy_rejected(from, wrapper,
                "mha::copy_parameters: parameter 0 is W_query.weight [4][6] in the source, "
                "heads.0.W_query.weight [2][6] in the destination");
  auto to_fixed = std::make_unique<mha::causal_attention<float, 6, 4, 7>>();
  copy_rejected(from, *to_fixed,
                "mha::copy_parameters: parameter 3 is out_proj.weight [4][4] in the source, none "
                "in the destination");
}
