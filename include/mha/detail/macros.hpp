// mha/detail/macros.hpp -- the library's internal macros (no include guard).
//
// Every header that uses one of these macros includes this file after its
// own #include lines and <mha/detail/macros_undef.hpp> at its end, so the
// macros are defined wherever the library's code needs them and never in the
// user's code after an #include of a public header. Nested includes work
// because a header's includes all come before its own definitions: an
// included header's #undefs run before the including header defines the
// macros again. Adding a macro here: add its #undef to macros_undef.hpp
// (test/headers checks that no MHA_DETAIL_ / MHA_IO_ macro survives an
// #include of any public header).

#include <cstddef>

/// Forces inlining of the small kernel pieces when optimising, so that a
/// caller whose sizes are compile-time constants (the fixed-size modules) gets
/// every loop bound, edge width and partial-vector length folded into the
/// code. Without optimisation (no __OPTIMIZE__: -O0) nothing would be folded,
/// and forced inlining only copies each piece into every caller (the ASan -O0
/// build of a test group was a third larger and slower to compile), so the
/// pieces stay plain inline functions there. Likewise under AddressSanitizer
/// at any level: each forced copy is instrumented again in every caller, which
/// doubled to tripled the compile time of an ASan -O1/-O2 translation unit
/// (clang++ 14: libFuzzer's fuzz_dynamic_float.cpp 85 -> 31 CPU s at -O2
/// without it); the compiler's own inliner still takes the small pieces. The
/// results are the same bits either way. Every user is in an ISA namespace
/// (MHA_DETAIL_ISA), so an out-of-line copy never meets one built for another
/// instruction set (test/isa, isa_weak_symbols_O0).
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define MHA_DETAIL_FORCE_INLINE 1
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#undef MHA_DETAIL_FORCE_INLINE
#endif
#endif
#endif
#if defined(MHA_DETAIL_FORCE_INLINE)
#define MHA_DETAIL_INLINE __attribute__((always_inline)) inline
/// The same for lambdas (after the parameter list).
#define MHA_DETAIL_LAMBDA_INLINE __attribute__((always_inline))
#else
#define MHA_DETAIL_INLINE inline
#define MHA_DETAIL_LAMBDA_INLINE
#endif
#undef MHA_DETAIL_FORCE_INLINE

/// The limit of MHA_MAX_INLINE_BYTES (mha/config.hpp) in bytes, or no limit
/// (the largest std::size_t) when the user did not define it. Used only as the
/// Limit argument of detail::within_inline_limit in static_asserts (and in the
/// `if constexpr` that skips a forward body after such a static_assert has
/// failed): each value names its own specialisation, no entity stores the
/// limit, and a translation unit that compiles gets the same code with any
/// limit (docs/design.md, "Memory"). Read where each header is included.
#ifdef MHA_MAX_INLINE_BYTES
#define MHA_DETAIL_MAX_INLINE_BYTES() (static_cast<std::size_t>(MHA_MAX_INLINE_BYTES))
#else
#define MHA_DETAIL_MAX_INLINE_BYTES() (~std::size_t{0})
#endif

/// Defined when the compiler has __builtin_shufflevector for GCC vector types
/// (the in-register transposes of kernels/token_major.hpp).
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define MHA_DETAIL_HAVE_SHUFFLEVECTOR 1
#endif

/// Defined when exceptions are enabled: mha::io also loads mha::dynamic modules.
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define MHA_IO_HAVE_DYNAMIC 1
#endif

