// fuzz_dynamic_session.hpp -- the body of the libFuzzer target fuzz_dynamic: the
// mha::dynamic API (issue 11, "fuzz target for the dynamic API").
//
// Included by two translation units, fuzz_dynamic.cpp (the entry point and the
// double instantiations) and fuzz_dynamic_float.cpp (the float ones), so that
// the target's build uses both cores (one TU took 153 CPU s). Every
// name below is in an anonymous namespace: each TU has its own copy.
//
// The input is a small program: byte 0 picks the element type, the module
// (causal_attention, multi_head_attention_wrapper, multi_head_attention) and
// whether its sizes are one of the compile-time shapes below; then come the
// sizes (any, including zero and d_out not divisible by num_heads) and a
// sequence of calls: whole-sequence forwards (inference and training, every
// overload), KV-cache forwards (prefill, decode, overflow, caches of another
// batch or module), truncate/clear, tensor access, replaced weights, wrong
// input/output shapes and token counts. Every call must either succeed and
// match the reference, or throw exactly the exception the dynamic headers
// document for that misuse (std::invalid_argument, std::length_error,
// std::out_of_range); anything else (another exception, a wrong value, a
// crash, ASan/UBSan) traps with a message.
//
// References: a naive double-precision re-implementation of the book's
// chapter-3 math written here (loops, no library code; the dropout decision
// is re-implemented from its documented definition in detail/kernels/dropout.hpp),
// compared to a tolerance; and, when the sizes are one of the compile-time
// shapes, the fixed-size module with the same weights, compared bit for bit
// (README: "fixed and dynamic agree bit for bit"). KV-cache outputs are
// compared with the reference over all tokens so far (prefill + decode must
// equal the whole-sequence forward to rounding).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/dynamic.hpp>
#include <mha/mha.hpp>

namespace {

[[noreturn]] void fail(const char* what, double a = 0, double b = 0) {
  std::fprintf(stderr, "fuzz_dynamic: %s (%g, %g)\n", what, a, b);
  std::fflush(stderr);
  __builtin_trap();
}

/// The fuzz input, read front to back; zeros once it is exhausted.
struct program {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t byte() noexcept {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::size_t below(std::size_t k) noexcept { return k == 0 ? 0 : byte() % k; }
  bool flag() noexcept { return (byte() & 1) != 0; }
};

/// Deterministic values in [-1, 1) (SplitMix64 stream).
struct values {
  std::uint64_t state;
  double next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) / 4503599627370496.0 - 1.0;  // 2^52
  }
};

// ---------------------------------------------------------------- outcomes

enum : unsigned { ok = 1, invalid = 2, length = 4, range = 8 };

/// Runs f and returns which outcome happened; any other exception traps.
template <class F>
unsigned outcome_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
    return invalid;
  } catch (const std::length_error&) {
    return length;
  } catch (const std::out_of_range&) {
    return range;
  } catch (...) {
    fail("an exception of an undocumented type");
  }
  return ok;
}

/// What the current call is about, for the message of a failure.
std::string context;

std::string shape_text(const std::vector<std::size_t>& s) {
  std::string t;
  for (const auto e : s) t += "[" + std::to_string(e) + "]";
  return t;
}

#if defined(MHA_FUZZ_STATS)  // -DMHA_FUZZ_STATS: how often each call had each outcome
struct stats {
  std::vector<std::pair<std::string, std::array<unsigned long, 9>>> rows;
  ~stats() {
    for (const auto& [what, n] : rows)
      std::fprintf(stderr, "%-40s ok %lu invalid %lu length %lu range %lu\n", what.c_str(), n[1],
                   n[2], n[4], n[8]);
  }
} counts;
#endif

/// `allowed`: the documented outcomes (ok alone when the call is valid).
void expect(unsigned happened, unsigned allowed, const char* what) {
#if defined(MHA_FUZZ_STATS)
  auto it = counts.rows.begin();
  while (it != counts.rows.end() && it->first != what) ++it;
  if (it == counts.rows.end()) it = counts.rows.insert(it, {what, {}});
  ++it->second[happened];
#endif
  if ((happened & allowed) == 0) {
    std::fprintf(stderr, "fuzz_dynamic: %s: outcome %u (1 ok, 2 invalid_argument, 4 length_error, "
                 "8 out_of_range), documented %u; %s\n", what, happened, allowed, context.c_str());
    fail("undocumented outcome");
  }
}

// ---------------------------------------------------------------- the naive reference

