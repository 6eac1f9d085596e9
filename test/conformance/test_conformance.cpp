// test_conformance.cpp -- the per-target conformance program: on a handful of
// small shapes, every kernel path and every module kind gives the same bits on
// this target, and the book's example matches PyTorch. CI runs it on each
// cross target (aarch64, armhf, armv7-vfpv3) instead of the whole Catch2 suite
// (the full suites stay runnable by preset). One translation unit, kept cheap
// to compile (few fixed-size shapes, each reused by several checks).
//
// Nothing here computes an expected value: the references are PyTorch's
// outputs (examples/book_weights.hpp, test/data/golden/), the book's printed
// tables (test/data/book_tables.json), or another path of the library, which
// must give the same bits (or, where the library promises only rounding, agree
// to the existing tests' tolerance). Tolerances are those of the tests mirrored.
//
// Paths (include/mha/detail/engine/attention.hpp): simple (constant evaluation, small
// constant shapes: detail::small_sizes), token-major (float inference, constant
// sizes, N <= token_major::tokens_limit; its (sequence, head) pairs kernel where
// token_major::pairs_apply), blocked (everything else, attention_head_blocked;
// mha::dynamic always), decode (KV-cache calls of <= detail::decode_rows new
// tokens: gemv projections, attention_head_decode for one token).
//
// TEST_CASE -> claim proved -> existing test mirrored:
//  1 "book chapter 3 ..." -> CausalAttention, MultiHeadAttentionWrapper and
//    MultiHeadAttention (seed-123 weights) give the book's printed tables (4
//    decimals) and PyTorch's outputs (float 1e-5 relative), at run time
//    (token-major; the pairs kernel where the target has vector registers)
//    and in constant evaluation (simple), with the same bits, and
//    mha::dynamic (blocked) gives those bits -> test_book.cpp ("book 3.5.3",
//    "3.6.1", "3.6.2", "compile-time forward passes give the book's tables"),
//    test_constexpr.cpp.
//  (subnormal weights: test_subnormals.cpp itself runs on every target of
//    MHA_TEST_SET conformance, test/CMakeLists.txt.)
//  3 "token-major path ..." -> multi_head_attention<float> on 2 x 33 tokens
//    (just past a vector) equals mha::dynamic bit for bit, also with the
//    workspace reused; the run-time token count (n = 33, 1 and 17: the
//    constant and the run-time padded widths) equals the compile-time
//    forward / mha::dynamic on those tokens -> test_token_major.cpp
//    (check_against_dynamic), test_kv_cache.cpp (e).
//  4 "general (blocked) path ..." -> float causal inference on 260 tokens
//    (past max_tokens on every target: the fixed module's blocked kernels),
//    forward_with_weights (blocked) and training with dropout (blocked, the
//    dropout stream) equal mha::dynamic; asking for the weights changes no
//    bit; p = 0 training is inference -> test_token_major.cpp ("training with
//    dropout takes the general path"), test_variants.cpp (check_extras),
//    test/isa/isa_tu.cpp ("more than 256 tokens").
//  5 "double causal_attention and the wrapper ..." -> both, in double on
//    2 x 12 tokens (blocked), equal mha::dynamic and their run-time count
//    forward bit for bit -> test_kv_cache.cpp (fixed == dynamic, (e)).
//  6 "double: PyTorch golden fixture ..." -> multi_head_attention<double>
//    (blocked) matches PyTorch (golden/mha_f64_din12_dout8_h4.json) to 1e-12
//    relative, and equals mha::dynamic and its fuse_qkv twin bit for bit ->
//    test_golden.cpp, io/test_fused.cpp.
//  7 "fused QKV ..." -> fused_multi_head_attention (fuse_qkv) gives
//    multi_head_attention<float>'s bits in inference and training ->
//    io/test_fused.cpp ("fused QKV storage gives bit-identical results").
//  8 "KV cache ..." -> multi_head_attention<float>, its fused twin and
//    mha::dynamic: a prefill of 10 > decode_rows tokens into an empty cache
//    equals the plain forward bit for bit (docs/streaming.md), decode steps
//    of 1 (attention_head_decode), 3 and 2 tokens (gemv + blocked heads)
//    equal the plain forward over all tokens so far to 2e-6 relative (not
//    bit for bit: the library promises rounding only), and fixed == dynamic
//    == fused bit for bit at every step; rows n.. of x (NaN) are not read ->
//    test_kv_cache.cpp (check_outputs (a), fixed == dynamic, fused twin),
//    test/isa/isa_tu.cpp.
//  9 "grouped-query attention ..." -> constant evaluation with RoPE gives the
//    run-time (token-major, pairs) bits and mha::dynamic's; without RoPE the
//    result differs and equals its mha::dynamic twin; double with RoPE
//    (blocked) equals mha::dynamic, and so do its cached steps (prefill 9,
//    decode 1 and 2, filling the context; the decode rows within 1e-12 of the
//    plain forward; then the compile-time forward == the run-time count
//    forward) -> test_gqa.cpp ("constant evaluation gives the run-time bits",
//    "fixed-size == mha::dynamic"), test_token_major.cpp.
// 10 "cross-attention and padded batches ..." -> cross-attention (3 queries,
//    6 keys; with and without key lengths) and a padded causal double batch
//    (lengths 6, 4, 0) equal mha::dynamic bit for bit: outputs, per-head and
//    averaged weights; each padded sequence equals the run-time count
//    forward of its tokens; constant evaluation gives the run-time padded
//    weights (double, test_variants.cpp's own small case) -> test_variants.cpp
//    (check_extras, check_cross, "constant evaluation gives the run-time
//    weights").
// 11 "score policies ..." -> the score-policy hooks of the six head kernels
//    (include/mha/detail/kernels/score_policy.hpp: the logit step and the
//    sink): a policy that is not plain but computes the plain causal softmax
//    (identity logit, sink -inf) gives causal_scores' bits on every kernel,
//    and a policy with a head-, query- and key-dependent logit and a sink
//    gives the same bits on simple (vector and scalar mirror), blocked,
//    token-major (attention_head, or attention_head_scalar without vector
//    registers) and pairs kernels, the decode row within 2e-6 -> (the hooks'
//    own check).
// 12 "score options ..." -> soft-capping, ALiBi, the sliding window and sinks
//    (mha::attention_scores): the options' policies (a cap with ALiBi; a
//    window with sinks) give the same bits on the six head kernels as above
//    (decode within 2e-6); grouped-query modules with RoPE and either set:
//    constant evaluation == run time (token-major, pairs) == mha::dynamic;
//    the KV-cache steps of a float grouped-query module with a cap and ALiBi,
//    a double one with a window and sinks, and a double multi_head_attention
//    with ALiBi on 3 heads (BLOOM's extra slopes) as in 7 -> test_scores.cpp
//    (PyTorch fixtures, every module kind).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <book_weights.hpp>
#include <mha/mha.hpp>

#include "constexpr_cases.hpp"
#include "program_path.hpp"
#include "test_support.hpp"