// ISA namespaces (docs/design.md, "ISA namespaces"). The vector width of the
// kernels (detail/arch/simd.hpp) and whether multiply-adds are fused follow the
// instruction set the translation unit is compiled for (-m / -march flags).
// Every function whose code depends on it lives in
// mha::detail::inline namespace MHA_DETAIL_ISA, whose name encodes the
// instruction set, so two translation units built for different instruction
// sets never define the same symbol with different code. The namespace carries
// the same name as an ABI tag, so a member function whose return type is one
// of its types (a module's spec_()) is renamed too; MHA_DETAIL_ISA_TAG puts
// the tag on a public function or a member of a public class (which must stay
// the same type everywhere) that has code of its own: it calls or inlines
// ISA-dependent code (the modules' forward), or the compiler generates its
// code for the instruction set (docs/design.md, "Which functions get the tag").
#if defined(__x86_64__) || defined(__i386__)
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define MHA_DETAIL_ISA isa_avx512
#define MHA_DETAIL_ISA_NAME "isa_avx512"
#elif defined(__AVX512F__)
#define MHA_DETAIL_ISA isa_avx512f
#define MHA_DETAIL_ISA_NAME "isa_avx512f"
#elif defined(__AVX2__) && defined(__FMA__)
#define MHA_DETAIL_ISA isa_avx2_fma
#define MHA_DETAIL_ISA_NAME "isa_avx2_fma"
#elif defined(__AVX2__)
#define MHA_DETAIL_ISA isa_avx2
#define MHA_DETAIL_ISA_NAME "isa_avx2"
#elif defined(__AVX__) && defined(__FMA__)
#define MHA_DETAIL_ISA isa_avx_fma
#define MHA_DETAIL_ISA_NAME "isa_avx_fma"
#elif defined(__AVX__)
#define MHA_DETAIL_ISA isa_avx
#define MHA_DETAIL_ISA_NAME "isa_avx"
#elif defined(__SSE4_2__)
#define MHA_DETAIL_ISA isa_sse4_2
#define MHA_DETAIL_ISA_NAME "isa_sse4_2"
#elif defined(__SSE2__)
#define MHA_DETAIL_ISA isa_sse2
#define MHA_DETAIL_ISA_NAME "isa_sse2"
#else
#define MHA_DETAIL_ISA isa_generic
#define MHA_DETAIL_ISA_NAME "isa_generic"
#endif
#elif defined(__aarch64__)
#define MHA_DETAIL_ISA isa_neon
#define MHA_DETAIL_ISA_NAME "isa_neon"
#elif defined(__arm__) && defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)
#define MHA_DETAIL_ISA isa_arm_neon_fma
#define MHA_DETAIL_ISA_NAME "isa_arm_neon_fma"
#elif defined(__arm__) && defined(__ARM_NEON)
#define MHA_DETAIL_ISA isa_arm_neon
#define MHA_DETAIL_ISA_NAME "isa_arm_neon"
#elif defined(__arm__) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define MHA_DETAIL_ISA isa_arm_mve
#define MHA_DETAIL_ISA_NAME "isa_arm_mve"
#elif defined(__arm__) && defined(__ARM_FEATURE_FMA)
#define MHA_DETAIL_ISA isa_arm_fma
#define MHA_DETAIL_ISA_NAME "isa_arm_fma"
#elif defined(__FP_FAST_FMAF)
#define MHA_DETAIL_ISA isa_generic_fma
#define MHA_DETAIL_ISA_NAME "isa_generic_fma"
#else
#define MHA_DETAIL_ISA isa_generic
#define MHA_DETAIL_ISA_NAME "isa_generic"
#endif

// Whether the target has a fused multiply-add instruction for float
// (MHA_DETAIL_FMA_FLOAT) and for double (MHA_DETAIL_FMA_DOUBLE): then
// detail::muladd fuses every multiply-add, else none (detail/arch/muladd.hpp,
// docs/design.md "Multiply-adds"). x86: FMA3, FMA4 or AVX-512F (whose
// EVEX-encoded FMA GCC uses with -mavx512f alone); ARM: __ARM_FEATURE_FMA
// (AArch64; ARMv7 with VFPv4; Cortex-M4F/M7/M55), double only with a
// double-precision FPU; elsewhere GCC's own verdict, __FP_FAST_FMAF /
// __FP_FAST_FMA (Clang defines neither: unfused).
#if defined(__x86_64__) || defined(__i386__)
#if defined(__FMA__) || defined(__FMA4__) || defined(__AVX512F__)
#define MHA_DETAIL_FMA_FLOAT 1
#define MHA_DETAIL_FMA_DOUBLE 1
#endif
#elif defined(__aarch64__) || defined(__arm__)
#if defined(__ARM_FEATURE_FMA)
#define MHA_DETAIL_FMA_FLOAT 1
#if defined(__aarch64__) || (defined(__ARM_FP) && (__ARM_FP & 8))
#define MHA_DETAIL_FMA_DOUBLE 1
#endif
#endif
#else
#if defined(__FP_FAST_FMAF)
#define MHA_DETAIL_FMA_FLOAT 1
#endif
#if defined(__FP_FAST_FMA)
#define MHA_DETAIL_FMA_DOUBLE 1
#endif
#endif
#if defined(__GNUC__)
#define MHA_DETAIL_ISA_TAG __attribute__((__abi_tag__(MHA_DETAIL_ISA_NAME)))
#else
#define MHA_DETAIL_ISA_TAG
#endif
/// Opens the ISA namespace: `namespace mha::detail { MHA_DETAIL_ISA_NAMESPACE { ... } }`.
#define MHA_DETAIL_ISA_NAMESPACE inline namespace MHA_DETAIL_ISA MHA_DETAIL_ISA_TAG
