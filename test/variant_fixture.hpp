// variant_fixture.hpp -- loads one attention-variant fixture of
// test/data/variants/ (made by tools/make_variant_fixtures.py; schema, the
// library semantics of the expected values and the case list in the README
// there): non-causal self-attention, cross-attention with kdim / vdim, padded
// batches and attention weights, against torch.nn.MultiheadAttention and the
// book modules in non-causal mode. Parameters and inputs are not stored; they
// are regenerated bit for bit by the stream generator of kv_fixture.hpp.
//
// Header only: nlohmann::json, kv_fixture.hpp and the standard library (no
// Catch2, no mha). Every malformed or inconsistent file is reported by
// throwing variant_fixture::error (= kv_fixture::error, a std::runtime_error)
// naming the file and the problem.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kv_fixture.hpp"

namespace variant_fixture {

using kv_fixture::error;
/// How a parameter or an input is generated: `name`, `shape`, `stream`,
/// `scale_exponent`; element i is its i-th element in row-major order.
using kv_fixture::param_spec;

/// The module name of the torch.nn.MultiheadAttention fixtures.
inline constexpr const char* torch_mha = "torch.nn.MultiheadAttention";

/// A flat row-major tensor and its shape.
template <class T>
struct tensor {
  std::vector<std::size_t> shape;
  std::vector<T> data;

  std::size_t size() const noexcept { return data.size(); }
  /// Element at a full row-major index (one entry per axis); throws
  /// variant_fixture::error when the index does not fit the shape.
  const T& at(std::initializer_list<std::size_t> index) const {
    if (index.size() != shape.size()) throw error("tensor::at: index rank is not the tensor's");
    std::size_t flat = 0, axis = 0;
    for (const std::size_t i : index) {
      if (i >= shape[axis]) throw error("tensor::at: index out of range");
      flat = flat * shape[axis++] + i;
    }
    return data.at(flat);
  }
};

/// Everything a fixture file says (metadata, parameter and input specs,
/// expected values), checked for consistency by parse().
struct fixture_info {
  std::string path;  ///< the file it was loaded from
  std::string generated_by, name, module, kind, dtype;
  std::uint64_t seed = 0;
  bool cross = false;  ///< kind == "cross_attention" (inputs query, key, value; else x)

  // torch.nn.MultiheadAttention (module == torch_mha); 0 / false / "" otherwise.
  std::size_t embed_dim = 0, kdim = 0, vdim = 0;
  bool bias = false;  ///< in_proj_bias and out_proj.bias present
  std::string torch_call, torch_path;

  // Book modules; 0 / false otherwise.
  std::size_t d_in = 0, d_out = 0, context_length = 0;
  bool qkv_bias = false;

  /// Heads (1 for causal_attention).
  std::size_t num_heads = 0;
  /// grouped_query_attention: the file's key/value groups; every other kind: num_heads.
  std::size_t num_kv_heads = 0;
  /// grouped_query_attention: RoPE base theta, 0 = no RoPE; 0 for the other kinds.
  double rope_theta_base = 0;
  /// Whether the module has an out_proj bias (absent ones are in zero_params):
  /// torch: bias; multi_head_attention: true; grouped_query_attention: the
  /// file's out_proj_bias; causal_attention and the wrapper (no out_proj): false.
  bool out_proj_bias = false;

  std::size_t batch = 0, num_queries = 0, num_keys = 0;  ///< B, Nq, Nkv
  bool causal = false;                                   ///< key j > i masked for query i
  /// Key lengths per sequence (key_padding_mask: keys j >= lengths[b] masked), or none.
  std::optional<std::vector<std::size_t>> lengths;
  /// Self-attention with lengths: = lengths, output and weight rows
  /// i >= query_lengths[b] are zero; none: every query row is computed.
  std::optional<std::vector<std::size_t>> query_lengths;
  bool need_weights = false;  ///< weights and average_weights present

