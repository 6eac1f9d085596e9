// kv_cache_checks.hpp -- the checks of one KV-cache fixture case (outputs and
// errors parts, test/test_kv_cache.cpp's header comment lists them), shared by
// test/test_kv_cache.cpp (the fixture table) and test/test_kv_cache_gpt2.cpp
// (its GPT-2 width case, kv_gpt2_case below, a program of its own so that
// the sanitizer presets can compile it at -O1: test/CMakeLists.txt).
//
// run_case<M, B>(name, part) loads test/data/kv_cache/<name>.json (relative
// to the program, MHA_TEST_DATA_DIR) and runs that part on the fixed-size
// module M with a batch of B sequences, its fuse_qkv() twin (if any) and mha::dynamic.
// Everything here is in an unnamed namespace: each program has its own copy.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/mha.hpp>

#include "kv_fixture.hpp"
#include "state_dict.hpp"
#include "program_path.hpp"
#include "test_support.hpp"

namespace {

template <class T>
using fixture = kv_fixture::fixture<T>;
using kv_fixture::step;

/// Tolerance against the PyTorch fixtures and between cached and plain rows.
template <class T>
constexpr double kv_rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

const std::filesystem::path kv_dir = std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "kv_cache";

// ------------------------------------------------------------------ buffers

/// Byte written over outputs before a call, to see which rows it wrote.
constexpr unsigned char sentinel_byte = 0xA5;

template <class T>
void fill_sentinel(T* p, std::size_t n) {
  if (n > 0) std::memset(static_cast<void*>(p), sentinel_byte, n * sizeof(T));
}
template <class T>
bool is_sentinel(const T* p, std::size_t n) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return std::all_of(b, b + n * sizeof(T), [](unsigned char c) { return c == sentinel_byte; });
}
template <class T>
void fill_nan(T* p, std::size_t n) {
  std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
}

/// The object representation of x.
template <class X>
std::vector<unsigned char> bytes_of(const X& x) {
  std::vector<unsigned char> v(sizeof(X));
  std::memcpy(v.data(), static_cast<const void*>(&x), sizeof(X));
  return v;
}
template <class X>
bool same_bytes(const X& x, const std::vector<unsigned char>& before) {
  return before.size() == sizeof(X) && std::memcmp(static_cast<const void*>(&x), before.data(), sizeof(X)) == 0;
}
template <class T>
std::vector<unsigned char> bytes_of_values(const T* p, std::size_t n) {
  std::vector<unsigned char> v(n * sizeof(T));
  if (n > 0) std::memcpy(v.data(), static_cast<const void*>(p), v.size());
  return v;
}
template <class T>
bool same_values_bytes(const T* p, std::size_t n, const std::vector<unsigned char>& before) {
  return before.size() == n * sizeof(T) &&
         (n == 0 || std::memcmp(static_cast<const void*>(p), before.data(), before.size()) == 0);
}

/// Rows of a [batch][per_seq][width] buffer.
template <class T>
struct rows {
  const T* data;
  std::size_t per_seq;
  std::size_t width;
  const T* at(std::size_t b, std::size_t r) const { return data + (b * per_seq + r) * width; }
};

/// Rows a_first.. of a and e_first.. of e (count rows of each of `batch` sequences) agree to rtol.
template <class A, class E>
void require_close_rows(rows<A> a, std::size_t a_first, rows<E> e, std::size_t e_first,
                        std::size_t count, std::size_t batch, double rtol, const char* what) {
  REQUIRE(a.width == e.width);
  for (std::size_t b = 0; b < batch; ++b) {
    const auto c = mha_test::compare(a.at(b, a_first), e.at(b, e_first), count * a.width, rtol);
    INFO(what << ", sequence " << b << ", rows " << a_first << ".." << a_first + count - 1 << ": "
              << c.describe());
    if (std::getenv("MHA_TEST_VERBOSE") != nullptr) WARN(what << ": " << c.describe());
    REQUIRE(c.violations == 0);
  }
}
/// The same rows have the same bits.
template <class T>
bool same_bits_rows(rows<T> a, std::size_t a_first, rows<T> b, std::size_t b_first,
                    std::size_t count, std::size_t batch) {
  if (a.width != b.width) return false;
  for (std::size_t s = 0; s < batch; ++s)
    if (!mha_test::same_bits(a.at(s, a_first), b.at(s, b_first), count * a.width)) return false;
  return true;
}

