// Issue 3, section 3: compile-time introspection. Every static constexpr
// member and layout alias of the three modules is checked with
// static_assert against values derived by hand from the book's definitions
// (head_dim = d_out / num_heads, head h owns columns [h*head_dim,
// (h+1)*head_dim) of Q, K, V and of the context; the wrapper concatenates
// whole heads of width d_out). The GPT-2 parameter count is the book's
// Exercise 3.3 answer (2,360,064). A head view is exactly one pointer.
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include <mha/mha.hpp>

namespace {

// ---------------------------------------------------------------- tensor
using t263 = mha::tensor<float, 2, 6, 3>;
static_assert(t263::rank == 3 && t263::size == 36);
static_assert(t263::extents[0] == 2 && t263::extents[1] == 6 && t263::extents[2] == 3);
// size is a constant and a call (issue 12, section 4): T::size, T::size(),
// t.size(), t.numel(), as an array bound, in arithmetic, as a std::size_t
static_assert(t263::size() == 36 && t263::numel() == 36 && t263::size / 6 == 6);
static_assert(std::is_same_v<decltype(t263::size()), std::size_t> &&
              std::is_same_v<decltype(t263::numel()), std::size_t>);
static_assert(std::is_same_v<decltype(std::declval<float (&)[t263::size]>()), float (&)[36]>);
constexpr std::size_t take_size(std::size_t n) { return n; }
static_assert(take_size(t263::size) == 36 && mha::tensor<double, 4>::size == 4);
constexpr bool size_spellings_agree() {
  t263 t{};
  const t263& c = t;
  std::size_t visited = 0;
  for (float x : c) visited += x == 0.0f ? 1 : 0;
  return t.size() == 36 && c.size() == t263::size && c.numel() == t.size() &&
         visited == c.size() && static_cast<std::size_t>(c.end() - c.begin()) == t.numel();
}
static_assert(size_spellings_agree());
static_assert(t263::extent(2) == 3 && t263::offset_of(1, 2, 1) == (1 * 6 + 2) * 3 + 1);
static_assert(std::is_same_v<t263::value_type, float>);
// still a trivially copyable standard-layout aggregate despite the
// static_assert-ing converting assignment/conversion templates
static_assert(std::is_aggregate_v<t263> && std::is_trivially_copyable_v<t263> &&
              std::is_trivial_v<t263> && std::is_standard_layout_v<t263>);
static_assert(sizeof(t263) == 36 * sizeof(float));
static_assert(mha::is_tensor_v<t263> && !mha::is_tensor_v<float>);
// same-shape copy assignment still works in constant expressions
constexpr t263 copy_assigned() {
  t263 a{};
  t263 b{};
  b.elements[7] = 2.5f;
  a = b;
  a = t263{};
  a = b;
  return a;
}
static_assert(copy_assigned().elements[7] == 2.5f && copy_assigned().elements[0] == 0.0f);
// and the different-shape templates are there (using them is the compile-fail test)
static_assert(std::is_assignable_v<mha::tensor<float, 2, 3>&, const mha::tensor<float, 2, 3>&>);

// ---------------------------------------------------------------- linear
using lin = mha::linear<float, 3, 2, true>;
using lin_nb = mha::linear<double, 5, 7, false>;
static_assert(lin::in_features == 3 && lin::out_features == 2 && lin::has_bias);
static_assert(lin::parameter_count == 2 * 3 + 2);
static_assert(!lin_nb::has_bias && lin_nb::parameter_count == 35);
static_assert(std::is_same_v<decltype(lin::weight), mha::tensor<float, 2, 3>>);
static_assert(std::is_same_v<decltype(lin::bias), mha::tensor<float, 2>>);
static_assert(std::is_same_v<decltype(lin_nb::weight), mha::tensor<double, 7, 5>>);
static_assert(std::is_aggregate_v<lin> && std::is_trivially_copyable_v<lin>);
// One definition for both bias settings: a layer without bias has an empty
// `bias` (mha::no_bias, PyTorch's None) that takes no storage.
static_assert(std::is_same_v<decltype(lin_nb::bias), mha::no_bias>);
static_assert(sizeof(lin_nb) == sizeof(mha::tensor<double, 7, 5>));
static_assert(sizeof(lin) == sizeof(mha::tensor<float, 2, 3>) + sizeof(mha::tensor<float, 2>));
static_assert(std::is_aggregate_v<lin_nb> && std::is_trivially_copyable_v<lin_nb>);
// Every aggregate-initialisation form of a layer: brace elision, nested
// braces, designated members (nested and designated broke when the members
// moved into a base class; regression test).
constexpr mha::linear<float, 2, 1> lin_elided{{1, 2}, {3}};
constexpr mha::linear<float, 2, 1> lin_nested{{{1, 2}}, {{3}}};
constexpr mha::linear<float, 2, 1> lin_designated{.weight = {{1, 2}}, .bias = {{3}}};
constexpr mha::linear<float, 2, 1, false> lin_nb_designated{.weight = {{1, 2}}};
constexpr mha::linear<float, 2, 1, false> lin_nb_elided{{1, 2}};
static_assert(lin_elided.weight(0, 1) == 2 && lin_elided.bias(0) == 3);
static_assert(lin_nested.weight(0, 1) == 2 && lin_nested.bias(0) == 3);
static_assert(lin_designated.weight(0, 1) == 2 && lin_designated.bias(0) == 3);
static_assert(lin_nb_designated.weight(0, 1) == 2 && lin_nb_elided.weight(0, 0) == 1);

// ---------------------------------------------------------------- causal_attention
using ca = mha::causal_attention<float, 3, 2, 6>;
static_assert(ca::d_in == 3 && ca::d_out == 2 && ca::context_length == 6);
static_assert(ca::num_heads == 1 && ca::head_dim == 2 && ca::output_width == 2);
static_assert(!ca::qkv_bias && ca::parameter_count == 3 * 2 * 3);
static_assert(mha::causal_attention<double, 5, 7, 9, true>::parameter_count == 3 * (7 * 5 + 7));
static_assert(ca::qkv_row_stride == 2 && ca::context_row_stride == 2);
static_assert(ca::query_offset<0> == 0 && ca::key_offset<0> == 0 && ca::value_offset<0> == 0 &&
              ca::context_offset<0> == 0);
using ca_q = ca::qkv_head_layout<0, 2, 6>;
static_assert(ca_q::batch == 2 && ca_q::rows == 6 && ca_q::cols == 2);
static_assert(ca_q::offset == 0 && ca_q::row_stride == 2 && ca_q::batch_stride == 12 &&
              ca_q::col_stride == 1 && ca_q::required_span_size == 24);
static_assert(std::is_same_v<ca::context_head_layout<0, 2, 6>, ca_q>);
static_assert(ca::weight_head_layout<0>::rows == 2 && ca::weight_head_layout<0>::cols == 3 &&
              ca::weight_head_layout<0>::offset == 0);
static_assert(ca::score_divisor == mha::detail::sqrt(2.0f));
static_assert(std::is_same_v<decltype(ca::w_query), mha::linear<float, 3, 2, false>>);
static_assert(std::is_same_v<decltype(ca::w_query.weight), mha::tensor<float, 2, 3>>);
static_assert(std::is_aggregate_v<ca> && std::is_trivially_copyable_v<ca>);
// same-type module assignment still works in constant expressions (the
// different-type assignment templates only exist to give our diagnostic)
constexpr bool module_copy_assigned() {
  ca a{};
  ca b{};
  b.w_key.weight(1, 2) = 3.0f;
  a = b;
  lin l{};
  lin k{};
  k.bias(1) = 2.0f;
  l = k;
  return a.w_key.weight(1, 2) == 3.0f && l.bias(1) == 2.0f;
}
static_assert(module_copy_assigned());
using ca_ws = ca::workspace<2, 6>;
// one array: Q, K^T, V and the context of one sequence plus a block of score
// rows, or the token-major path's transposed intermediates, whichever is larger
static_assert(ca_ws::batch == 2 && ca_ws::tokens == 6 && ca_ws::general_elements == 4 * 6 * 2 + 6 * 6 &&
              ca_ws::size >= ca_ws::general_elements && ca_ws::size >= ca_ws::token_major_elements &&
              std::is_same_v<decltype(ca_ws::storage), float[ca_ws::size]>);
static_assert(ca_ws::size() == ca_ws::storage_elements && ca_ws{}.size() == ca_ws::size &&
              sizeof(ca_ws::storage) == ca_ws::size * sizeof(float));
static_assert(std::is_same_v<ca::kv_cache<2>, mha::kv_cache<float, 2, 1, 2, 6>> &&
              ca::kv_cache<2>::capacity == 6);

// ---------------------------------------------------------------- wrapper
using wr = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>;
static_assert(wr::d_in == 3 && wr::d_out == 2 && wr::context_length == 6);
static_assert(wr::num_heads == 2 && wr::head_dim == 2 && wr::output_width == 4);
static_assert(wr::parameter_count == 2 * 3 * 2 * 3);
static_assert(std::is_same_v<wr::head_type, ca>);
// each head: own Q/K/V (offset 0, stride d_out); context = columns [2h, 2h+2) of the output
static_assert(wr::qkv_row_stride == 2 && wr::context_row_stride == 4);
static_assert(wr::query_offset<0> == 0 && wr::query_offset<1> == 0 && wr::key_offset<1> == 0 &&
              wr::value_offset<1> == 0);
static_assert(wr::context_offset<0> == 0 && wr::context_offset<1> == 2);
static_assert(wr::head_offset<0> == 0 && wr::head_offset<1> == 2);
// for_each_head (issue 12, section 4): filling every head's weights from one
// flat buffer in a run-time loop gives what filling head<0>(), head<1>() by
// name gives; the const overload and f(index, head) visit the heads in order
constexpr float flat_weight(std::size_t i) { return static_cast<float>(i) * 0.5f - 3.0f; }
constexpr void fill_head(ca& h, std::size_t& next) {
  for (auto* w : {&h.w_query.weight, &h.w_key.weight, &h.w_value.weight})
    for (float& v : *w) v = flat_weight(next++);
}
constexpr bool for_each_head_fills_like_head() {
  wr by_loop{};
  std::size_t next = 0;
  by_loop.for_each_head([&](ca& h) { fill_head(h, next); });
  wr by_name{};
  std::size_t next_named = 0;
  fill_head(by_name.head<0>(), next_named);
  fill_head(by_name.head<1>(), next_named);
  bool same = next == wr::parameter_count && next_named == next;
  const wr& c = by_loop;
  std::size_t visited = 0;
  c.for_each_head([&](auto index, const ca& h) {
    const ca& named = index == 0 ? by_name.head<0>() : by_name.head<1>();
    same = same && index == visited++ && h.w_query.weight == named.w_query.weight &&
           h.w_key.weight == named.w_key.weight && h.w_value.weight == named.w_value.weight;
  });
  return same && visited == wr::num_heads;
}
static_assert(for_each_head_fills_like_head());
using wr_c1 = wr::context_head_layout<1, 2, 6>;
static_assert(wr_c1::offset == 2 && wr_c1::cols == 2 && wr_c1::row_stride == 4 &&
              wr_c1::batch_stride == 24 && wr_c1::required_span_size == 48);
using wr_q1 = wr::qkv_head_layout<1, 2, 6>;
static_assert(wr_q1::offset == 0 && wr_q1::cols == 2 && wr_q1::row_stride == 2 &&
              wr_q1::batch_stride == 12 && wr_q1::head == 1);
// Exercise 3.2: d_out = 1, two heads -> 2-dim output
using ex32 = mha::multi_head_attention_wrapper<float, 3, 1, 6, 2>;
static_assert(ex32::output_width == 2 && ex32::context_offset<1> == 1 &&
              ex32::context_row_stride == 2);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<wr&>().head<1>())>, ca>);