/// SplitMix64 finaliser (as documented in detail/kernels/dropout.hpp).
std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Dropout of one head for one call: weight (b, h, i, j) kept iff its 53-bit
/// draw is >= p * 2^53; kept weights scaled by 1 / (1 - p) (in T), p = 1 drops all.
template <class T>
struct ref_dropout {
  bool active = false;
  std::uint64_t seed = 0, threshold = 0;
  double scale = 1;
  ref_dropout(T p, std::uint64_t s, bool training) {
    if (!training || !(p > T(0))) return;
    active = true;
    seed = mix(s);
    if (p >= T(1)) {
      threshold = std::uint64_t{1} << 53;
      scale = 0;
    } else {
      threshold = static_cast<std::uint64_t>(static_cast<double>(p) * 9007199254740992.0);
      scale = static_cast<double>(T(1) / (T(1) - p));
    }
  }
  double factor(std::size_t b, std::size_t h, std::size_t i, std::size_t j) const {
    if (!active) return 1;
    std::uint64_t z = mix(seed ^ h);
    z = mix(z ^ b);
    z = mix(z ^ ((static_cast<std::uint64_t>(i) << 32) | j));
    return (z >> 11) >= threshold ? scale : 0.0;
  }
};

/// y[r][o] = bias[o] + sum_i x[r][i] weight[o][i] for `rows` rows (nn.Linear).
template <class T>
std::vector<double> ref_linear(const std::vector<double>& x, std::size_t rows,
                               const mha::dynamic::linear<T>& l) {
  const std::size_t in = l.in_features(), out = l.out_features();
  std::vector<double> y(rows * out);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      double s = l.has_bias() ? static_cast<double>(l.bias.data()[o]) : 0.0;
      for (std::size_t i = 0; i < in; ++i)
        s += x[r * in + i] * static_cast<double>(l.weight.data()[o * in + i]);
      y[r * out + o] = s;
    }
  return y;
}

/// One causal head of one sequence b (book 3.5): queries/keys/values are
/// columns [c0, c0 + hd) of q, k, v ([n][stride]); writes those columns of ctx.
template <class T>
void ref_head(const std::vector<double>& q, const std::vector<double>& k,
              const std::vector<double>& v, std::size_t n, std::size_t stride, std::size_t c0,
              std::size_t hd, std::size_t row0, const ref_dropout<T>& drop, std::size_t b,
              std::size_t h, std::vector<double>& ctx) {
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j <= i; ++j) {  // keys above the diagonal are masked
      double s = 0;
      for (std::size_t c = 0; c < hd; ++c)
        s += q[(row0 + i) * stride + c0 + c] * k[(row0 + j) * stride + c0 + c];
      w[j] = s / std::sqrt(static_cast<double>(hd));
      mx = w[j] > mx ? w[j] : mx;
    }
    double sum = 0;
    for (std::size_t j = 0; j <= i; ++j) sum += (w[j] = std::exp(w[j] - mx));
    for (std::size_t c = 0; c < hd; ++c) {
      double acc = 0;
      for (std::size_t j = 0; j <= i; ++j)
        acc += w[j] / sum * drop.factor(b, h, i, j) * v[(row0 + j) * stride + c0 + c];
      ctx[(row0 + i) * stride + c0 + c] = acc;
    }
  }
}

/// The reference forward of `batch` sequences of n tokens, x [batch][n][d_in].
template <class T>
std::vector<double> reference(const mha::dynamic::causal_attention<T>& m,
                              const std::vector<double>& x, std::size_t batch, std::size_t n,
                              bool training, std::uint64_t seed) {
  const auto q = ref_linear(x, batch * n, m.w_query), k = ref_linear(x, batch * n, m.w_key),
             v = ref_linear(x, batch * n, m.w_value);
  std::vector<double> ctx(batch * n * m.d_out());
  const ref_dropout<T> drop(m.dropout, seed, training);
  for (std::size_t b = 0; b < batch; ++b)
    ref_head(q, k, v, n, m.d_out(), 0, m.d_out(), b * n, drop, b, 0, ctx);
  return ctx;
}

template <class T>
std::vector<double> reference(const mha::dynamic::multi_head_attention_wrapper<T>& m,
                              const std::vector<double>& x, std::size_t batch, std::size_t n,
                              bool training, std::uint64_t seed) {
  const std::size_t d = m.d_out(), width = m.num_heads() * d;
  std::vector<double> out(batch * n * width);
  for (std::size_t h = 0; h < m.num_heads(); ++h) {  // heads concatenated in order
    const auto& head = m.heads[h];
    const auto q = ref_linear(x, batch * n, head.w_query), k = ref_linear(x, batch * n, head.w_key),
               v = ref_linear(x, batch * n, head.w_value);
    std::vector<double> ctx(batch * n * d);
    const ref_dropout<T> drop(head.dropout, seed, training);
    for (std::size_t b = 0; b < batch; ++b) ref_head(q, k, v, n, d, 0, d, b * n, drop, b, h, ctx);
    for (std::size_t r = 0; r < batch * n; ++r)
      for (std::size_t c = 0; c < d; ++c) out[r * width + h * d + c] = ctx[r * d + c];
  }
  return out;
}

template <class T>
std::vector<double> reference(const mha::dynamic::multi_head_attention<T>& m,
                              const std::vector<double>& x, std::size_t batch, std::size_t n,
                              bool training, std::uint64_t seed) {
  const std::size_t d = m.d_out(), hd = m.head_dim();
  const auto q = ref_linear(x, batch * n, m.w_query), k = ref_linear(x, batch * n, m.w_key),
             v = ref_linear(x, batch * n, m.w_value);
  std::vector<double> ctx(batch * n * d);
  const ref_dropout<T> drop(m.dropout, seed, training);
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < m.num_heads(); ++h)  // head h: columns [h*hd, (h+1)*hd)
      ref_head(q, k, v, n, d, h * hd, hd, b * n, drop, b, h, ctx);
  return ref_linear(ctx, batch * n, m.out_proj);
}

