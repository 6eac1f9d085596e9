// mha/config.hpp -- build-time configuration knobs of the mha library.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

/// Largest workspace, in bytes, that a fixed-size forward call may place on the
/// stack when the caller does not pass a workspace of its own.
///
/// `forward(x)` and `forward(x, out)` keep the attention's intermediate Q, K, V
/// (and, for multi_head_attention, the concatenated context) in an automatic
/// variable. Above this limit those overloads are rejected at compile time with a
/// message that names the size; pass a caller-owned workspace instead
/// (`forward(x, out, ws)`, see each module's `workspace` member template).
/// Define it before including any mha header to change it (e.g. 16384 on a
/// microcontroller with a small stack). The default, 4 MiB, is half of the
/// usual 8 MiB main-thread stack.
#ifndef MHA_STACK_WORKSPACE_LIMIT
#define MHA_STACK_WORKSPACE_LIMIT (std::size_t{4} * 1024 * 1024)
#endif

#if defined(NDEBUG)
#define MHA_ASSERT(cond) static_cast<void>(0)
#else
#include <cassert>
/// Debug-only precondition check (index bounds); compiled out with NDEBUG.
#define MHA_ASSERT(cond) assert(cond)
#endif

#endif  // MHA_DETAIL_NO_CXX20