// ---------------------------------------------------------------- multi_head_attention
using mh = mha::multi_head_attention<float, 3, 2, 6, 2>;
static_assert(mh::d_in == 3 && mh::d_out == 2 && mh::context_length == 6);
static_assert(mh::num_heads == 2 && mh::head_dim == 1 && mh::output_width == 2);
static_assert(mh::parameter_count == 3 * 2 * 3 + 2 * 2 + 2);
static_assert(mh::qkv_row_stride == 2 && mh::context_row_stride == 2);
static_assert(mh::query_offset<1> == 1 && mh::key_offset<1> == 1 && mh::value_offset<1> == 1 &&
              mh::context_offset<1> == 1 && mh::head_offset<1> == 1);

// GPT-2 small attention (book Exercise 3.3): 768 -> 768, 12 heads of 64.
using gpt2 = mha::multi_head_attention<float, 768, 768, 1024, 12>;
static_assert(gpt2::head_dim == 64 && gpt2::output_width == 768);
static_assert(gpt2::parameter_count == 2360064);
static_assert(mha::multi_head_attention<float, 768, 768, 1024, 12, true>::parameter_count ==
              2360064 + 3 * 768);
static_assert(gpt2::query_offset<0> == 0 && gpt2::query_offset<5> == 320 &&
              gpt2::key_offset<11> == 704 && gpt2::value_offset<11> == 704 &&
              gpt2::context_offset<11> == 704);