namespace {

using mha::attention_mask;
namespace tmj = mha::detail::token_major;

const std::filesystem::path data_dir{mha_test::program_relative(MHA_TEST_DATA_DIR)};

// The fixtures are read without a JSON library: nlohmann-json's parser
// instantiated here cost more than a tenth of this file's compile budget. Both
// files are machine-written (test/data/golden/README.md) or fixed
// (book_tables.json); the reader finds a quoted key, then the quoted field
// after it, and reads the numbers of the array that follows (nested arrays
// flattened), requiring the array to be well formed.

std::string read_text(const std::filesystem::path& path) {
  INFO("fixture " << path.string());
  REQUIRE(std::filesystem::is_regular_file(path));
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  REQUIRE(!text.str().empty());
  return text.str();
}

/// The numbers of the array that follows "field" after the first "key" of text.
std::vector<double> json_numbers(const std::string& text, const std::string& key,
                                 const std::string& field) {
  INFO("key " << key << ", field " << field);
  const std::size_t k = text.find('"' + key + '"');
  REQUIRE(k != std::string::npos);
  const std::size_t f = text.find('"' + field + '"', k + key.size() + 2);
  REQUIRE(f != std::string::npos);
  std::size_t i = text.find_first_not_of(" \n\t", f + field.size() + 2);
  REQUIRE(i != std::string::npos);
  REQUIRE(text[i] == ':');
  i = text.find_first_not_of(" \n\t", i + 1);
  REQUIRE(i != std::string::npos);
  REQUIRE(text[i] == '[');
  std::vector<double> values;
  int depth = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth == 0) return values;
    } else if (c != ',' && c != ' ' && c != '\n' && c != '\t') {
      const char* begin = text.c_str() + i;
      char* end = nullptr;
      values.push_back(std::strtod(begin, &end));
      REQUIRE(end != begin);
      i += static_cast<std::size_t>(end - begin) - 1;
    }
  }
  FAIL("unterminated array");
  return values;
}

template <class A, class E>
void require_close(const A* actual, const E* expected, std::size_t n, double rtol,
                   const char* what) {
  const auto c = mha_test::compare(actual, expected, n, rtol);
  INFO(what << ": " << c.describe());
  REQUIRE(c.violations == 0);
}

/// Forces a run-time evaluation (test_constexpr.cpp): the model is read
/// through a volatile pointer, so the call is not a constant expression.
template <class M, class X>
auto run_time_forward(const M& model, const X& x) {
  const M* volatile p = &model;
  const X* volatile px = &x;
  return p->forward(*px);
}

// ------------------------------------------------------------------ 1. the book

const std::string& book_tables() {
  static const std::string text = [] {
    std::string t = read_text(data_dir / "book_tables.json");
    REQUIRE(t.find("Raschka") != std::string::npos);
    return t;
  }();
  return text;
}

/// test_book.cpp's criterion: both batch elements round to the printed
/// 4-decimal value, |a - book| <= 0.5e-4 + 1e-6.
template <std::size_t W>
void require_book_table(const std::string& name, const mha::tensor<float, 2, 6, W>& out) {
  REQUIRE(json_numbers(book_tables(), name, "shape") == std::vector<double>{2, 6, W});
  const auto values = json_numbers(book_tables(), name, "values");  // [6][W]
  REQUIRE(values.size() == 6 * W);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 6; ++i)
      for (std::size_t c = 0; c < W; ++c) {
        INFO(name << " [" << b << "][" << i << "][" << c << "]");
        REQUIRE(std::fabs(static_cast<double>(out(b, i, c)) - values[i * W + c]) <= 0.5e-4 + 1e-6);
      }
}

template <std::size_t... E>
constexpr float max_abs_diff(const mha::tensor<float, E...>& a, const mha::tensor<float, E...>& b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size; ++i) {
    const float d = a.data()[i] > b.data()[i] ? a.data()[i] - b.data()[i] : b.data()[i] - a.data()[i];
    m = d > m ? d : m;
  }
  return m;
}

// The whole forward pass evaluated by the compiler (the simple path).
constexpr auto ct_causal = mha_book::causal_attention_model.forward(mha_book::batch);
constexpr auto ct_wrapper = mha_book::wrapper_model.forward(mha_book::batch);
constexpr auto ct_mha = mha_book::mha_model.forward(mha_book::batch);
static_assert(max_abs_diff(ct_causal, mha_book::causal_attention_expected) <= 1e-5f);
static_assert(max_abs_diff(ct_wrapper, mha_book::wrapper_expected) <= 1e-5f);
static_assert(max_abs_diff(ct_mha, mha_book::mha_expected) <= 1e-5f);

template <class Module, std::size_t W>
void check_book_module(const std::string& table, const Module& m,
                       const mha::tensor<float, 2, 6, W>& ct,
                       const mha::tensor<float, 2, 6, W>& pytorch) {
  INFO("book module " << table);
  const auto rt = run_time_forward(m, mha_book::batch);
  require_book_table(table, rt);
  require_close(rt.data(), pytorch.data(), rt.size, mha_test::reference_rtol<float>,
                "run-time forward vs PyTorch");
  require_book_table(table, ct);
  require_close(ct.data(), pytorch.data(), ct.size, mha_test::reference_rtol<float>,
                "compile-time forward vs PyTorch");
  REQUIRE(mha_test::same_bits(ct, rt));
  const auto dyn = mha_test::to_dynamic(m);
  REQUIRE(mha_test::same_bits(rt, dyn.forward(mha_test::to_dynamic(mha_book::batch))));
}

// ------------------------------------------------------------------ 3. token-major

template <std::size_t B, std::size_t N, std::size_t DIn, std::size_t DOut, std::size_t Ctx,
          std::size_t H, bool Bias>
void check_token_major(unsigned seed) {
  using model = mha::multi_head_attention<float, DIn, DOut, Ctx, H, Bias>;
  static_assert(tmj::applies<float, B, N, DIn, DOut>,
                "this check is about shapes that take the token-major path");
  INFO("B=" << B << " N=" << N << " d_in=" << DIn << " d_out=" << DOut << " heads=" << H);
  std::mt19937 rng(seed);
  auto m = std::make_unique<model>();
  mha_test::randomize(*m, rng);
  const auto dyn = mha_test::to_dynamic(*m);
  auto x = std::make_unique<mha::tensor<float, B, N, DIn>>();
  mha_test::fill_uniform(*x, rng, 1.0);
  auto y = std::make_unique<mha::tensor<float, B, N, DOut>>();
  auto ws = std::make_unique<typename model::template workspace<B, N>>();
  m->forward(*x, *y, *ws);
  REQUIRE(mha_test::all_finite(y->data(), y->size));
  REQUIRE(mha_test::same_bits(*y, dyn.forward(mha_test::to_dynamic(*x))));
  // the workspace reused on other inputs
  mha_test::fill_uniform(*x, rng, 3.0);
  m->forward(*x, *y, *ws);
  REQUIRE(mha_test::same_bits(*y, dyn.forward(mha_test::to_dynamic(*x))));
  // the run-time token count over all N rows: the compile-time forward's bits
  auto yn = std::make_unique<mha::tensor<float, B, N, DOut>>();
  REQUIRE(m->forward(*x, N, *yn, *ws) == mha::status::ok);
  REQUIRE(mha_test::same_bits(*y, *yn));
  // ... and over fewer rows (the run-time widths): mha::dynamic on those rows
  for (const std::size_t n : {std::size_t{1}, N / 2 + 1}) {
    INFO("n = " << n);
    mha::dynamic::tensor<float> dx({B, n, DIn});
    for (std::size_t b = 0; b < B; ++b)
      std::copy(x->data() + b * N * DIn, x->data() + (b * N + n) * DIn, dx.data() + b * n * DIn);
    REQUIRE(m->forward(*x, n, *yn, *ws) == mha::status::ok);
    const auto dy = dyn.forward(dx);
    for (std::size_t b = 0; b < B; ++b)
      REQUIRE(mha_test::same_bits(yn->data() + b * N * DOut, dy.data() + b * n * DOut, n * DOut));
  }
}

// ------------------------------------------------------------------ 5. golden double

