// isa_tu.cpp -- one translation unit of the mixed-ISA test (issue 11, defect
// 6), compiled several times: with the baseline flags (-march=x86-64) and with
// AVX-512 (-march=x86-64-v4), each at -O0 and at -O2 (test/isa/CMakeLists.txt).
// ISA_TEST_RUN names the function this copy defines. It computes the forward
// of every kind of module with fixed weights and inputs and records the
// outputs; isa_main.cpp links the copies into one program and compares them.
//
// With ISA_TEST_HAVE_IO (the mha::io target exists) it also loads weights
// with the safetensors loader (<mha/io/safetensors.hpp>): from files of
// test/data/safetensors (ISA_TEST_DATA_DIR) and from a buffer in memory, in
// several formats, dtypes and model kinds, and records the loaded weights, so
// that the loader's weak symbols are compared too (the kernels are already
// covered: the loaded models are not run).
//
// Everything here has internal linkage (anonymous namespace) except the one
// entry point, so only the library's own symbols can collide between copies.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <mha/mha.hpp>
#if defined(ISA_TEST_HAVE_IO)
#include <mha/io/safetensors.hpp>

#include "../program_path.hpp"
#endif

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

#if defined(ISA_TEST_HAVE_IO)
/// A weight loaded into `m` failed: counted as a mismatch of this copy.
void expect_loaded(isa_test::run& r, const char* what, const mha::io::load_result& res) {
  if (!res.ok()) {
    ++r.twin_mismatches;
    if (r.first_mismatch == nullptr) r.first_mismatch = what;
  }
}

/// test/data/safetensors/<name>.safetensors
std::string data_file(const char* name) {
  return mha_test::program_relative(ISA_TEST_DATA_DIR) + "/" + name + ".safetensors";
}

/// The bytes of data_file(name) (empty if unreadable: the load then fails).
std::vector<unsigned char> file_bytes(const char* name) {
  std::vector<unsigned char> bytes;
  if (std::FILE* f = std::fopen(data_file(name).c_str(), "rb")) {
    unsigned char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) != 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  return bytes;
}

template <class M>
void record_weights(isa_test::run& r, const M& m) {
  record(r, m.w_query.weight.data(), m.w_query.weight.size);
  record(r, m.w_key.weight.data(), m.w_key.weight.size);
  record(r, m.w_value.weight.data(), m.w_value.weight.size);
}

// The loader's cases: each model kind, format and dtype path of
// <mha/io/safetensors.hpp> once (book F16/BF16 with the mask check, book F64
// into double, a causal_attention, GPT-2's transposed Conv1D weights into a
// dynamic model, NeoX's interleaved rows into the fused model from memory).
mha::multi_head_attention<float, 6, 8, 9, 4, true> io_m_f{};   // book_mha_f16, _bf16
mha::multi_head_attention<double, 5, 6, 8, 3, true> io_m_d{};  // book_mha_f64
mha::causal_attention<float, 4, 5, 7, true> io_m_ca{};          // book_ca_f32
mha::fused_multi_head_attention<float, 12, 12, 8, 3, true> io_m_fused{};  // neox_f32

void run_loader(isa_test::run& r) {
  namespace io = mha::io;
  for (const char* name : {"book_mha_f16", "book_mha_bf16"}) {
    expect_loaded(r, name, io::try_load_safetensors(data_file(name), io_m_f));
    record_weights(r, io_m_f);
  }
  expect_loaded(r, "book_mha_f64", io::try_load_safetensors(data_file("book_mha_f64"), io_m_d));
  record_weights(r, io_m_d);
  expect_loaded(r, "book_ca_f32", io::try_load_safetensors(data_file("book_ca_f32"), io_m_ca));
  record_weights(r, io_m_ca);

  mha::dynamic::multi_head_attention<float> d(12, 12, 10, 3, true);
  expect_loaded(r, "gpt2_f32",
                io::load_safetensors(data_file("gpt2_f32"), d, io::checkpoint_format::gpt2, "h.0.attn."));
  record(r, d.w_query.weight.data(), d.w_query.weight.size());
  record(r, d.out_proj.weight.data(), d.out_proj.weight.size());

  const auto bytes = file_bytes("neox_f32");
  io::load_options o;
  o.format = io::checkpoint_format::neox;
  o.prefix = "gpt_neox.layers.0.attention.";
  expect_loaded(r, "neox_f32",
                io::try_load_safetensors_memory(bytes.data(), bytes.size(), io_m_fused, o, "neox_f32"));
  record(r, io_m_fused.w_qkv.weight.data(), io_m_fused.w_qkv.weight.size);
}
#endif  // ISA_TEST_HAVE_IO

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

#if defined(ISA_TEST_HAVE_IO)
  run_loader(r);
#endif
}