  std::vector<param_spec> params;       ///< state_dict order, stream = index
  std::vector<param_spec> zero_params;  ///< absent, loaded as zero (stream, scale_exponent unused)
  std::vector<param_spec> inputs;       ///< "x", or "query", "key", "value"
  std::vector<std::string> postprocessing;  ///< what the generator changed in torch's results

  tensor<double> output;           ///< [B][Nq][output_width()]
  tensor<double> weights;          ///< [B][num_heads][Nq][Nkv] (need_weights; else empty)
  tensor<double> average_weights;  ///< [B][Nq][Nkv] (need_weights; else empty)

  bool is_torch() const noexcept { return module == torch_mha; }
  /// Feature widths of the query, key and value inputs.
  std::size_t query_width() const noexcept { return is_torch() ? embed_dim : d_in; }
  std::size_t key_width() const noexcept { return is_torch() ? kdim : d_in; }
  std::size_t value_width() const noexcept { return is_torch() ? vdim : d_in; }
  /// embed_dim (torch), d_out, or num_heads * d_out for the wrapper.
  std::size_t output_width() const noexcept {
    if (is_torch()) return embed_dim;
    return module == "multi_head_attention_wrapper" ? num_heads * d_out : d_out;
  }
  /// Each head's width: embed_dim / num_heads (torch), d_out / num_heads
  /// (multi_head_attention, grouped_query_attention), d_out (the others).
  std::size_t head_dim() const noexcept {
    if (is_torch()) return embed_dim / num_heads;
    return module == "multi_head_attention" || module == "grouped_query_attention"
               ? d_out / num_heads
               : d_out;
  }
  /// Unmasked keys of sequence b (num_keys without lengths).
  std::size_t key_length(std::size_t b) const { return lengths ? lengths->at(b) : num_keys; }
  /// Whether query i of sequence b does not see key j (causal or padding).
  bool key_masked(std::size_t b, std::size_t i, std::size_t j) const {
    return (causal && j > i) || j >= key_length(b);
  }
  /// Whether output row i of sequence b is a padded query row (expected zeros).
  bool query_padded(std::size_t b, std::size_t i) const {
    return query_lengths && i >= query_lengths->at(b);
  }
  /// Whether query i of sequence b sees no key at all (its weights are zero
  /// and its output out_proj(0), unless query_padded).
  bool no_keys(std::size_t b, std::size_t i) const {
    for (std::size_t j = 0; j < num_keys; ++j)
      if (!key_masked(b, i, j)) return false;
    return true;
  }
  /// Spec of parameter `name` (throws variant_fixture::error when there is none).
  const param_spec& parameter_spec(const std::string& param_name) const {
    for (const auto& p : params)
      if (p.name == param_name) return p;
    throw error(path + ": no parameter " + param_name);
  }
};

/// A loaded fixture with its generated parameters and inputs. T is the
/// fixture's element type (float for "float32", double for "float64").
template <class T>
struct fixture : fixture_info {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "variant_fixture: T must be float or double");

  /// Generated parameters by PyTorch state_dict name (PyTorch layout, weight [out][in]).
  std::map<std::string, tensor<T>> parameters;
  /// Generated inputs by name: "x" [B][N][query_width], or "query" [B][Nq][E],
  /// "key" [B][Nkv][kdim], "value" [B][Nkv][vdim].
  std::map<std::string, tensor<T>> input_values;

  /// Parameter `name` (throws variant_fixture::error when there is none).
  const tensor<T>& parameter(const std::string& param_name) const { return find(parameters, param_name); }
  /// The query, key and value inputs (all three are x for self-attention).
  const tensor<T>& query() const { return find(input_values, cross ? "query" : "x"); }
  const tensor<T>& key() const { return find(input_values, cross ? "key" : "x"); }
  const tensor<T>& value() const { return find(input_values, cross ? "value" : "x"); }

