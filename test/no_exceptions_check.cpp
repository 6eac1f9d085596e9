// no_exceptions_check.cpp -- the fixed-size headers compile and run with
// -fno-exceptions -fno-rtti (issue 2, section 4). Built by test/CMakeLists.txt
// with those flags (option MHA_NO_EXCEPTIONS_CHECK) and run by CTest.
//
// Includes the umbrella header (which leaves out mha::dynamic without
// exceptions), instantiates all three modules with every forward overload,
// and checks the book's seed-123 outputs against PyTorch's (float: 1e-5
// relative, |a - e| <= 1e-5 * max(1, |e|)). Exit status 0 on success.
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "no_exceptions_check must be compiled with -fno-exceptions"
#endif
#if defined(__GXX_RTTI) || defined(__cpp_rtti)
#error "no_exceptions_check must be compiled with -fno-rtti"
#endif

#include <mha/mha.hpp>

#include <book_weights.hpp>

#include <cmath>
#include <cstdio>

namespace {

int failures = 0;

template <class T, std::size_t... E>
void expect_close(const char* what, const mha::tensor<T, E...>& actual,
                  const mha::tensor<T, E...>& expected) {
  for (std::size_t i = 0; i < actual.size; ++i) {
    const double a = static_cast<double>(actual.data()[i]);
    const double e = static_cast<double>(expected.data()[i]);
    const double allowed = 1e-5 * (std::fabs(e) > 1.0 ? std::fabs(e) : 1.0);
    if (!(std::fabs(a - e) <= allowed)) {
      std::printf("%s: element %zu is %.9g, PyTorch gives %.9g\n", what, i, a, e);
      ++failures;
      return;
    }
  }
}

template <class T, std::size_t... E>
void expect_same(const char* what, const mha::tensor<T, E...>& a, const mha::tensor<T, E...>& b) {
  if (!(a == b)) {
    std::printf("%s: overloads disagree\n", what);
    ++failures;
  }
}

/// Every forward overload of module m on the book's batch.
template <class M, class Expected>
void check(const char* what, M& m, const Expected& expected) {
  const auto y = m.forward(mha_book::batch);
  expect_close(what, y, expected);
  expect_same(what, y, m(mha_book::batch));

  Expected out{};
  m.forward(mha_book::batch, out);
  expect_same(what, y, out);

  static typename M::template workspace<2, 6> ws{};
  m.forward(mha_book::batch, out, ws);
  expect_same(what, y, out);

  const auto single = m.forward(mha_book::inputs);
  for (std::size_t i = 0; i < single.size; ++i)
    if (!(single.data()[i] == y.data()[i])) {
      std::printf("%s: rank-2 forward differs\n", what);
      ++failures;
      break;
    }

  // Training mode with p = 0 is inference.
  expect_same(what, y, m.forward_training(mha_book::batch, 1));
  m.forward_training(mha_book::batch, out, ws, 1);
  expect_same(what, y, out);
  // The streaming calls: the run-time count over all 6 tokens gives the same
  // bits; a KV-cache prefill of 4 then two decode steps match to 1e-5.
  Expected streamed{};
  if (m.forward(mha_book::batch, 6, streamed, ws) != mha::status::ok) ++failures;
  expect_same(what, y, streamed);
  static typename M::template kv_cache<2> cache{};
  Expected step{};
  if (m.forward(mha_book::batch, 4, streamed, cache, ws) != mha::status::ok) ++failures;
  for (std::size_t t = 4; t < 6; ++t) {
    mha::tensor<float, 2, 6, 3> next{};  // token t of each sequence in row 0
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t f = 0; f < 3; ++f) next(b, 0, f) = mha_book::batch(b, t, f);
    if (m.forward(next, 1, step, cache, ws) != mha::status::ok) ++failures;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t f = 0; f < Expected::extent(2); ++f) streamed(b, t, f) = step(b, 0, f);
  }
  expect_close(what, streamed, expected);
  if (m.forward(mha_book::batch, 1, step, cache, ws) != mha::status::cache_full) ++failures;
}

}  // namespace

int main() {
  static mha::causal_attention<float, 3, 2, 6> ca{};
  ca.w_query.weight = mha_book::causal_attention_w_query;
  ca.w_key.weight = mha_book::causal_attention_w_key;
  ca.w_value.weight = mha_book::causal_attention_w_value;
  check("causal_attention", ca, mha_book::causal_attention_expected);

  static mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> wrapper{};
  wrapper.head<0>().w_query.weight = mha_book::wrapper_head0_w_query;
  wrapper.head<0>().w_key.weight = mha_book::wrapper_head0_w_key;
  wrapper.head<0>().w_value.weight = mha_book::wrapper_head0_w_value;
  wrapper.head<1>().w_query.weight = mha_book::wrapper_head1_w_query;
  wrapper.head<1>().w_key.weight = mha_book::wrapper_head1_w_key;
  wrapper.head<1>().w_value.weight = mha_book::wrapper_head1_w_value;
  check("multi_head_attention_wrapper", wrapper, mha_book::wrapper_expected);

  static mha::multi_head_attention<float, 3, 2, 6, 2> mha_model{};
  mha_model.w_query.weight = mha_book::mha_w_query;
  mha_model.w_key.weight = mha_book::mha_w_key;
  mha_model.w_value.weight = mha_book::mha_w_value;
  mha_model.out_proj.weight = mha_book::mha_out_proj_weight;
  mha_model.out_proj.bias = mha_book::mha_out_proj_bias;
  check("multi_head_attention", mha_model, mha_book::mha_expected);

  // A double-precision instantiation with bias, too.
  static mha::multi_head_attention<double, 4, 6, 8, 3, true> d{};
  for (std::size_t i = 0; i < 6; ++i) d.out_proj.weight(i, i) = 1.0;
  mha::tensor<double, 1, 8, 4> x{};
  const auto yd = d.forward(x);
  for (const double v : yd)
    if (v != 0.0) ++failures;

  if (failures == 0) std::printf("no_exceptions_check: all modules OK without exceptions and RTTI\n");
  return failures == 0 ? 0 : 1;
}
