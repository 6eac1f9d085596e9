// test_dynamic.cpp -- mha::dynamic's run-time shape errors (issue 2, section 1):
// std::invalid_argument whose message names the sizes involved, for d_out not
// divisible by num_heads, num_heads 0, wrong input rank, wrong d_in, 0 tokens,
// more tokens than context_length; tensor index errors; a linear whose weight
// was replaced by one of the wrong shape. Plus the basics of dynamic::tensor.
#include <catch2/catch.hpp>

#include <cmath>

#include <cstddef>
#include <exception>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/mha.hpp>

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using mha::dynamic::tensor;

namespace {

// Extents whose product overflows std::size_t, for 64- and 32-bit targets:
// 2^40 each with a 64-bit std::size_t, 2^24 with a 32-bit one.
constexpr int size_digits = std::numeric_limits<std::size_t>::digits;
constexpr std::size_t size_half_overflow = std::size_t(1) << (size_digits / 2 + 8);

/// Runs each module's forward(x) (and forward(x, out, ws)) on the same bad
/// input and requires std::invalid_argument containing every fragment.
template <class Module>
void require_input_error(const Module& m, const tensor<float>& x,
                         const std::vector<std::string>& fragments) {
  for (int overload = 0; overload < 3; ++overload) {
    INFO("overload " << overload);
    try {
      if (overload == 0) {
        (void)m.forward(x);
      } else if (overload == 1) {
        (void)m.forward_training(x, 1);
      } else {
        tensor<float> out({1, 1, 1});
        mha::dynamic::workspace<float> ws;
        m.forward(x, out, ws);
      }
      FAIL("no exception thrown");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      INFO("message: " << what);
      for (const auto& f : fragments) CHECK_THAT(what, Contains(f));
    }
  }
}

}  // namespace

