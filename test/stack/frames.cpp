// The frame bound of the stack limit (workspace<B, N>::frame_bytes,
// detail/arch/stack_bound.hpp) against the compiler's frames: run_book, run_d64
// and train_d64 run forward calls with a caller-owned workspace, so all they
// put on the stack is the call's frame. check_frames.py compiles this file
// with -fcallgraph-info=su (g++) and compares the deepest call chain below
// each of them with the bound this program prints for it.
#include <cstdio>

#include <mha/multi_head_attention.hpp>

using book = mha::multi_head_attention<float, 3, 2, 6, 2>;
using d64 = mha::multi_head_attention<float, 64, 64, 32, 4>;
book::workspace<1, 6> book_ws;
d64::workspace<1, 32> d64_ws;

__attribute__((noinline)) void run_book(const book& m, const mha::tensor<float, 6, 3>& x,
                                        mha::tensor<float, 6, 2>& y) {
  m.forward(x, y, book_ws);
}
__attribute__((noinline)) void run_d64(const d64& m, const mha::tensor<float, 32, 64>& x,
                                       mha::tensor<float, 32, 64>& y) {
  m.forward(x, y, d64_ws);
}
__attribute__((noinline)) void train_d64(const d64& m, const mha::tensor<float, 32, 64>& x,
                                         mha::tensor<float, 32, 64>& y) {
  m.forward_training(x, y, d64_ws, 7);
}

book book_model{};
d64 d64_model{};
mha::tensor<float, 6, 3> book_x{};
mha::tensor<float, 6, 2> book_y{};
mha::tensor<float, 32, 64> d64_x{};
mha::tensor<float, 32, 64> d64_y{};

int main() {
  run_book(book_model, book_x, book_y);
  run_d64(d64_model, d64_x, d64_y);
  train_d64(d64_model, d64_x, d64_y);
  std::printf("run_book %zu\nrun_d64 %zu\ntrain_d64 %zu\n", book::workspace<1, 6>::frame_bytes,
              d64::workspace<1, 32>::frame_bytes, d64::workspace<1, 32>::frame_bytes);
  return 0;
}