/// |got - ref| within the rounding of T for these (small, bounded) sizes.
template <class T>
void check_close(const T* got, const std::vector<double>& ref, const char* what) {
  double scale = 1;
  for (const double r : ref) scale = std::fabs(r) > scale ? std::fabs(r) : scale;
  const double tol = (std::is_same_v<T, float> ? 5e-4 : 1e-11) * scale;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    if (!(std::fabs(g - ref[i]) <= tol)) {
      std::fprintf(stderr, "fuzz_dynamic: %s: element %zu\n", what, i);
      fail("differs from the reference", g, ref[i]);
    }
  }
}

// ---------------------------------------------------------------- fixed-size twins

/// A compile-time shape of each module kind (the fuzzer picks it half of the time).
struct sizes {
  std::size_t d_in, d_out, context_length, num_heads;
  bool qkv_bias;
};
constexpr sizes fixed_causal{3, 4, 6, 1, true};
constexpr sizes fixed_wrapper{3, 2, 5, 2, false};
constexpr sizes fixed_mha{4, 6, 5, 3, true};

template <class T, std::size_t In, std::size_t Out, bool B>
void copy_linear(mha::linear<T, In, Out, B>& f, const mha::dynamic::linear<T>& d) {
  std::memcpy(f.weight.data(), d.weight.data(), sizeof(T) * In * Out);
  if constexpr (B) std::memcpy(f.bias.data(), d.bias.data(), sizeof(T) * Out);
}

template <class T, std::size_t I, std::size_t O, std::size_t C, bool B>
void copy_weights(mha::causal_attention<T, I, O, C, B>& f, const mha::dynamic::causal_attention<T>& d) {
  copy_linear(f.w_query, d.w_query), copy_linear(f.w_key, d.w_key), copy_linear(f.w_value, d.w_value);
  f.dropout = d.dropout;
}
template <class T, std::size_t I, std::size_t O, std::size_t C, std::size_t H, bool B>
void copy_weights(mha::multi_head_attention_wrapper<T, I, O, C, H, B>& f,
                  const mha::dynamic::multi_head_attention_wrapper<T>& d) {
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (copy_weights(f.template head<K>(), d.heads[K]), ...);
  }(std::make_index_sequence<H>{});
}
template <class T, std::size_t I, std::size_t O, std::size_t C, std::size_t H, bool B>
void copy_weights(mha::multi_head_attention<T, I, O, C, H, B>& f,
                  const mha::dynamic::multi_head_attention<T>& d) {
  copy_linear(f.w_query, d.w_query), copy_linear(f.w_key, d.w_key), copy_linear(f.w_value, d.w_value);
  copy_linear(f.out_proj, d.out_proj);
  f.dropout = d.dropout;
}

/// The fixed-size module Fixed with the dynamic module's weights, one
/// sequence at a time, with a KV cache per sequence.
template <class Fixed>
struct twin {
  using T = typename Fixed::value_type;
  static constexpr std::size_t ctx = Fixed::context_length, d_in = Fixed::d_in,
                               width = Fixed::output_width;
  std::unique_ptr<Fixed> model = std::make_unique<Fixed>();
  std::unique_ptr<typename Fixed::template workspace<1, ctx>> ws =
      std::make_unique<typename Fixed::template workspace<1, ctx>>();
  std::array<std::unique_ptr<typename Fixed::template kv_cache<1>>, 4> caches;
  std::unique_ptr<mha::tensor<T, 1, ctx, d_in>> x = std::make_unique<mha::tensor<T, 1, ctx, d_in>>();
  std::unique_ptr<mha::tensor<T, 1, ctx, width>> y = std::make_unique<mha::tensor<T, 1, ctx, width>>();

  template <class Dynamic>
  void load(const Dynamic& d) {
    copy_weights(*model, d);
  }
  void reset_caches() {
    for (auto& c : caches) c = std::make_unique<typename Fixed::template kv_cache<1>>();
  }
  void set_rows(const T* rows, std::size_t n) {
    *x = {};
    std::memcpy(x->data(), rows, sizeof(T) * n * d_in);
  }
  /// Whole-sequence forward of n rows: must equal `got` ([n][width]) bit for bit.
  void check_forward(const T* rows, std::size_t n, const T* got) {
    set_rows(rows, n);
    if (model->forward(*x, n, *y, *ws) != mha::status::ok) fail("fixed forward failed");
    if (std::memcmp(y->data(), got, sizeof(T) * n * width) != 0) fail("dynamic != fixed (forward)");
  }
  /// Training forward of ctx rows (the fixed training forward has compile-time N).
  void check_training(const T* rows, std::uint64_t seed, const T* got) {
    set_rows(rows, ctx);
    model->forward_training(*x, *y, *ws, seed);
    if (std::memcmp(y->data(), got, sizeof(T) * ctx * width) != 0) fail("dynamic != fixed (training)");
  }
  /// Cached forward of sequence b's n new rows.
  void check_cached(std::size_t b, const T* rows, std::size_t n, const T* got) {
    set_rows(rows, n);
    if (model->forward(*x, n, *y, *caches[b], *ws) != mha::status::ok) fail("fixed cached forward failed");
    if (std::memcmp(y->data(), got, sizeof(T) * n * width) != 0) fail("dynamic != fixed (KV cache)");
  }
  /// truncate(n) of the dynamic cache: the sequences in use hold its size()
  /// tokens, the others none (truncate's precondition is n <= size()).
  void truncate(std::size_t n) {
    for (auto& c : caches)
      if (n <= c->size()) c->truncate(n);
  }
};

