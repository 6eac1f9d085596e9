// isa_tu.cpp -- one translation unit of the mixed-ISA test (issue 11, defect
// 6), compiled several times: with the baseline flags (-march=x86-64) and with
// AVX-512 (-march=x86-64-v4), each at -O0 and at -O2 (test/isa/CMakeLists.txt).
// ISA_TEST_RUN names the function this copy defines. It computes the forward
// of every kind of module with fixed weights and inputs and records the
// outputs; isa_main.cpp links the copies into one program and compares them.
//
// Everything here has internal linkage (anonymous namespace) except the one
// entry point, so only the library's own symbols can collide between copies.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include <mha/mha.hpp>

#include "isa_run.hpp"

#ifndef ISA_TEST_RUN
#error "define ISA_TEST_RUN to the name of the entry point"
#endif

namespace {

/// Deterministic values in [-0.5, 0.5) (a 64-bit LCG, Knuth's MMIX constants).
struct lcg {
  std::uint64_t state;
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
  }
};

template <class T>
void fill(T* p, std::size_t n, lcg& g) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(g.next());
}

template <class T, std::size_t I, std::size_t O, bool B>
void fill(mha::linear<T, I, O, B>& l, lcg& g) {
  fill(l.weight.data(), l.weight.size, g);
  if constexpr (B) fill(l.bias.data(), l.bias.size, g);
}

template <class T>
void copy_into(const T* src, mha::dynamic::tensor<T>& dst) {
  std::memcpy(dst.data(), src, dst.size() * sizeof(T));
}

template <class T, std::size_t I, std::size_t O, bool B>
void copy_into(const mha::linear<T, I, O, B>& f, mha::dynamic::linear<T>& d) {
  copy_into(f.weight.data(), d.weight);
  if constexpr (B) copy_into(f.bias.data(), d.bias);
}

void record(isa_test::run& r, const float* p, std::size_t n) {
  for (std::size_t i = 0; i < n && r.count < sizeof r.values / sizeof r.values[0]; ++i)
    r.values[r.count++] = p[i];
}
void record(isa_test::run& r, const double* p, std::size_t n) {
  for (std::size_t i = 0; i < n && r.double_count < sizeof r.double_values / sizeof r.double_values[0]; ++i)
    r.double_values[r.double_count++] = p[i];
}

template <class T>
void expect_same(isa_test::run& r, const char* what, const T* a, const T* b, std::size_t n) {
  if (std::memcmp(a, b, n * sizeof(T)) != 0) {
    ++r.twin_mismatches;
    if (r.first_mismatch == nullptr) r.first_mismatch = what;
  }
}

constexpr std::size_t B = 2, N = 20, DIn = 24, Ctx = 40;

// Modules in static storage (value-initialised, then filled).
using mha_f = mha::multi_head_attention<float, DIn, 32, Ctx, 4, true>;
using mha_d = mha::multi_head_attention<double, DIn, 32, Ctx, 4>;
using ca_f = mha::causal_attention<float, DIn, 16, Ctx, true>;
using wrap_f = mha::multi_head_attention_wrapper<float, DIn, 8, Ctx, 3>;
using lin_f = mha::linear<float, DIn, 32>;
using long_f = mha::multi_head_attention<float, 16, 16, 300, 2>;  // > 256 tokens: blocked path

mha_f m_f{};
mha_d m_d{};
ca_f m_ca{};
wrap_f m_wrap{};
lin_f m_lin{};
long_f m_long{};
mha::tensor<float, B, N, DIn> x_f{};
mha::tensor<double, B, N, DIn> x_d{};
mha::tensor<float, 1, 260, 16> x_long{};
mha_f::workspace<B, N> ws_f{};
mha_d::workspace<B, N> ws_d{};
ca_f::workspace<B, N> ws_ca{};
long_f::workspace<1, 260> ws_long{};
mha_f::kv_cache<B> cache_f{};
mha::tensor<float, B, N, 32> y_f{};

}  // namespace