static_assert(gpt2::qkv_row_stride == 768 && gpt2::context_row_stride == 768);
using g_q7 = gpt2::qkv_head_layout<7, 4, 1024>;  // batch 4, 1024 tokens
static_assert(g_q7::batch == 4 && g_q7::rows == 1024 && g_q7::cols == 64);
static_assert(g_q7::offset == 7 * 64 && g_q7::row_stride == 768 && g_q7::batch_stride == 1024 * 768);
static_assert(g_q7::map(1, 2, 3) == 7 * 64 + 1 * 1024 * 768 + 2 * 768 + 3);
static_assert(g_q7::required_span_size == 7 * 64 + 3 * 1024 * 768 + 1023 * 768 + 64);
static_assert(std::is_same_v<gpt2::context_head_layout<7, 4, 1024>, g_q7>);
static_assert(std::is_same_v<gpt2::head_layout_type<7, 4, 1024>, g_q7>);
using g_w7 = gpt2::weight_head_layout<7>;  // rows [448, 512) of W_query [768][768]
static_assert(g_w7::rows == 64 && g_w7::cols == 768 && g_w7::offset == 448 * 768 &&
              g_w7::row_stride == 768);
static_assert(gpt2::score_divisor == 8.0f);
static_assert(std::is_same_v<decltype(gpt2::out_proj), mha::linear<float, 768, 768, true>>);
static_assert(std::is_same_v<decltype(gpt2::w_key), mha::linear<float, 768, 768, false>>);

