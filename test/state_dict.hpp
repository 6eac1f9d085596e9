// state_dict.hpp -- the parameters of every module under their PyTorch
// state_dict names (the book's attribute names), and the module kinds, for the
// tests that fill modules from PyTorch-made fixtures (test_golden.cpp,
// test_kv_cache.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <mha/mha.hpp>

namespace mha_test {

/// A parameter tensor inside a module: where its elements are and its shape.
template <class T>
struct param_ref {
  T* data;
  std::vector<std::size_t> shape;
};
template <class T>
using param_map = std::map<std::string, param_ref<T>>;

template <class T, std::size_t... E>
void add(param_map<T>& m, const std::string& name, mha::tensor<T, E...>& t) {
  m.emplace(name, param_ref<T>{t.data(), {E...}});
}
template <class T>
void add(param_map<T>& m, const std::string& name, mha::dynamic::tensor<T>& t) {
  m.emplace(name, param_ref<T>{t.data(), t.shape()});
}
template <class Linear, class T>
void add_linear(param_map<T>& m, const std::string& name, Linear& l, bool bias) {
  add(m, name + ".weight", l.weight);
  if constexpr (requires { l.bias.data(); }) {  // (a bias-less layer's bias is mha::no_bias)
    if (bias) add(m, name + ".bias", l.bias);
  }
}

// PyTorch state_dict names of each module (the book's attribute names).
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool B>
void collect(param_map<T>& m, mha::causal_attention<T, DIn, DOut, Ctx, B>& ca,
             const std::string& prefix = "") {
  add_linear(m, prefix + "W_query", ca.w_query, B);
  add_linear(m, prefix + "W_key", ca.w_key, B);
  add_linear(m, prefix + "W_value", ca.w_value, B);
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void collect(param_map<T>& m, mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, B>& w) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (collect(m, w.template head<I>(), "heads." + std::to_string(I) + "."), ...);
  }(std::make_index_sequence<H>{});
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void collect(param_map<T>& m, mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>& a) {
  add_linear(m, "W_query", a.w_query, B);
  add_linear(m, "W_key", a.w_key, B);
  add_linear(m, "W_value", a.w_value, B);
  add_linear(m, "out_proj", a.out_proj, true);
}
template <class T>
void collect(param_map<T>& m, mha::dynamic::causal_attention<T>& ca, const std::string& prefix = "") {
  add_linear(m, prefix + "W_query", ca.w_query, ca.qkv_bias());
  add_linear(m, prefix + "W_key", ca.w_key, ca.qkv_bias());
  add_linear(m, prefix + "W_value", ca.w_value, ca.qkv_bias());
}
template <class T>
void collect(param_map<T>& m, mha::dynamic::multi_head_attention_wrapper<T>& w) {
  for (std::size_t h = 0; h < w.heads.size(); ++h)
    collect(m, w.heads[h], "heads." + std::to_string(h) + ".");
}
template <class T>
void collect(param_map<T>& m, mha::dynamic::multi_head_attention<T>& a) {
  add_linear(m, "W_query", a.w_query, a.qkv_bias());
  add_linear(m, "W_key", a.w_key, a.qkv_bias());
  add_linear(m, "W_value", a.w_value, a.qkv_bias());
  add_linear(m, "out_proj", a.out_proj, true);
}

/// The book's name of a fixed-size module type (the fixtures' `module` field).
template <class M>
constexpr std::string_view module_name() {
  if constexpr (requires(const M& m) { m.out_proj; }) return "multi_head_attention";
  else if constexpr (requires { typename M::head_type; }) return "multi_head_attention_wrapper";
  else return "causal_attention";
}

/// The mha::dynamic twin of a fixed-size module type, same sizes, zero weights.
template <class M>
auto make_dynamic() {
  using T = typename M::value_type;
  if constexpr (module_name<M>() == "causal_attention")
    return mha::dynamic::causal_attention<T>(M::d_in, M::d_out, M::context_length, M::qkv_bias);
  else if constexpr (module_name<M>() == "multi_head_attention_wrapper")
    return mha::dynamic::multi_head_attention_wrapper<T>(M::d_in, M::d_out, M::context_length,
                                                         M::num_heads, M::qkv_bias);
  else
    return mha::dynamic::multi_head_attention<T>(M::d_in, M::d_out, M::context_length,
                                                 M::num_heads, M::qkv_bias);
}

}  // namespace mha_test
