// kv_fixture.hpp -- loads one KV-cache fixture of test/data/kv_cache/ (made by
// tools/make_kv_fixtures.py; schema and generator in the README there) and
// regenerates, bit for bit, the parameters and the input token stream that
// the file describes but does not store.
//
// Header only: nlohmann::json and the standard library (no Catch2, no mha).
// Every malformed or inconsistent file is reported by throwing
// kv_fixture::error (a std::runtime_error) naming the file and the problem.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kv_fixture {

// ------------------------------------------------------------------ generator

/// One step of SplitMix64 (all arithmetic modulo 2^64).
constexpr std::uint64_t splitmix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The 64 random bits of element `i` of stream `stream` under fixture seed `seed`:
/// splitmix64(splitmix64(seed ^ stream) ^ i).
constexpr std::uint64_t stream_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) noexcept {
  return splitmix64(splitmix64(seed ^ stream) ^ i);
}

/// The value of the bits `z` with scale exponent `e`, exact in T:
///  float:  m = z >> 43 (21 bits), (m - 2^20) * 2^-(20 + e);
///  double: m = z >> 11 (53 bits), (m - 2^52) * 2^-(52 + e).
template <class T>
T value_from_bits(std::uint64_t z, int scale_exponent) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "kv_fixture: T must be float or double");
  if constexpr (std::is_same_v<T, float>) {
    const std::int64_t m = static_cast<std::int64_t>(z >> 43) - (std::int64_t{1} << 20);
    return std::ldexp(static_cast<float>(m), -(20 + scale_exponent));  // |m| <= 2^20: exact
  } else {
    const std::int64_t m = static_cast<std::int64_t>(z >> 11) - (std::int64_t{1} << 52);
    return std::ldexp(static_cast<double>(m), -(52 + scale_exponent));  // |m| <= 2^52: exact
  }
}

/// Element `i` of stream `stream` under `seed` as a T with scale exponent `e`.
template <class T>
T stream_value(std::uint64_t seed, std::uint64_t stream, std::uint64_t i, int scale_exponent) {
  return value_from_bits<T>(stream_bits(seed, stream, i), scale_exponent);
}

/// Elements 0..count-1 of a stream.
template <class T>
std::vector<T> stream_values(std::uint64_t seed, std::uint64_t stream, std::size_t count,
                             int scale_exponent) {
  std::vector<T> v(count);
  const std::uint64_t base = splitmix64(seed ^ stream);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = value_from_bits<T>(splitmix64(base ^ static_cast<std::uint64_t>(i)), scale_exponent);
  return v;
}

/// ceil(log2(fan_in) / 2): the smallest e with 4^e >= fan_in (0 for fan_in <= 1).
inline int scale_exponent_for(std::size_t fan_in) noexcept {
  int e = 0;
  for (std::uint64_t p = 1; p < fan_in; p *= 4) ++e;
  return e;
}

// ------------------------------------------------------------------ fixture

/// A malformed or inconsistent fixture file.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How one parameter is generated: stream `stream`, scale exponent
/// `scale_exponent`, element i = its i-th element in row-major order.
struct param_spec {
  std::string name;                ///< PyTorch state_dict name, e.g. "W_query.weight"
  std::vector<std::size_t> shape;  ///< PyTorch shape, weight [out][in], bias [out]
  std::uint64_t stream = 0;        ///< = index in state_dict order (masks excluded)
  int scale_exponent = 0;          ///< ceil(log2(fan_in) / 2)
  std::size_t size() const noexcept {
    std::size_t n = 1;
    for (const std::size_t e : shape) n *= e;
    return n;
  }
};

/// One step of a fixture: an append of `tokens` new tokens or a truncate to `size`.
struct step {
  enum class kind { append, truncate };
  kind op = kind::append;
  // append:
  std::size_t first_token = 0;        ///< index of the first new token in the input stream
  std::size_t tokens = 0;             ///< k, the number of new tokens per sequence
  std::size_t cache_size_before = 0;  ///< cached tokens before the step
  std::vector<double> output;         ///< expected output [batch][tokens][output_width]
  // truncate:
  std::size_t size = 0;  ///< cached tokens kept
};

