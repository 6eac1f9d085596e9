// dispatch_main.cpp -- the package consumer's dispatched program: every level
// the CPU runs gives the output of the program's own (baseline) build to
// float tolerance (exit status 0).
#include <cmath>
#include <cstdio>

#include "dispatch_kernels.hpp"

int main() {
  consumer::model m;
  float v = 0.1f;
  for (auto* l : {&m.w_query, &m.w_key, &m.w_value})
    for (float& w : l->weight) w = (v = std::fmod(v * 7.3f + 0.11f, 1.0f)) - 0.5f;
  mha::tensor<float, 6, 3> x;
  for (float& e : x) e = (v = std::fmod(v * 7.3f + 0.11f, 1.0f)) - 0.5f;
  const auto expected = m.forward(x);
  int failures = 0;
  for (int l = 1; l <= static_cast<int>(mha::dispatch::cpu_level()); ++l) {
    if (!mha::dispatch::force_level(static_cast<mha::dispatch::isa_level>(l))) ++failures;
    mha::tensor<float, 6, 2> out{};
    consumer::forward(m, x, out);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!(std::fabs(out.data()[i] - expected.data()[i]) <= 1e-5f)) ++failures;
    std::printf("consumer_dispatch: %s ok\n",
                mha::dispatch::level_name(static_cast<mha::dispatch::isa_level>(l)));
  }
  return failures == 0 ? 0 : 1;
}