/// Every parameter of `model` from the fixture's state_dict (the same names
/// and sizes; no other parameter in the fixture: its objects with a "shape"
/// are the parameters, the input and the output).
template <class M>
void load_golden_params(const std::string& text, M& model) {
  std::size_t loaded = 0;
  mha::for_each_parameter(model, [&](std::string_view name, auto& t) {
    const std::string key(name);
    const auto data = json_numbers(text, key, "data");
    INFO("parameter " << key);
    REQUIRE(data.size() == t.size);
    using T = std::remove_reference_t<decltype(*t.data())>;
    std::transform(data.begin(), data.end(), t.data(), [](double v) { return static_cast<T>(v); });
    ++loaded;
  });
  std::size_t objects = 0;
  for (std::size_t i = text.find("{\"shape\""); i != std::string::npos;
       i = text.find("{\"shape\"", i + 1))
    ++objects;
  REQUIRE(objects == loaded + 2);
}

// ------------------------------------------------------------------ 7. KV cache

/// Tolerance of test_kv_cache.cpp between cached and plain rows.
template <class T>
constexpr double kv_rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

/// A stream of C tokens fed to the fixed module M's cache in steps (the first
/// one a prefill of more than decode_rows tokens, the steps filling the
/// context), to the dynamic twin's cache and, when given, to the fused twin's.
/// Checks the claims of docs/streaming.md and test_kv_cache.cpp listed above.
template <std::size_t B, class M, class D, class F = M>
void check_kv(const M& m, D& dyn, std::initializer_list<std::size_t> steps, unsigned seed,
              const F* fused = nullptr) {
  using T = typename M::value_type;
  constexpr std::size_t C = M::context_length, DIn = M::d_in, W = M::output_width;
  std::mt19937 rng(seed);
  auto stream = std::make_unique<mha::tensor<T, B, C, DIn>>();
  mha_test::fill_uniform(*stream, rng, 1.0);
  auto cache = std::make_unique<typename M::template kv_cache<B>>();
  auto fcache = std::make_unique<typename F::template kv_cache<B>>();
  auto ws = std::make_unique<typename M::template workspace<B, C>>();
  auto fws = std::make_unique<typename F::template workspace<B, C>>();
  auto x = std::make_unique<mha::tensor<T, B, C, DIn>>();
  auto out = std::make_unique<mha::tensor<T, B, C, W>>();
  auto fout = std::make_unique<mha::tensor<T, B, C, W>>();
  auto plain = std::make_unique<mha::tensor<T, B, C, W>>();
  mha::dynamic::kv_cache<T> dcache(dyn, B);
  mha::dynamic::workspace<T> dws;
  std::size_t pos = 0;
  bool first = true;
  for (const std::size_t n : steps) {
    INFO("append " << n << " tokens at " << pos);
    REQUIRE(pos + n <= C);
    std::fill(x->begin(), x->end(), std::numeric_limits<T>::quiet_NaN());  // rows n.. unread
    mha::dynamic::tensor<T> dx({B, n, DIn}), dout({B, n, W});
    for (std::size_t b = 0; b < B; ++b) {
      std::copy(&(*stream)(b, pos, 0), &(*stream)(b, pos, 0) + n * DIn, &(*x)(b, 0, 0));
      std::copy(&(*stream)(b, pos, 0), &(*stream)(b, pos, 0) + n * DIn, dx.data() + b * n * DIn);
    }
    REQUIRE(m.forward(*x, n, *out, *cache, *ws) == mha::status::ok);
    REQUIRE(cache->size() == pos + n);
    REQUIRE(mha_test::all_finite(out->data(), n * W));
    // fixed == dynamic (== fused), bit for bit
    dyn.forward(dx, dout, dcache, dws);
    REQUIRE(dcache.size() == pos + n);
    for (std::size_t b = 0; b < B; ++b)
      REQUIRE(mha_test::same_bits(out->data() + b * C * W, dout.data() + b * n * W, n * W));
    if (fused != nullptr) {
      REQUIRE(fused->forward(*x, n, *fout, *fcache, *fws) == mha::status::ok);
      for (std::size_t b = 0; b < B; ++b)
        REQUIRE(mha_test::same_bits(out->data() + b * C * W, fout->data() + b * C * W, n * W));
    }
    // the plain forward over every token so far (run-time count), = mha::dynamic's
    const std::size_t after = pos + n;
    REQUIRE(m.forward(*stream, after, *plain, *ws) == mha::status::ok);
    mha::dynamic::tensor<T> dpx({B, after, DIn});
    for (std::size_t b = 0; b < B; ++b)
      std::copy(&(*stream)(b, 0, 0), &(*stream)(b, 0, 0) + after * DIn, dpx.data() + b * after * DIn);
    const auto dplain = dyn.forward(dpx);
    for (std::size_t b = 0; b < B; ++b)
      REQUIRE(mha_test::same_bits(plain->data() + b * C * W, dplain.data() + b * after * W, after * W));
    for (std::size_t b = 0; b < B; ++b) {
      INFO("sequence " << b);
      const T* cached = out->data() + b * C * W;
      const T* whole = plain->data() + (b * C + pos) * W;
      if (first && n > mha::detail::decode_rows && !M::template kv_cache<B>::rolling) {
        // a prefill into an empty cache (blocked kernels): the plain rows' bits
        // (a rolling cache takes it in pieces of at most its window)
        REQUIRE(mha_test::same_bits(cached, whole, n * W));
      } else {
        // decode rows (matrix-vector kernels): to rounding
        require_close(cached, whole, n * W, kv_rtol<T>, "cached rows vs the plain forward");
      }
    }
    first = false;
    pos = after;
  }
  if (pos < C) return;
  // full context: the compile-time forward equals the run-time count forward
  auto full = std::make_unique<mha::tensor<T, B, C, W>>();
  m.forward(*stream, *full, *ws);
  REQUIRE(mha_test::same_bits(*full, *plain));
}

// ------------------------------------------------------------------ 8. GQA

using mha_test::make_tiny_gqa;
using mha_test::tiny_gqa;
using mha_test::tiny_gqa_input;

// ------------------------------------------------------------------ 9. variants

/// A padded batch (and the weights) of the fixed module M vs the dynamic twin D
/// (test_variants.cpp's check_extras, with random parameters).
template <class M, class D, std::size_t B, std::size_t N>
void check_padded(D dyn, const std::array<std::size_t, B>& lengths, unsigned seed) {
  using T = typename M::value_type;
  constexpr std::size_t H = M::num_heads, W = M::output_width;
  std::mt19937 rng(seed);
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
  mha::copy_parameters(*m, dyn);
  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  mha::tensor<T, B, N, W> out{}, out_avg{}, out_plain{};
  mha::tensor<T, B, H, N, N> weights{};
  mha::tensor<T, B, N, N> average{};
  REQUIRE(m->forward_with_weights(x, lengths, out, weights, *ws) == mha::status::ok);
  REQUIRE(m->forward_with_weights(x, lengths, out_avg, average, *ws) == mha::status::ok);
  REQUIRE(m->forward(x, lengths, out_plain, *ws) == mha::status::ok);
  REQUIRE(mha_test::same_bits(out, out_avg));
  REQUIRE(mha_test::same_bits(out, out_plain));  // asking for weights changes no bit
  // each sequence is the run-time-count forward of its first lengths[b] tokens
  for (std::size_t b = 0; b < B; ++b) {
    if (lengths[b] == 0) continue;
    INFO("sequence " << b);
    mha::tensor<T, 1, N, M::d_in> xb{};
    std::copy(x.data() + b * N * M::d_in, x.data() + (b + 1) * N * M::d_in, xb.data());
    mha::tensor<T, 1, N, W> ob{};
    auto wb = std::make_unique<typename M::template workspace<1, N>>();
    REQUIRE(m->forward(xb, lengths[b], ob, *wb) == mha::status::ok);
    REQUIRE(mha_test::same_bits(ob.data(), out.data() + b * N * W, lengths[b] * W));
  }
  mha::dynamic::tensor<T> xd({B, N, M::d_in}), od({B, N, W}), wd({B, H, N, N}), ad({B, N, N});
  std::copy(x.data(), x.data() + x.size, xd.data());
  mha::dynamic::workspace<T> dws;
  dyn.forward_with_weights(xd, lengths, od, wd, dws);
  REQUIRE(mha_test::same_bits(out, od));
  REQUIRE(mha_test::same_bits(weights, wd));
  dyn.forward_with_weights(xd, lengths, od, ad, dws);
  REQUIRE(mha_test::same_bits(out, od));
  REQUIRE(mha_test::same_bits(average, ad));
}

}  // namespace

