// rom_weights.cpp -- the weights-in-ROM workflow on bare metal: the book's
// MultiHeadAttention weights exported from a PyTorch-written safetensors file
// (test/data/safetensors/book_mha_seed123.safetensors) by
// tools/export_weights_header.py at build time into book_mha_rom.hpp, whose
// constexpr model lives in .rodata; forward(x, out, ws) with a static
// workspace gives the bits of examples/book_weights.hpp's model evaluated at
// compile time and PyTorch's output within 1e-5 relative. Exit status: the
// number of failed checks.
#include "mha_baremetal.hpp"

#include <cstring>

#include <book_weights.hpp>

#include "book_mha_rom.hpp"
#include "report.hpp"

namespace {
mha::tensor<float, 2, 6, 2> out;
book_rom::model_type::workspace<2, 6> ws;
constexpr auto compile_time = mha_book::mha_model.forward(mha_book::batch);
}  // namespace

int main() {
  book_rom::model.forward(mha_book::batch, out, ws);
  mha_bm::check(std::memcmp(out.data(), compile_time.data(), sizeof out) == 0,
                "exported model == the book model at compile time (bits)");
  mha_bm::check(bm_report::violations(out.data(), mha_book::mha_expected.data(), out.size, 1e-5) == 0,
                "exported model within 1e-5 relative of PyTorch");
  mha_bm::write("checksum (FNV-1a of the output's bits): ");
  mha_bm::write_hex(bm_report::checksum(out.data(), out.size));
  mha_bm::write(mha_bm::failures() == 0 ? "\nrom_weights: all checks passed\n"
                                        : "\nrom_weights: checks FAILED\n");
  return mha_bm::failures();
}