TEST_CASE("dynamic::tensor basics and index errors", "[dynamic]") {
  tensor<float> x({2, 6, 3});
  REQUIRE(x.shape() == std::vector<std::size_t>{2, 6, 3});
  REQUIRE(x.rank() == 3);
  REQUIRE(x.size() == 36);
  for (const float v : x) REQUIRE(v == 0.0f);
  x(1, 5, 2) = 7.0f;
  REQUIRE(x.data()[35] == 7.0f);
  REQUIRE(x(1, 5, 2) == 7.0f);

  REQUIRE_THROWS_AS(x(0, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(x(0, 0), Contains("2 indices") && Contains("rank 3"));
  REQUIRE_THROWS_AS(x(0, 0, 0, 0), std::invalid_argument);
  REQUIRE_THROWS_AS(x(2, 0, 0), std::out_of_range);
  REQUIRE_THROWS_WITH(x(2, 0, 0), Contains("index 2") && Contains("dimension 0") &&
                                      Contains("extent 2"));
  REQUIRE_THROWS_WITH(x(0, 6, 0), Contains("index 6") && Contains("dimension 1") &&
                                      Contains("extent 6"));
  REQUIRE_THROWS_WITH(x(0, 0, 3), Contains("index 3") && Contains("dimension 2") &&
                                      Contains("extent 3"));
  const tensor<float>& cx = x;
  REQUIRE_THROWS_AS(cx(0, 0, 3), std::out_of_range);
  REQUIRE_THROWS_AS(tensor<double>(std::vector<std::size_t>{}), std::invalid_argument);
}

TEST_CASE("dynamic::tensor::reshape keeps the storage, and a failed reshape changes nothing",
          "[dynamic]") {
  mha::dynamic::tensor<float> x({1, 4, 8});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = float(i);
  const float* storage = x.data();
  x.reshape({1, 2, 8});  // shorter: same storage, first elements kept
  REQUIRE(x.data() == storage);
  REQUIRE(x.shape() == std::vector<std::size_t>{1, 2, 8});
  REQUIRE(x.size() == 16);
  REQUIRE(x(0, 1, 7) == 15.0f);
  x.reshape({1, 4, 8});  // back within capacity: no reallocation, new elements zero
  REQUIRE(x.data() == storage);
  REQUIRE(x(0, 3, 7) == 0.0f);
  REQUIRE_THROWS_AS(x.reshape({}), std::invalid_argument);
  REQUIRE_THROWS_AS(x.reshape({size_half_overflow, size_half_overflow}), std::invalid_argument);
  // An element count that fits std::size_t but not a std::vector: the vector
  // throws, and the tensor must keep its old shape (a shape claiming more
  // elements than the storage would let the checked accessor read past it).
  REQUIRE_THROWS(x.reshape({1, std::size_t(1) << (size_digits - 5), 8}));
  REQUIRE(x.shape() == std::vector<std::size_t>{1, 4, 8});
  REQUIRE(x.size() == 32);
  REQUIRE_THROWS_AS(x(0, 1000, 0), std::out_of_range);
}

TEST_CASE("a moved-from dynamic::tensor is empty, shape {0}, and rejected like one", "[dynamic]") {
  // Found by the dynamic-API fuzzer: the moved-from tensor had rank 0, and
  // forward(x) wrote through shape().back() of an empty vector (a crash).
  tensor<float> x({1, 2, 4});
  x(0, 1, 3) = 5.0f;
  const tensor<float> y(std::move(x));
  REQUIRE(y(0, 1, 3) == 5.0f);
  CHECK(x.shape() == std::vector<std::size_t>{0});  // NOLINT(bugprone-use-after-move)
  CHECK(x.rank() == 1);
  CHECK(x.size() == 0);
  CHECK(x == tensor<float>());
  CHECK_THROWS_AS(x(0), std::out_of_range);
  CHECK_THROWS_AS(x(), std::invalid_argument);
  mha::dynamic::multi_head_attention<float> m(4, 4, 4, 2);
  mha::dynamic::causal_attention<float> c(4, 4, 4);
  mha::dynamic::linear<float> l(4, 4);
  CHECK_THROWS_AS(m.forward(x), std::invalid_argument);
  CHECK_THROWS_AS(c.forward_training(x, 1), std::invalid_argument);
  CHECK_THROWS_AS(l.forward(x), std::invalid_argument);
  tensor<float> out({1, 2, 4});
  tensor<float> z = std::move(out);  // move assignment too
  tensor<float> good({1, 2, 4});
  CHECK_THROWS_AS(m.forward(good, out), std::invalid_argument);
  out = tensor<float>({1, 2, 4});
  m.forward(good, out);
  // reshaping a moved-from tensor gives it storage again
  x.reshape({1, 1, 4});
  CHECK(x.size() == 4);
  CHECK(m.forward(x).shape() == std::vector<std::size_t>{1, 1, 4});
}

TEST_CASE("dynamic constructors reject bad sizes", "[dynamic]") {
  using mha::dynamic::multi_head_attention;
  using mha::dynamic::multi_head_attention_wrapper;

  REQUIRE_THROWS_AS(multi_head_attention<float>(3, 5, 6, 2), std::invalid_argument);
  REQUIRE_THROWS_WITH(multi_head_attention<float>(3, 5, 6, 2),
                      Contains("d_out (5)") && Contains("num_heads (2)") && Contains("divisible"));
  REQUIRE_THROWS_WITH(multi_head_attention<double>(768, 770, 1024, 12),
                      Contains("770") && Contains("12"));

  REQUIRE_THROWS_AS(multi_head_attention<float>(3, 4, 6, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(multi_head_attention<float>(3, 4, 6, 0), Contains("num_heads"));
  REQUIRE_THROWS_AS(multi_head_attention_wrapper<float>(3, 2, 6, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(multi_head_attention_wrapper<float>(3, 2, 6, 0), Contains("num_heads"));

  REQUIRE_THROWS_AS(mha::dynamic::linear<float>(0, 3), std::invalid_argument);
  REQUIRE_THROWS_WITH(mha::dynamic::linear<float>(4, 0),
                      Contains("in_features (4)") && Contains("out_features (0)"));
  REQUIRE_THROWS_AS(mha::dynamic::causal_attention<float>(3, 2, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(mha::dynamic::causal_attention<float>(3, 2, 0), Contains("context_length"));
  REQUIRE_THROWS_AS(multi_head_attention<float>(3, 4, 0, 2), std::invalid_argument);

  // A zero size is reported by the module the user built, before its member
  // layers are constructed (not as "mha::dynamic::linear: in_features ...").
  REQUIRE_THROWS_WITH(mha::dynamic::causal_attention<float>(0, 5, 6),
                      Equals("mha::dynamic::causal_attention: d_in must be greater than 0"));
  REQUIRE_THROWS_WITH(multi_head_attention<float>(0, 4, 6, 2),
                      Equals("mha::dynamic::multi_head_attention: d_in must be greater than 0"));
  REQUIRE_THROWS_WITH(multi_head_attention<float>(3, 0, 6, 2),
                      Equals("mha::dynamic::multi_head_attention: d_out must be greater than 0"));
  REQUIRE_THROWS_WITH(multi_head_attention<float>(3, 4, 0, 2),
                      Equals("mha::dynamic::multi_head_attention: context_length must be greater than 0"));
  REQUIRE_THROWS_WITH(
      multi_head_attention_wrapper<float>(0, 2, 6, 2),
      Equals("mha::dynamic::multi_head_attention_wrapper: d_in must be greater than 0"));
  REQUIRE_THROWS_WITH(
      multi_head_attention_wrapper<float>(3, 2, 0, 2),
      Equals("mha::dynamic::multi_head_attention_wrapper: context_length must be greater than 0"));

  // Valid sizes construct zero-initialised modules.
  const multi_head_attention<float> ok(3, 4, 6, 2, true);
  REQUIRE(ok.head_dim() == 2);
  REQUIRE(ok.parameter_count() == 3 * (4 * 3 + 4) + 4 * 4 + 4);
  REQUIRE(ok.w_query.bias.shape() == std::vector<std::size_t>{4});
}

TEST_CASE("dynamic workspace and KV cache sizes that overflow std::size_t throw", "[dynamic]") {
  // (an adversarial trial: context_length * width wrapped to a few elements
  // and the forward wrote out of bounds; the weights themselves are tiny)
  // SIZE_MAX / 6 + 1 (3074457345618258603 on 64-bit targets, 715827883 on 32-bit)
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 6 + 1;
  const mha::dynamic::causal_attention<float> m(1, 3, huge);
  const tensor<float> x({1, 1});
  tensor<float> y({1, 3});
  mha::dynamic::workspace<float> ws;
  REQUIRE_THROWS_AS(m.forward(x, y, ws), std::length_error);
  REQUIRE_THROWS_WITH(m.forward(x, y, ws),
                      Contains("mha::dynamic::causal_attention: the workspace of") &&
                          Contains("overflows std::size_t"));
  REQUIRE_THROWS_AS(mha::dynamic::kv_cache<float>(m, 1), std::length_error);
  REQUIRE_THROWS_WITH(mha::dynamic::kv_cache<float>(m, 2),
                      Contains("mha::dynamic::kv_cache: the keys of") && Contains("overflows"));
  REQUIRE(ws.storage.empty());
}

TEST_CASE("dynamic forward rejects bad input shapes, naming the sizes", "[dynamic]") {
  const mha::dynamic::causal_attention<float> ca(3, 2, 6);
  const mha::dynamic::multi_head_attention_wrapper<float> wrapper(3, 2, 6, 2);
  const mha::dynamic::multi_head_attention<float> mha(3, 4, 6, 2);

  auto each = [&](const tensor<float>& x, const std::vector<std::string>& fragments) {
    require_input_error(ca, x, fragments);
    require_input_error(wrapper, x, fragments);
    require_input_error(mha, x, fragments);
  };

  SECTION("wrong rank") {
    each(tensor<float>({18}), {"rank 1", "[18]"});
    each(tensor<float>({1, 2, 6, 3}), {"rank 4", "[1][2][6][3]"});
  }
  SECTION("wrong d_in") {
    each(tensor<float>({2, 6, 4}), {"last extent 4", "d_in = 3"});
    each(tensor<float>({6, 2}), {"last extent 2", "d_in = 3"});
  }
  SECTION("zero tokens") {
    each(tensor<float>({2, 0, 3}), {"0 tokens", "context_length = 6"});
    each(tensor<float>({0, 3}), {"0 tokens", "context_length = 6"});
  }
  SECTION("more tokens than context_length") {
    each(tensor<float>({2, 7, 3}), {"7 tokens", "context_length = 6"});
    each(tensor<float>({1000, 3}), {"1000 tokens", "context_length = 6"});
  }
  SECTION("zero batch") { each(tensor<float>({0, 6, 3}), {"batch size 0"}); }

  SECTION("wrong output shape for forward(x, out, ws)") {
    const tensor<float> x({2, 6, 3});
    tensor<float> out({2, 6, 3});
    mha::dynamic::workspace<float> ws;
    REQUIRE_THROWS_WITH(mha.forward(x, out, ws),
                        Contains("output is [2][6][3]") && Contains("expected [2][6][4]"));
    REQUIRE_THROWS_AS(ca.forward(x, out, ws), std::invalid_argument);
    REQUIRE_THROWS_AS(wrapper.forward(x, out, ws), std::invalid_argument);
    tensor<float> good({2, 6, 4});
    REQUIRE_NOTHROW(mha.forward(x, good, ws));
    REQUIRE_NOTHROW(wrapper.forward(x, good, ws));
  }
  SECTION("valid inputs: ranks 2 and 3, 1 and context_length tokens") {
    REQUIRE(ca.forward(tensor<float>({2, 6, 3})).shape() == std::vector<std::size_t>{2, 6, 2});
    REQUIRE(wrapper.forward(tensor<float>({1, 3})).shape() == std::vector<std::size_t>{1, 4});
    REQUIRE(mha.forward(tensor<float>({3, 2, 3})).shape() == std::vector<std::size_t>{3, 2, 4});
  }
}

TEST_CASE("a dynamic view of a tensor keeps the shape it was made with", "[dynamic][view]") {
  // (an adversarial trial: the view referred to the tensor's shape vector, so
  // a reshape changed the view's shape but not its size, and a rank change
  // left it reading freed memory)
  tensor<float> t({4, 3});
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(i);
  const mha::dynamic::tensor_view<float> v(t);
  const mha::dynamic::tensor_view<const float> cv(t);
  t.reshape({2, 3});  // fewer elements, same rank: same storage
  REQUIRE(t.data() == v.data());
  REQUIRE((v.rank() == 2 && v.size() == 12 && v.shape()[0] == 4 && v.shape()[1] == 3));
  REQUIRE((cv.rank() == 2 && cv.size() == 12 && cv.shape()[0] == 4));
  REQUIRE(v(3, 2) == 11.0f);
  REQUIRE(cv(1, 0) == 3.0f);
  // a rank change reallocates the tensor's shape, which the view no longer
  // reads (before, v.shape() read freed memory here; ASan checks it)
  t.reshape({1, 2, 3});
  REQUIRE((v.rank() == 2 && v.shape()[0] == 4 && v.shape()[1] == 3 && v.size() == 12));
}

TEST_CASE("dynamic views of caller memory: the checks and messages of tensors", "[dynamic][view]") {
  const mha::dynamic::multi_head_attention<float> m(3, 4, 6, 2);
  using view = mha::dynamic::tensor_view<float>;
  using cview = mha::dynamic::tensor_view<const float>;
  std::vector<float> in(1 + 4 * 7 * 4), out(1 + 4 * 7 * 4, -1.0f);
  const std::vector<float> untouched = out;
  const auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no exception";
  };
  mha::dynamic::workspace<float> ws;

  SECTION("bad input shapes") {
    for (const std::vector<std::size_t>& shape :
         std::vector<std::vector<std::size_t>>{{18}, {1, 2, 6, 3}, {2, 6, 4}, {2, 0, 3}, {2, 7, 3},
                                               {0, 6, 3}}) {
      const tensor<float> t(shape);
      const cview v(in.data() + 1, std::span<const std::size_t>(shape));
      const std::string expected = message([&] { static_cast<void>(m.forward(t)); });
      INFO(expected);
      REQUIRE_THAT(expected, Contains("mha::dynamic::multi_head_attention::forward: input " +
                                      mha::dynamic::shape_string(shape)));
      REQUIRE(message([&] { static_cast<void>(m.forward(v)); }) == expected);
    }
  }
  SECTION("a wrong output shape, whole-sequence and cached; nothing written") {
    const tensor<float> x({2, 6, 3});
    tensor<float> bad({2, 6, 3});
    const std::string expected = message([&] { m.forward(x, bad, ws); });
    REQUIRE_THAT(expected, Contains("output is [2][6][3]") && Contains("expected [2][6][4]"));
    const cview vx(in.data() + 1, {2, 6, 3});
    REQUIRE(message([&] { m.forward(vx, view(out.data() + 1, {2, 6, 3}), ws); }) == expected);
    mha::dynamic::kv_cache<float> cache(m, 2);
    REQUIRE(message([&] { m.forward(vx, view(out.data() + 1, {2, 6, 3}), cache, ws); }) ==
            expected);
    REQUIRE(message([&] { m.forward(x, bad, cache, ws); }) == expected);
    REQUIRE(cache.size() == 0);
    REQUIRE(out == untouched);
  }
  SECTION("a KV cache of another batch") {
    mha::dynamic::kv_cache<float> cache(m, 1);
    tensor<float> x({2, 1, 3}), y({2, 1, 4});
    const std::string expected = message([&] { m.forward(x, y, cache, ws); });
    REQUIRE_THAT(expected, Contains("input batch 2 differs from the KV cache's batch 1"));
    REQUIRE(message([&] {
              m.forward(cview(in.data() + 1, {2, 1, 3}), view(out.data() + 1, {2, 1, 4}), cache,
                        ws);
            }) == expected);
    REQUIRE(out == untouched);
  }
  SECTION("the view's own errors") {
    REQUIRE_THROWS_WITH(view(out.data(), std::span<const std::size_t>()),
                        "mha::dynamic::tensor_view: rank 0 must be in 1..8");
    REQUIRE_THROWS_WITH(view(out.data(), {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                        "mha::dynamic::tensor_view: rank 9 must be in 1..8");
    REQUIRE_THROWS_WITH(view(out.data(), {size_half_overflow, size_half_overflow}),
                        "mha::dynamic::tensor_view: element count overflows std::size_t");
    // a null pointer with elements is refused (a forward would read through it);
    // with no element it is an empty view
    REQUIRE_THROWS_WITH(cview(nullptr, {1, 2, 4}),
                        "mha::dynamic::tensor_view: data is a null pointer, but the shape "
                        "[1][2][4] holds 8 elements");
    REQUIRE_THROWS_AS(view(nullptr, {1}), std::invalid_argument);
    const cview empty(nullptr, {1, 0, 4});
    REQUIRE((empty.data() == nullptr && empty.size() == 0 && empty.rank() == 3));
    const view v(out.data() + 1, {2, 3});
    REQUIRE(v.rank() == 2);
    REQUIRE(v.size() == 6);
    REQUIRE(v.extent(1) == 3);
    REQUIRE(&v(1, 2) == out.data() + 1 + 5);
    REQUIRE_THROWS_WITH(v(1), "mha::dynamic::tensor_view: 1 indices given for a view of rank 2");
    REQUIRE_THROWS_WITH(v(0, 3),
                        "mha::dynamic::tensor_view: index 3 out of range for dimension 1 of "
                        "extent 3");
    // a view of a tensor has its shape (copied: up to max_rank extents) and
    // elements; copies keep them, and a later reshape of the tensor does not
    // change them
    tensor<float> t({1, 1, 1, 1, 1, 1, 2, 2});
    const view vt(t);
    const view copy = vt;
    const cview ccopy = copy;
    REQUIRE((vt.rank() == 8 && copy.rank() == 8 && ccopy.size() == 4));
    REQUIRE((ccopy.data() == t.data() && ccopy.extent(7) == 2));
    view assigned = v;
    assigned = copy;
    REQUIRE((assigned.rank() == 8 && assigned.shape()[7] == 2));
    t.reshape({4});
    REQUIRE((vt.rank() == 8 && vt.extent(7) == 2 && assigned.extent(6) == 2));
    // a tensor of higher rank has no view (it used to keep pointing at the
    // tensor's shape: changed by a reshape, freed with the tensor)
    tensor<float> t10({1, 1, 1, 1, 1, 1, 1, 1, 1, 2});
    REQUIRE_THROWS_WITH(view(t10), "mha::dynamic::tensor_view: a view of a tensor of rank 10 "
                                   "(at most 8)");
    REQUIRE_THROWS_AS(cview(std::as_const(t10)), std::invalid_argument);
    // the null-pointer message counts in the singular for one element
    REQUIRE_THROWS_WITH(cview(nullptr, {1, 1}),
                        "mha::dynamic::tensor_view: data is a null pointer, but the shape "
                        "[1][1] holds 1 element");
  }
}

TEST_CASE("dynamic linear with a replaced weight of the wrong shape", "[dynamic]") {
  mha::dynamic::linear<float> l(3, 2);
  const tensor<float> x({4, 3});
  REQUIRE(l.forward(x).shape() == std::vector<std::size_t>{4, 2});
  REQUIRE_THROWS_WITH(l.forward(tensor<float>({4, 5})),
                      Contains("[4][5]") && Contains("in_features = 3"));

  l.weight = tensor<float>({3, 3});
  REQUIRE_THROWS_AS(l.forward(x), std::invalid_argument);
  REQUIRE_THROWS_WITH(l.forward(x), Contains("weight is [3][3]") && Contains("expected [2][3]"));
  l.weight = tensor<float>({2, 3});
  REQUIRE_NOTHROW(l.forward(x));
  l.bias = tensor<float>({3});
  REQUIRE_THROWS_WITH(l.forward(x), Contains("bias is [3]") && Contains("expected [2]"));

  // Inside a module, too.
  mha::dynamic::multi_head_attention<float> m(3, 4, 6, 2);
  m.w_key.weight = tensor<float>({4, 2});
  REQUIRE_THROWS_WITH(m.forward(tensor<float>({6, 3})),
                      Contains("weight is [4][2]") && Contains("expected [4][3]"));
  mha::dynamic::causal_attention<double> c(3, 2, 6, true);
  c.w_value.bias = tensor<double>({0});
  REQUIRE_THROWS_WITH(c.forward(tensor<double>({6, 3})),
                      Contains("bias is [0]") && Contains("expected [2]"));

  // A wrapper whose heads were resized or replaced.
  mha::dynamic::multi_head_attention_wrapper<float> w(3, 2, 6, 2);
  w.heads.pop_back();
  REQUIRE_THROWS_WITH(w.forward(tensor<float>({6, 3})),
                      Contains("1 heads") && Contains("num_heads = 2"));
  mha::dynamic::multi_head_attention_wrapper<float> w2(3, 2, 6, 2);
  w2.heads[1] = mha::dynamic::causal_attention<float>(3, 5, 6);
  REQUIRE_THROWS_AS(w2.forward(tensor<float>({6, 3})), std::invalid_argument);
}

TEST_CASE("dynamic weight-shape errors name the module and the member", "[dynamic]") {
  // issue 12, section 4: "w_query.weight", not only "weight"
  const tensor<float> x({6, 3});
  mha::dynamic::linear<float> l(3, 2);
  l.weight = tensor<float>({3, 2});
  REQUIRE_THROWS_WITH(l.forward(x), Equals("mha::dynamic::linear: weight is [3][2], expected [2][3]"));

  const char* const members[] = {"w_query", "w_key", "w_value", "out_proj"};
  for (const char* member : members) {
    INFO(member);
    const std::string name(member);
    mha::dynamic::multi_head_attention<float> m(3, 4, 6, 2, true);
    auto& layer = name == "w_query" ? m.w_query
                  : name == "w_key" ? m.w_key
                  : name == "w_value" ? m.w_value
                                      : m.out_proj;
    const std::string in = name == "out_proj" ? "4" : "3";
    layer.weight = tensor<float>({2, 2});
    CHECK_THROWS_WITH(m.forward(x), Equals("mha::dynamic::multi_head_attention: " + name +
                                           ".weight is [2][2], expected [4][" + in + "]"));
    layer.weight = tensor<float>({4, name == "out_proj" ? std::size_t{4} : std::size_t{3}});
    layer.bias = tensor<float>({5});
    CHECK_THROWS_WITH(m.forward(x), Equals("mha::dynamic::multi_head_attention: " + name +
                                           ".bias is [5], expected [4]"));
    if (name == "out_proj") continue;
    mha::dynamic::causal_attention<float> c(3, 2, 6, true);
    auto& head_layer = name == "w_query" ? c.w_query : name == "w_key" ? c.w_key : c.w_value;
    head_layer.weight = tensor<float>({3, 2});
    CHECK_THROWS_WITH(c.forward(x), Equals("mha::dynamic::causal_attention: " + name +
                                           ".weight is [3][2], expected [2][3]"));
    head_layer.weight = tensor<float>({2, 3});
    head_layer.bias = tensor<float>({1});
    CHECK_THROWS_WITH(c.forward(x), Equals("mha::dynamic::causal_attention: " + name +
                                           ".bias is [1], expected [2]"));
    mha::dynamic::multi_head_attention_wrapper<float> w(3, 2, 6, 2, true);
    auto& wh = w.head(1);
    auto& wrapper_layer = name == "w_query" ? wh.w_query : name == "w_key" ? wh.w_key : wh.w_value;
    wrapper_layer.weight = tensor<float>({3, 2});
    CHECK_THROWS_WITH(w.forward(x), Equals("mha::dynamic::multi_head_attention_wrapper: heads[1]." +
                                           name + ".weight is [3][2], expected [2][3]"));
    wrapper_layer.weight = tensor<float>({2, 3});
    wrapper_layer.bias = tensor<float>({1});
    CHECK_THROWS_WITH(w.forward(x), Equals("mha::dynamic::multi_head_attention_wrapper: heads[1]." +
                                           name + ".bias is [1], expected [2]"));
  }
  // a bias given to a layer built without one is an error, not ignored
  mha::dynamic::multi_head_attention<float> nb(3, 4, 6, 2);  // qkv_bias = false
  nb.w_key.bias = tensor<float>({4});
  CHECK_THROWS_WITH(nb.forward(x), Equals("mha::dynamic::multi_head_attention: w_key.bias is [4], "
                                          "expected none (the layer was built with bias = false)"));
  // a replaced layer and a dropout of one head of a wrapper are named too
  mha::dynamic::multi_head_attention_wrapper<float> w(3, 2, 6, 2);
  w.heads[0].w_key = mha::dynamic::linear<float>(3, 1, false);
  CHECK_THROWS_WITH(w.forward(x), Equals("mha::dynamic::multi_head_attention_wrapper: heads[0].w_key "
                                         "is linear(3, 1, no bias), expected linear(3, 2, no bias)"));
  mha::dynamic::multi_head_attention_wrapper<float> w2(3, 2, 6, 2);
  w2.heads[1].dropout = 1.5f;
  CHECK_THROWS_WITH(w2.forward_training(x, 1),
                    Equals("mha::dynamic::multi_head_attention_wrapper: heads[1].dropout "
                           "probability 1.5 must be in [0, 1]"));
}

TEST_CASE("dynamic training forward rejects a dropout outside [0, 1]", "[dynamic]") {
  mha::dynamic::multi_head_attention<float> m(3, 4, 6, 2);
  const tensor<float> x({6, 3});
  m.dropout = 1.5f;
  REQUIRE_THROWS_WITH(m.forward_training(x, 1), Contains("dropout") && Contains("1.5"));
  REQUIRE_NOTHROW(m.forward(x));  // inference ignores dropout
  m.dropout = -0.1f;
  REQUIRE_THROWS_AS(m.forward_training(x, 1), std::invalid_argument);
  mha::dynamic::causal_attention<float> c(3, 2, 6);
  c.dropout = 2.0f;
  REQUIRE_THROWS_AS(c.forward_training(x, 1), std::invalid_argument);
  m.dropout = 1.0f;
  REQUIRE_NOTHROW(m.forward_training(x, 1));
}

TEST_CASE("dynamic constructors in the book's argument order set the dropout", "[dynamic]") {
  using mha::dynamic::causal_attention;
  using mha::dynamic::multi_head_attention;
  using mha::dynamic::multi_head_attention_wrapper;
  // MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
  const multi_head_attention<float> m(6, 8, 10, 0.1, 2);
  REQUIRE(m.num_heads() == 2);
  REQUIRE(m.head_dim() == 4);
  REQUIRE(!m.qkv_bias());
  REQUIRE(m.dropout == 0.1f);
  const multi_head_attention<double> mb(6, 8, 10, 0.25f, 4, true);
  REQUIRE((mb.num_heads() == 4 && mb.qkv_bias() && mb.dropout == 0.25));
  // CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
  const causal_attention<float> c(3, 2, 6, 0.5);
  REQUIRE((!c.qkv_bias() && c.dropout == 0.5f));
  const causal_attention<float> cb(3, 2, 6, 0.0, true);
  REQUIRE((cb.qkv_bias() && cb.dropout == 0.0f));
  // MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
  const multi_head_attention_wrapper<float> w(3, 2, 6, 0.5, 3);
  REQUIRE(w.heads.size() == 3);
  for (const auto& h : w.heads) REQUIRE(h.dropout == 0.5f);
  // the integer order is unchanged
  const multi_head_attention<float> plain(6, 8, 10, 2, true);
  REQUIRE((plain.num_heads() == 2 && plain.qkv_bias() && plain.dropout == 0.0f));
  // as torch.nn.Dropout: p outside [0, 1] is an error at construction
  REQUIRE_THROWS_WITH(multi_head_attention<float>(6, 8, 10, 2.0, 2),
                      Equals("mha::dynamic::multi_head_attention: dropout probability 2 "
                             "must be in [0, 1]"));
  // printed in the shortest form that reads back as the same number, not with
  // six decimals ("1.000000" would hide why it is refused)
  REQUIRE_THROWS_WITH(multi_head_attention<float>(6, 8, 10, 1.0000001, 2),
                      Equals("mha::dynamic::multi_head_attention: dropout probability 1.0000001 "
                             "must be in [0, 1]"));
  REQUIRE_THROWS_WITH(causal_attention<float>(3, 2, 6, -1e-7f),
                      Equals("mha::dynamic::causal_attention: dropout probability -1e-07 "
                             "must be in [0, 1]"));
  REQUIRE_THROWS_AS(causal_attention<float>(3, 2, 6, -0.1), std::invalid_argument);
  REQUIRE_THROWS_AS(multi_head_attention_wrapper<float>(3, 2, 6, 1.5, 2), std::invalid_argument);
  REQUIRE_THROWS_AS(multi_head_attention<float>(6, 8, 10, std::nan(""), 2), std::invalid_argument);
  // sizes are still checked first
  REQUIRE_THROWS_WITH(multi_head_attention<float>(6, 8, 10, 0.1, 3), Contains("divisible"));
}

TEST_CASE("dynamic constructors take only a bool where qkv_bias goes", "[dynamic]") {
  using mha::dynamic::causal_attention;
  using mha::dynamic::grouped_query_attention;
  using mha::dynamic::kv_dims;
  using mha::dynamic::multi_head_attention;
  using mha::dynamic::multi_head_attention_wrapper;
  using mha_f = multi_head_attention<float>;
  using wrap_f = multi_head_attention_wrapper<float>;
  using ca_f = causal_attention<float>;
  using gqa_f = grouped_query_attention<float>;
  using cross_f = multi_head_attention<float, mha::attention_mask::none>;
  // The book's MultiHeadAttention(3, 2, 6, 0, 2) with an integer dropout used
  // to be num_heads 0 and qkv_bias true; (3, 2, 6, 1, 2) a 1-head model with
  // qkv_bias true. Now anything but a bool in that place does not compile.
  STATIC_REQUIRE_FALSE(std::is_constructible_v<mha_f, int, int, int, int, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<mha_f, std::size_t, std::size_t, std::size_t,
                                               std::size_t, std::size_t>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<mha_f, int, int, int, int, double>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<mha_f, int, int, int, int, const char*>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<mha_f, int, int, int, double, int, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<cross_f, int, int, int, int, int, kv_dims>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<wrap_f, int, int, int, int, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<wrap_f, int, int, int, double, int, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<ca_f, int, int, int, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<ca_f, int, int, int, double, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<gqa_f, int, int, int, int, int, const int*>);
  // every documented form still compiles: sizes, then a bool (or nothing) ...
  STATIC_REQUIRE(std::is_constructible_v<mha_f, int, int, int, int>);
  STATIC_REQUIRE(std::is_constructible_v<mha_f, int, int, int, int, bool>);
  STATIC_REQUIRE(std::is_constructible_v<mha_f, std::size_t, std::size_t, std::size_t,
                                         std::size_t, const bool&>);
  STATIC_REQUIRE(std::is_constructible_v<cross_f, int, int, int, int, bool, kv_dims>);
  STATIC_REQUIRE(std::is_constructible_v<wrap_f, int, int, int, int, bool>);
  STATIC_REQUIRE(std::is_constructible_v<ca_f, int, int, int, bool>);
  STATIC_REQUIRE(std::is_constructible_v<ca_f, int, int, int>);
  STATIC_REQUIRE(std::is_constructible_v<gqa_f, int, int, int, int, int, bool>);
  // ... and the book's order with a floating-point dropout
  STATIC_REQUIRE(std::is_constructible_v<mha_f, int, int, int, double, int>);
  STATIC_REQUIRE(std::is_constructible_v<mha_f, int, int, int, float, int, bool>);
  STATIC_REQUIRE(std::is_constructible_v<wrap_f, int, int, int, double, int, bool>);
  STATIC_REQUIRE(std::is_constructible_v<ca_f, int, int, int, double>);
  STATIC_REQUIRE(std::is_constructible_v<ca_f, int, int, int, double, bool>);
  const mha_f book(3, 2, 6, 0.0, 2);
  REQUIRE((book.num_heads() == 2 && !book.qkv_bias() && book.dropout == 0.0f));
  const mha_f biased(3, 2, 6, 2, true);
  REQUIRE((biased.num_heads() == 2 && biased.qkv_bias()));
}

TEST_CASE("dynamic modules reject member layers replaced by ones of other sizes", "[dynamic]") {
  const tensor<float> x({1, 6, 3});
  mha::dynamic::multi_head_attention<float> m(3, 4, 6, 2);
  m.w_key = mha::dynamic::linear<float>(3, 1, false);
  REQUIRE_THROWS_WITH(m.forward(x), Contains("w_key") && Contains("linear(3, 1") &&
                                        Contains("expected linear(3, 4"));
  mha::dynamic::multi_head_attention<float> m2(3, 4, 6, 2);
  m2.out_proj = mha::dynamic::linear<float>(4, 1);
  REQUIRE_THROWS_WITH(m2.forward(x), Contains("out_proj"));
  mha::dynamic::multi_head_attention<float> m3(3, 4, 6, 2);
  m3.w_query = mha::dynamic::linear<float>(3, 4, true);  // bias where the model has none
  REQUIRE_THROWS_WITH(m3.forward(x), Contains("w_query"));
  mha::dynamic::causal_attention<float> c(3, 2, 6);
  c.w_value = mha::dynamic::linear<float>(1, 2, false);
  REQUIRE_THROWS_WITH(c.forward(x), Contains("w_value") && Contains("linear(1, 2"));
}

TEST_CASE("dynamic wrapper: for_each_head fills the heads as head(h) does, in order", "[dynamic]") {
  // One flat buffer, consumed head by head in a loop (issue 12, section 4).
  std::vector<float> buffer(2 * 3 * (2 * 3 + 2));
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i) * 0.25f - 2.0f;
  const auto fill = [&buffer](mha::dynamic::causal_attention<float>& h, std::size_t& next) {
    for (auto* l : {&h.w_query, &h.w_key, &h.w_value}) {
      for (float& v : l->weight) v = buffer[next++];
      for (float& v : l->bias) v = buffer[next++];
    }
  };
  mha::dynamic::multi_head_attention_wrapper<float> by_loop(3, 2, 6, 2, true);
  std::size_t next = 0;
  by_loop.for_each_head([&](mha::dynamic::causal_attention<float>& h) { fill(h, next); });
  mha::dynamic::multi_head_attention_wrapper<float> by_index(3, 2, 6, 2, true);
  std::size_t next_indexed = 0;
  for (std::size_t h = 0; h < by_index.num_heads(); ++h) fill(by_index.head(h), next_indexed);
  REQUIRE(next == buffer.size());
  REQUIRE(next_indexed == next);

  const auto& c = by_loop;
  std::vector<std::size_t> order;
  c.for_each_head([&](std::size_t h, const mha::dynamic::causal_attention<float>& head) {
    order.push_back(h);
    const auto& named = by_index.head(h);
    CHECK(std::vector<float>(head.w_query.weight.begin(), head.w_query.weight.end()) ==
          std::vector<float>(named.w_query.weight.begin(), named.w_query.weight.end()));
    CHECK(std::vector<float>(head.w_value.bias.begin(), head.w_value.bias.end()) ==
          std::vector<float>(named.w_value.bias.begin(), named.w_value.bias.end()));
  });
  CHECK(order == std::vector<std::size_t>{0, 1});
  tensor<float> x({6, 3});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i % 5) * 0.1f;
  const auto y_loop = by_loop.forward(x);
  const auto y_index = by_index.forward(x);
  CHECK(std::vector<float>(y_loop.begin(), y_loop.end()) ==
        std::vector<float>(y_index.begin(), y_index.end()));
}
