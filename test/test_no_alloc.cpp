// test_no_alloc.cpp -- the fixed-size forward passes never allocate (issue 2,
// section 4). Every replaceable global operator new / new[] (plain, nothrow,
// aligned, aligned nothrow) is replaced by a counting version; the counter is
// read around each forward call only (Catch2 itself allocates in assertions).
// The test shows the counter works: a std::vector allocation is counted, and
// the mha::dynamic twin's forward allocates.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <random>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/mha.hpp>

#include "test_support.hpp"

namespace {
std::atomic<std::size_t> allocations{0};

void* counted_alloc(std::size_t size) {
  ++allocations;
  if (size == 0) size = 1;
  return std::malloc(size);
}
void* counted_aligned_alloc(std::size_t size, std::align_val_t align) {
  ++allocations;
  const auto a = static_cast<std::size_t>(align);
  std::size_t rounded = (size + a - 1) / a * a;
  if (rounded == 0) rounded = a;
  return std::aligned_alloc(a, rounded);
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

/// Keeps a value observable so the compiler cannot drop the computation.
template <class V>
void keep(const V& v) {
  asm volatile("" : : "r"(&v) : "memory");
}

/// Number of operator new calls made by f().
template <class F>
std::size_t allocations_during(F&& f) {
  const std::size_t before = allocations.load();
  f();
  return allocations.load() - before;
}

/// The run-time-count and KV-cache calls of a fixed-size module allocate nothing.
template <class M, std::size_t B, std::size_t N>
void check_streaming_no_allocation(const M& m, std::mt19937& rng) {
  using T = typename M::value_type;
  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 2.0);
  mha::tensor<T, B, N, M::output_width> out{};
  static typename M::template workspace<B, N> ws{};
  static typename M::template kv_cache<B> cache{};
  cache.clear();
  for (const std::size_t n : {std::size_t{1}, N, N / 2 + 1})
    CHECK(allocations_during([&] { keep(m.forward(x, n, out, ws)); keep(out); }) == 0);
  // prefill, decode steps, a rollback and a multi-token step, then the error statuses
  CHECK(allocations_during([&] { keep(m.forward(x, N / 2 + 1, out, cache, ws)); keep(out); }) == 0);
  CHECK(allocations_during([&] { keep(m.forward(x, 1, out, cache, ws)); keep(out); }) == 0);
  cache.truncate(1);
  CHECK(allocations_during([&] { keep(m.forward(x, N - 1, out, cache, ws)); keep(out); }) == 0);
  CHECK(allocations_during([&] { keep(m.forward(x, 0, out, cache, ws)); }) == 0);
  CHECK(allocations_during([&] { keep(m.forward(x, N, out, cache, ws)); }) == 0);
  CHECK(cache.size() == N);
  bool nonzero = false;
  for (const T v : out) nonzero = nonzero || v != T(0);
  REQUIRE(nonzero);
}

template <class M, std::size_t B, std::size_t N>
void check_no_allocation(unsigned seed) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::output_width;
  std::mt19937 rng(seed);
  static M m{};  // static storage, like an embedded model
  mha_test::randomize(m, rng);
  mha_test::set_dropout(m, T(0.3));
  check_streaming_no_allocation<M, B, N>(m, rng);
  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 2.0);
  mha::tensor<T, N, M::d_in> x2{};
  mha_test::fill_uniform(x2, rng, 2.0);
  mha::tensor<T, B, N, W> out{};
  static typename M::template workspace<B, N> ws{};

  CHECK(allocations_during([&] { keep(m.forward(x)); }) == 0);
  CHECK(allocations_during([&] { keep(m(x)); }) == 0);
  CHECK(allocations_during([&] { keep(m.forward(x2)); }) == 0);
  CHECK(allocations_during([&] { m.forward(x, out); keep(out); }) == 0);
  CHECK(allocations_during([&] { m.forward(x, out, ws); keep(out); }) == 0);
  CHECK(allocations_during([&] { keep(m.forward_training(x, 17)); }) == 0);
  CHECK(allocations_during([&] { m.forward_training(x, out, ws, 17); keep(out); }) == 0);
  // And the results are real (not all zero).
  bool nonzero = false;
  for (const T v : out) nonzero = nonzero || v != T(0);
  REQUIRE(nonzero);
}

}  // namespace

TEST_CASE("the allocation counter sees allocations", "[no_alloc]") {
  const std::size_t n = allocations_during([] {
    std::vector<int> v(100);
    keep(v);
    auto* p = new double[8];
    keep(p);
    delete[] p;
  });
  REQUIRE(n >= 2);
  const std::size_t aligned = allocations_during([] {
    struct alignas(64) wide {
      double d[8];
    };
    auto* w = new wide{};
    keep(w);
    delete w;
  });
  REQUIRE(aligned == 1);
}

TEST_CASE("mha::dynamic forward allocates (the counter is not blind)", "[no_alloc]") {
  std::mt19937 rng(1);
  mha::multi_head_attention<float, 4, 6, 8, 3, true> m{};
  mha_test::randomize(m, rng);
  const auto dyn = mha_test::to_dynamic(m);
  const auto dx = mha_test::to_dynamic(mha::tensor<float, 2, 8, 4>{});
  REQUIRE(allocations_during([&] { keep(dyn.forward(dx)); }) > 0);
}