/// Everything a fixture file says (its metadata, parameter specs and steps),
/// checked for consistency by parse().
struct fixture_info {
  std::string path;  ///< the file it was loaded from
  std::string generated_by, name, module, dtype;
  std::uint64_t seed = 0;
  std::size_t d_in = 0, d_out = 0, context_length = 0, num_heads = 0, batch = 0;
  std::size_t output_width = 0;  ///< d_out, or num_heads * d_out for the wrapper
  bool qkv_bias = false;
  /// grouped_query_attention: the key/value groups (divides num_heads); the
  /// other kinds (no such key in the file): num_heads.
  std::size_t num_kv_heads = 0;
  /// grouped_query_attention: RoPE base theta, 0 = no RoPE; 0 for the other kinds.
  double rope_theta_base = 0;
  /// Whether the file's module has an out_proj bias: grouped_query_attention:
  /// the file's out_proj_bias; multi_head_attention: true; the others: false.
  bool out_proj_bias = false;
  std::vector<param_spec> params;  ///< state_dict order
  std::uint64_t input_stream = 0;
  int input_scale_exponent = 0;
  std::size_t total_tokens = 0;  ///< tokens per sequence in the input stream
  std::vector<step> steps;

  /// Shape of parameter `name` (throws kv_fixture::error when there is none).
  const std::vector<std::size_t>& parameter_shape(const std::string& param_name) const {
    for (const auto& p : params)
      if (p.name == param_name) return p.shape;
    throw error(path + ": no parameter " + param_name);
  }
  /// d_out / num_heads for multi_head_attention and grouped_query_attention,
  /// d_out for the other kinds (each head's width).
  std::size_t head_dim() const noexcept {
    return module == "multi_head_attention" || module == "grouped_query_attention"
               ? d_out / num_heads
               : d_out;
  }
  /// Sum of the element counts of every parameter.
  std::size_t parameter_count() const noexcept {
    std::size_t n = 0;
    for (const auto& p : params) n += p.size();
    return n;
  }
  /// Stream indices of an append step's new tokens: first_token .. first_token + tokens - 1.
  static std::vector<std::size_t> new_tokens(const step& s) {
    std::vector<std::size_t> v(s.tokens);
    for (std::size_t r = 0; r < s.tokens; ++r) v[r] = s.first_token + r;
    return v;
  }
  /// Stream indices of the cached tokens, in cache order, after steps 0..step_index.
  std::vector<std::size_t> cached_tokens_after(std::size_t step_index) const {
    std::vector<std::size_t> seq;
    for (std::size_t i = 0; i <= step_index && i < steps.size(); ++i) {
      const step& s = steps[i];
      if (s.op == step::kind::append) {
        for (std::size_t r = 0; r < s.tokens; ++r) seq.push_back(s.first_token + r);
      } else {
        seq.resize(s.size);
      }
    }
    return seq;
  }
};

/// A loaded fixture with its generated parameters and input stream. T is
/// the fixture's element type (float for "float32", double for "float64").
template <class T>
struct fixture : fixture_info {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "kv_fixture: T must be float or double");

  /// Generated parameter values by name (row-major, PyTorch layout).
  std::map<std::string, std::vector<T>> parameters;
  /// The whole input stream x [batch][total_tokens][d_in].
  std::vector<T> input;

  /// Parameter `name` (throws kv_fixture::error when there is none).
  const std::vector<T>& parameter(const std::string& param_name) const {
    const auto it = parameters.find(param_name);
    if (it == parameters.end()) throw error(path + ": no parameter " + param_name);
    return it->second;
  }
  /// Feature f of stream token `token` of sequence b.
  T input_at(std::size_t b, std::size_t token, std::size_t f) const {
    return input.at((b * total_tokens + token) * d_in + f);
  }

  /// Copies stream tokens `tokens` (in order) of sequences first_seq ..
  /// first_seq + seq_count - 1 into dst, laid out [seq_count][dst_tokens][d_in]:
  /// row r of sequence s is stream token tokens[r] of sequence first_seq + s.
  /// Rows tokens.size() .. dst_tokens-1 of each sequence are not written.
  /// seq_count == 0 means every sequence from first_seq on.
  void gather(const std::vector<std::size_t>& tokens, T* dst, std::size_t dst_tokens,
              std::size_t first_seq = 0, std::size_t seq_count = 0) const {
    if (seq_count == 0) seq_count = batch - first_seq;
    if (first_seq + seq_count > batch || tokens.size() > dst_tokens)
      throw error(path + ": gather out of range");
    for (std::size_t s = 0; s < seq_count; ++s)
      for (std::size_t r = 0; r < tokens.size(); ++r) {
        if (tokens[r] >= total_tokens) throw error(path + ": token index beyond the input stream");
        const T* src = input.data() + ((first_seq + s) * total_tokens + tokens[r]) * d_in;
        T* row = dst + (s * dst_tokens + r) * d_in;
        for (std::size_t f = 0; f < d_in; ++f) row[f] = src[f];
      }
  }

  /// The input of an append step, [batch][tokens][d_in].
  std::vector<T> step_input(const step& s) const {
    std::vector<T> v(batch * s.tokens * d_in);
    gather(new_tokens(s), v.data(), s.tokens);
    return v;
  }
};

