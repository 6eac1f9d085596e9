// mha/detail/muladd.hpp -- the one multiply-add of every sum in the kernels.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <type_traits>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// acc + a * b, for scalars and GCC/Clang vectors alike; every dot product
/// and matrix product of the kernels accumulates through it.
///
/// Why a function: whether the compiler fuses the product into the addition
/// (one rounding, a fused multiply-add) must not depend on where the sum is
/// computed, or the fixed-size and the run-time-sized paths would differ in
/// the last bit. Clang contracts within one expression (its default
/// -ffp-contract=on), the same everywhere. GCC's default -ffp-contract=fast
/// contracts too, but its tuning for some cores (e.g. AMD Zen:
/// avoid-fma-max-bits) leaves a multiply-add unfused when its sum is carried
/// around a loop in a vector of at most 256 bits (or a scalar), so the same
/// sum became an FMA where its loop was unrolled and a multiply plus an add
/// where it was not. Here GCC sees the loop-carried value only through an
/// opaque step (__builtin_assoc_barrier for scalars; an empty asm that keeps
/// the vector in its register for vectors, since GCC splits the builtin into
/// lanes), so it fuses every such multiply-add whenever the target has FMA
/// (and none without, or with -ffp-contract=off). Neither emits an
/// instruction (both are skipped in constant evaluation), but the asm limits
/// GCC's scheduling a little: the token-major path measured up to ~10% slower
/// on `small` and `mid` than with the plain expression, which was not
/// bit-safe.
template <class Acc, class A, class B>
__attribute__((always_inline)) constexpr Acc muladd(Acc acc, A a, B b) noexcept {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  if constexpr (std::is_floating_point_v<Acc>) {
    return __builtin_assoc_barrier(acc + a * b);
  } else {
    Acc r = acc + a * b;
#if defined(__x86_64__) || defined(__i386__)
    if (!std::is_constant_evaluated()) asm("" : "+v"(r));
#elif defined(__aarch64__)
    if (!std::is_constant_evaluated()) asm("" : "+w"(r));
#endif
    return r;
  }
#else
  return acc + a * b;
#endif
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