// ---------------------------------------------------------------- views are one pointer
static_assert(sizeof(mha::block_view<const float, g_q7>) == sizeof(void*));
static_assert(sizeof(mha::block_view<double, g_w7>) == sizeof(void*));
static_assert(sizeof(mh::head_weights_type<1>) == 3 * sizeof(void*));
using q_tensor = mha::tensor<float, 2, 6, 768>;
using hv = decltype(mha::head_view<11, 12>(std::declval<q_tensor&>()));
using chv = decltype(mha::head_view<11, 12>(std::declval<const q_tensor&>()));
static_assert(sizeof(hv) == sizeof(void*) && sizeof(chv) == sizeof(void*));
static_assert(std::is_same_v<hv::layout_type, mha::head_layout<11, 12, 2, 6, 768>>);
static_assert(hv::layout_type::offset == 704 && hv::cols == 64 && hv::rows == 6 && hv::batch == 2);
static_assert(std::is_trivially_copyable_v<hv>);

// views computed in a constant expression point where the layout says
constexpr bool view_addresses_match() {
  mha::tensor<float, 2, 3, 4> t{};
  for (std::size_t i = 0; i < t.size; ++i) t.elements[i] = static_cast<float>(i);
  const auto v = mha::head_view<1, 2>(t);  // columns [2, 4)
  return v(1, 2, 1) == t(1, 2, 3) && v.row(0, 1) == &t(0, 1, 2) && v.base() == t.data();
}
static_assert(view_addresses_match());

// ---------------------------------------------------------------- tensor_view
using v263 = mha::tensor_view<const float, 2, 6, 3>;
static_assert(v263::rank == 3 && v263::size == 36 && v263::extent(1) == 6 &&
              v263::extents[2] == 3);
static_assert(std::is_same_v<v263::element_type, const float> &&
              std::is_same_v<v263::value_type, float>);
static_assert(sizeof(v263) == sizeof(const float*) && std::is_trivially_copyable_v<v263>);
static_assert(mha::is_tensor_view_v<v263> && !mha::is_tensor_view_v<t263> &&
              !mha::is_tensor_v<v263>);
// conversions: tensor -> view (const only from a const tensor), view -> view
// of const, span / std::array of the same count; nothing of another shape
static_assert(std::is_convertible_v<t263&, mha::tensor_view<float, 2, 6, 3>> &&
              std::is_convertible_v<const t263&, v263> &&
              !std::is_convertible_v<const t263&, mha::tensor_view<float, 2, 6, 3>> &&
              std::is_convertible_v<mha::tensor_view<float, 2, 6, 3>, v263> &&
              !std::is_convertible_v<v263, mha::tensor_view<float, 2, 6, 3>> &&
              !std::is_convertible_v<t263&, mha::tensor_view<float, 6, 2, 3>> &&
              std::is_convertible_v<std::span<const float, 36>, v263> &&
              std::is_convertible_v<const std::array<float, 36>&, v263> &&
              !std::is_convertible_v<std::array<float, 35>&, v263> &&
              !std::is_convertible_v<const float*, v263> &&  // explicit from a pointer
              std::is_constructible_v<v263, const float*>);
// element access as std::mdspan: v(i, j, k), v[{i, j, k}], v[i] for rank 1,
// row-major like the tensor, usable in constant expressions
constexpr bool view_elements_match() {
  t263 t{};
  for (std::size_t i = 0; i < t.size; ++i) t.elements[i] = static_cast<float>(i);
  const mha::tensor_view v{t};  // deduces tensor_view<float, 2, 6, 3>
  const mha::tensor_view<const float, 36> flat{t.data()};
  v(1, 2, 1) = -1.0f;
  return t(1, 2, 1) == -1.0f && v[std::array<std::size_t, 3>{1, 5, 2}] == t(1, 5, 2) &&
         flat[t263::offset_of(1, 5, 2)] == t(1, 5, 2) && v.data() == t.data() &&
         v.data_handle() == t.data() && v.end() - v.begin() == 36;
}
static_assert(view_elements_match());

// ---------------------------------------------------------------- concepts
using fmh = mha::fused_multi_head_attention<float, 3, 2, 6, 2>;
static_assert(mha::attention_module<ca> && mha::attention_module<wr> &&
              mha::attention_module<mh> && mha::attention_module<fmh> &&
              mha::attention_module<const ex32&> &&
              mha::attention_module<mha::causal_attention<double, 5, 4, 3, true>> &&
              mha::attention_module<mha::grouped_query_attention<float, 3, 4, 6, 2, 1>>);
