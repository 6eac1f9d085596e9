// mha/config.hpp -- build-time configuration knobs of the mha library.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

/// Largest number of bytes that one call of the fixed-size API may place on
/// the stack by itself.
///
/// `forward(x)` and `forward(x, out)` (and `forward_training(x, seed)` /
/// `forward_training(x, out, seed)`) keep the attention's intermediate Q, K, V
/// (and, for multi_head_attention, the concatenated context) in an automatic
/// `workspace<B, N>`; their stack use is `Model::workspace<B, N>::stack_bytes`
/// (the workspace plus `frame_bytes`, a bound of the call's own arrays: one
/// packed weight panel, the token-major path's score vectors and the kernels'
/// register tiles, the same number on every target; detail/arch/stack_bound.hpp),
/// plus the output for the overloads that return it. Above this limit those
/// overloads are rejected at compile time with a message that names the
/// workspace-owning overload, `forward(x, out, ws)`, and the bytes and the
/// limit as the numbers (mha::can_forward_v is false there); pass a
/// caller-owned workspace (see each module's `workspace` member template),
/// whose calls put only the frame on the stack. The same limit bounds
/// `mha::linear::forward(x)` (the output it returns, a weight panel and the
/// register tiles; use forward(x, out) or `apply_rows`) and the by-value
/// result of `mha::fuse_qkv(m)` (the fused model; use `fuse_qkv(m, out)`).
///
/// Default: 8 KiB on bare-metal targets, 4 MiB (half of the usual 8 MiB
/// main-thread stack) on hosted ones. Bare metal is an M-profile Arm core
/// (`__ARM_ARCH_PROFILE == 'M'`, Cortex-M), a freestanding build
/// (`__STDC_HOSTED__ == 0`), or any target that is none of Linux, Unix,
/// Windows and Apple (`__linux__`, `__unix__`, `_WIN32`, `__APPLE__`; e.g.
/// arm-none-eabi with newlib, an RTOS): its stacks are a few KiB, and 8 KiB
/// takes the book's small models through forward(x) (workspace, frame and
/// output about 6.5 KiB) but nothing much larger. Define it before including
/// any mha header to change it (like MHA_MAX_INLINE_BYTES it only decides
/// which calls compile, never the code of one that does).
#ifndef MHA_STACK_WORKSPACE_LIMIT
#if (defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') || __STDC_HOSTED__ == 0 || \
    !(defined(__linux__) || defined(__unix__) || defined(_WIN32) || defined(__APPLE__))
#define MHA_STACK_WORKSPACE_LIMIT (std::size_t{8} * 1024)
#else
#define MHA_STACK_WORKSPACE_LIMIT (std::size_t{4} * 1024 * 1024)
#endif
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

/// MHA_ASSERT(cond): the library's debug-only precondition checks (index
/// bounds, a tensor_view's alignment, kv_cache::truncate's count, ...).
/// Compiled out with NDEBUG. Otherwise a failed check calls `assert` (the
/// default, which pulls in the C library's stdio on newlib) or, when the user
/// defines MHA_ASSERT_HANDLER before including any mha header, the handler:
///
///   #define MHA_ASSERT_HANDLER(file, line, expr) my_assert_failed(file, line, expr)
///
/// with `__FILE__`, `__LINE__` (an int) and the condition's text (a string
/// literal); then <cassert> is not included and nothing else is called (no
/// stdio, no heap). The handler runs inside noexcept functions, also in
/// constant evaluation (where a failed check is then a compile-time error, as
/// with assert, unless the handler is a constant expression): it must not
/// throw. It may return, and the call then goes on with the broken
/// precondition (undefined behaviour for an index out of range, as with
/// NDEBUG); a handler that stops (a trap, a reset, a [[noreturn]] function) is
/// the usual choice.
///
/// Like NDEBUG for assert, the handler changes the code of the inline
/// functions that check (tensor::operator(), tensor_view's constructor, ...),
/// so it must be the same in every translation unit of a program: define it
/// on the command line or for the whole target (CMake:
/// `target_compile_definitions(app PRIVATE "MHA_ASSERT_HANDLER(f,l,e)=my_assert_failed(f,l,e)")`,
/// with my_assert_failed declared in a header the definition can see, or in a
/// configuration header that every unit includes first). Units that differ
/// break the one-definition rule as units with and without NDEBUG do: the
/// linker keeps one copy of each inline function, whose checks may be the
/// other units' (docs/design.md, "Headers and macros").
#if defined(NDEBUG)
#define MHA_ASSERT(cond) static_cast<void>(0)
#elif defined(MHA_ASSERT_HANDLER)
#define MHA_ASSERT(cond)                                 \
  (static_cast<bool>(cond) ? static_cast<void>(0)        \
                           : static_cast<void>(MHA_ASSERT_HANDLER(__FILE__, __LINE__, #cond)))
#else
#include <cassert>
#define MHA_ASSERT(cond) assert(cond)
#endif

#endif  // MHA_DETAIL_NO_CXX20