TEST_CASE("book chapter 3: printed tables, PyTorch, constant evaluation, mha::dynamic",
          "[conformance][book][constexpr][token_major]") {
  // The run-time forwards take the token-major path (float inference, constant
  // sizes); MultiHeadAttention's uses the (sequence, head) pairs kernel where
  // the target has vector registers (never on ARMv7 without NEON).
  STATIC_REQUIRE(tmj::applies<float, 2, 6, 3, 2>);
  STATIC_REQUIRE(tmj::pairs_apply<1, 2, mha::detail::size_c<2>, mha::detail::size_c<6>> ==
                 mha::detail::simd::hardware_vectors);
  check_book_module("causal_attention", mha_book::causal_attention_model, ct_causal,
                    mha_book::causal_attention_expected);
  check_book_module("multi_head_attention_wrapper", mha_book::wrapper_model, ct_wrapper,
                    mha_book::wrapper_expected);
  check_book_module("multi_head_attention", mha_book::mha_model, ct_mha, mha_book::mha_expected);
}

// The fixed-size shapes below share their compile-time sizes (d_in 16 and
// head_dim 8 in float; d_in 12 and head_dim 2 in double), so that the kernels
// instantiated for those sizes are compiled once (compile cost, see the
// CMakeLists.txt).
using f32_model = mha::multi_head_attention<float, 16, 16, 33, 2, true>;           // head_dim 8
using f32_fused = mha::fused_multi_head_attention<float, 16, 16, 33, 2, true>;
using f32_long = mha::multi_head_attention<float, 16, 16, 260, 2, true>;
using f64_model = mha::multi_head_attention<double, 12, 8, 10, 4, false>;          // head_dim 2
using f64_fused = mha::fused_multi_head_attention<double, 12, 8, 10, 4, false>;

TEST_CASE("token-major path: fixed-size multi_head_attention equals mha::dynamic bit for bit",
          "[conformance][token_major]") {
  // 33 tokens: just past a vector (test_token_major.cpp "medium shapes");
  // the book's shapes (test case 1) are the small ones
  check_token_major<2, 33, 16, 16, 33, 2, true>(12);
}

TEST_CASE("general (blocked) path: long float sequences, weights and dropout equal mha::dynamic",
          "[conformance][blocked]") {
  SECTION("float inference past max_tokens: the fixed module's blocked kernels") {
    // 260 tokens exceed token_major::max_tokens on every target, and the
    // sizes exceed small_extent: attention_head_blocked (test/isa/isa_tu.cpp)
    STATIC_REQUIRE_FALSE(tmj::applies<float, 1, 260, 16, 16>);
    STATIC_REQUIRE_FALSE(mha::detail::small_sizes<mha::detail::size_c<260>, mha::detail::size_c<16>>);
    std::mt19937 rng(77);
    auto m = std::make_unique<f32_long>();
    mha_test::randomize(*m, rng);
    auto x = std::make_unique<mha::tensor<float, 1, 260, 16>>();
    mha_test::fill_uniform(*x, rng, 1.0);
    auto y = std::make_unique<mha::tensor<float, 1, 260, 16>>();
    auto ws = std::make_unique<f32_long::workspace<1, 260>>();
    m->forward(*x, *y, *ws);
    REQUIRE(mha_test::all_finite(y->data(), y->size));
    REQUIRE(mha_test::same_bits(*y, mha_test::to_dynamic(*m).forward(mha_test::to_dynamic(*x))));
  }
  SECTION("weights (blocked) and training with dropout on a token-major shape") {
    STATIC_REQUIRE(tmj::applies<float, 2, 33, 16, 16>);
    STATIC_REQUIRE_FALSE(mha::detail::small_sizes<mha::detail::size_c<66>, mha::detail::size_c<16>>);
    std::mt19937 rng(12);
    auto m = std::make_unique<f32_model>();
    mha_test::randomize(*m, rng);
    auto dyn = mha_test::to_dynamic(*m);
    auto x = std::make_unique<mha::tensor<float, 2, 33, 16>>();
    mha_test::fill_uniform(*x, rng, 1.0);
    const auto dx = mha_test::to_dynamic(*x);
    auto ws = std::make_unique<f32_model::workspace<2, 33>>();
    auto y = std::make_unique<mha::tensor<float, 2, 33, 16>>();
    auto yw = std::make_unique<mha::tensor<float, 2, 33, 16>>();
    auto w = std::make_unique<mha::tensor<float, 2, 2, 33, 33>>();
    m->forward(*x, *y, *ws);                    // token-major
    m->forward_with_weights(*x, *yw, *w, *ws);  // blocked
    REQUIRE(mha_test::same_bits(*y, *yw));      // asking for the weights changes no bit
    mha::dynamic::tensor<float> dy({2, 33, 16}), dw({2, 2, 33, 33});
    mha::dynamic::workspace<float> dws;
    dyn.forward_with_weights(dx, dy, dw, dws);
    REQUIRE(mha_test::same_bits(*yw, dy));
    REQUIRE(mha_test::same_bits(*w, dw));
    // training with p = 0 is inference; with dropout the same masks in both
    m->forward_training(*x, *yw, *ws, 7);
    REQUIRE(mha_test::same_bits(*y, *yw));
    m->dropout = 0.25f;
    dyn.dropout = 0.25f;
    m->forward_training(*x, *yw, *ws, 7);
    REQUIRE(mha_test::same_bits(*yw, dyn.forward_training(dx, 7)));
    REQUIRE_FALSE(mha_test::same_bits(*yw, *y));  // dropout did act
  }
}

TEST_CASE("double causal_attention and the wrapper (blocked) equal mha::dynamic",
          "[conformance][blocked]") {
  // B 2, N 12: 24 rows > small_extent, so the fixed modules take the blocked
  // kernels too; the run-time token count gives the same bits
  std::mt19937 rng(23);
  mha::tensor<double, 2, 12, 12> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  SECTION("causal_attention<double>") {
    mha::causal_attention<double, 12, 2, 12, true> m{};
    mha_test::randomize(m, rng);
    const auto y = m.forward(x);
    REQUIRE(mha_test::same_bits(y, mha_test::to_dynamic(m).forward(mha_test::to_dynamic(x))));
    mha::tensor<double, 2, 12, 2> yn{};
    decltype(m)::workspace<2, 12> ws{};
    REQUIRE(m.forward(x, 12, yn, ws) == mha::status::ok);
    REQUIRE(mha_test::same_bits(y, yn));
  }
  SECTION("multi_head_attention_wrapper<double>") {
    mha::multi_head_attention_wrapper<double, 12, 2, 12, 4, true> m{};
    mha_test::randomize(m, rng);
    const auto y = m.forward(x);
    REQUIRE(mha_test::same_bits(y, mha_test::to_dynamic(m).forward(mha_test::to_dynamic(x))));
    mha::tensor<double, 2, 12, 8> yn{};
    decltype(m)::workspace<2, 12> ws{};
    REQUIRE(m.forward(x, 12, yn, ws) == mha::status::ok);
    REQUIRE(mha_test::same_bits(y, yn));
  }
}