namespace detail {

inline const nlohmann::json& at(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw error(where + ": missing key \"" + key + "\"");
  return j.at(key);
}
inline std::size_t size_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = at(j, key, where);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw error(where + ": \"" + key + "\" must be a non-negative integer");
  return v.get<std::size_t>();
}
inline std::string string_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = at(j, key, where);
  if (!v.is_string()) throw error(where + ": \"" + key + "\" must be a string");
  return v.get<std::string>();
}
inline std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

}  // namespace detail

/// Reads and checks a fixture file (not its values). Checks: every key of the
/// schema, dtype, module and num_heads; for grouped_query_attention also
/// num_kv_heads (divides num_heads), rope_theta_base (finite, >= 0; RoPE needs
/// an even head_dim), out_proj_bias and the parameter names and shapes, and that
/// the other kinds have none of these three keys; the parameter streams (= index) and
/// scale exponents (by the fan-in rule), the input stream (1000, exponent 0),
/// the append cursor (first_token = tokens drawn before), cache sizes
/// (cache_size_before, truncate <= size, <= context_length), output shapes
/// and sizes.
inline fixture_info parse(const std::filesystem::path& file) {
  using detail::at;
  using detail::size_at;
  using detail::string_at;
  fixture_info fx;
  fx.path = file.string();
  const std::string& w = fx.path;

  std::ifstream in(file);
  if (!in) throw error(w + ": cannot open");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw error(w + ": " + e.what());
  }

  fx.generated_by = string_at(j, "generated_by", w);
  if (fx.generated_by.empty()) throw error(w + ": empty generated_by");
  fx.name = string_at(j, "name", w);
  if (file.stem().string() != fx.name) throw error(w + ": name \"" + fx.name + "\" is not the file name");
  fx.module = string_at(j, "module", w);
  if (fx.module != "causal_attention" && fx.module != "multi_head_attention_wrapper" &&
      fx.module != "multi_head_attention" && fx.module != "grouped_query_attention")
    throw error(w + ": unknown module \"" + fx.module + "\"");
  fx.dtype = string_at(j, "dtype", w);
  if (fx.dtype != "float32" && fx.dtype != "float64") throw error(w + ": unknown dtype " + fx.dtype);
  {
    const auto& s = at(j, "seed", w);
    if (!s.is_number_unsigned() && !(s.is_number_integer() && s.get<std::int64_t>() >= 0))
      throw error(w + ": seed must be a non-negative integer");
    fx.seed = s.get<std::uint64_t>();
  }
  fx.d_in = size_at(j, "d_in", w);
  fx.d_out = size_at(j, "d_out", w);
  fx.context_length = size_at(j, "context_length", w);
  fx.num_heads = size_at(j, "num_heads", w);
  fx.batch = size_at(j, "batch", w);
  if (!at(j, "qkv_bias", w).is_boolean()) throw error(w + ": qkv_bias must be a boolean");
  fx.qkv_bias = j.at("qkv_bias").get<bool>();
  if (fx.d_in == 0 || fx.d_out == 0 || fx.context_length == 0 || fx.num_heads == 0 || fx.batch == 0)
    throw error(w + ": a zero size");
  if (fx.module == "causal_attention" && fx.num_heads != 1)
    throw error(w + ": causal_attention with num_heads != 1");
  const bool gqa = fx.module == "grouped_query_attention";
  if ((fx.module == "multi_head_attention" || gqa) && fx.d_out % fx.num_heads != 0)
    throw error(w + ": d_out not divisible by num_heads");
  for (const char* key : {"num_kv_heads", "rope_theta_base", "out_proj_bias"})
    if (!gqa && j.contains(key))
      throw error(w + ": \"" + key + "\" is only for grouped_query_attention");
  fx.num_kv_heads = fx.num_heads;
  fx.out_proj_bias = fx.module == "multi_head_attention";
  if (gqa) {
    fx.num_kv_heads = size_at(j, "num_kv_heads", w);
    if (fx.num_kv_heads == 0 || fx.num_heads % fx.num_kv_heads != 0)
      throw error(w + ": num_heads " + std::to_string(fx.num_heads) +
                  " not divisible by num_kv_heads " + std::to_string(fx.num_kv_heads));
    const auto& theta = at(j, "rope_theta_base", w);
    if (!theta.is_number()) throw error(w + ": rope_theta_base must be a number");
    fx.rope_theta_base = theta.get<double>();
    if (!std::isfinite(fx.rope_theta_base) || fx.rope_theta_base < 0)
      throw error(w + ": rope_theta_base must be finite and >= 0 (0 = no RoPE)");
    if (fx.rope_theta_base > 0 && fx.head_dim() % 2 != 0)
      throw error(w + ": RoPE needs an even head_dim, got " + std::to_string(fx.head_dim()));
    if (!at(j, "out_proj_bias", w).is_boolean()) throw error(w + ": out_proj_bias must be a boolean");
    fx.out_proj_bias = j.at("out_proj_bias").get<bool>();
  }
  fx.output_width = fx.module == "multi_head_attention_wrapper" ? fx.num_heads * fx.d_out : fx.d_out;

  // Parameters: specs, then values from the generator.
  const auto& params = at(j, "params", w);
  if (!params.is_array()) throw error(w + ": params must be a list");
  for (const auto& p : params) {
    param_spec spec;
    spec.name = string_at(p, "name", w);
    const std::string pw = w + ": parameter " + spec.name;
    const auto& shape = at(p, "shape", pw);
    if (!shape.is_array() || shape.empty()) throw error(pw + ": bad shape");
    spec.shape = shape.get<std::vector<std::size_t>>();
    spec.stream = at(p, "stream", pw).get<std::uint64_t>();
    spec.scale_exponent = at(p, "scale_exponent", pw).get<int>();
    if (spec.stream != fx.params.size())
      throw error(pw + ": stream " + std::to_string(spec.stream) + " is not its index " +
                  std::to_string(fx.params.size()));
    fx.params.push_back(std::move(spec));
  }
  for (const auto& spec : fx.params) {
    const std::string pw = w + ": parameter " + spec.name;
    // fan_in: weight.shape[1] of the parameter's layer.
    std::string weight_name = spec.name;
    const std::string bias_suffix = ".bias", weight_suffix = ".weight";
    const auto ends_with = [](const std::string& s, const std::string& suffix) {
      return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(spec.name, bias_suffix)) {
      weight_name = spec.name.substr(0, spec.name.size() - bias_suffix.size()) + weight_suffix;
      if (spec.shape.size() != 1) throw error(pw + ": a bias must have rank 1");
    } else if (ends_with(spec.name, weight_suffix)) {
      if (spec.shape.size() != 2) throw error(pw + ": a weight must have rank 2");
    } else {
      throw error(pw + ": neither a weight nor a bias");
    }
    const param_spec* weight = nullptr;
    for (const auto& q : fx.params)
      if (q.name == weight_name) weight = &q;
    if (weight == nullptr || weight->shape.size() != 2)
      throw error(pw + ": no weight " + weight_name + " for its fan-in");
    if (spec.scale_exponent != scale_exponent_for(weight->shape[1]))
      throw error(pw + ": scale_exponent " + std::to_string(spec.scale_exponent) +
                  " is not ceil(log2(fan_in)/2) = " +
                  std::to_string(scale_exponent_for(weight->shape[1])));
    for (const auto& q : fx.params)
      if (&q != &spec && q.name == spec.name) throw error(pw + ": listed twice");
  }

  if (gqa) {
    // Exactly the module's parameters, in state_dict order, with its shapes.
    const std::size_t kv_width = fx.num_kv_heads * fx.head_dim();
    std::vector<std::pair<std::string, std::vector<std::size_t>>> expected;
    const auto layer = [&](const std::string& name, std::size_t out, std::size_t in_features, bool bias) {
      expected.emplace_back(name + ".weight", std::vector<std::size_t>{out, in_features});
      if (bias) expected.emplace_back(name + ".bias", std::vector<std::size_t>{out});
    };
    layer("W_query", fx.d_out, fx.d_in, fx.qkv_bias);
    layer("W_key", kv_width, fx.d_in, fx.qkv_bias);
    layer("W_value", kv_width, fx.d_in, fx.qkv_bias);
    layer("out_proj", fx.d_out, fx.d_out, fx.out_proj_bias);
    if (fx.params.size() != expected.size())
      throw error(w + ": " + std::to_string(fx.params.size()) + " parameters, grouped_query_attention "
                  "with these sizes and biases has " + std::to_string(expected.size()));
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (fx.params[i].name != expected[i].first || fx.params[i].shape != expected[i].second)
        throw error(w + ": parameter " + std::to_string(i) + " is " + fx.params[i].name + " " +
                    detail::shape_text(fx.params[i].shape) + ", expected " + expected[i].first +
                    " " + detail::shape_text(expected[i].second));
  }

  // Input stream.
  const auto& stream = at(j, "input_stream", w);
  fx.input_stream = at(stream, "stream", w + ": input_stream").get<std::uint64_t>();
  fx.input_scale_exponent = at(stream, "scale_exponent", w + ": input_stream").get<int>();
  fx.total_tokens = size_at(stream, "tokens", w + ": input_stream");
  if (fx.input_stream != 1000 || fx.input_scale_exponent != 0)
    throw error(w + ": input_stream must be stream 1000 with scale_exponent 0");

  // Steps.
  const auto& steps = at(j, "steps", w);
  if (!steps.is_array()) throw error(w + ": steps must be a list");
  std::size_t cursor = 0, size = 0;
  for (const auto& s : steps) {
    const std::string sw = w + ": step " + std::to_string(fx.steps.size());
    step st;
    const std::string op = string_at(s, "op", sw);
    if (op == "append") {
      st.op = step::kind::append;
      st.first_token = size_at(s, "first_token", sw);
      st.tokens = size_at(s, "tokens", sw);
      st.cache_size_before = size_at(s, "cache_size_before", sw);
      if (st.tokens == 0) throw error(sw + ": append of 0 tokens");
      if (st.first_token != cursor)
        throw error(sw + ": first_token " + std::to_string(st.first_token) +
                    " is not the next unused token " + std::to_string(cursor));
      if (st.cache_size_before != size)
        throw error(sw + ": cache_size_before " + std::to_string(st.cache_size_before) +
                    ", the steps give " + std::to_string(size));
      cursor += st.tokens;
      size += st.tokens;
      if (size > fx.context_length) throw error(sw + ": appends beyond the context length");
      const auto& out = at(s, "output", sw);
      const auto shape = at(out, "shape", sw + " output").get<std::vector<std::size_t>>();
      const std::vector<std::size_t> expected_shape{fx.batch, st.tokens, fx.output_width};
      if (shape != expected_shape)
        throw error(sw + ": output shape " + detail::shape_text(shape) + ", expected " +
                    detail::shape_text(expected_shape));
      st.output = at(out, "data", sw + " output").get<std::vector<double>>();
      if (st.output.size() != fx.batch * st.tokens * fx.output_width)
        throw error(sw + ": output has " + std::to_string(st.output.size()) + " values");
    } else if (op == "truncate") {
      st.op = step::kind::truncate;
      st.size = size_at(s, "size", sw);
      if (st.size > size)
        throw error(sw + ": truncate to " + std::to_string(st.size) + " with only " +
                    std::to_string(size) + " tokens cached");
      size = st.size;
    } else {
      throw error(sw + ": unknown op \"" + op + "\"");
    }
    fx.steps.push_back(std::move(st));
  }
  if (cursor != fx.total_tokens)
    throw error(w + ": the appends draw " + std::to_string(cursor) + " tokens, input_stream says " +
                std::to_string(fx.total_tokens));
  return fx;
}

/// Loads a fixture file (parse()), checks that its dtype is T's and, for
/// float, that every expected output is exactly a float, then generates its
/// parameters and input stream.
template <class T>
fixture<T> load(const std::filesystem::path& file) {
  fixture<T> fx;
  static_cast<fixture_info&>(fx) = parse(file);
  if (fx.dtype != (std::is_same_v<T, float> ? "float32" : "float64"))
    throw error(fx.path + ": dtype " + fx.dtype + " loaded as the wrong element type");
  for (const auto& st : fx.steps)
    for (const double v : st.output)
      if (static_cast<double>(static_cast<T>(v)) != v)
        throw error(fx.path + ": an output value is not exactly representable in " + fx.dtype);
  for (const auto& spec : fx.params)
    fx.parameters.emplace(spec.name,
                          stream_values<T>(fx.seed, spec.stream, spec.size(), spec.scale_exponent));
  fx.input = stream_values<T>(fx.seed, fx.input_stream, fx.batch * fx.total_tokens * fx.d_in,
                              fx.input_scale_exponent);
  return fx;
}

}  // namespace kv_fixture