static_assert(mha::fixed_attention_module<mh> && !mha::dynamic_attention_module<mh>);
static_assert(!mha::attention_module<lin> && !mha::attention_module<lin_nb> &&
              !mha::attention_module<t263> && !mha::attention_module<int>);
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
static_assert(mha::attention_module<mha::dynamic::causal_attention<float>> &&
              mha::attention_module<mha::dynamic::multi_head_attention_wrapper<double>> &&
              mha::attention_module<mha::dynamic::multi_head_attention<float>> &&
              mha::attention_module<mha::dynamic::grouped_query_attention<double>> &&
              mha::dynamic_attention_module<mha::dynamic::multi_head_attention<float>> &&
              !mha::fixed_attention_module<mha::dynamic::multi_head_attention<float>> &&
              !mha::attention_module<mha::dynamic::linear<float>>);
#endif

// can_forward_v: true on every shape forward(x) accepts (tensor or view,
// rank 3 or 2, any cv/ref), false, without an error, on each rule's failing
// shape (the rules of detail::forward_input_ok, whose static_asserts the
// compile-fail suite checks) and on non-tensors.
static_assert(mha::can_forward_v<mh, t263> && mha::can_forward_v<mh, const t263&> &&
              mha::can_forward_v<mh, mha::tensor<float, 1, 3>> &&
              mha::can_forward_v<const mh&, v263> &&
              mha::can_forward_v<mh, mha::tensor_view<float, 6, 3>&> &&
              mha::can_forward_v<wr, v263> && mha::can_forward_v<ca, v263> &&
              mha::can_forward_v<fmh, mha::tensor_view<const float, 4, 3>>);
static_assert(!mha::can_forward_v<mh, mha::tensor<double, 2, 6, 3>> &&          // element type
              !mha::can_forward_v<mh, mha::tensor_view<const double, 6, 3>> &&  //
              !mha::can_forward_v<mh, mha::tensor<float, 3>> &&                 // rank
              !mha::can_forward_v<mh, mha::tensor<float, 1, 2, 6, 3>> &&        //
              !mha::can_forward_v<mh, mha::tensor<float, 2, 6, 4>> &&           // last extent
              !mha::can_forward_v<ca, mha::tensor_view<const float, 6, 2>> &&   //
              !mha::can_forward_v<wr, mha::tensor<float, 2, 7, 3>> &&           // N > context
              !mha::can_forward_v<fmh, mha::tensor_view<const float, 7, 3>> &&  //
              !mha::can_forward_v<mh, mha::tensor<float, 2, 0, 3>> &&           // zero extent
              !mha::can_forward_v<mh, float> && !mha::can_forward_v<mh, lin>);
// Self-attention with KDim or VDim other than DIn (forward(x) static_asserts:
// keys and values come from x): false, for any x, with or without out; the
// same module's cross-attention forward is not what can_forward_v asks.
using mh_kdim = mha::multi_head_attention<float, 3, 2, 6, 2, false, mha::attention_mask::none, 4>;
using mh_vdim = mha::multi_head_attention<float, 3, 2, 6, 2, false, mha::attention_mask::none, 3, 5>;
using mh_dims = mha::multi_head_attention<float, 3, 2, 6, 2, false, mha::attention_mask::none, 3, 3>;
static_assert(!mha::can_forward_v<mh_kdim, t263> && !mha::can_forward_v<mh_vdim, t263> &&
              !mha::can_forward_v<mh_kdim, t263, mha::tensor<float, 2, 6, 2>> &&
              mha::can_forward_v<mh_dims, t263> &&
              mha::can_forward_v<mh_dims, t263, mha::tensor<float, 2, 6, 2>>);
// can_forward_v<M, X, Out>: forward(x, out) compiles (a requires-expression
// is true there for any out: that forward returns void and checks in its
// body). Out as forward deduces it: a named lvalue (decltype(out)), a
// temporary for U&&; a view may be a temporary, a tensor may not.
using o262 = mha::tensor<float, 2, 6, 2>;
using w264 = mha::tensor_view<float, 2, 6, 4>;
static_assert(mha::can_forward_v<mh, t263, o262> && mha::can_forward_v<mh, v263, o262&> &&
              mha::can_forward_v<mh, t263, mha::tensor_view<float, 2, 6, 2>> &&
              mha::can_forward_v<mh, t263, mha::tensor_view<float, 2, 6, 2>&&> &&
              mha::can_forward_v<ca, mha::tensor<float, 6, 3>, mha::tensor<float, 6, 2>> &&
              mha::can_forward_v<wr, v263, w264> && mha::can_forward_v<fmh, t263, o262>);
static_assert(!mha::can_forward_v<mh, t263, const o262> &&                         // const
              !mha::can_forward_v<mh, t263, const o262&> &&                        //
              !mha::can_forward_v<mh, t263, o262&&> &&                             // temporary
              !mha::can_forward_v<mh, t263, mha::tensor_view<const float, 2, 6, 2>> &&  //
              !mha::can_forward_v<mh, t263, mha::tensor<float, 2, 6, 3>> &&        // width
              !mha::can_forward_v<wr, v263, o262> &&                               //
              !mha::can_forward_v<mh, t263, mha::tensor<float, 6, 2>> &&           // rank
              !mha::can_forward_v<mh, t263, mha::tensor<double, 2, 6, 2>> &&       // type
              !mha::can_forward_v<mh, mha::tensor<float, 2, 6, 4>, o262> &&        // input
              !mha::can_forward_v<mh, t263, float>);
