// mha/detail/muladd.hpp -- the one multiply-add of every sum in the kernels.
#pragma once

namespace mha::detail {

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
/// around a loop in a vector of at most 256 bits, so the same sum became an
/// FMA where its loop was unrolled and a multiply plus an add where it was
/// not. GCC 12's __builtin_assoc_barrier on the result hides the loop-carried
/// use from that heuristic, so GCC fuses every such multiply-add whenever the
/// target has FMA (and none without, or with -ffp-contract=off). It costs
/// nothing at run time and is usable in constant expressions.
template <class Acc, class A, class B>
__attribute__((always_inline)) constexpr Acc muladd(Acc acc, A a, B b) noexcept {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  return __builtin_assoc_barrier(acc + a * b);
#else
  return acc + a * b;
#endif
}

}  // namespace mha::detail