  /// The parameters under the library's (book) names, PyTorch layout:
  /// for torch.nn.MultiheadAttention, with E = embed_dim,
  ///   W_query.weight [E][E]    = rows [0, E) of in_proj_weight, or q_proj_weight,
  ///   W_key.weight   [E][kdim] = rows [E, 2E) of in_proj_weight, or k_proj_weight,
  ///   W_value.weight [E][vdim] = rows [2E, 3E) of in_proj_weight, or v_proj_weight,
  ///   W_query/W_key/W_value.bias [E] = the thirds of in_proj_bias (only with bias),
  ///   out_proj.weight, out_proj.bias;
  /// for the book modules their own names. Every zero_params entry is added as zeros.
  std::map<std::string, tensor<T>> library_parameters() const {
    std::map<std::string, tensor<T>> lib;
    if (!is_torch()) {
      lib = parameters;
    } else {
      const bool packed = parameters.count("in_proj_weight") != 0;
      const char* names[3] = {"W_query", "W_key", "W_value"};
      const char* separate[3] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
      for (std::size_t p = 0; p < 3; ++p) {
        const std::string n = names[p];
        lib[n + ".weight"] = packed ? block(parameter("in_proj_weight"), p) : parameter(separate[p]);
        if (bias) lib[n + ".bias"] = block(parameter("in_proj_bias"), p);
      }
      lib["out_proj.weight"] = parameter("out_proj.weight");
      if (bias) lib["out_proj.bias"] = parameter("out_proj.bias");
    }
    for (const auto& z : zero_params) lib[z.name] = tensor<T>{z.shape, std::vector<T>(z.size(), T(0))};
    return lib;
  }

 private:
  const tensor<T>& find(const std::map<std::string, tensor<T>>& m, const std::string& key_name) const {
    const auto it = m.find(key_name);
    if (it == m.end()) throw error(path + ": no tensor " + key_name);
    return it->second;
  }
  /// Third p of a tensor along its first axis ([3E][...] -> [E][...]).
  static tensor<T> block(const tensor<T>& t, std::size_t p) {
    tensor<T> out{t.shape, {}};
    out.shape[0] /= 3;
    const std::size_t n = t.size() / 3;
    const auto first = t.data.begin() + static_cast<std::ptrdiff_t>(p * n);
    out.data.assign(first, first + static_cast<std::ptrdiff_t>(n));
    return out;
  }
};

namespace detail {

using kv_fixture::detail::at;
using kv_fixture::detail::shape_text;
using kv_fixture::detail::size_at;
using kv_fixture::detail::string_at;

inline std::uint64_t u64_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = at(j, key, where);
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0))
    return v.get<std::uint64_t>();
  throw error(where + ": \"" + key + "\" must be a non-negative integer");
}

inline bool bool_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = at(j, key, where);
  if (!v.is_boolean()) throw error(where + ": \"" + key + "\" must be a boolean");
  return v.get<bool>();
}

inline std::vector<std::size_t> sizes_of(const nlohmann::json& v, const std::string& where) {
  if (!v.is_array()) throw error(where + ": must be a list of sizes");
  std::vector<std::size_t> out;
  for (const auto& e : v) {
    if (!e.is_number_unsigned() && !(e.is_number_integer() && e.get<std::int64_t>() >= 0))
      throw error(where + ": must be a list of non-negative integers");
    out.push_back(e.get<std::size_t>());
  }
  return out;
}

inline std::optional<std::vector<std::size_t>> optional_sizes_at(const nlohmann::json& j, const char* key,
                                                                 const std::string& where) {
  const auto& v = at(j, key, where);
  if (v.is_null()) return std::nullopt;
  return sizes_of(v, where + ": " + key);
}

