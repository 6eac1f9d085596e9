// mha/config.hpp -- build-time configuration knobs of the mha library.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

/// Largest object, in bytes, that a call of the fixed-size API may place on the
/// stack by itself: the workspace of a forward call without a caller-owned one,
/// and a result returned by value.
///
/// `forward(x)` and `forward(x, out)` keep the attention's intermediate Q, K, V
/// (and, for multi_head_attention, the concatenated context) in an automatic
/// variable. Above this limit those overloads are rejected at compile time with a
/// message that names the size; pass a caller-owned workspace instead
/// (`forward(x, out, ws)`, see each module's `workspace` member template).
/// (The output that forward(x) returns is at most half its workspace.) The
/// same limit bounds the by-value results of `mha::fuse_qkv(m)` (the fused
/// model; use `fuse_qkv(m, out)`) and `mha::linear::forward(x)` (use
/// `apply_rows`). Define it before including any mha header to change it (e.g.
/// 16384 on a microcontroller with a small stack). The default, 4 MiB, is half
/// of the usual 8 MiB main-thread stack.
#ifndef MHA_STACK_WORKSPACE_LIMIT
#define MHA_STACK_WORKSPACE_LIMIT (std::size_t{4} * 1024 * 1024)
#endif

/// MHA_MAX_INLINE_BYTES (not defined by default): when defined, every
/// fixed-size type larger than this many bytes -- mha::tensor, mha::linear,
/// the attention modules, their `workspace<B, N>` and `kv_cache<B>` -- is a
/// compile-time error ("mha::<type>: sizeof exceeds MHA_MAX_INLINE_BYTES ...",
/// with the type's sizeof and the limit), like Eigen's
/// EIGEN_STACK_ALLOCATION_LIMIT. C++ cannot tell a local variable from a heap
/// or static object, so the limit refuses the type itself, wherever an object
/// of it would live (and also its use in sizeof or its static members): define
/// it in code that must only hold small objects (e.g. on a small stack), and
/// keep large models in owned storage (`std::make_unique<M>()`) in translation
/// units built without it, or use mha::dynamic.
///
/// It only adds checks: the limit reaches nothing but static_asserts (no
/// variable or other entity holds it), so a translation unit that compiles
/// gets the same code with any limit or none. Units built with different
/// limits, or without one, can share mha types, objects and functions in one
/// program; each refuses only the types it uses itself. Define it before the
/// first mha header of a translation unit (each header reads it where it is
/// included).
///
/// (mha/detail/macros.hpp reads it into MHA_DETAIL_MAX_INLINE_BYTES(); no
/// default here.)

#if defined(NDEBUG)
#define MHA_ASSERT(cond) static_cast<void>(0)
#else
#include <cassert>
/// Debug-only precondition check (index bounds); compiled out with NDEBUG.
#define MHA_ASSERT(cond) assert(cond)
#endif

#endif  // MHA_DETAIL_NO_CXX20
