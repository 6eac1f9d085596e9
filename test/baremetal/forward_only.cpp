// forward_only.cpp -- the smallest program around one model's inference
// forward, for the code and data sizes of docs/embedded.md: weights and
// input constant (ROM), workspace and output static, forward(x, out, ws), the
// output's checksum printed. MHA_BM_MODEL 1: the book's MultiHeadAttention
// (3.6.2, book_weights.hpp) on the book's batch; 2: the d64 model
// (d64_model.hpp).
#include "mha_baremetal.hpp"

#include <type_traits>

#if MHA_BM_MODEL == 1
#include <book_weights.hpp>
namespace {
constexpr const auto& model = mha_book::mha_model;
constexpr const auto& input = mha_book::batch;
mha::tensor<float, 2, 6, 2> out;
std::remove_cvref_t<decltype(model)>::workspace<2, 6> ws;
}  // namespace
#elif MHA_BM_MODEL == 2
#include "d64_model.hpp"
namespace {
constexpr const auto& model = d64::model;
constexpr const auto& input = d64::input;
d64::output_type out;
d64::workspace_type ws;
}  // namespace
#else
#error "MHA_BM_MODEL must be 1 (book) or 2 (d64)"
#endif

#include "report.hpp"

int main() {
  model.forward(input, out, ws);
  mha_bm::write("checksum (FNV-1a of the output's bits): ");
  mha_bm::write_hex(bm_report::checksum(out.data(), out.size));
  mha_bm::write("\n");
  return 0;
}