// mha::linear: the rules of its forward (found by an adversarial trial: a bad
// shape was a hard error, not false)
static_assert(mha::can_forward_v<lin, t263> && mha::can_forward_v<lin, mha::tensor<float, 3>> &&
              mha::can_forward_v<lin, v263, mha::tensor<float, 2, 6, 2>> &&
              mha::can_forward_v<lin_nb, mha::tensor<double, 4, 5>>);
static_assert(!mha::can_forward_v<lin, mha::tensor<float, 6, 5>> &&            // last extent
              !mha::can_forward_v<lin, mha::tensor<double, 6, 3>> &&           // element type
              !mha::can_forward_v<lin, t263, mha::tensor<float, 2, 6, 3>> &&   // output shape
              !mha::can_forward_v<lin, t263, const mha::tensor<float, 2, 6, 2>> &&  // const
              !mha::can_forward_v<lin, float>);
// the stack workspace of forward(x) above MHA_STACK_WORKSPACE_LIMIT (4 MiB by
// default; compile-fail case forward_stack_limit): false. 65536 tokens of
// width 8 need 4 * 65536 * 8 floats (8 MiB) for Q, K, V and the context.
using ca_long = mha::causal_attention<float, 3, 8, 1 << 16>;
static_assert(mha::can_forward_v<ca_long, mha::tensor_view<const float, 64, 3>> &&
              !mha::can_forward_v<ca_long, mha::tensor_view<const float, 1 << 16, 3>>);
// The limit counts the call's whole stack use, workspace<B, N>::stack_bytes
// (the workspace and the frame bound: for ca_long a panel of depth 8, 256
// score vectors and the register tiles, 2048 + 16384 + 4096 bytes), plus the
// output for forward(x) (compile-fail case forward_stack_frame). From 17874
// tokens on the workspace is the general path's 38 floats per token, so
// forward(x, out) fits up to 27445 tokens (152 * 27445 + 22528 <= 4 MiB) and
// forward(x), 32 more bytes per token, up to 22672; one token more is over
// while the workspace alone still fits (the former rule's edge was 27594).
template <std::size_t N>
using ca_long_in = mha::tensor_view<const float, N, 3>;
template <std::size_t N>
using ca_long_out = mha::tensor_view<float, N, 8>;
static_assert(ca_long::workspace<1, 27445>::frame_bytes == 2048 + 16384 + 4096 &&
              ca_long::workspace<1, 27446>::storage_bytes == 152 * 27446);
static_assert(MHA_STACK_WORKSPACE_LIMIT == std::size_t{4} * 1024 * 1024 &&
              sizeof(ca_long::workspace<1, 27446>) <= MHA_STACK_WORKSPACE_LIMIT &&
              ca_long::workspace<1, 27445>::stack_bytes <= MHA_STACK_WORKSPACE_LIMIT &&
              ca_long::workspace<1, 27446>::stack_bytes > MHA_STACK_WORKSPACE_LIMIT);
static_assert(mha::can_forward_v<ca_long, ca_long_in<27445>, ca_long_out<27445>> &&
              !mha::can_forward_v<ca_long, ca_long_in<27446>, ca_long_out<27446>> &&
              mha::can_forward_v<ca_long, ca_long_in<22672>> &&
              !mha::can_forward_v<ca_long, ca_long_in<22673>> &&
              mha::can_forward_v<ca_long, ca_long_in<22673>, ca_long_out<22673>>);
// Where the trait and the call once disagreed (an adversarial review, issue
// 41): both now read the same rules (detail::self_attention_rules,
// detail::linear_forward_ok, detail::fixed_type_ok), and the call's outcome
// is pinned by a requires-expression where it can see it (a non-viable
// overload) or by the compile-fail case named.
// (a) A zero extent in an input never instantiated (a view passed by
// reference): the forward instantiates the type, whose static_assert reports
// it (compile-fail case forward_zero_extent_view); false, with or without out.
static_assert(!mha::can_forward_v<mh, mha::tensor_view<const float, 0, 3>> &&
              !mha::can_forward_v<mh, const mha::tensor_view<float, 0, 6, 3>&> &&
              !mha::can_forward_v<mh, mha::tensor_view<const float, 2, 0, 3>> &&
              !mha::can_forward_v<ca, mha::tensor_view<const float, 0, 3>, mha::tensor<float, 1, 2>> &&
              !mha::can_forward_v<mh, mha::tensor_view<const float>>);  // rank 0