template <class T>
using fixed_causal_t = mha::causal_attention<T, fixed_causal.d_in, fixed_causal.d_out,
                                             fixed_causal.context_length, fixed_causal.qkv_bias>;
template <class T>
using fixed_wrapper_t =
    mha::multi_head_attention_wrapper<T, fixed_wrapper.d_in, fixed_wrapper.d_out,
                                      fixed_wrapper.context_length, fixed_wrapper.num_heads,
                                      fixed_wrapper.qkv_bias>;
template <class T>
using fixed_mha_t = mha::multi_head_attention<T, fixed_mha.d_in, fixed_mha.d_out,
                                              fixed_mha.context_length, fixed_mha.num_heads,
                                              fixed_mha.qkv_bias>;

template <class Dynamic>
struct fixed_of;
template <class T>
struct fixed_of<mha::dynamic::causal_attention<T>> {
  using type = fixed_causal_t<T>;
  static constexpr sizes shape = fixed_causal;
};
template <class T>
struct fixed_of<mha::dynamic::multi_head_attention_wrapper<T>> {
  using type = fixed_wrapper_t<T>;
  static constexpr sizes shape = fixed_wrapper;
};
template <class T>
struct fixed_of<mha::dynamic::multi_head_attention<T>> {
  using type = fixed_mha_t<T>;
  static constexpr sizes shape = fixed_mha;
};

// ---------------------------------------------------------------- the modules

/// The module's constructor call for `s` (an overload per module kind; as
/// templates, so that a TU instantiating one element type only has no unused
/// function).
template <class M>
struct type_tag {};
template <class T>
mha::dynamic::causal_attention<T> make_of(type_tag<mha::dynamic::causal_attention<T>>, const sizes& s) {
  return {s.d_in, s.d_out, s.context_length, s.qkv_bias};
}
template <class T>
mha::dynamic::multi_head_attention_wrapper<T> make_of(
    type_tag<mha::dynamic::multi_head_attention_wrapper<T>>, const sizes& s) {
  return {s.d_in, s.d_out, s.context_length, s.num_heads, s.qkv_bias};
}
template <class T>
mha::dynamic::multi_head_attention<T> make_of(type_tag<mha::dynamic::multi_head_attention<T>>,
                                              const sizes& s) {
  return {s.d_in, s.d_out, s.context_length, s.num_heads, s.qkv_bias};
}
template <class M>
M make(const sizes& s) {
  return make_of(type_tag<M>{}, s);
}

template <class M>
bool constructible(const sizes& s) {
  const bool base = s.d_in > 0 && s.d_out > 0 && s.context_length > 0;
  if constexpr (std::is_same_v<M, mha::dynamic::causal_attention<typename M::value_type>>)
    return base;
  else if constexpr (std::is_same_v<M, mha::dynamic::multi_head_attention_wrapper<typename M::value_type>>)
    return base && s.num_heads > 0;
  else
    return base && s.num_heads > 0 && s.d_out % s.num_heads == 0;
}

template <class T>
void fill(mha::dynamic::linear<T>& l, values& v, double scale) {
  for (auto& w : l.weight) w = static_cast<T>(scale * v.next());
  for (auto& b : l.bias) b = static_cast<T>(scale * v.next());
}
template <class T>
void fill(mha::dynamic::causal_attention<T>& m, values& v) {
  fill(m.w_query, v, 0.25), fill(m.w_key, v, 0.25), fill(m.w_value, v, 0.25);
}
template <class T>
void fill(mha::dynamic::multi_head_attention_wrapper<T>& m, values& v) {
  for (auto& h : m.heads) fill(h, v);
}
template <class T>
void fill(mha::dynamic::multi_head_attention<T>& m, values& v) {
  fill(m.w_query, v, 0.25), fill(m.w_key, v, 0.25), fill(m.w_value, v, 0.25);
  fill(m.out_proj, v, 0.25);
}

