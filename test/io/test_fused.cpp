// mha::fused_multi_head_attention: one [3*DOut][DIn] QKV weight with
// compile-time views W_query/W_key/W_value. Its results must be bit-identical
// to multi_head_attention with the same weights (same dot products in the same
// order); correctness against PyTorch is covered by the loader tests, which run
// PyTorch's outputs through the fused model in all three checkpoint formats.
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>

#include <catch2/catch.hpp>

#include <mha/mha.hpp>

namespace {

template <class Model>
void fill_random(Model& m, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using T = typename Model::value_type;
  for (auto* l : {&m.w_query, &m.w_key, &m.w_value}) {
    for (auto& w : l->weight.elements) w = static_cast<T>(u(rng));
    if constexpr (Model::qkv_bias)
      for (auto& b : l->bias.elements) b = static_cast<T>(u(rng));
  }
  for (auto& w : m.out_proj.weight.elements) w = static_cast<T>(u(rng));
  for (auto& b : m.out_proj.bias.elements) b = static_cast<T>(u(rng));
}

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  static_assert(sizeof(a.elements) == sizeof(b.elements));
  return std::memcmp(a.elements, b.elements, sizeof(a.elements)) == 0;
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool Bias,
          std::size_t B, std::size_t N>
void check_equivalence(std::uint32_t seed) {
  auto m = std::make_unique<mha::multi_head_attention<T, DIn, DOut, Ctx, H, Bias>>();
  fill_random(*m, seed);
  m->dropout = T(0.25);
  using F = mha::fused_multi_head_attention<T, DIn, DOut, Ctx, H, Bias>;
  auto f = std::make_unique<F>();
  f->dropout = T(0.5);
  f->w_qkv.weight.elements[0] = T(7);
  mha::fuse_qkv(*m, *f);  // overwrites every member of *f
  CHECK(f->dropout == m->dropout);
  // The by-value form (small models) gives the same object.
  const auto by_value = std::make_unique<F>(mha::fuse_qkv(*m));
  CHECK(same_bits(by_value->w_qkv.weight, f->w_qkv.weight));
  CHECK(same_bits(by_value->out_proj.weight, f->out_proj.weight));
  CHECK(same_bits(by_value->out_proj.bias, f->out_proj.bias));
  if constexpr (Bias) CHECK(same_bits(by_value->w_qkv.bias, f->w_qkv.bias));
  // The views see the separate weights.
  for (std::size_t o = 0; o < DOut; ++o)
    for (std::size_t i = 0; i < DIn; ++i) {
      REQUIRE(f->w_query()(0, o, i) == m->w_query.weight(o, i));
      REQUIRE(f->w_key()(0, o, i) == m->w_key.weight(o, i));
      REQUIRE(f->w_value()(0, o, i) == m->w_value.weight(o, i));
    }
  [&]<std::size_t... Hs>(std::index_sequence<Hs...>) {
    (([&] {
       const auto a = m->template head_weights<Hs>();
       const auto b = f->template head_weights<Hs>();
       for (std::size_t r = 0; r < DOut / H; ++r)
         for (std::size_t c = 0; c < DIn; ++c) {
           REQUIRE(a.query(0, r, c) == b.query(0, r, c));
           REQUIRE(a.key(0, r, c) == b.key(0, r, c));
           REQUIRE(a.value(0, r, c) == b.value(0, r, c));
         }
     }()),
     ...);
  }(std::make_index_sequence<H>{});

  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  for (auto& v : x->elements) v = static_cast<T>(u(rng));
  CHECK(same_bits(m->forward(*x), f->forward(*x)));
  CHECK(same_bits(m->forward_training(*x, 99), f->forward_training(*x, 99)));
  // Caller-owned workspace overload.
  auto ws = std::make_unique<typename mha::fused_multi_head_attention<T, DIn, DOut, Ctx, H, Bias>::template workspace<B, N>>();
  auto out = std::make_unique<mha::tensor<T, B, N, DOut>>();
  f->forward(*x, *out, *ws);
  CHECK(same_bits(m->forward(*x), *out));
}

}  // namespace

TEST_CASE("fused QKV storage gives bit-identical results to multi_head_attention", "[fused]") {
  check_equivalence<float, 3, 2, 6, 2, false, 2, 6>(1);
  check_equivalence<float, 6, 8, 9, 4, true, 3, 7>(2);
  check_equivalence<double, 5, 6, 8, 3, true, 2, 8>(3);
  check_equivalence<float, 12, 12, 10, 1, true, 1, 1>(4);
  check_equivalence<float, 64, 48, 16, 6, false, 2, 16>(5);
}

TEST_CASE("fused QKV views are compile-time: a pointer each, writable, usable in constexpr", "[fused]") {
  using F = mha::fused_multi_head_attention<float, 3, 4, 5, 2, true>;
  static_assert(sizeof(decltype(std::declval<const F&>().w_key())) == sizeof(const float*));
  static_assert(F::qkv_weight_layout<1>::offset == 4 * 3);
  static_assert(F::head_weight_layout<2, 1>::offset == (2 * 4 + 2) * 3);
  static_assert(F::qkv_head_layout<1, 1, 2, 5>::offset == 4 + 2);
  static_assert(F::qkv_head_layout<1, 1, 2, 5>::row_stride == 12);
  static_assert(F::parameter_count == mha::multi_head_attention<float, 3, 4, 5, 2, true>::parameter_count);
  F f{};
  f.w_value()(0, 3, 2) = 5.0f;
  CHECK(f.w_qkv.weight(2 * 4 + 3, 2) == 5.0f);

  // The whole forward pass in a constant expression, equal to the unfused model.
  constexpr auto value = [] {
    mha::multi_head_attention<float, 3, 4, 5, 2, true> m{};
    float v = 0.1f;
    for (auto* l : {&m.w_query, &m.w_key, &m.w_value}) {
      for (auto& w : l->weight.elements) w = (v = -v * 1.1f + 0.05f);
      for (auto& b : l->bias.elements) b = (v = -v * 0.9f + 0.01f);
    }
    for (auto& w : m.out_proj.weight.elements) w = (v = -v * 1.05f + 0.02f);
    for (auto& b : m.out_proj.bias.elements) b = (v = -v * 0.7f);
    const mha::tensor<float, 2, 4, 3> x{{0.4f, 0.1f, 0.9f, 0.5f, 0.8f, 0.6f, 0.5f, 0.8f, 0.6f, 0.2f, 0.5f, 0.3f,
                                         0.7f, 0.2f, 0.1f, 0.05f, 0.8f, 0.5f, 0.4f, 0.1f, 0.9f, 0.5f, 0.8f, 0.6f}};
    const auto a = m.forward(x);
    const auto b = mha::fuse_qkv(m).forward(x);
    mha::fused_multi_head_attention<float, 3, 4, 5, 2, true> fused{};
    mha::fuse_qkv(m, fused);  // the storage form, also in a constant expression
    return a == b && a == fused.forward(x);
  }();
  STATIC_REQUIRE(value);
}