std::vector<std::size_t> token_range(std::size_t first, std::size_t count) {
  std::vector<std::size_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

// ------------------------------------------------------------------ parameters

using mha_test::collect;
using mha_test::param_map;
using mha_test::param_ref;

/// Copies every generated fixture parameter into the module; the fixture's
/// names and shapes must be exactly the module's.
template <class T>
void load_params(const fixture<T>& fx, const param_map<T>& targets) {
  std::set<std::string> fixture_names, module_names;
  for (const auto& p : fx.params) fixture_names.insert(p.name);
  for (const auto& [name, ref] : targets) module_names.insert(name);
  REQUIRE(fixture_names == module_names);
  for (const auto& [name, ref] : targets) {
    INFO("parameter " << name);
    REQUIRE(fx.parameter_shape(name) == ref.shape);
    const auto& values = fx.parameter(name);
    std::copy(values.begin(), values.end(), ref.data);
  }
}

// ------------------------------------------------------------------ module kinds

using mha_test::make_dynamic;
using mha_test::module_name;

/// The fuse_qkv() twin type of a multi_head_attention (M itself otherwise, never used).
template <class M>
struct fused_of {
  using type = M;
};
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
struct fused_of<mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>> {
  using type = mha::fused_multi_head_attention<T, DIn, DOut, Ctx, H, B>;
};

template <class M>
constexpr bool has_fused_twin = module_name<M>() == "multi_head_attention" &&
                                !std::is_same_v<typename fused_of<M>::type, M>;

/// The fused twin of m on the heap, written in place by mha::fuse_qkv(m, out)
/// (the GPT-2 size model is 9.4 MB: no stack temporary).
template <class M>
std::unique_ptr<typename fused_of<M>::type> make_fused(const M& m) {
  auto f = std::make_unique<typename fused_of<M>::type>();
  mha::fuse_qkv(m, *f);
  return f;
}

// ------------------------------------------------------------------ one fixed-size run

/// Everything one fixed-size run needs: cache of B sequences, workspace,
/// input and output of Max = context_length token rows, on the heap.
template <class M, std::size_t B>
struct fixed_state {
  using T = typename M::value_type;
  static constexpr std::size_t C = M::context_length, D = M::d_in, W = M::output_width;
  using cache_type = typename M::template kv_cache<B>;
  using workspace_type = typename M::template workspace<B, C>;
  using input_type = mha::tensor<T, B, C, D>;
  using output_type = mha::tensor<T, B, C, W>;

  std::unique_ptr<cache_type> cache = std::make_unique<cache_type>();
  std::unique_ptr<workspace_type> ws = std::make_unique<workspace_type>();
  std::unique_ptr<input_type> x = std::make_unique<input_type>();
  std::unique_ptr<output_type> out = std::make_unique<output_type>();

  rows<T> out_rows() const { return {out->data(), C, W}; }

  /// x := stream tokens `tokens` of sequences first_seq .. first_seq+B-1 in
  /// rows 0..n-1, NaN in rows n..C-1; out := sentinel.
  void prepare(const fixture<T>& fx, const std::vector<std::size_t>& tokens, std::size_t first_seq) {
    fill_nan(x->data(), input_type::size);
    fx.gather(tokens, x->data(), C, first_seq, B);
    fill_sentinel(out->data(), output_type::size);
  }
  /// Cached forward of `tokens` (appended to the cache).
  mha::status append(const M& m, const fixture<T>& fx, const std::vector<std::size_t>& tokens,
                     std::size_t first_seq = 0) {
    prepare(fx, tokens, first_seq);
    return m.forward(*x, tokens.size(), *out, *cache, *ws);
  }
  /// Plain run-time count forward of `tokens` (the cache is not used).
  mha::status plain(const M& m, const fixture<T>& fx, const std::vector<std::size_t>& tokens,
                    std::size_t first_seq = 0) {
    prepare(fx, tokens, first_seq);
    return m.forward(*x, tokens.size(), *out, *ws);
  }
  /// Rows n..C-1 of every sequence of out still hold the sentinel.
  bool rows_from_untouched(std::size_t n) const {
    for (std::size_t b = 0; b < B; ++b)
      if (!is_sentinel(out->data() + (b * C + n) * W, (C - n) * W)) return false;
    return true;
  }
};

template <class M, std::size_t B, class T>
void check_metadata(const fixture<T>& fx) {
  static_assert(std::is_same_v<typename M::value_type, T>);
  REQUIRE(fx.module == module_name<M>());
  REQUIRE(fx.d_in == M::d_in);
  REQUIRE(fx.d_out == M::d_out);
  REQUIRE(fx.context_length == M::context_length);
  REQUIRE(fx.num_heads == M::num_heads);
  REQUIRE(fx.qkv_bias == M::qkv_bias);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.output_width == M::output_width);
  REQUIRE(fx.parameter_count() == M::parameter_count);
  REQUIRE(fx.total_tokens >= M::context_length);  // check_errors draws a whole context
}