template <class T>
void set_dropout(mha::dynamic::causal_attention<T>& m, T p, std::size_t) { m.dropout = p; }
template <class T>
void set_dropout(mha::dynamic::multi_head_attention<T>& m, T p, std::size_t) { m.dropout = p; }
template <class T>
void set_dropout(mha::dynamic::multi_head_attention_wrapper<T>& m, T p, std::size_t which) {
  if (which == 0 || m.heads.empty()) m.set_dropout(p);
  else m.heads[which % m.heads.size()].dropout = p;  // one head differs
}
template <class T>
bool dropout_valid(const mha::dynamic::causal_attention<T>& m) { return m.dropout >= T(0) && m.dropout <= T(1); }
template <class T>
bool dropout_valid(const mha::dynamic::multi_head_attention<T>& m) { return m.dropout >= T(0) && m.dropout <= T(1); }
template <class T>
bool dropout_valid(const mha::dynamic::multi_head_attention_wrapper<T>& m) {
  for (const auto& h : m.heads)
    if (!(h.dropout >= T(0) && h.dropout <= T(1))) return false;
  return true;
}

// ---------------------------------------------------------------- one program

template <class M>
class session {
  using T = typename M::value_type;
  using fixed = typename fixed_of<M>::type;

 public:
  session(M m, program& in, values& v, bool is_fixed_shape)
      : m_(std::move(m)), in_(in), v_(v) {
    fill(m_, v_);
    if (is_fixed_shape) {
      twin_ = std::make_unique<twin<fixed>>();
      twin_->load(m_);
    }
  }

  void run() {
    for (int step = 0; step < 24 && in_.n > 0; ++step) {
      switch (in_.below(8)) {
        case 0:
        case 1: whole_forward(false); break;
        case 2: whole_forward(true); break;
        case 3:
        case 4: cached_forward(); break;
        case 5: cache_control(); break;
        case 6: replaced_parameters(); break;
        default: tensor_access(); break;
      }
    }
  }

 private:
  /// A shape around the valid one: rank 1-4, batch 0-3, tokens 0-(ctx+1), last d_in or off by one.
  std::vector<std::size_t> pick_input_shape(std::size_t tokens_max, bool& valid) {
    const std::size_t sel = in_.below(16);
    const std::size_t rank = sel < 9 ? 3 : sel < 14 ? 2 : sel == 14 ? 1 : 4;
    const std::size_t batch = 1 + in_.below(3) - (in_.below(16) == 0 ? 1 : 0);
    std::size_t tokens = 1 + in_.below(tokens_max);
    if (in_.below(16) == 0) tokens = in_.flag() ? 0 : m_.context_length() + 1;
    const std::size_t last = in_.below(16) == 0 ? m_.d_in() + 1 : m_.d_in();
    valid = (rank == 2 || (rank == 3 && batch >= 1)) && last == m_.d_in() && tokens >= 1 &&
            tokens <= m_.context_length();
    switch (rank) {
      case 1: return {last};
      case 2: return {tokens, last};
      case 3: return {batch, tokens, last};
      default: return {1, batch, tokens, last};
    }
  }
  /// Output of x's shape with last extent output_width(), or (sometimes) a wrong one.
  std::vector<std::size_t> pick_output_shape(const std::vector<std::size_t>& xs, bool& valid) {
    auto s = xs;
    s.back() = m_.output_width();
    valid = true;
    switch (in_.below(24)) {
      case 0: s.back() += 1, valid = false; break;
      case 1: s.insert(s.begin(), 1), valid = false; break;
      case 2:
        if (s.size() > 1) s[0] += 1, valid = false;
        break;
      default: break;
    }
    return s;
  }
  std::string describe() const {
    return "d_in " + std::to_string(m_.d_in()) + " d_out " + std::to_string(m_.d_out()) +
           " context " + std::to_string(m_.context_length()) + " heads " +
           std::to_string(m_.num_heads()) + " bias " + std::to_string(m_.qkv_bias());
  }
  void randomise(mha::dynamic::tensor<T>& t) {
    for (auto& e : t) e = static_cast<T>(v_.next());
  }
  static std::vector<double> as_double(const T* p, std::size_t n) { return {p, p + n}; }