TEST_CASE("double: PyTorch golden fixture, mha::dynamic and the fused twin",
          "[conformance][golden][fused]") {
  // mha_f64_din12_dout8_h4: B 3, N 6 (18 rows > small_extent: blocked)
  const std::string fx = read_text(data_dir / "golden" / "mha_f64_din12_dout8_h4.json");
  REQUIRE(fx.find("\"dtype\":\"float64\"") != std::string::npos);
  REQUIRE(json_numbers(fx, "input", "shape") == std::vector<double>{3, 6, 12});
  REQUIRE(json_numbers(fx, "output", "shape") == std::vector<double>{3, 6, 8});
  auto m = std::make_unique<f64_model>();
  load_golden_params(fx, *m);
  mha::tensor<double, 3, 6, 12> x{};
  const auto input = json_numbers(fx, "input", "data");
  REQUIRE(input.size() == x.size);
  std::copy(input.begin(), input.end(), x.data());
  const auto expected = json_numbers(fx, "output", "data");
  const auto out = run_time_forward(*m, x);
  REQUIRE(expected.size() == out.size);
  require_close(out.data(), expected.data(), out.size, mha_test::reference_rtol<double>,
                "double forward vs PyTorch");
  REQUIRE(mha_test::same_bits(out, mha_test::to_dynamic(*m).forward(mha_test::to_dynamic(x))));
  auto f = std::make_unique<f64_fused>();
  mha::fuse_qkv(*m, *f);
  REQUIRE(mha_test::same_bits(out, f->forward(x)));
}

TEST_CASE("fused QKV storage gives multi_head_attention's bits", "[conformance][fused]") {
  std::mt19937 rng(2);
  auto m = std::make_unique<f32_model>();
  mha_test::randomize(*m, rng);
  m->dropout = 0.25f;
  auto f = std::make_unique<f32_fused>();
  f->dropout = 0.5f;
  mha::fuse_qkv(*m, *f);  // overwrites every member of *f
  REQUIRE(f->dropout == m->dropout);
  auto x = std::make_unique<mha::tensor<float, 2, 33, 16>>();
  mha_test::fill_uniform(*x, rng, 2.0);
  auto ws = std::make_unique<f32_model::workspace<2, 33>>();
  auto fws = std::make_unique<f32_fused::workspace<2, 33>>();
  auto y = std::make_unique<mha::tensor<float, 2, 33, 16>>();
  auto fy = std::make_unique<mha::tensor<float, 2, 33, 16>>();
  m->forward(*x, *y, *ws);
  f->forward(*x, *fy, *fws);
  REQUIRE(mha_test::same_bits(*y, *fy));
  m->forward_training(*x, *y, *ws, 99);
  f->forward_training(*x, *fy, *fws, 99);
  REQUIRE(mha_test::same_bits(*y, *fy));
}

TEST_CASE("KV cache: prefill, decode steps, fixed == dynamic == fused",
          "[conformance][kv_cache]") {
  // the steps: a prefill of more than decode_rows tokens, then 1 token
  // (attention_head_decode) and 3 and 2 tokens (gemv + blocked heads)
  STATIC_REQUIRE(mha::detail::decode_rows == 8);
  std::mt19937 rng(21);
  auto m = std::make_unique<f32_model>();
  mha_test::randomize(*m, rng);
  auto dyn = mha_test::to_dynamic(*m);
  auto f = std::make_unique<f32_fused>();
  mha::fuse_qkv(*m, *f);
  check_kv<2>(*m, dyn, {10, 1, 3, 2}, 22, f.get());
}