// ------------------------------------------------------------------ fixture outputs

/// Runs every step of the fixture on the fixed-size module M (and its fused
/// twin), on mha::dynamic, and the checks (a), (b), (c) alongside.
template <class M, std::size_t B>
void check_outputs(const fixture<typename M::value_type>& fx) {
  using T = typename M::value_type;
  using S = fixed_state<M, B>;
  constexpr std::size_t C = S::C, D = S::D, W = S::W;
  constexpr double rtol = kv_rtol<T>;
  constexpr bool fused_twin = has_fused_twin<M>;
  using F = typename fused_of<M>::type;

  static_assert(S::cache_type::capacity == C);
  check_metadata<M, B>(fx);

  auto model = std::make_unique<M>();
  {
    param_map<T> targets;
    collect(targets, *model);
    load_params(fx, targets);
  }
  auto dyn = make_dynamic<M>();
  {
    param_map<T> targets;
    collect(targets, dyn);
    load_params(fx, targets);
  }

  S run;    // the cached run under test
  S plain;  // (a) plain forwards over all tokens so far
  S fresh;  // (b) after a truncate: a fresh cache fed the shortened prefix
  REQUIRE(run.cache->size() == 0);

  // (f) Views of the test's own buffers at an odd element offset (aligned for
  // T, for no vector): the cached, run-time count and compile-time forwards,
  // fixed and dynamic, give the owning tensors' bits.
  auto vcache = std::make_unique<typename S::cache_type>();
  auto vws = std::make_unique<typename S::workspace_type>();
  std::vector<T> vin(1 + B * C * D), vout(1 + B * C * W);
  const mha::tensor_view<const T, B, C, D> vx{vin.data() + 1};
  const mha::tensor_view<T, B, C, W> vo{vout.data() + 1};
  mha::dynamic::kv_cache<T> vdcache(dyn, B);
  const auto view_input = [&](const auto& x) {
    std::copy(x.begin(), x.end(), vin.begin() + 1);
    fill_sentinel(vout.data() + 1, B * C * W);
  };

  std::unique_ptr<F> fused;
  std::unique_ptr<fixed_state<F, B>> fused_run;
  if constexpr (fused_twin) {
    fused = make_fused(*model);
    fused_run = std::make_unique<fixed_state<F, B>>();
  }

  // (c) every sequence alone, batch 1.
  std::vector<std::unique_ptr<fixed_state<M, 1>>> alone;
  if constexpr (B > 1)
    for (std::size_t b = 0; b < B; ++b) alone.push_back(std::make_unique<fixed_state<M, 1>>());

  mha::dynamic::kv_cache<T> dcache(dyn, B);
  REQUIRE(dcache.capacity() == C);
  REQUIRE(dcache.size() == 0);
  mha::dynamic::tensor<T> dx({B, C, D}), dout({B, C, W}), dpx({B, C, D}), dpout({B, C, W});
  mha::dynamic::workspace<T> dws;

  std::vector<T> history(B * C * W);  // latest cached output of every position
  const rows<T> history_rows{history.data(), C, W};
  std::vector<std::size_t> seq;       // stream token of every cached position
  std::vector<T> first_output;        // outputs of the first step, for clear()
  bool after_truncate = false;

  for (std::size_t si = 0; si < fx.steps.size(); ++si) {
    const step& s = fx.steps[si];
    INFO("step " << si);

    if (s.op == step::kind::truncate) {
      INFO("truncate to " << s.size);
      REQUIRE(s.size <= run.cache->size());
      run.cache->truncate(s.size);
      REQUIRE(run.cache->size() == s.size);
      if constexpr (fused_twin) {
        fused_run->cache->truncate(s.size);
        REQUIRE(fused_run->cache->size() == s.size);
      }
      for (auto& a : alone) {
        a->cache->truncate(s.size);
        REQUIRE(a->cache->size() == s.size);
      }
      dcache.truncate(s.size);
      REQUIRE(dcache.size() == s.size);
      vcache->truncate(s.size);
      vdcache.truncate(s.size);
      seq.resize(s.size);
      REQUIRE(seq == fx.cached_tokens_after(si));

      // (b) A fresh cache holding exactly the kept prefix, fed in one call.
      fresh.cache->clear();
      REQUIRE(fresh.cache->size() == 0);
      if (s.size > 0) {
        REQUIRE(fresh.append(*model, fx, seq) == mha::status::ok);
        REQUIRE(fresh.cache->size() == s.size);
        require_close_rows(fresh.out_rows(), 0, history_rows, 0, s.size, B, rtol,
                           "(b) fresh run of the kept prefix vs the cached outputs");
      }
      after_truncate = true;
      continue;
    }

    const std::size_t before = s.cache_size_before, k = s.tokens, after = before + k;
    INFO("append " << k << " tokens to " << before);
    REQUIRE(run.cache->size() == before);
    REQUIRE(dcache.size() == before);
    REQUIRE(seq.size() == before);
    const auto tokens = fixture<T>::new_tokens(s);
    const rows<double> expected{s.output.data(), k, W};

    // Fixed-size cached forward: rows 0..k-1 written, rows k.. untouched,
    // rows k.. of x (NaN) never read.
    REQUIRE(run.append(*model, fx, tokens) == mha::status::ok);
    REQUIRE(run.cache->size() == after);
    REQUIRE(run.rows_from_untouched(k));
    require_close_rows(run.out_rows(), 0, expected, 0, k, B, rtol, "fixed cached forward vs PyTorch");
    for (std::size_t b = 0; b < B; ++b)
      std::copy(run.out_rows().at(b, 0), run.out_rows().at(b, k), history.data() + (b * C + before) * W);
    if (si == 0) first_output.assign(run.out->begin(), run.out->end());
    view_input(*run.x);  // (f)
    REQUIRE(model->forward(vx, k, vo, *vcache, *vws) == mha::status::ok);
    REQUIRE(vcache->size() == after);
    REQUIRE(mha_test::same_bits(vo.data(), run.out->data(), B * C * W));

    // fuse_qkv twin: the same bits, sentinel rows included.
    if constexpr (fused_twin) {
      REQUIRE(fused_run->append(*fused, fx, tokens) == mha::status::ok);
      REQUIRE(fused_run->cache->size() == after);
      REQUIRE(mha_test::same_bits(*run.out, *fused_run->out));
    }

    // mha::dynamic: the same bits.
    dx.reshape({B, k, D});
    fx.gather(tokens, dx.data(), k);
    dout.reshape({B, k, W});
    fill_sentinel(dout.data(), dout.size());
    dyn.forward(dx, dout, dcache, dws);
    REQUIRE(dcache.size() == after);
    REQUIRE(dout.shape() == std::vector<std::size_t>{B, k, W});
    REQUIRE(same_bits_rows(run.out_rows(), 0, rows<T>{dout.data(), k, W}, 0, k, B));
    view_input(dx);  // (f)
    dyn.forward(mha::dynamic::tensor_view<const T>(vin.data() + 1, {B, k, D}),
                mha::dynamic::tensor_view<T>(vout.data() + 1, {B, k, W}), vdcache, dws);
    REQUIRE(vdcache.size() == after);
    REQUIRE(mha_test::same_bits(vout.data() + 1, dout.data(), dout.size()));

    // (c) Each sequence alone gets the same result, bit for bit (the path a
    // cached call takes depends on its token count n, never on the batch).
    for (std::size_t b = 0; b < alone.size(); ++b) {
      INFO("(c) sequence " << b << " alone");
      REQUIRE(alone[b]->append(*model, fx, tokens, b) == mha::status::ok);
      REQUIRE(alone[b]->cache->size() == after);
      REQUIRE(alone[b]->rows_from_untouched(k));
      REQUIRE(same_bits_rows(alone[b]->out_rows(), 0, rows<T>{run.out->data() + b * C * W, C, W}, 0,
                             k, 1));
    }

    // (b) After a truncate: the fresh cache continues with the same tokens.
    if (after_truncate) {
      REQUIRE(fresh.append(*model, fx, tokens) == mha::status::ok);
      REQUIRE(fresh.cache->size() == after);
      require_close_rows(fresh.out_rows(), 0, run.out_rows(), 0, k, B, rtol,
                         "(b) truncated cache vs a fresh run on the shortened prefix");
    }

    seq.insert(seq.end(), tokens.begin(), tokens.end());
    REQUIRE(seq == fx.cached_tokens_after(si));

    // (a) The plain forward over all tokens so far (run-time count).
    REQUIRE(plain.plain(*model, fx, seq) == mha::status::ok);
    REQUIRE(plain.rows_from_untouched(after));
    view_input(*plain.x);  // (f)
    REQUIRE(model->forward(vx, after, vo, *vws) == mha::status::ok);
    REQUIRE(mha_test::same_bits(vo.data(), plain.out->data(), B * C * W));
    require_close_rows(run.out_rows(), 0, plain.out_rows(), before, k, B, rtol,
                       "(a) cached rows vs the plain forward over all tokens so far");
    require_close_rows(plain.out_rows(), before, expected, 0, k, B, rtol,
                       "(a) plain forward vs PyTorch's cached rows");
    dpx.reshape({B, after, D});
    fx.gather(seq, dpx.data(), after);
    dpout.reshape({B, after, W});
    dyn.forward(dpx, dpout, dws);
    REQUIRE(same_bits_rows(plain.out_rows(), 0, rows<T>{dpout.data(), after, W}, 0, after, B));
    if constexpr (fused_twin) {
      REQUIRE(fused_run->plain(*fused, fx, seq) == mha::status::ok);
      REQUIRE(mha_test::same_bits(*plain.out, *fused_run->out));
    }

    // (a) Full context: the compile-time forward gives the run-time count
    // forward's bits, and every cached output agrees with it.
    if (after == C) {
      auto full = std::make_unique<typename S::output_type>();
      model->forward(*plain.x, *full, *plain.ws);  // plain.x holds all C tokens of seq
      REQUIRE(mha_test::same_bits(*full, *plain.out));
      view_input(*plain.x);  // (f)
      model->forward(vx, vo, *vws);
      REQUIRE(mha_test::same_bits(vo.data(), full->data(), B * C * W));
      require_close_rows(history_rows, 0, rows<T>{full->data(), C, W}, 0, C, B, rtol,
                         "(a) every cached output vs the compile-time forward over the context");
    }
  }

  // clear(): the cache starts over and gives the first step's bits again.
  REQUIRE(run.cache->size() == fx.cached_tokens_after(fx.steps.size() - 1).size());
  REQUIRE(fx.steps.front().op == step::kind::append);
  run.cache->clear();
  dcache.clear();
  REQUIRE(run.cache->size() == 0);
  REQUIRE(dcache.size() == 0);
  const auto tokens0 = fixture<T>::new_tokens(fx.steps.front());
  REQUIRE(run.append(*model, fx, tokens0) == mha::status::ok);
  REQUIRE(std::equal(first_output.begin(), first_output.end(), run.out->begin(),
                     [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }));
  dx.reshape({B, tokens0.size(), D});
  fx.gather(tokens0, dx.data(), tokens0.size());
  dout.reshape({B, tokens0.size(), W});
  dyn.forward(dx, dout, dcache, dws);
  REQUIRE(dcache.size() == tokens0.size());
  REQUIRE(same_bits_rows(run.out_rows(), 0, rows<T>{dout.data(), tokens0.size(), W}, 0,
                         tokens0.size(), B));
}