// (b) mha::linear with a zero extent (compile-fail case linear_zero_extent_view)
static_assert(!mha::can_forward_v<lin, mha::tensor_view<const float, 0, 3>> &&
              !mha::can_forward_v<lin, mha::tensor<float, 2, 0, 3>> &&
              !mha::can_forward_v<lin, mha::tensor_view<const float, 0, 3>,
                                  mha::tensor_view<float, 1, 2>>);
// (c) volatile, as input or output: no forward overload takes it
// (detail::fixed_tensor_like), so the call does not compile and the trait is
// false; a requires-expression sees the non-viable overload.
using o62 = mha::tensor<float, 6, 2>;
template <class M, class X, class Y>
constexpr bool forward_into_viable = requires(const M& m, const X& x, Y& y) { m.forward(x, y); };
template <class M, class X>
constexpr bool forward_viable_for_volatile = requires(const M& m, const X& x) { m.forward(x); };
static_assert(!mha::can_forward_v<mh, t263, volatile o262> && !forward_into_viable<mh, t263, volatile o262> &&
              !mha::can_forward_v<mh, t263, volatile mha::tensor_view<float, 2, 6, 2>> &&
              !forward_into_viable<mh, t263, volatile mha::tensor_view<float, 2, 6, 2>> &&
              !mha::can_forward_v<lin, t263, volatile o262> && !forward_into_viable<lin, t263, volatile o262> &&
              mha::can_forward_v<mh, t263, o262> && forward_into_viable<mh, t263, o262>);
static_assert(!mha::can_forward_v<mh, volatile t263> && !forward_viable_for_volatile<mh, volatile t263> &&
              !mha::can_forward_v<mh, volatile t263&> &&
              !mha::can_forward_v<lin, volatile t263> && !forward_viable_for_volatile<lin, volatile t263> &&
              !mha::can_forward_v<mh, volatile t263, o262> && !forward_into_viable<mh, volatile t263, o262>);
// (d) An invalid Out type: false, not a hard error (the trait reads the type's
// rules without instantiating it; the call reports the type's own
// static_assert, compile-fail case forward_output_zero_extent_view).
static_assert(!mha::can_forward_v<ca, mha::tensor<float, 6, 3>, mha::tensor_view<float, 6, 0>> &&
              !mha::can_forward_v<mh, t263, mha::tensor<int, 2, 6, 2>> &&
              !mha::can_forward_v<mh, t263, mha::tensor_view<int, 2, 6, 2>> &&
              !mha::can_forward_v<mh, t263, mha::tensor<float, 2, 0, 2>> &&
              !mha::can_forward_v<lin, t263, mha::tensor<int, 2, 6, 2>> &&
              !mha::can_forward_v<lin, t263, mha::tensor_view<float, 2, 0, 2>>);
// An Out tensor above MHA_MAX_INLINE_BYTES (compile-fail case
// forward_output_inline_limit: the call reports the type): the rules that
// can_forward_v reads, with explicit limits (this file defines none): the
// output's 48 bytes against 40, the stack workspace's storage_bytes (which
// the call checks next) against exactly that.
using ca_rules = mha::detail::self_attention_rules<float, 3, 3, 3, 6, 2>;
using x63 = mha::tensor<float, 6, 3>;  // 72 bytes
using v63 = mha::tensor_view<const float, 6, 3>;
constexpr std::size_t ca_ws_bytes = ca_rules::workspace_sizes<x63>::storage_bytes;
static_assert(ca_ws_bytes >= 48 && ca_rules::forward_ok<x63, ca_ws_bytes, o62&>() &&
              !ca_rules::forward_ok<x63, ca_ws_bytes - 1, mha::tensor_view<float, 6, 2>>() &&
              !mha::detail::output_argument_ok<o62&, o62, 40>() &&
              mha::detail::output_argument_ok<mha::tensor_view<float, 6, 2>, o62, 40>() &&
              !mha::detail::linear_forward_ok<float, 3, 2, 40, v63, o62&>() &&
              mha::detail::linear_forward_ok<float, 3, 2, 48, v63, o62&>() &&
              mha::detail::linear_forward_ok<float, 3, 2, 40, v63, mha::tensor_view<float, 6, 2>>() &&
              !mha::detail::linear_forward_ok<float, 3, 2, 40, x63, mha::tensor_view<float, 6, 2>>());
// (e) Every fixed-size module of the library is recognised as such (else the
// trait would ask a requires-expression, a hard error on a bad shape); a
// user's module with the attention_module sizes gets the library's rules for
// them first, then its own forward decides (a requires-expression).
using gqa = mha::grouped_query_attention<float, 3, 4, 6, 2, 1>;
static_assert(mha::detail::forward_overloads_module<ca> &&
              mha::detail::forward_overloads_module<wr> &&
              mha::detail::forward_overloads_module<mh> &&
              mha::detail::forward_overloads_module<fmh> &&
              mha::detail::forward_overloads_module<gqa> &&
              mha::detail::forward_overloads_module<mh_kdim>);
