// mha/detail/arch/stack_bound.hpp -- bounds of the stack the run-time kernels use
// besides their operands, for MHA_STACK_WORKSPACE_LIMIT (mha/config.hpp).
//
// The numbers are the same on every target: they are sized for the widest one
// (64-byte vectors, register tiles of 4 vectors per row, AVX-512), not for the
// instruction set of the translation unit, so that the checks built on them
// (mha::can_forward_v and the forward overloads' stack limit) give the same
// verdict in every translation unit whatever its -m flags, as the workspace
// types do (detail/api/module_interface.hpp). Each kernel static_asserts that its
// own arrays fit its bound on the target it is compiled for (gemm::gemm_abt,
// token_major::forward), so a new target with wider vectors fails to compile
// instead of breaking the bound.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>

namespace mha::detail::stack_bound {

/// Bytes of the widest vector of any target (AVX-512).
inline constexpr std::size_t vector_bytes = 64;
/// Depth of gemm_abt's packed panel (gemm::kc, which static_asserts it).
inline constexpr std::size_t panel_depth = 128;
/// Vectors per row of the widest register tile (gemm::nr with AVX-512).
inline constexpr std::size_t panel_vectors = 4;
/// Vector registers of the widest register file (AVX-512: 32).
inline constexpr std::size_t vector_registers = 32;

/// Bytes of the panel gemm::gemm_abt packs on the stack for a product of depth
/// K: min(K, kc) rows of one register tile's columns (at most 32 KiB).
template <std::size_t K>
inline constexpr std::size_t gemm_panel =
    (K < panel_depth ? K : panel_depth) * panel_vectors * vector_bytes;

/// Bytes of token_major::forward's score vectors for up to Tokens tokens of
/// element type T: Tokens rounded up to whole vectors of the widest target,
/// one such vector each (at most token_major::max_tokens * 64 bytes = 16 KiB).
template <class T, std::size_t Tokens>
inline constexpr std::size_t score_vectors =
    (Tokens + vector_bytes / sizeof(T) - 1) / (vector_bytes / sizeof(T)) *
    (vector_bytes / sizeof(T)) * vector_bytes;

/// An allowance for the kernels' register tiles (accumulators and operands,
/// each tile sized for the register file) where they do not stay in
/// registers: two register files of the widest target (4 KiB). On targets
/// without vector registers (Cortex-M4/M7) the compiler keeps the emulated
/// vectors of a tile on the stack.
inline constexpr std::size_t register_tiles = 2 * vector_registers * vector_bytes;

}  // namespace mha::detail::stack_bound