// ------------------------------------------------------------------ (d) errors

/// status::bad_token_count and status::cache_full leave out and the whole
/// cache object byte for byte untouched; a cache that saw the failed calls
/// then continues exactly like one that did not.
template <class M, std::size_t B>
void check_status_errors(const M& m, const fixture<typename M::value_type>& fx) {
  using S = fixed_state<M, B>;
  constexpr std::size_t C = S::C;
  constexpr std::size_t too_many[] = {C + 1, C + 7, std::numeric_limits<std::size_t>::max()};
  S s, ref;  // s sees the failing calls too, ref only the valid ones
  s.prepare(fx, token_range(0, C), 0);  // valid values in every row of x

  const auto rejected = [&](std::size_t n, mha::status expected_status, bool cached) {
    INFO("n = " << n << (cached ? ", cached forward" : ", plain forward") << ", cache size "
                << s.cache->size());
    fill_sentinel(s.out->data(), S::output_type::size);
    const auto out_before = bytes_of(*s.out);
    const auto cache_before = bytes_of(*s.cache);
    const auto x_before = bytes_of(*s.x);
    const mha::status got =
        cached ? m.forward(*s.x, n, *s.out, *s.cache, *s.ws) : m.forward(*s.x, n, *s.out, *s.ws);
    REQUIRE(got == expected_status);
    REQUIRE(same_bytes(*s.out, out_before));
    REQUIRE(same_bytes(*s.cache, cache_before));
    REQUIRE(same_bytes(*s.x, x_before));
  };
  const auto bad_counts = [&] {
    for (const bool cached : {true, false}) {
      rejected(0, mha::status::bad_token_count, cached);
      for (const std::size_t n : too_many) rejected(n, mha::status::bad_token_count, cached);
    }
  };
  // Appends tokens [first, first + n) to both caches; the outputs must agree.
  const auto append_both = [&](std::size_t first, std::size_t n) {
    INFO("append " << n << " tokens at cache size " << s.cache->size());
    REQUIRE(s.append(m, fx, token_range(first, n)) == mha::status::ok);
    REQUIRE(ref.append(m, fx, token_range(first, n)) == mha::status::ok);
    REQUIRE(s.cache->size() == ref.cache->size());
    REQUIRE(mha_test::same_bits(*s.out, *ref.out));
    s.prepare(fx, token_range(0, C), 0);
  };

  bad_counts();  // empty cache
  append_both(0, C - 1);
  bad_counts();  // C-1 cached
  rejected(2, mha::status::cache_full, true);
  rejected(C, mha::status::cache_full, true);
  append_both(C - 1, 1);
  REQUIRE(s.cache->size() == C);
  bad_counts();  // full: a bad n is reported first, as bad_token_count
  rejected(1, mha::status::cache_full, true);
  rejected(C, mha::status::cache_full, true);
  // The cache that saw every failed call continues like the other one.
  s.cache->truncate(C - 1);
  ref.cache->truncate(C - 1);
  append_both(C - 1, 1);
  s.cache->truncate(1);
  ref.cache->truncate(1);
  append_both(1, C - 1);
}