TEST_CASE("fixed-size forward passes allocate nothing", "[no_alloc]") {
  SECTION("causal_attention") {
    check_no_allocation<mha::causal_attention<float, 5, 4, 8, true>, 2, 8>(1);
    check_no_allocation<mha::causal_attention<double, 3, 2, 6, false>, 3, 4>(2);
  }
  SECTION("multi_head_attention_wrapper") {
    check_no_allocation<mha::multi_head_attention_wrapper<float, 5, 3, 8, 3, true>, 2, 8>(3);
    check_no_allocation<mha::multi_head_attention_wrapper<double, 3, 2, 6, 2, false>, 2, 6>(4);
  }
  SECTION("multi_head_attention") {
    check_no_allocation<mha::multi_head_attention<float, 5, 6, 8, 3, true>, 2, 8>(5);
    check_no_allocation<mha::multi_head_attention<double, 16, 32, 64, 4, false>, 2, 64>(6);
  }
  SECTION("fused_multi_head_attention") {
    std::mt19937 rng(7);
    static mha::multi_head_attention<float, 5, 6, 12, 3, true> m{};
    mha_test::randomize(m, rng);
    static const auto f = mha::fuse_qkv(m);
    check_streaming_no_allocation<std::remove_const_t<decltype(f)>, 2, 8>(f, rng);
    mha::tensor<float, 2, 8, 5> x{};
    mha_test::fill_uniform(x, rng, 2.0);
    static decltype(f)::workspace<2, 8> ws{};
    mha::tensor<float, 2, 8, 6> out{};
    CHECK(allocations_during([&] { f.forward(x, out, ws); keep(out); }) == 0);
  }
}

TEST_CASE("the parameter walk and load_parameters of a fixed-size module allocate nothing",
          "[no_alloc]") {
  static mha::multi_head_attention_wrapper<float, 3, 2, 6, 2, true> w{};
  static float values[decltype(w)::parameter_count] = {};
  std::size_t visited = 0;
  mha::status s = mha::status::bad_size;
  CHECK(allocations_during([&] {
          mha::for_each_parameter(std::as_const(w), [&](std::string_view name, const auto& t) {
            visited += name.size() + static_cast<std::size_t>(t.end() - t.begin());
          });
          s = mha::load_parameters(w, values);
        }) == 0);
  CHECK(s == mha::status::ok);
  CHECK(visited == 2 * 122 + 2 * 3 * (6 + 2));  // the names' characters and the values
}

TEST_CASE("mha::dynamic KV-cache calls allocate nothing after the first, whatever n", "[no_alloc]") {
  std::mt19937 rng(3);
  mha::multi_head_attention<float, 4, 6, 16, 3, true> m{};
  mha_test::randomize(m, rng);
  const auto dyn = mha_test::to_dynamic(m);
  mha::dynamic::kv_cache<float> cache(dyn, 2);
  mha::dynamic::workspace<float> ws;
  mha::dynamic::tensor<float> x({2, 1, 4}), out({2, 1, 6});
  for (auto& v : x) v = 0.5f;
  dyn.forward(x, out, cache, ws);  // the first call sizes ws for context_length
  // growing and shrinking n: x and out keep their storage (reshape), ws its size
  x.reshape({2, 8, 4});
  out.reshape({2, 8, 6});
  x.reshape({2, 1, 4});
  out.reshape({2, 1, 6});
  for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1}, std::size_t{7}, std::size_t{1}}) {
    CHECK(allocations_during([&] {
            x.reshape({2, n, 4});
            out.reshape({2, n, 6});
            dyn.forward(x, out, cache, ws);
            keep(out);
          }) == 0);
  }
  CHECK(cache.size() == 16);
  cache.truncate(3);
  CHECK(allocations_during([&] {
          x.reshape({2, 2, 4});
          out.reshape({2, 2, 6});
          dyn.forward(x, out, cache, ws);
          dyn.forward(x, out, ws);  // the whole-sequence forward with another n
          keep(out);
        }) == 0);
}

TEST_CASE("mha::dynamic forward(x, out, ws) reuses a large-enough workspace", "[no_alloc]") {
  // Documented in mha/dynamic/multi_head_attention.hpp: "no allocation once ws
  // is large enough" (what makes the dynamic twin a fair benchmark baseline).
  std::mt19937 rng(2);
  mha::multi_head_attention<float, 4, 6, 8, 3, true> m{};
  mha_test::randomize(m, rng);
  const auto dyn = mha_test::to_dynamic(m);
  mha::tensor<float, 2, 8, 4> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  const auto dx = mha_test::to_dynamic(x);
  mha::dynamic::tensor<float> out({2, 8, 6});
  mha::dynamic::workspace<float> ws;
  dyn.forward(dx, out, ws);  // sizes the workspace
  CHECK(allocations_during([&] { dyn.forward(dx, out, ws); keep(out); }) == 0);

  mha::multi_head_attention_wrapper<float, 4, 3, 8, 2, false> w{};
  mha_test::randomize(w, rng);
  const auto dw = mha_test::to_dynamic(w);
  dw.forward(dx, out, ws);
  CHECK(allocations_during([&] { dw.forward(dx, out, ws); keep(out); }) == 0);

  mha::causal_attention<float, 4, 6, 8, false> c{};
  mha_test::randomize(c, rng);
  const auto dc = mha_test::to_dynamic(c);
  dc.forward(dx, out, ws);
  CHECK(allocations_during([&] { dc.forward(dx, out, ws); keep(out); }) == 0);
}