/// A list of {"name", "shape", "stream", "scale_exponent"} (stream and
/// exponent optional when `generated` is false).
inline std::vector<param_spec> specs_at(const nlohmann::json& j, const char* key, const std::string& where,
                                        bool generated) {
  const auto& list = at(j, key, where);
  if (!list.is_array()) throw error(where + ": \"" + key + "\" must be a list");
  std::vector<param_spec> out;
  for (const auto& p : list) {
    param_spec s;
    s.name = string_at(p, "name", where + ": " + key);
    const std::string pw = where + ": " + key + " " + s.name;
    s.shape = sizes_of(at(p, "shape", pw), pw + ": shape");
    if (generated) {
      s.stream = at(p, "stream", pw).get<std::uint64_t>();
      s.scale_exponent = at(p, "scale_exponent", pw).get<int>();
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// {"shape": [...], "data": [...]} with shape `expected`.
inline tensor<double> expected_at(const nlohmann::json& j, const char* key, const std::string& where,
                                  const std::vector<std::size_t>& expected) {
  const std::string w = where + ": " + key;
  const auto& t = at(j, key, where);
  tensor<double> out{sizes_of(at(t, "shape", w), w + " shape"), {}};
  if (out.shape != expected)
    throw error(w + " has shape " + shape_text(out.shape) + ", expected " + shape_text(expected));
  out.data = at(t, "data", w).get<std::vector<double>>();
  std::size_t n = 1;
  for (const std::size_t e : expected) n *= e;
  if (out.data.size() != n)
    throw error(w + " has " + std::to_string(out.data.size()) + " values, expected " + std::to_string(n));
  for (const double v : out.data)
    if (!std::isfinite(v)) throw error(w + ": a value is not finite");
  return out;
}

/// fan_in of a parameter (its scale exponent is ceil(log2(fan_in) / 2)):
/// weight.shape[1] of every weight, of its layer's weight for "<layer>.bias",
/// embed_dim for in_proj_bias.
inline std::size_t fan_in(const fixture_info& fx, const param_spec& p) {
  const std::string bias = ".bias";
  if (p.name == "in_proj_bias") return fx.embed_dim;
  if (p.name.size() > bias.size() && p.name.compare(p.name.size() - bias.size(), bias.size(), bias) == 0)
    return fx.parameter_spec(p.name.substr(0, p.name.size() - bias.size()) + ".weight").shape.at(1);
  return p.shape.at(1);
}

/// The parameters (state_dict names and shapes, in order) and the zero
/// parameters a module with the file's sizes has.
using shapes = std::vector<std::pair<std::string, std::vector<std::size_t>>>;
inline std::pair<shapes, shapes> expected_parameters(const fixture_info& fx) {
  shapes params, zeros;
  const auto layer = [&](const std::string& name, std::size_t out, std::size_t in, bool with_bias) {
    params.emplace_back(name + ".weight", std::vector<std::size_t>{out, in});
    if (with_bias) params.emplace_back(name + ".bias", std::vector<std::size_t>{out});
  };
  if (fx.is_torch()) {
    const std::size_t e = fx.embed_dim;
    if (fx.kdim == e && fx.vdim == e) {
      params.emplace_back("in_proj_weight", std::vector<std::size_t>{3 * e, e});
    } else {
      params.emplace_back("q_proj_weight", std::vector<std::size_t>{e, e});
      params.emplace_back("k_proj_weight", std::vector<std::size_t>{e, fx.kdim});
      params.emplace_back("v_proj_weight", std::vector<std::size_t>{e, fx.vdim});
    }
    if (fx.bias) params.emplace_back("in_proj_bias", std::vector<std::size_t>{3 * e});
    layer("out_proj", e, e, fx.bias);
    if (!fx.bias) zeros.emplace_back("out_proj.bias", std::vector<std::size_t>{e});
    return {params, zeros};
  }
  const bool wrapper = fx.module == "multi_head_attention_wrapper";
  const std::size_t kv_width =
      fx.module == "grouped_query_attention" ? fx.num_kv_heads * fx.head_dim() : fx.d_out;
  for (std::size_t h = 0; h < (wrapper ? fx.num_heads : 1); ++h) {
    const std::string prefix = wrapper ? "heads." + std::to_string(h) + "." : "";
    layer(prefix + "W_query", fx.d_out, fx.d_in, fx.qkv_bias);
    layer(prefix + "W_key", kv_width, fx.d_in, fx.qkv_bias);
    layer(prefix + "W_value", kv_width, fx.d_in, fx.qkv_bias);
  }
  if (fx.module == "multi_head_attention" || fx.module == "grouped_query_attention")
    layer("out_proj", fx.d_out, fx.d_out, fx.out_proj_bias);
  if (fx.module == "grouped_query_attention" && !fx.out_proj_bias)
    zeros.emplace_back("out_proj.bias", std::vector<std::size_t>{fx.d_out});
  return {params, zeros};
}

inline void check_specs(const std::vector<param_spec>& got, const shapes& expected, const std::string& what,
                        const std::string& where) {
  if (got.size() != expected.size())
    throw error(where + ": " + std::to_string(got.size()) + " " + what + ", the module has " +
                std::to_string(expected.size()));
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].name != expected[i].first || got[i].shape != expected[i].second)
      throw error(where + ": " + what + " " + std::to_string(i) + " is " + got[i].name + " " +
                  shape_text(got[i].shape) + ", expected " + expected[i].first + " " +
                  shape_text(expected[i].second));
}

}  // namespace detail