/// std::invalid_argument (n == 0, shapes, another batch size) and
/// std::length_error (full cache) of the dynamic cached forward leave out and
/// the cache untouched.
template <class DM, class T>
void check_dynamic_errors(const DM& dyn, const fixture<T>& fx) {
  const std::size_t B = fx.batch, C = fx.context_length, D = fx.d_in, W = fx.output_width;
  mha::dynamic::kv_cache<T> cache(dyn, B), ref(dyn, B);
  mha::dynamic::workspace<T> ws;
  using tensor = mha::dynamic::tensor<T>;
  const auto input = [&](std::size_t batch, std::size_t first, std::size_t n, std::size_t d) {
    tensor x({batch, n, d});
    if (batch <= B && d == D && first + n <= fx.total_tokens)
      fx.gather(token_range(first, n), x.data(), n, 0, batch);
    return x;
  };
  // Appends tokens [first, first + n) to both caches; the outputs must agree.
  const auto append_both = [&](std::size_t first, std::size_t n) {
    const tensor x = input(B, first, n, D);
    tensor out({B, n, W}), out_ref({B, n, W});
    dyn.forward(x, out, cache, ws);
    dyn.forward(x, out_ref, ref, ws);
    REQUIRE(cache.size() == ref.size());
    REQUIRE(mha_test::same_bits(out.data(), out_ref.data(), out.size()));
  };
  // out and the cache size are unchanged after a throwing call.
#define MHA_KV_REJECTED(x, out, exception)                                  \
  do {                                                                      \
    fill_sentinel((out).data(), (out).size());                              \
    const auto out_before_ = bytes_of_values((out).data(), (out).size());   \
    const std::size_t size_before_ = cache.size();                          \
    REQUIRE_THROWS_AS(dyn.forward((x), (out), cache, ws), exception);       \
    REQUIRE(same_values_bytes((out).data(), (out).size(), out_before_));    \
    REQUIRE(cache.size() == size_before_);                                  \
  } while (false)

  const auto bad_inputs = [&] {
    INFO("cache size " << cache.size());
    {
      INFO("n == 0");
      const tensor x = input(B, 0, 0, D);
      tensor out({B, 0, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    {
      INFO("x with d_in + 1 features");
      const tensor x = input(B, 0, 1, D + 1);
      tensor out({B, 1, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    {
      INFO("out one column too wide");
      const tensor x = input(B, 0, 1, D);
      tensor out({B, 1, W + 1});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    {
      INFO("out with another token count");
      const tensor x = input(B, 0, 1, D);
      tensor out({B, 2, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    {
      INFO("out with another batch size");
      const tensor x = input(B, 0, 1, D);
      tensor out({B + 1, 1, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    {
      INFO("x and out of a larger batch than the cache's");
      const tensor x = input(B + 1, 0, 1, D);
      tensor out({B + 1, 1, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
    if (B > 1) {
      INFO("x and out of a smaller batch than the cache's");
      const tensor x = input(1, 0, 1, D);
      tensor out({1, 1, W});
      MHA_KV_REJECTED(x, out, std::invalid_argument);
    }
  };

  REQUIRE(cache.capacity() == C);
  bad_inputs();  // empty cache
  {
    // More tokens than the context holds, into an empty cache. The contract
    // names std::length_error for a full cache and std::invalid_argument for
    // bad shapes; either reports this one.
    const tensor x = input(B, 0, C + 1, D);
    tensor out({B, C + 1, W});
    MHA_KV_REJECTED(x, out, std::logic_error);
  }
  append_both(0, C - 1);
  bad_inputs();
  {
    INFO("2 tokens with C - 1 cached");
    const tensor x = input(B, C - 1, 2, D);
    tensor out({B, 2, W});
    MHA_KV_REJECTED(x, out, std::length_error);
  }
  append_both(C - 1, 1);
  REQUIRE(cache.size() == C);
  bad_inputs();  // full cache: n == 0 and bad shapes are still invalid_argument
  {
    INFO("1 token into a full cache");
    const tensor x = input(B, 0, 1, D);
    tensor out({B, 1, W});
    MHA_KV_REJECTED(x, out, std::length_error);
  }
#undef MHA_KV_REJECTED
  // The cache that saw every failed call continues like the other one.
  cache.truncate(C - 1);
  ref.truncate(C - 1);
  append_both(C - 1, 1);
  cache.truncate(1);
  ref.truncate(1);
  append_both(1, C - 1);
}

template <class M, std::size_t B>
void check_errors(const fixture<typename M::value_type>& fx) {
  using T = typename M::value_type;
  check_metadata<M, B>(fx);
  auto model = std::make_unique<M>();
  {
    param_map<T> targets;
    collect(targets, *model);
    load_params(fx, targets);
  }
  {
    INFO(module_name<M>());
    check_status_errors<M, B>(*model, fx);
  }
  if constexpr (has_fused_twin<M>) {
    INFO("fused_multi_head_attention");
    const auto fused = make_fused(*model);
    check_status_errors<typename fused_of<M>::type, B>(*fused, fx);
  }
  auto dyn = make_dynamic<M>();
  {
    param_map<T> targets;
    collect(targets, dyn);
    load_params(fx, targets);
  }
  INFO("mha::dynamic::" << module_name<M>());
  check_dynamic_errors(dyn, fx);
}

// ------------------------------------------------------------------ the fixture table

enum class part { outputs, errors };

/// The fixture case at GPT-2 width (mha::multi_head_attention<float, 768, 768,
/// 24, 12, false>, batch 1), run by test_kv_cache_gpt2.cpp; the other cases
/// are kv_cases of test_kv_cache.cpp.
constexpr std::string_view kv_gpt2_case = "kv_mha_f32_gpt2";

template <class M, std::size_t B>
void run_case(std::string_view name, part p) {
  using T = typename M::value_type;
  const auto path = kv_dir / (std::string(name) + ".json");
  INFO("fixture " << path.string());
  REQUIRE(std::filesystem::is_regular_file(path));
  const fixture<T> fx = kv_fixture::load<T>(path);  // throws kv_fixture::error on a bad file
  REQUIRE(fx.name == name);
  if (p == part::outputs)
    check_outputs<M, B>(fx);
  else
    check_errors<M, B>(fx);
}

}  // namespace
