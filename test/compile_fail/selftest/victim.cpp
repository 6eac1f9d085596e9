// batch self-test (selftest.cmake): its own error, then the one of shared_first.cpp
// and shared_last.cpp. On its own it gives two errors and must fail; in a batch
// after shared_first.cpp and before shared_last.cpp its second error is printed
// for them instead, in both orders.
#include <cstddef>

#include <mha/mha.hpp>

int main() {
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 0> m{};
  (void)m;
  mha::causal_attention<float, 3, 0, 6> shared{};
  (void)shared;
  return 0;
}