TEST_CASE("grouped-query attention with and without RoPE equals mha::dynamic",
          "[conformance][gqa][constexpr][kv_cache]") {
  SECTION("constant evaluation with RoPE gives the run-time bits") {
    constexpr tiny_gqa m = make_tiny_gqa();
    constexpr auto x = tiny_gqa_input();
    constexpr auto y = m.forward(x);
    const tiny_gqa rm = make_tiny_gqa();
    const auto rx = tiny_gqa_input();
    const auto ry = run_time_forward(rm, rx);  // token-major
    REQUIRE(mha_test::all_finite(ry.data(), ry.size));
    REQUIRE(mha_test::same_bits(y, ry));
    mha::dynamic::grouped_query_attention<float> d(4, 8, 6, 4, 2, true,
                                                    mha::dynamic::rope_config{10000});
    mha::copy_parameters(rm, d);
    mha::dynamic::tensor<float> dx({5, 4});
    std::copy(rx.begin(), rx.end(), dx.data());
    REQUIRE(mha_test::same_bits(ry, d.forward(dx)));
    // RoPE changes the result: the same model without it differs ...
    mha::grouped_query_attention<float, 4, 8, 6, 4, 2, true> plain{};
    mha::copy_parameters(rm, plain);
    const auto py = run_time_forward(plain, rx);
    REQUIRE_FALSE(mha_test::same_bits(py, ry));
    // ... and equals its mha::dynamic twin without RoPE
    mha::dynamic::grouped_query_attention<float> dp(4, 8, 6, 4, 2, true);
    mha::copy_parameters(plain, dp);
    REQUIRE(mha_test::same_bits(py, dp.forward(dx)));
  }
  SECTION("double with RoPE: whole sequence and KV cache (prefill, decode steps)") {
    using G = mha::grouped_query_attention<double, 12, 8, 12, 4, 2, false, mha::rope<10000>>;
    std::mt19937 rng(31);
    auto g = std::make_unique<G>();
    mha::for_each_parameter(*g, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    mha::dynamic::grouped_query_attention<double> d(12, 8, 12, 4, 2, false,
                                                     mha::dynamic::rope_config{10000});
    mha::copy_parameters(*g, d);
    mha::tensor<double, 2, 12, 12> x{};
    mha_test::fill_uniform(x, rng, 1.0);
    REQUIRE(mha_test::same_bits(g->forward(x), d.forward(mha_test::to_dynamic(x))));
    check_kv<2>(*g, d, {9, 1, 2}, 32);  // fills the context: the full-context check too
  }
}

TEST_CASE("cross-attention and padded batches equal mha::dynamic, weights included",
          "[conformance][variants][cross][padding][weights]") {
  SECTION("cross-attention, 3 queries on 6 keys, with and without key lengths") {
    // (key and value inputs of the query's width: another width would
    // instantiate the projection kernels for it, at a cost of compile time)
    using M = mha::multi_head_attention<float, 16, 16, 8, 2, true, attention_mask::none>;
    constexpr std::size_t B = 2, NQ = 3, NKV = 6, H = 2, E = 16;
    std::mt19937 rng(51);
    auto m = std::make_unique<M>();
    mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
    mha::dynamic::multi_head_attention<float, attention_mask::none> d(
        16, E, 8, H, true);
    mha::copy_parameters(*m, d);
    mha::tensor<float, B, NQ, 16> q{};
    mha::tensor<float, B, NKV, 16> k{};
    mha::tensor<float, B, NKV, 16> v{};
    mha_test::fill_uniform(q, rng, 1.0);
    mha_test::fill_uniform(k, rng, 1.0);
    mha_test::fill_uniform(v, rng, 1.0);
    const auto qd = mha_test::to_dynamic(q), kd = mha_test::to_dynamic(k), vd = mha_test::to_dynamic(v);
    auto ws = std::make_unique<M::cross_workspace<B, NQ, NKV>>();
    mha::tensor<float, B, NQ, E> out{}, out_w{};
    mha::tensor<float, B, H, NQ, NKV> weights{};
    mha::dynamic::tensor<float> od({B, NQ, E}), wd({B, H, NQ, NKV});
    mha::dynamic::workspace<float> dws;
    m->forward(q, k, v, out, *ws);
    REQUIRE(mha_test::same_bits(out, d.forward(qd, kd, vd)));
    m->forward_with_weights(q, k, v, out_w, weights, *ws);
    d.forward_with_weights(qd, kd, vd, od, wd, dws);
    REQUIRE(mha_test::same_bits(out, out_w));
    REQUIRE(mha_test::same_bits(out_w, od));
    REQUIRE(mha_test::same_bits(weights, wd));
    const std::array<std::size_t, B> lengths{6, 3};
    REQUIRE(m->forward_with_weights(q, k, v, lengths, out, weights, *ws) == mha::status::ok);
    d.forward_with_weights(qd, kd, vd, lengths, od, wd, dws);
    REQUIRE(mha_test::same_bits(out, od));
    REQUIRE(mha_test::same_bits(weights, wd));
  }
  SECTION("padded causal batch, double (the golden fixture's module type)") {
    check_padded<f64_model, mha::dynamic::multi_head_attention<double>, 3, 6>(
        {12, 8, 10, 4, false}, {6, 4, 0}, 61);
  }
  SECTION("constant evaluation gives the run-time padded weights, double") {
    // exactly test_variants.cpp's case: a small shape (the simple loops at run
    // time too). Not a larger one: for double, detail::exp is std::exp at run
    // time and constexpr_exp in constant evaluation, which agree to 2 ulp only
    // (detail/arch/math.hpp), so larger double shapes can differ in the last bit.
    using C = mha::causal_attention<double, 3, 2, 4>;
    constexpr auto at_compile_time = mha_test::padded_weights_case(C{});
    const auto at_run_time = mha_test::padded_weights_case(C{});
    REQUIRE(mha_test::same_bits(at_compile_time, at_run_time));
    REQUIRE(at_run_time.data()[0] == 1.0);
  }
}

namespace {

// Score policies that are not plain and have a sink, for test case 11: the
// hooks of every head kernel (include/mha/detail/kernels/score_policy.hpp).
// Causal spans, as the token-major kernels require.
struct causal_span {
  static constexpr bool causal = true;
  constexpr mha::detail::key_span span(std::size_t p) const noexcept { return {0, p + 1}; }
};
// The plain causal softmax in disguise: the logit step returns its argument
// and the sink logit is -inf (weight exactly 0, a denominator term of +0), so
// every kernel must give causal_scores' bits.
struct identity_scores : causal_span {
  static constexpr bool plain = false;
  static constexpr bool has_sink = true;
  static constexpr identity_scores over(std::size_t) noexcept { return {}; }
  constexpr float logit(float x, std::size_t, std::size_t, std::size_t) const noexcept { return x; }
  constexpr float sink_logit(std::size_t) const noexcept {
    return -std::numeric_limits<float>::infinity();
  }
};
// A logit that depends on the head, the query and the key (each product exact,
// so no contraction can change a bit) and a sink per head: the kernels must
// agree with one another.
struct shifted_scores : causal_span {
  static constexpr bool plain = false;
  static constexpr bool has_sink = true;
  static constexpr shifted_scores over(std::size_t) noexcept { return {}; }
  constexpr float logit(float x, std::size_t head, std::size_t i, std::size_t j) const noexcept {
    return x * 0.5f - 0.125f * static_cast<float>((head + 1) * (i - j));
  }
  constexpr float sink_logit(std::size_t head) const noexcept {
    return 0.25f * static_cast<float>(head) - 0.5f;
  }
};
static_assert(mha::detail::score_policy<identity_scores> &&
              mha::detail::score_policy<shifted_scores>);

// Batch x NumHeads heads of N tokens, head_dim D (the shape of the pairs
// kernel: D <= 2, N <= 8, 4 pairs), their row-major operands and the outputs
// of each kernel for one policy.
constexpr std::size_t pol_b = 2, pol_h = 2, pol_n = 7, pol_d = 2;
struct policy_heads {
  std::array<float, pol_b * pol_h * pol_n * pol_d> q{}, k{}, v{};  // [b][h][n][d]
  std::size_t at(std::size_t b, std::size_t h) const { return (b * pol_h + h) * pol_n * pol_d; }
};

// Every kernel's [b][h][n][d] context for one policy (decode: the last query
// of each head only, rows 0..n-2 left 0).
struct kernel_outputs {
  std::array<float, pol_b * pol_h * pol_n * pol_d> simple{}, mirror{}, blocked{}, decode{},
      token_major{}, pairs{};
};

template <class P>
kernel_outputs run_kernels(const policy_heads& in, const P& policy = {}) {
  namespace md = mha::detail;
  using T = float;
  constexpr auto hd = md::size_c<pol_d>{};
  const T divisor = std::sqrt(static_cast<T>(pol_d));
  kernel_outputs out;
  const md::dropout_state<T> no_dropout{};
  constexpr std::size_t ld_scores = 16;
  std::array<T, md::gemm::mr * ld_scores> scores{};
  constexpr std::size_t W = tmj::width<T, pol_n>;
  constexpr std::size_t np = tmj::round_up<pol_n, W>;
  for (std::size_t b = 0; b < pol_b; ++b)
    for (std::size_t h = 0; h < pol_h; ++h) {
      const std::size_t at = in.at(b, h);
      std::array<T, pol_d * np> kt{}, qt{}, vt{}, ct{};  // [d][np]
      for (std::size_t j = 0; j < pol_n; ++j)
        for (std::size_t d = 0; d < pol_d; ++d) {
          kt[d * np + j] = in.k[at + j * pol_d + d];
          qt[d * np + j] = in.q[at + j * pol_d + d];
          vt[d * np + j] = in.v[at + j * pol_d + d];
        }
      const auto op = [&](std::array<T, pol_b * pol_h * pol_n * pol_d>& o) {
        return md::head_operands<T>{in.q.data() + at, pol_d, kt.data(), np, in.v.data() + at,
                                    pol_d, o.data() + at, pol_d};
      };
      md::attention_head_simple<false>(op(out.simple), pol_n, 0, hd, divisor, no_dropout, b, h,
                                       scores.data(), policy);
      md::attention_head_simple<true>(op(out.mirror), pol_n, 0, hd, divisor, no_dropout, b, h,
                                      scores.data(), policy);
      md::attention_head_blocked(op(out.blocked), pol_n, 0, hd, divisor, no_dropout, b, h,
                                 scores.data(), ld_scores, policy);
      auto last = op(out.decode);
      last.q += (pol_n - 1) * pol_d;
      last.out += (pol_n - 1) * pol_d;
      md::attention_head_decode(last, pol_n - 1, hd, divisor, scores.data(), policy, h);
      if constexpr (md::simd::hardware_vectors) {
        tmj::vec<T, W> s[np];
        tmj::attention_head<T, W, pol_d>(qt.data(), kt.data(), vt.data(), ct.data(), divisor, s,
                                         md::size_c<pol_n>{}, md::size_c<np>{}, policy, h);
      } else {
        T s[np];
        tmj::attention_head_scalar<T, pol_d>(qt.data(), kt.data(), vt.data(), ct.data(), divisor,
                                             s, md::size_c<pol_n>{}, md::size_c<np>{}, policy,
                                             h);
      }
      for (std::size_t i = 0; i < pol_n; ++i)
        for (std::size_t d = 0; d < pol_d; ++d)
          out.token_major[at + i * pol_d + d] = ct[d * np + i];
    }
  if constexpr (md::simd::hardware_vectors) {
    // pair p = h * Batch + b; Q^T etc. [h * d][b * np + t]
    constexpr std::size_t cols = pol_b * np;
    std::array<T, pol_h * pol_d * cols> qt{}, kt{}, vt{}, ct{};
    for (std::size_t b = 0; b < pol_b; ++b)
      for (std::size_t h = 0; h < pol_h; ++h)
        for (std::size_t t = 0; t < pol_n; ++t)
          for (std::size_t d = 0; d < pol_d; ++d) {
            const std::size_t e = in.at(b, h) + t * pol_d + d;
            const std::size_t f = (h * pol_d + d) * cols + b * np + t;
            qt[f] = in.q[e];
            kt[f] = in.k[e];
            vt[f] = in.v[e];
          }
    tmj::attention_pairs<T, pol_d, pol_n, pol_b, pol_h, 1, np>(qt.data(), kt.data(), vt.data(),
                                                               ct.data(), divisor, policy);
    for (std::size_t b = 0; b < pol_b; ++b)
      for (std::size_t h = 0; h < pol_h; ++h)
        for (std::size_t t = 0; t < pol_n; ++t)
          for (std::size_t d = 0; d < pol_d; ++d)
            out.pairs[in.at(b, h) + t * pol_d + d] = ct[(h * pol_d + d) * cols + b * np + t];
  } else {
    out.pairs = out.simple;  // (no pairs kernel on this target)
  }
  return out;
}

// Each decode row (the last query of each head) within 2e-6 relative of the
// simple kernel's, as test case 8 compares decode steps.
bool decode_rows_close(const kernel_outputs& o) {
  for (std::size_t b = 0; b < pol_b; ++b)
    for (std::size_t h = 0; h < pol_h; ++h)
      for (std::size_t d = 0; d < pol_d; ++d) {
        const std::size_t e = ((b * pol_h + h) * pol_n + pol_n - 1) * pol_d + d;
        if (std::fabs(o.decode[e] - o.simple[e]) > 2e-6f * std::max(1.0f, std::fabs(o.simple[e])))
          return false;
      }
  return true;
}

// A tiny grouped-query module with RoPE and the score options S (parameters
// from sequence_model(0.5, 3): logits beyond a cap of 2): constant evaluation
// gives the run-time bits (token-major, pairs) and mha::dynamic's; returns the
// run-time output.
template <mha::attention_scores S>
mha::tensor<float, 5, 8> check_tiny_gqa_options() {
  using G = mha::grouped_query_attention<float, 4, 8, 6, 4, 2, true, mha::rope<10000>, S>;
  constexpr auto make = [] { return mha_test::sequence_model<G>(0.5f, 3.0f); };
  constexpr G m = make();
  constexpr auto x = mha_test::tiny_gqa_input();
  constexpr auto y = m.forward(x);
  const G rm = make();
  const auto rx = mha_test::tiny_gqa_input();
  const auto ry = run_time_forward(rm, rx);
  REQUIRE(mha_test::all_finite(ry.data(), ry.size));
  REQUIRE(mha_test::same_bits(y, ry));
  mha::dynamic::grouped_query_attention<float, S> d(4, 8, 6, 4, 2, true,
                                                     mha::dynamic::rope_config{10000});
  mha::copy_parameters(rm, d);
  mha::dynamic::tensor<float> dx({5, 4});
  std::copy(rx.begin(), rx.end(), dx.data());
  REQUIRE(mha_test::same_bits(ry, d.forward(dx)));
  return ry;
}

// Every kernel's outputs finite and equal to the simple kernel's, bit for bit
// (decode: decode_rows_close).
void require_kernels_agree(const kernel_outputs& o) {
  const std::size_t n = o.simple.size();
  REQUIRE(mha_test::all_finite(o.simple.data(), n));
  REQUIRE(mha_test::same_bits(o.mirror.data(), o.simple.data(), n));
  REQUIRE(mha_test::same_bits(o.blocked.data(), o.simple.data(), n));
  REQUIRE(mha_test::same_bits(o.token_major.data(), o.simple.data(), n));
  REQUIRE(mha_test::same_bits(o.pairs.data(), o.simple.data(), n));
  REQUIRE(decode_rows_close(o));
}

}  // namespace

// 11: the score-policy hooks (logit step, sink) of the six head kernels.
TEST_CASE("score policies: every head kernel takes the logit and sink steps alike",
          "[conformance][score_policy]") {
  std::mt19937 rng(71);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  policy_heads in;
  for (auto* a : {&in.q, &in.k, &in.v})
    for (float& e : *a) e = u(rng);
  const auto plain = run_kernels<mha::detail::causal_scores>(in);
  const auto disguised = run_kernels<identity_scores>(in);
  const auto shifted = run_kernels<shifted_scores>(in);
  for (const auto* o : {&plain.simple, &disguised.simple, &shifted.simple})
    REQUIRE(mha_test::all_finite(o->data(), o->size()));
  SECTION("a plain policy in disguise gives causal_scores' bits on every kernel") {
    const std::size_t n = plain.simple.size();
    REQUIRE(mha_test::same_bits(disguised.simple.data(), plain.simple.data(), n));
    REQUIRE(mha_test::same_bits(disguised.mirror.data(), plain.mirror.data(), n));
    REQUIRE(mha_test::same_bits(disguised.blocked.data(), plain.blocked.data(), n));
    REQUIRE(mha_test::same_bits(disguised.decode.data(), plain.decode.data(), n));
    REQUIRE(mha_test::same_bits(disguised.token_major.data(), plain.token_major.data(), n));
    REQUIRE(mha_test::same_bits(disguised.pairs.data(), plain.pairs.data(), n));
  }
  SECTION("logit and sink steps: the kernels agree bit for bit (decode to rounding)") {
    for (const auto* o : {&plain, &shifted}) {
      const std::size_t n = o->simple.size();
      REQUIRE(mha_test::same_bits(o->mirror.data(), o->simple.data(), n));
      REQUIRE(mha_test::same_bits(o->blocked.data(), o->simple.data(), n));
      REQUIRE(mha_test::same_bits(o->token_major.data(), o->simple.data(), n));
      REQUIRE(mha_test::same_bits(o->pairs.data(), o->simple.data(), n));
    }
    REQUIRE(decode_rows_close(plain));
    REQUIRE(decode_rows_close(shifted));
    // the steps change the result (the hooks are called)
    REQUIRE(!mha_test::same_bits(shifted.simple.data(), plain.simple.data(), plain.simple.size()));
  }
}

// 12: the score options soft-capping and ALiBi through the kernels and modules.
TEST_CASE("score options: soft-capping and ALiBi give one result on every path",
          "[conformance][score_options][constexpr][kv_cache]") {
  constexpr mha::attention_scores both{.softcap = 2, .alibi = true};
  SECTION("the options' policy: every head kernel alike") {
    std::mt19937 rng(73);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);  // logits beyond the cap of 2
    policy_heads in;
    for (auto* a : {&in.q, &in.k, &in.v})
      for (float& e : *a) e = u(rng);
    const auto policy = mha::detail::make_score_policy<float, both>(mha::detail::size_c<pol_h>{});
    STATIC_REQUIRE(!decltype(policy)::plain);
    const auto o = run_kernels(in, policy);
    const auto plain = run_kernels<mha::detail::causal_scores>(in);
    require_kernels_agree(o);
    REQUIRE(!mha_test::same_bits(o.simple.data(), plain.simple.data(), o.simple.size()));
  }
  SECTION("constant evaluation gives the run-time bits and mha::dynamic's") {
    const auto ry = check_tiny_gqa_options<both>();
    const auto rx = mha_test::tiny_gqa_input();
    const auto rm = mha_test::sequence_model<
        mha::grouped_query_attention<float, 4, 8, 6, 4, 2, true, mha::rope<10000>, both>>(0.5f, 3.0f);
    // the options change the result
    mha::grouped_query_attention<float, 4, 8, 6, 4, 2, true, mha::rope<10000>> plain{};
    mha::copy_parameters(rm, plain);
    REQUIRE_FALSE(mha_test::same_bits(run_time_forward(plain, rx), ry));
  }
  SECTION("KV cache: float grouped-query attention with both options") {
    using G = mha::grouped_query_attention<float, 16, 16, 16, 4, 2, false, mha::rope<10000>, both>;
    std::mt19937 rng(75);
    auto g = std::make_unique<G>();
    mha::for_each_parameter(*g, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 1.0); });
    mha::dynamic::grouped_query_attention<float, both> d(16, 16, 16, 4, 2, false,
                                                          mha::dynamic::rope_config{10000});
    mha::copy_parameters(*g, d);
    check_kv<2>(*g, d, {10, 1, 3, 2}, 76);  // fills the context
  }
  SECTION("sinks with a sliding window and RoPE (gpt-oss's layers): every path") {
    constexpr mha::attention_scores oss{.sliding_window = 3, .sinks = true};
    // the policy with sinks through the six head kernels
    std::mt19937 rng(79);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    policy_heads in;
    for (auto* a : {&in.q, &in.k, &in.v})
      for (float& e : *a) e = u(rng);
    mha::score_parameters<float, pol_h, oss> params{};
    params.sinks.data()[0] = 0.75f;
    params.sinks.data()[1] = -1.5f;
    const auto policy =
        mha::detail::make_score_policy<float, oss>(mha::detail::size_c<pol_h>{}, params);
    STATIC_REQUIRE(decltype(policy)::has_sink);
    const auto o = run_kernels(in, policy);
    require_kernels_agree(o);
    // a grouped-query module: constant evaluation == run time == mha::dynamic
    check_tiny_gqa_options<oss>();
    // the KV-cache steps, double
    using D = mha::grouped_query_attention<double, 16, 16, 16, 4, 2, false, mha::rope<10000>, oss>;
    auto g = std::make_unique<D>();
    mha::for_each_parameter(*g, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 1.0); });
    mha::dynamic::grouped_query_attention<double, oss> dd(16, 16, 16, 4, 2, false,
                                                           mha::dynamic::rope_config{10000});
    mha::copy_parameters(*g, dd);
    check_kv<2>(*g, dd, {10, 1, 3, 2}, 80);
  }
  SECTION("a rolling KV cache: a stream of 4 contexts, without RoPE") {
    // window 3 of a context of 16: the cache holds 2 * 3 - 1 + 8 = 13 tokens,
    // the stream runs to 48 positions in steps of 1 to 11 tokens; each step's
    // rows equal, to rounding, the whole-sequence forward of a twin with a
    // context of 48
    constexpr mha::attention_scores win{.sliding_window = 3, .sinks = true};
    using R = mha::grouped_query_attention<double, 8, 8, 16, 2, 1, false, mha::no_rope, win>;
    using L = mha::grouped_query_attention<double, 8, 8, 48, 2, 1, false, mha::no_rope, win>;
    STATIC_REQUIRE(R::kv_cache<1>::rolling && R::kv_cache<1>::capacity == 13);
    std::mt19937 rng(81);
    auto r = std::make_unique<R>();
    mha::for_each_parameter(*r, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 1.0); });
    auto l = std::make_unique<L>();  // (copy_parameters wants equal context lengths)
    l->w_query = r->w_query;
    l->w_key = r->w_key;
    l->w_value = r->w_value;
    l->out_proj = r->out_proj;
    l->score_params.sinks = r->score_params.sinks;
    mha::dynamic::grouped_query_attention<double, win> d(8, 8, 16, 2, 1, false);
    mha::copy_parameters(*r, d);
    auto x = std::make_unique<mha::tensor<double, 1, 48, 8>>();
    mha_test::fill_uniform(*x, rng, 1.0);
    const auto whole = l->forward(*x);
    auto cache = std::make_unique<R::kv_cache<1>>();
    auto ws = std::make_unique<R::workspace<1, 12>>();
    mha::dynamic::kv_cache<double> dcache(d, 1);
    REQUIRE(dcache.rolling());
    REQUIRE(dcache.capacity() == 13);
    mha::dynamic::workspace<double> dws;
    mha::tensor<double, 1, 12, 8> step_x{};
    mha::tensor<double, 1, 12, 8> step_out{};
    std::size_t pos = 0;
    constexpr std::size_t steps[] = {7, 1, 11, 2, 1, 9, 3, 1, 8, 5};
    for (const std::size_t n : steps) {
      INFO("append " << n << " tokens at " << pos);
      std::copy(x->data() + pos * 8, x->data() + (pos + n) * 8, step_x.data());
      REQUIRE(r->forward(step_x, n, step_out, *cache, *ws) == mha::status::ok);
      REQUIRE(cache->size() == pos + n);
      REQUIRE(cache->first_position() + R::kv_cache<1>::capacity >= pos + n);
      require_close(step_out.data(), whole.data() + pos * 8, n * 8, kv_rtol<double>,
                    "rolling cached rows vs the whole-sequence forward");
      mha::dynamic::tensor<double> dx({1, n, 8}), dout({1, n, 8});
      std::copy(step_x.data(), step_x.data() + n * 8, dx.data());
      d.forward(dx, dout, dcache, dws);
      REQUIRE(dcache.first_position() == cache->first_position());
      REQUIRE(mha_test::same_bits(step_out.data(), dout.data(), n * 8));
      pos += n;
    }
    REQUIRE(pos == 48);
    REQUIRE(cache->first_position() >= 48 - 13);
    // a rollback of up to 8 tokens is always possible (kv_rollback), then the
    // stream goes on from there
    REQUIRE(cache->can_truncate(40));
    REQUIRE(dcache.can_truncate(40));
    cache->truncate(40);
    dcache.truncate(40);
    REQUIRE(cache->size() == 40);
    std::copy(x->data() + 40 * 8, x->data() + 48 * 8, step_x.data());
    REQUIRE(r->forward(step_x, 8, step_out, *cache, *ws) == mha::status::ok);
    require_close(step_out.data(), whole.data() + 40 * 8, 8 * 8, kv_rtol<double>,
                  "rows after a rollback of 8 tokens vs the whole-sequence forward");
    mha::dynamic::tensor<double> dx({1, 8, 8}), dout({1, 8, 8});
    std::copy(step_x.data(), step_x.data() + 64, dx.data());
    d.forward(dx, dout, dcache, dws);
    REQUIRE(mha_test::same_bits(step_out.data(), dout.data(), 64));
  }
  SECTION("KV cache: double multi_head_attention, ALiBi on 3 heads") {
    constexpr mha::attention_scores alibi{.alibi = true};
    using M = mha::multi_head_attention<double, 12, 12, 12, 3, true, alibi>;
    std::mt19937 rng(77);
    auto m = std::make_unique<M>();
    mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    mha::dynamic::multi_head_attention<double, alibi> d(12, 12, 12, 3, true);
    mha::copy_parameters(*m, d);
    using F = mha::fused_multi_head_attention<double, 12, 12, 12, 3, true, alibi>;
    auto f = std::make_unique<F>();
    mha::fuse_qkv(*m, *f);
    check_kv<2>(*m, d, {9, 1, 2}, 78, f.get());
  }
}