/// Reads and checks a fixture file (not its values). Checks: the keys of the
/// schema for the file's module; module, kind, dtype; sizes (non-zero, heads
/// divide the width, num_keys == num_queries for self-attention, no causal
/// mask for cross-attention); the parameters (exactly the module's state_dict
/// names and shapes in order, streams = index, scale exponents by the fan-in
/// rule) and zero parameters; the inputs (names, shapes, streams 1000 / 1001 /
/// 1002, exponent 0); lengths (B entries <= num_keys) and query_lengths
/// (= lengths for self-attention, null for cross-attention); the shapes and
/// sizes of output, weights and average_weights (present iff need_weights),
/// all values finite.
inline fixture_info parse(const std::filesystem::path& file) {
  using namespace detail;
  fixture_info fx;
  fx.path = file.string();
  const std::string& w = fx.path;

  nlohmann::json j;
  {
    std::ifstream in(file);
    if (!in) throw error(w + ": cannot open");
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      throw error(w + ": " + e.what());
    }
  }
  if (!j.is_object()) throw error(w + ": not a JSON object");

  fx.name = string_at(j, "name", w);
  fx.generated_by = string_at(j, "generated_by", w);
  fx.module = string_at(j, "module", w);
  fx.kind = string_at(j, "kind", w);
  fx.dtype = string_at(j, "dtype", w);
  fx.seed = u64_at(j, "seed", w);
  if (fx.name != file.stem().string()) throw error(w + ": name \"" + fx.name + "\" is not the file name");
  if (fx.generated_by.empty()) throw error(w + ": generated_by is empty");
  const bool torch = fx.is_torch();
  const bool gqa = fx.module == "grouped_query_attention";
  if (!torch && fx.module != "causal_attention" && fx.module != "multi_head_attention_wrapper" &&
      fx.module != "multi_head_attention" && !gqa)
    throw error(w + ": unknown module \"" + fx.module + "\"");
  if (fx.kind != "self_attention" && fx.kind != "cross_attention")
    throw error(w + ": unknown kind " + fx.kind);
  fx.cross = fx.kind == "cross_attention";
  if (fx.cross && !torch) throw error(w + ": cross_attention is only for " + torch_mha);
  if (fx.dtype != "float64" && fx.dtype != "float32")
    throw error(w + ": dtype must be float32 or float64, not " + fx.dtype);

  // Keys of the other module family must be absent.
  const char* torch_keys[] = {"embed_dim", "kdim",    "vdim",       "bias",
                              "batch_first", "dropout", "torch_call", "torch_path"};
  const char* book_keys[] = {"d_in", "d_out", "context_length", "qkv_bias"};
  const char* gqa_keys[] = {"num_kv_heads", "rope_theta_base", "out_proj_bias"};
  for (const char* k : torch_keys)
    if (!torch && j.contains(k)) throw error(w + ": \"" + k + "\" is only for " + torch_mha);
  for (const char* k : book_keys)
    if (torch && j.contains(k)) throw error(w + ": \"" + k + "\" is only for the book modules");
  for (const char* k : gqa_keys)
    if (!gqa && j.contains(k)) throw error(w + ": \"" + k + "\" is only for grouped_query_attention");

  fx.num_heads = size_at(j, "num_heads", w);
  if (fx.num_heads == 0) throw error(w + ": num_heads is 0");
  fx.num_kv_heads = fx.num_heads;
  if (torch) {
    fx.embed_dim = size_at(j, "embed_dim", w);
    fx.kdim = size_at(j, "kdim", w);
    fx.vdim = size_at(j, "vdim", w);
    fx.bias = bool_at(j, "bias", w);
    fx.out_proj_bias = fx.bias;
    if (!bool_at(j, "batch_first", w)) throw error(w + ": batch_first must be true");
    if (at(j, "dropout", w) != 0.0) throw error(w + ": dropout must be 0");
    fx.torch_call = string_at(j, "torch_call", w);
    fx.torch_path = string_at(j, "torch_path", w);
    if (fx.embed_dim == 0 || fx.kdim == 0 || fx.vdim == 0 || fx.embed_dim % fx.num_heads != 0)
      throw error(w + ": embed_dim, kdim, vdim must be non-zero, embed_dim divisible by num_heads");
    if (!fx.cross && (fx.kdim != fx.embed_dim || fx.vdim != fx.embed_dim))
      throw error(w + ": self-attention with kdim or vdim != embed_dim");
  } else {
    fx.d_in = size_at(j, "d_in", w);
    fx.d_out = size_at(j, "d_out", w);
    fx.context_length = size_at(j, "context_length", w);
    fx.qkv_bias = bool_at(j, "qkv_bias", w);
    fx.out_proj_bias = fx.module == "multi_head_attention";
    if (fx.d_in == 0 || fx.d_out == 0 || fx.context_length == 0) throw error(w + ": a zero size");
    if (fx.module == "causal_attention" && fx.num_heads != 1)
      throw error(w + ": causal_attention with num_heads != 1");
    if ((fx.module == "multi_head_attention" || gqa) && fx.d_out % fx.num_heads != 0)
      throw error(w + ": d_out not divisible by num_heads");
    if (gqa) {
      fx.num_kv_heads = size_at(j, "num_kv_heads", w);
      if (fx.num_kv_heads == 0 || fx.num_heads % fx.num_kv_heads != 0)
        throw error(w + ": num_heads not divisible by num_kv_heads");
      if (!at(j, "rope_theta_base", w).is_number()) throw error(w + ": \"rope_theta_base\" is not a number");
      fx.rope_theta_base = j.at("rope_theta_base").get<double>();
      if (!std::isfinite(fx.rope_theta_base) || fx.rope_theta_base < 0)
        throw error(w + ": rope_theta_base must be finite and >= 0 (0 = no RoPE)");
      if (fx.rope_theta_base > 0 && fx.head_dim() % 2 != 0) throw error(w + ": RoPE needs an even head_dim");
      fx.out_proj_bias = bool_at(j, "out_proj_bias", w);
    }
  }

  fx.batch = size_at(j, "batch", w);
  fx.num_queries = size_at(j, "num_queries", w);
  fx.num_keys = size_at(j, "num_keys", w);
  if (fx.batch == 0 || fx.num_queries == 0 || fx.num_keys == 0) throw error(w + ": a zero size");
  if (!fx.cross && fx.num_keys != fx.num_queries)
    throw error(w + ": self-attention with num_keys != num_queries");
  if (!torch && fx.num_queries > fx.context_length) throw error(w + ": more tokens than context_length");
  fx.causal = bool_at(j, "causal", w);
  if (fx.causal && fx.cross) throw error(w + ": cross-attention has no causal mask");
  fx.lengths = optional_sizes_at(j, "lengths", w);
  fx.query_lengths = optional_sizes_at(j, "query_lengths", w);
  if (fx.lengths) {
    if (fx.lengths->size() != fx.batch) throw error(w + ": lengths needs one entry per sequence");
    for (const std::size_t n : *fx.lengths)
      if (n > fx.num_keys) throw error(w + ": a length above num_keys");
  }
  if (fx.cross ? fx.query_lengths.has_value() : fx.query_lengths != fx.lengths)
    throw error(w + ": query_lengths must be lengths for self-attention and null for cross-attention");
  fx.need_weights = bool_at(j, "need_weights", w);

  // Parameters, zero parameters, inputs.
  fx.params = specs_at(j, "params", w, true);
  fx.zero_params = specs_at(j, "zero_params", w, false);
  fx.inputs = specs_at(j, "inputs", w, true);
  const auto [param_shapes, zero_shapes] = expected_parameters(fx);
  check_specs(fx.params, param_shapes, "parameter", w);
  check_specs(fx.zero_params, zero_shapes, "zero parameter", w);
  for (std::size_t i = 0; i < fx.params.size(); ++i) {
    const param_spec& p = fx.params[i];
    if (p.stream != i) throw error(w + ": parameter " + p.name + " is not stream " + std::to_string(i));
    const int e = kv_fixture::scale_exponent_for(fan_in(fx, p));
    if (p.scale_exponent != e)
      throw error(w + ": parameter " + p.name + " has scale_exponent " + std::to_string(p.scale_exponent) +
                  ", the fan-in rule gives " + std::to_string(e));
  }
  shapes input_shapes;
  if (fx.cross) {
    input_shapes = {{"query", {fx.batch, fx.num_queries, fx.embed_dim}},
                    {"key", {fx.batch, fx.num_keys, fx.kdim}},
                    {"value", {fx.batch, fx.num_keys, fx.vdim}}};
  } else {
    input_shapes = {{"x", {fx.batch, fx.num_queries, fx.query_width()}}};
  }
  check_specs(fx.inputs, input_shapes, "input", w);
  for (std::size_t i = 0; i < fx.inputs.size(); ++i)
    if (fx.inputs[i].stream != 1000 + i || fx.inputs[i].scale_exponent != 0)
      throw error(w + ": input " + fx.inputs[i].name + " must be stream " + std::to_string(1000 + i) +
                  " with scale_exponent 0");

  const auto& post = at(j, "postprocessing", w);
  if (!post.is_array()) throw error(w + ": postprocessing must be a list");
  for (const auto& s : post) {
    if (!s.is_string()) throw error(w + ": postprocessing must be a list of strings");
    fx.postprocessing.push_back(s.get<std::string>());
  }

  // Expected values.
  fx.output = expected_at(j, "output", w, {fx.batch, fx.num_queries, fx.output_width()});
  if (fx.need_weights) {
    fx.weights = expected_at(j, "weights", w, {fx.batch, fx.num_heads, fx.num_queries, fx.num_keys});
    fx.average_weights = expected_at(j, "average_weights", w, {fx.batch, fx.num_queries, fx.num_keys});
  } else if (j.contains("weights") || j.contains("average_weights")) {
    throw error(w + ": weights without need_weights");
  }
  return fx;
}