  /// forward(x), forward(x, out), forward(x, out, ws), forward_training(...).
  void whole_forward(bool training) {
    bool x_ok = false, out_ok = true;
    const auto xs = pick_input_shape(m_.context_length(), x_ok);
    mha::dynamic::tensor<T> x(xs);
    randomise(x);
    if (in_.below(16) == 0) {  // a moved-from input: empty, shape {0}
      mha::dynamic::tensor<T> taken(std::move(x));
      x_ok = false;
      if (x.shape() != std::vector<std::size_t>{0} || x.size() != 0) fail("a moved-from tensor");
    }
    std::uint64_t seed = in_.byte();
    bool params_ok = true;
    if (training) {
      static constexpr double ps[] = {0.0, 0.25, 0.5, 1.0, -0.25, 1.5, 0.1, 0.0};
      const std::size_t k = in_.below(9);
      const T p = k == 8 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(ps[k]);
      set_dropout(m_, p, in_.below(3));
      params_ok = dropout_valid(m_);
    }
    const std::size_t variant = in_.below(3);
    mha::dynamic::tensor<T> out;
    if (variant != 0) out = mha::dynamic::tensor<T>(pick_output_shape(xs, out_ok));
    const unsigned allowed = x_ok && out_ok && params_ok ? ok : invalid;
    context = "module " + describe() + ", x " + shape_text(xs) + ", out " + shape_text(out.shape()) +
              ", variant " + std::to_string(variant);
    const unsigned got = outcome_of([&] {
      if (variant == 0)
        out = training ? m_.forward_training(x, seed) : (in_.flag() ? m_(x) : m_.forward(x));
      else if (variant == 1)
        training ? m_.forward_training(x, out, seed) : m_.forward(x, out);
      else
        training ? m_.forward_training(x, out, ws_, seed) : m_.forward(x, out, ws_);
    });
    expect(got, allowed, training ? "forward_training" : "forward");
    if (got != ok) return;
    const std::size_t batch = xs.size() == 3 ? xs[0] : 1, n = xs[xs.size() - 2];
    auto expected_shape = xs;
    expected_shape.back() = m_.output_width();
    if (out.shape() != expected_shape) fail("output shape");
    // (the dropout probabilities stay set: inference ignores them, and the
    // next training call picks its own)
    const auto ref = reference(m_, as_double(x.data(), x.size()), batch, n, training, seed);
    check_close(out.data(), ref, training ? "forward_training vs reference" : "forward vs reference");
    if (!twin_) return;
    const std::size_t w = m_.output_width(), d = m_.d_in();
    if (!training) {
      for (std::size_t b = 0; b < batch; ++b)
        twin_->check_forward(x.data() + b * n * d, n, out.data() + b * n * w);
    } else if (n == m_.context_length()) {
      // sequence 0 (its dropout mask is that of the fixed model's only sequence)
      twin_->load(m_);
      twin_->check_training(x.data(), seed, out.data());
    }
  }