static_assert(mha::can_forward_v<gqa, mha::tensor<float, 6, 3>> &&
              !mha::can_forward_v<gqa, mha::tensor<float, 7, 3>> &&
              !mha::can_forward_v<gqa, mha::tensor_view<const float, 0, 3>>);
struct user_module {
  using value_type = float;
  static constexpr std::size_t d_in = 3, context_length = 6, num_heads = 1, head_dim = 2,
                               output_width = 2;
  // takes [6][3] views only (a view of another shape does not convert)
  o62 forward(const mha::tensor_view<const float, 6, 3>&) const { return {}; }
  void forward(const mha::tensor_view<const float, 6, 3>&, o62&) const {}
};
template <class M, class X>
constexpr bool forward_viable = requires(const M& m, const X& x) { m.forward(x); };
using uv63 = mha::tensor_view<const float, 6, 3>;
using uv53 = mha::tensor_view<const float, 5, 3>;
static_assert(mha::can_forward_v<user_module, uv63> && forward_viable<user_module, uv63> &&
              mha::can_forward_v<user_module, mha::tensor<float, 6, 3>> &&
              forward_viable<user_module, mha::tensor<float, 6, 3>> &&
              !mha::can_forward_v<user_module, uv53> && !forward_viable<user_module, uv53> &&
              !mha::can_forward_v<user_module, v263> && !forward_viable<user_module, v263>);
static_assert(mha::can_forward_v<user_module, uv63, o62> && forward_into_viable<user_module, uv63, o62> &&
              !mha::can_forward_v<user_module, uv63, mha::tensor<float, 6, 3>> &&
              !forward_into_viable<user_module, uv63, mha::tensor<float, 6, 3>> &&
              !mha::can_forward_v<user_module, uv63, const o62> &&
              !forward_into_viable<user_module, uv63, const o62>);
static_assert(!mha::detail::forward_overloads_module<user_module>);
// A user's module wrapping a library module's `auto` forward: false, not a
// hard error, for a shape the wrapped forward asserts (N above context_length,
// a wrong last extent), true where it compiles.
struct wrapping_module {
  using value_type = float;
  static constexpr std::size_t d_in = 3, context_length = 6, num_heads = 1, head_dim = 2,
                               output_width = 2;
  mha::causal_attention<float, 3, 2, 6> attn;
  template <class X>
  auto forward(const X& x) const {
    return attn.forward(x);
  }
};
static_assert(mha::can_forward_v<wrapping_module, mha::tensor<float, 6, 3>> &&
              mha::can_forward_v<wrapping_module, mha::tensor<float, 2, 6, 3>> &&
              !mha::can_forward_v<wrapping_module, mha::tensor<float, 7, 3>> &&
              !mha::can_forward_v<wrapping_module, mha::tensor<float, 6, 4>> &&
              !mha::can_forward_v<wrapping_module, mha::tensor_view<const float, 0, 3>>);
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
// mha::dynamic: any dynamic tensor or view of T (shapes are run-time errors)
static_assert(mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                 mha::dynamic::tensor<float>> &&
              mha::can_forward_v<mha::dynamic::causal_attention<double>,
                                 mha::dynamic::tensor_view<const double>> &&
              mha::can_forward_v<mha::dynamic::causal_attention<double>,
                                 mha::dynamic::tensor_view<double>> &&
              !mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                  mha::dynamic::tensor<double>> &&
              !mha::can_forward_v<mha::dynamic::multi_head_attention<float>, t263> &&
              !mha::can_forward_v<mh, mha::dynamic::tensor<float>>);
static_assert(mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                 mha::dynamic::tensor<float>, mha::dynamic::tensor<float>> &&
              mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                 mha::dynamic::tensor_view<const float>,
                                 mha::dynamic::tensor_view<float>> &&
              !mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                  mha::dynamic::tensor<float>,
                                  mha::dynamic::tensor_view<const float>> &&
              !mha::can_forward_v<mha::dynamic::multi_head_attention<float>,
                                  mha::dynamic::tensor<float>, mha::dynamic::tensor<double>>);
#endif

}  // namespace

TEST_CASE("introspection is checked at compile time", "[introspection]") {
  // Everything above is a static_assert; this run-time check only confirms
  // that views built at run time point where the compile-time layout says.
  mha::tensor<float, 2, 6, 768> q{};
  const auto v = mha::head_view<11, 12>(q);
  CHECK(v.row(1, 5) == q.data() + 704 + 1 * 6 * 768 + 5 * 768);
  CHECK(view_addresses_match());
  CHECK(for_each_head_fills_like_head());
  // the size spellings at run time (a non-constexpr object), fixed and dynamic
  CHECK(q.size() == 2 * 6 * 768);
  CHECK(q.numel() == q.size());
  mha::dynamic::tensor<float> d({2, 6, 3});
  CHECK(d.size() == t263::size);
  CHECK(d.numel() == t263::numel());
}