void ISA_TEST_RUN(isa_test::run& r) {
  r.isa_namespace = mha::detail::isa_name;
  lcg g{12345};
  fill(m_f.w_query, g);
  fill(m_f.w_key, g);
  fill(m_f.w_value, g);
  fill(m_f.out_proj, g);
  fill(m_d.w_query, g);
  fill(m_d.w_key, g);
  fill(m_d.w_value, g);
  fill(m_d.out_proj, g);
  fill(m_ca.w_query, g);
  fill(m_ca.w_key, g);
  fill(m_ca.w_value, g);
  fill(m_wrap.head<0>().w_query, g);
  fill(m_wrap.head<1>().w_key, g);
  fill(m_wrap.head<2>().w_value, g);
  fill(m_wrap.head<2>().w_query, g);
  fill(m_lin, g);
  fill(m_long.w_query, g);
  fill(m_long.w_key, g);
  fill(m_long.w_value, g);
  fill(m_long.out_proj, g);
  fill(x_f.data(), x_f.size, g);
  fill(x_d.data(), x_d.size, g);
  fill(x_long.data(), x_long.size, g);

  // linear
  const auto y_lin = m_lin.forward(x_f);
  record(r, y_lin.data(), y_lin.size);

  // causal_attention: stack workspace, then a run-time token count
  const auto y_ca = m_ca(x_f);
  record(r, y_ca.data(), y_ca.size);
  mha::tensor<float, B, N, 16> y_ca_n{};
  if (m_ca.forward(x_f, 13, y_ca_n, ws_ca) != mha::status::ok) ++r.twin_mismatches;
  record(r, y_ca_n.data(), y_ca_n.size);

  // the wrapper and its dynamic twin (whose heads are dynamic causal_attention modules)
  const auto y_wrap = m_wrap.forward(x_f);
  record(r, y_wrap.data(), y_wrap.size);
  mha::dynamic::multi_head_attention_wrapper<float> d_wrap(DIn, 8, Ctx, 3);
  [&]<std::size_t... H>(std::index_sequence<H...>) {
    ((copy_into(m_wrap.head<H>().w_query, d_wrap.heads[H].w_query),
      copy_into(m_wrap.head<H>().w_key, d_wrap.heads[H].w_key),
      copy_into(m_wrap.head<H>().w_value, d_wrap.heads[H].w_value)), ...);
  }(std::make_index_sequence<3>{});
  mha::dynamic::tensor<float> xd_w({B, N, DIn});
  copy_into(x_f.data(), xd_w);
  const auto yd_wrap = d_wrap(xd_w);
  expect_same(r, "dynamic vs fixed multi_head_attention_wrapper", yd_wrap.data(), y_wrap.data(),
              y_wrap.size);

  // multi_head_attention (float: token-major path), its fused twin, its dynamic twin
  m_f.forward(x_f, y_f, ws_f);
  record(r, y_f.data(), y_f.size);
  const auto fused = mha::fuse_qkv(m_f);
  const auto y_fused = fused.forward(x_f);
  expect_same(r, "fused vs multi_head_attention", y_fused.data(), y_f.data(), y_f.size);

  mha::dynamic::multi_head_attention<float> d_f(DIn, 32, Ctx, 4, true);
  copy_into(m_f.w_query, d_f.w_query);
  copy_into(m_f.w_key, d_f.w_key);
  copy_into(m_f.w_value, d_f.w_value);
  copy_into(m_f.out_proj, d_f.out_proj);
  mha::dynamic::tensor<float> xd_f({B, N, DIn});
  copy_into(x_f.data(), xd_f);
  const auto yd_f = d_f.forward(xd_f);
  expect_same(r, "dynamic vs fixed multi_head_attention<float>", yd_f.data(), y_f.data(), y_f.size);

  // double (register-tiled path) and its dynamic twin
  mha::tensor<double, B, N, 32> y_d{};
  m_d.forward(x_d, y_d, ws_d);
  record(r, y_d.data(), y_d.size);
  mha::dynamic::multi_head_attention<double> d_d(DIn, 32, Ctx, 4);
  copy_into(m_d.w_query, d_d.w_query);
  copy_into(m_d.w_key, d_d.w_key);
  copy_into(m_d.w_value, d_d.w_value);
  copy_into(m_d.out_proj, d_d.out_proj);
  mha::dynamic::tensor<double> xd_d({B, N, DIn});
  copy_into(x_d.data(), xd_d);
  const auto yd_d = d_d.forward(xd_d);
  expect_same(r, "dynamic vs fixed multi_head_attention<double>", yd_d.data(), y_d.data(), y_d.size);

  // more than 256 tokens in float: the register-tiled kernels
  static mha::tensor<float, 1, 260, 16> y_long{};
  m_long.forward(x_long, y_long, ws_long);
  record(r, y_long.data(), y_long.size);

  // KV cache: a 12-token prefill (blocked), a 1-token and a 3-token decode step
  // (matrix-vector kernels), fixed and dynamic
  mha::dynamic::kv_cache<float> d_cache(d_f, B);
  mha::dynamic::workspace<float> d_ws;
  std::size_t pos = 0;
  for (const std::size_t n : {std::size_t{12}, std::size_t{1}, std::size_t{3}}) {
    mha::tensor<float, B, N, DIn> step{};
    for (std::size_t b = 0; b < B; ++b)
      std::memcpy(step.data() + b * N * DIn, x_f.data() + (b * N + pos) * DIn, n * DIn * sizeof(float));
    mha::tensor<float, B, N, 32> y_step{};
    if (m_f.forward(step, n, y_step, cache_f, ws_f) != mha::status::ok) ++r.twin_mismatches;
    mha::dynamic::tensor<float> xs({B, n, DIn}), ys({B, n, 32});
    for (std::size_t b = 0; b < B; ++b)
      std::memcpy(xs.data() + b * n * DIn, step.data() + b * N * DIn, n * DIn * sizeof(float));
    d_f.forward(xs, ys, d_cache, d_ws);
    for (std::size_t b = 0; b < B; ++b) {
      record(r, y_step.data() + b * N * 32, n * 32);
      expect_same(r, "dynamic vs fixed KV-cache step", ys.data() + b * n * 32,
                  y_step.data() + b * N * 32, n * 32);
    }
    pos += n;
  }
}