  /// A KV-cache forward of n new tokens (prefill or decode), valid or not.
  void cached_forward() {
    if (!cache_ || in_.below(8) == 0) new_cache();
    if (!cache_) return;
    bool x_ok = false, out_ok = true;
    const std::size_t n_max = in_.flag() ? 2 : m_.context_length();  // decode steps often
    auto xs = pick_input_shape(n_max, x_ok);
    // reshape the persistent input in place (the streaming idiom), or a new tensor
    mha::dynamic::tensor<T>& x = stream_x_;
    const unsigned reshaped = outcome_of([&] {
      switch (xs.size()) {
        case 1: x.reshape({xs[0]}); break;
        case 2: x.reshape({xs[0], xs[1]}); break;
        case 3: x.reshape({xs[0], xs[1], xs[2]}); break;
        default: x.reshape({xs[0], xs[1], xs[2], xs[3]}); break;
      }
    });
    expect(reshaped, ok, "tensor::reshape");
    if (x.shape() != xs) fail("reshape gave another shape");
    randomise(x);
    mha::dynamic::tensor<T> out(pick_output_shape(xs, out_ok));
    for (auto& e : out) e = T(7);
    const std::size_t batch = xs.size() == 3 ? xs[0] : xs.size() == 2 ? 1 : 0;
    const std::size_t n = xs.size() >= 2 ? xs[xs.size() - 2] : 0;
    const bool cache_ok = cache_matches_ && batch == cache_->batch();
    const bool fits = n <= cache_->capacity() - cache_->size();
    unsigned allowed = 0;
    if (!x_ok || !out_ok || !cache_ok) allowed |= invalid;
    if (!fits) allowed |= length;
    if (allowed == 0) allowed = ok;
    const std::size_t size_before = cache_->size();
    context = "module " + describe() + ", x " + shape_text(xs) + ", out " + shape_text(out.shape()) +
              ", cache batch " + std::to_string(cache_->batch()) + " size " +
              std::to_string(size_before) + " capacity " + std::to_string(cache_->capacity()) +
              (cache_matches_ ? "" : " (another module's sizes)");
    const unsigned got = outcome_of([&] { m_.forward(x, out, *cache_, ws_); });
    expect(got, allowed, "forward with a KV cache");
    if (got != ok) {  // nothing written
      if (cache_->size() != size_before) fail("a failed cached forward changed the cache size");
      for (const auto e : out)
        if (e != T(7)) fail("a failed cached forward wrote its output");
      return;
    }
    if (cache_->size() != size_before + n) fail("cache size after a cached forward");
    // Each sequence: its history plus the new rows; the new rows' outputs are
    // the last n rows of the reference over the whole history.
    const std::size_t d = m_.d_in(), w = m_.output_width(), total = size_before + n;
    for (std::size_t b = 0; b < batch; ++b) {
      auto& h = history_[b];
      h.resize(size_before * d);
      h.insert(h.end(), x.data() + b * n * d, x.data() + (b + 1) * n * d);
      const auto ref = reference(m_, h, 1, total, false, 0);
      const std::vector<double> tail(ref.begin() + static_cast<std::ptrdiff_t>(size_before * w), ref.end());
      check_close(out.data() + b * n * w, tail, "KV-cache forward vs the reference over all tokens");
      // and the whole-sequence forward of the same module over all tokens
      mha::dynamic::tensor<T> all({1, total, d});
      for (std::size_t i = 0; i < h.size(); ++i) all.data()[i] = static_cast<T>(h[i]);
      const auto plain = m_.forward(all);
      check_close(out.data() + b * n * w,
                  as_double(plain.data() + size_before * w, n * w),
                  "KV-cache forward vs the whole-sequence forward");
      if (twin_ && b < twin_->caches.size())
        twin_->check_cached(b, x.data() + b * n * d, n, out.data() + b * n * w);
    }
  }
  /// A cache for this module, another batch, or another module (maybe of other sizes).
  void new_cache() {
    const std::size_t batch = in_.below(4);  // 0: std::invalid_argument
    const std::size_t kind = in_.below(4);
    cache_.reset();
    unsigned got = 0;
    if (kind != 0) {
      got = outcome_of([&] { cache_ = std::make_unique<mha::dynamic::kv_cache<T>>(m_, batch); });
      cache_matches_ = true;
    } else {  // from another module (any kind, any d_in): it serves every module of its sizes
      const std::size_t d_in = 1 + in_.below(8), heads = 1 + in_.below(4), ctx = 1 + in_.below(9);
      // the head_dim is often this module's, so that caches are shared across module kinds
      const std::size_t hd = in_.flag() ? m_.head_dim() : 1 + in_.below(6);
      std::size_t other_heads = 1;
      const auto make_from = [&](const auto& other) {
        other_heads = other.num_heads();
        got = outcome_of([&] { cache_ = std::make_unique<mha::dynamic::kv_cache<T>>(other, batch); });
        cache_matches_ = m_.num_heads() == other.num_heads() && m_.head_dim() == other.head_dim() &&
                         m_.context_length() == other.context_length();
      };
      switch (in_.below(3)) {
        case 0: make_from(mha::dynamic::causal_attention<T>(d_in, hd, ctx)); break;
        case 1: make_from(mha::dynamic::multi_head_attention_wrapper<T>(d_in, hd, ctx, heads)); break;
        default: make_from(mha::dynamic::multi_head_attention<T>(d_in, hd * heads, ctx, heads)); break;
      }
      if (got == ok && (cache_->num_heads() != other_heads || cache_->capacity() != ctx))
        fail("kv_cache sizes");
    }
    expect(got, batch == 0 ? invalid : ok, "kv_cache constructor");
    if (got != ok) return;
    if (cache_->size() != 0 || cache_->batch() != batch) fail("a new cache");
    for (auto& h : history_) h.clear();
    if (twin_) twin_->reset_caches();
  }
  /// truncate(k) (std::out_of_range beyond size()) or clear().
  void cache_control() {
    if (!cache_) return;
    const std::size_t size = cache_->size();
    if (in_.below(8) == 0) {  // a moved-from cache serves no module; moved back, it works on
      mha::dynamic::kv_cache<T> taken(std::move(*cache_));
      mha::dynamic::tensor<T> x({1, 1, m_.d_in()}), out({1, 1, m_.output_width()});
      context = "moved-from cache";
      expect(outcome_of([&] { m_.forward(x, out, *cache_, ws_); }), invalid,
             "forward with a moved-from KV cache");
      if (cache_->size() != 0 || cache_->capacity() != 0 || cache_->batch() != 0)
        fail("a moved-from cache has sizes");
      *cache_ = std::move(taken);
      if (cache_->size() != size) fail("a cache moved back");
      return;
    }
    if (in_.below(4) == 0) {
      cache_->clear();
      if (cache_->size() != 0) fail("clear");
      if (twin_) twin_->truncate(0);
      return;
    }
    const std::size_t k = in_.below(size + 3);
    context = "truncate(" + std::to_string(k) + ") of " + std::to_string(size);
    const unsigned got = outcome_of([&] { cache_->truncate(k); });
    expect(got, k <= size ? ok : range, "kv_cache::truncate");
    if (cache_->size() != (k <= size ? k : size)) fail("size after truncate");
    if (got == ok && twin_) twin_->truncate(k);
  }
  /// A member layer replaced by one of other sizes: the forward throws
  /// std::invalid_argument, for every overload; then the layer is restored.
  void replaced_parameters() {
    const std::size_t what = in_.below(3);
    context = "module " + describe() + ", replacement " + std::to_string(what);
    mha::dynamic::tensor<T> x({1, 1, m_.d_in()});
    mha::dynamic::tensor<T> out({1, 1, m_.output_width()});
    const auto call = [&] {
      if (in_.flag()) m_.forward(x, out, ws_);
      else m_.forward(x);
    };
    if constexpr (std::is_same_v<M, mha::dynamic::multi_head_attention_wrapper<T>>) {
      const std::size_t h = in_.below(m_.num_heads() + 2);
      expect(outcome_of([&] { (void)m_.head(h); }), h < m_.num_heads() ? ok : range,
             "multi_head_attention_wrapper::head(h)");
      auto saved = m_.heads;
      if (what == 0) m_.heads.pop_back();
      else if (what == 1) m_.heads[0].w_key.weight = mha::dynamic::tensor<T>({m_.d_out() + 1, m_.d_in()});
      else m_.heads.back() = mha::dynamic::causal_attention<T>(m_.d_in(), m_.d_out() + 1, m_.context_length());
      expect(outcome_of(call), invalid, "forward with replaced heads");
      m_.heads = std::move(saved);
    } else {
      auto saved = m_.w_value;
      if (what == 0) m_.w_value.weight = mha::dynamic::tensor<T>({m_.w_value.weight.size() + 1});
      else if (what == 1) m_.w_value = mha::dynamic::linear<T>(m_.d_in() + 1, m_.d_out(), m_.qkv_bias());
      else m_.w_value.bias = mha::dynamic::tensor<T>({m_.d_out() + 1});
      // a bias of another shape is an error, and so is any bias given to a
      // layer built without one (it would be ignored otherwise)
      expect(outcome_of(call), invalid, "forward with a replaced layer");
      m_.w_value = std::move(saved);
    }
  }
  /// tensor construction, operator() and reshape: checked indices.
  void tensor_access() {
    const std::size_t rank = in_.below(4);
    std::vector<std::size_t> shape;
    for (std::size_t i = 0; i < rank; ++i) shape.push_back(in_.below(4));
    std::unique_ptr<mha::dynamic::tensor<T>> t;
    context = "tensor " + shape_text(shape);
    expect(outcome_of([&] { t = std::make_unique<mha::dynamic::tensor<T>>(shape); }),
           rank == 0 ? invalid : ok, "tensor constructor");
    if (!t) return;
    std::size_t count = 1;
    for (const auto e : shape) count *= e;
    if (t->size() != count) fail("tensor size");
    randomise(*t);
    const std::size_t given = in_.below(4);
    std::size_t idx[3] = {in_.below(4), in_.below(4), in_.below(4)};
    bool in_range = given == rank;
    std::size_t offset = 0;
    for (std::size_t d = 0; in_range && d < rank; ++d) {
      in_range = idx[d] < shape[d];
      offset = offset * shape[d] + idx[d];
    }
    T value = 0;
    const unsigned got = outcome_of([&] {
      switch (given) {
        case 0: value = (*t)(); break;
        case 1: value = (*t)(idx[0]); break;
        case 2: value = (*t)(idx[0], idx[1]); break;
        default: value = (*t)(idx[0], idx[1], idx[2]); break;
      }
    });
    expect(got, given != rank ? invalid : in_range ? ok : range, "tensor::operator()");
    if (got == ok && std::memcmp(&value, t->data() + offset, sizeof(T)) != 0) fail("tensor element");
    expect(outcome_of([&] { t->reshape({}); }), invalid, "tensor::reshape({})");
    if (t->shape() != shape) fail("a failed reshape changed the tensor");
  }

