// state_dict.hpp -- the parameters of every module under their PyTorch
// state_dict names (mha::for_each_parameter's), and the module kinds, for the
// tests that fill modules from PyTorch-made fixtures (test_golden.cpp,
// test_kv_cache.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
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
void add(param_map<T>& m, std::string_view name, mha::tensor<T, E...>& t) {
  m.emplace(std::string(name), param_ref<T>{t.data(), {E...}});
}
template <class T>
void add(param_map<T>& m, std::string_view name, mha::dynamic::tensor<T>& t) {
  m.emplace(std::string(name), param_ref<T>{t.data(), t.shape()});
}

/// Every parameter of `model` (fixed-size or mha::dynamic) under its PyTorch
/// state_dict name, from the library's walk (mha::for_each_parameter).
template <class T, class Model>
void collect(param_map<T>& m, Model& model) {
  mha::for_each_parameter(model, [&](std::string_view name, auto& t) { add(m, name, t); });
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