/// Loads a fixture file (parse()), checks that its dtype is T's and, for
/// float, that every expected value is exactly a float, then generates its
/// parameters and inputs.
template <class T>
[[nodiscard]] fixture<T> load(const std::filesystem::path& file) {
  fixture<T> fx;
  fx.fixture_info::operator=(parse(file));
  if (fx.dtype != (std::is_same_v<T, float> ? "float32" : "float64"))
    throw error(fx.path + ": dtype " + fx.dtype + " loaded as the wrong element type");
  for (const auto* t : {&fx.output, &fx.weights, &fx.average_weights})
    for (const double v : t->data)
      if (static_cast<double>(static_cast<T>(v)) != v)
        throw error(fx.path + ": an expected value is not exactly representable in " + fx.dtype);
  const auto generate = [&](const param_spec& s) {
    return tensor<T>{s.shape, kv_fixture::stream_values<T>(fx.seed, s.stream, s.size(), s.scale_exponent)};
  };
  for (const auto& s : fx.params) fx.parameters.emplace(s.name, generate(s));
  for (const auto& s : fx.inputs) fx.input_values.emplace(s.name, generate(s));
  return fx;
}

/// The fixture files (*.json) of a directory, sorted by name.
inline std::vector<std::filesystem::path> fixture_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace variant_fixture