  M m_;
  program& in_;
  values& v_;
  std::unique_ptr<twin<fixed>> twin_;
  mha::dynamic::workspace<T> ws_;
  std::unique_ptr<mha::dynamic::kv_cache<T>> cache_;
  bool cache_matches_ = true;
  std::array<std::vector<double>, 4> history_;  // per sequence: the cached tokens' rows
  mha::dynamic::tensor<T> stream_x_;
};

template <class M>
void run_module(program& in, values& v, bool use_fixed_shape) {
  sizes s = fixed_of<M>::shape;
  if (!use_fixed_shape) {
    s.d_in = in.below(9);
    s.d_out = in.below(13);
    s.context_length = in.below(10);
    s.num_heads = in.below(6);
    s.qkv_bias = in.flag();
  }
  std::unique_ptr<M> m;
  const unsigned got = outcome_of([&] { m = std::make_unique<M>(make<M>(s)); });
  expect(got, constructible<M>(s) ? ok : invalid, "constructor");
  if (!m) return;
  session<M>(std::move(*m), in, v, use_fixed_shape).run();
}

template <class T>
void run_type(program& in, std::uint8_t head) {
  values v{head * 0x1234567ULL + in.byte()};
  const bool fixed_shape = (head & 0x08) != 0;
  switch ((head >> 1) & 0x3) {
    case 0: run_module<mha::dynamic::causal_attention<T>>(in, v, fixed_shape); break;
    case 1: run_module<mha::dynamic::multi_head_attention_wrapper<T>>(in, v, fixed_shape); break;
    default: run_module<mha::dynamic::multi_head_attention<T>>(in, v, fixed_shape); break;
  }
}

}  // namespace

namespace mha_fuzz {
/// Runs the fuzz program `data` [size] (the input after its first byte,
/// `head`, which picked the element type) on the float modules
/// (fuzz_dynamic_float.cpp) or the double ones (fuzz_dynamic.cpp).
void run_float(const std::uint8_t* data, std::size_t size, std::uint8_t head);
void run_double(const std::uint8_t* data, std::size_t size, std::uint8_t head);
}  // namespace mha_fuzz
