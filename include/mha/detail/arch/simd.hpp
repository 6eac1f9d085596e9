// mha/detail/arch/simd.hpp -- portable short vectors (GCC/Clang vector extensions)
// for the run-time fast path of the kernels, with a vectorised e^x for float.
//
// Nothing here requires a particular instruction set: the vector width follows
// the target the user compiles for (64 bytes with AVX-512, 32 with AVX, 16
// otherwise, where SSE2/NEON-class registers exist), and the compiler lowers
// the generic vector operations to whatever that target has. Only used at run
// time (never in constant evaluation).
// Everything here depends on that target, so it lives in the ISA namespace
// (detail/macros.hpp, docs/design.md "ISA namespaces").
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/subnormals.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// Name of the ISA namespace of this translation unit (docs/design.md, "ISA
/// namespaces"), e.g. "isa_avx512" with -march=x86-64-v4, "isa_sse2" with
/// -march=x86-64.
inline constexpr const char isa_name[] = MHA_DETAIL_ISA_NAME;

namespace simd {

#if defined(__AVX512F__)
inline constexpr std::size_t vector_bytes = 64;
#elif defined(__AVX__)
inline constexpr std::size_t vector_bytes = 32;
#else
inline constexpr std::size_t vector_bytes = 16;
#endif

/// True when the target does float arithmetic in vector registers (x86 SSE
/// and up, AArch64 NEON, MVE): vec<T> maps onto them. False on cores without
/// a vector unit (Cortex-M3/M4F/M7, ARMv7 without NEON, other scalar targets)
/// and on 32-bit Arm with NEON, whose float vector arithmetic GCC leaves
/// unused (NEON flushes subnormals, so GCC only uses it with
/// -funsafe-math-optimizations): there GCC lowers every float vector
/// operation to one scalar operation per lane, through the stack, and the
/// kernels take their scalar forms instead (token_major::project and
/// attention_head_scalar, gemm::micro_scalar, softmax_row's scalar
/// mirror), which compute the same bits.
#if defined(__SSE2__) || defined(__aarch64__) || \
    (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2))
inline constexpr bool hardware_vectors = true;
#else
inline constexpr bool hardware_vectors = false;
#endif

template <class T>
struct vec_of;
template <>
struct vec_of<float> {
  typedef float type __attribute__((vector_size(vector_bytes)));
  typedef std::int32_t int_type __attribute__((vector_size(vector_bytes)));
  using int_elem = std::int32_t;
};
template <>
struct vec_of<double> {
  typedef double type __attribute__((vector_size(vector_bytes)));
  typedef std::int64_t int_type __attribute__((vector_size(vector_bytes)));
  using int_elem = std::int64_t;
};

/// The vector of T of the target's natural width.
template <class T>
using vec = typename vec_of<T>::type;

/// Number of T in a vec<T>.
template <class T>
inline constexpr std::size_t lanes = vector_bytes / sizeof(T);

/// Unaligned load of lanes<T> elements from p.
template <class T>
MHA_DETAIL_INLINE vec<T> load(const T* p) noexcept {
  vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
/// Unaligned store of lanes<T> elements to p.
template <class T>
MHA_DETAIL_INLINE void store(T* p, vec<T> v) noexcept {
  std::memcpy(p, &v, sizeof v);
}
/// Load of the first n (<= lanes<T>) elements from p; the other lanes are 0.
template <class T>
MHA_DETAIL_INLINE vec<T> load_partial(const T* p, std::size_t n) noexcept {
  vec<T> v{};
  std::memcpy(&v, p, n * sizeof(T));
  return v;
}
/// Load of the first n (<= lanes<T>) elements from p; the other lanes hold `fill`.
template <class T>
MHA_DETAIL_INLINE vec<T> load_partial(const T* p, std::size_t n, T fill) noexcept {
  vec<T> v = vec<T>{} + fill;
  std::memcpy(&v, p, n * sizeof(T));
  return v;
}
/// v with the lanes from n on set to 0.
template <class T>
MHA_DETAIL_INLINE vec<T> keep_first(vec<T> v, std::size_t n) noexcept {
  using I = typename vec_of<T>::int_type;
  I index{};
  using E = typename vec_of<T>::int_elem;
  for (std::size_t l = 0; l < lanes<T>; ++l) index[l] = static_cast<E>(l);
  return index < static_cast<E>(n) ? v : vec<T>{};
}
/// Store of the first n (<= lanes<T>) lanes of v to p.
template <class T>
MHA_DETAIL_INLINE void store_partial(T* p, vec<T> v, std::size_t n) noexcept {
  std::memcpy(p, &v, n * sizeof(T));
}
/// Every lane equal to s.
template <class T>
MHA_DETAIL_INLINE vec<T> broadcast(T s) noexcept {
  return vec<T>{} + s;
}
/// True when the target divides float vectors with vector instructions. MVE
/// (Cortex-M55) has no vector division: GCC divides such a vector lane by
/// lane through a stack copy of it, which divide_in_place avoids.
#if defined(__ARM_FEATURE_MVE)
inline constexpr bool vector_division = false;
#else
inline constexpr bool vector_division = true;
#endif

/// a = a / b lane by lane (IEEE division per lane, the same bits either way):
/// one vector division where the target has it (vector_division), else one
/// scalar division per lane in place, with no copy of a (on MVE four VDIVs on
/// the S registers of Q0, below). VF: a GCC/Clang vector of float or double
/// of any width; B: the same vector type or its element type (every lane
/// divided by it).
template <class VF, class B>
MHA_DETAIL_INLINE void divide_in_place(VF& a, B b) noexcept {
  if constexpr (vector_division || std::is_floating_point_v<VF>) {
    a = a / b;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT) && \
    defined(__GNUC__) && !defined(__clang__)
  } else if constexpr (sizeof(VF) == 16 && !std::is_floating_point_v<B> &&
                       std::is_same_v<std::remove_cvref_t<decltype(a[0])>, float>) {
    // MVE: the lanes of Q0 and Q1 are the single-precision registers S0-S3
    // and S4-S7, so four scalar VDIVs divide a vector held in Q0 by one in
    // Q1 in place (GCC 12 moves each lane through a core register or the
    // stack instead: about 4 instructions per lane more)
    const float32x4_t a_in = std::bit_cast<float32x4_t>(a), b_in = std::bit_cast<float32x4_t>(b);
    register float32x4_t num asm("q0") = a_in;
    register float32x4_t den asm("q1") = b_in;
    __asm__("vdiv.f32 s0, s0, s4\n\tvdiv.f32 s1, s1, s5\n\t"
            "vdiv.f32 s2, s2, s6\n\tvdiv.f32 s3, s3, s7"
            : "+w"(num)
            : "w"(den));
    const float32x4_t quotient = num;
    a = std::bit_cast<VF>(quotient);
#endif
  } else {
    constexpr std::size_t n = sizeof(VF) / sizeof(a[0]);
#pragma GCC unroll 16
    for (std::size_t l = 0; l < n; ++l) {
      if constexpr (std::is_floating_point_v<B>)
        a[l] = a[l] / b;
      else
        a[l] = a[l] / b[l];
    }
  }
}

/// Lane-wise maximum.
template <class T>
MHA_DETAIL_INLINE vec<T> max(vec<T> a, vec<T> b) noexcept {
  return a > b ? a : b;
}
/// Lane-wise minimum.
template <class T>
MHA_DETAIL_INLINE vec<T> min(vec<T> a, vec<T> b) noexcept {
  return a < b ? a : b;
}
/// Lane l of the result is lane (l + W) mod lanes of v.
template <std::size_t W, class T, std::size_t... I>
MHA_DETAIL_INLINE vec<T> rotate(vec<T> v, std::index_sequence<I...>) noexcept {
#if defined(MHA_DETAIL_HAVE_SHUFFLEVECTOR)
  return __builtin_shufflevector(v, v, ((I + W) % sizeof...(I))...);
#else
  return vec<T>{v[(I + W) % sizeof...(I)]...};
#endif
}
/// Pairwise tree over the lanes: lane l combined with lane l + w for
/// w = L/2, L/4, ..., 1 (a fixed order), result in lane 0.
template <std::size_t W, class T, class Op>
MHA_DETAIL_INLINE T tree_reduce(vec<T> v, Op op) noexcept {
  if constexpr (W == 0) {
    return v[0];
  } else {
    v = op(v, rotate<W, T>(v, std::make_index_sequence<lanes<T>>{}));
    return tree_reduce<W / 2, T>(v, op);
  }
}
/// Maximum of the lanes.
template <class T>
MHA_DETAIL_INLINE T reduce_max(vec<T> v) noexcept {
  return tree_reduce<lanes<T> / 2, T>(v, [](vec<T> a, vec<T> b) { return a > b ? a : b; });
}
/// Sum of the lanes in a fixed order (pairwise tree, see tree_reduce).
template <class T>
MHA_DETAIL_INLINE T reduce_sum(vec<T> v) noexcept {
  return tree_reduce<lanes<T> / 2, T>(v, [](vec<T> a, vec<T> b) { return a + b; });
}

/// The 32-bit integer type of exp's exponent arithmetic: std::int32_t for a
/// float, the comparison result (a signed 32-bit vector) for a float vector.
template <class VF>
struct exp_int {
  using type = decltype(VF{} < VF{});
};
template <>
struct exp_int<float> {
  using type = std::int32_t;
};

/// True where the compiler lowers a float vector comparison lane by lane
/// through the scalar FPU but an integer vector comparison to one vector
/// instruction: GCC 12 with MVE (Cortex-M55), where one 4-lane float
/// compare-and-select became about 25 instructions (QEMU instruction counts,
/// book model). There the float comparisons below are made on the bits
/// (their template argument Bits; tests run both forms on every target).
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(__GNUC__) && \
    !defined(__clang__)
inline constexpr bool compare_float_bits = true;
#else
inline constexpr bool compare_float_bits = false;
#endif

/// The unsigned 32-bit integer vector of the size of VF (a vector of float).
template <class VF>
struct uint_vector {
  typedef std::uint32_t type __attribute__((vector_size(sizeof(VF))));
};

/// c in the lanes where x lies beyond c, away from 0 (x < c for c < 0, x > c
/// for c > 0, as float comparisons: NaN lanes pass unchanged), x elsewhere;
/// for a vector of float x and a finite nonzero c.
template <class VF, bool Bits = compare_float_bits>
MHA_DETAIL_INLINE VF clamp_beyond(VF x, float c) noexcept {
  if constexpr (Bits) {
    // x lies beyond c exactly when its bits u, unsigned, lie in (bits(c),
    // bits(inf of c's sign)] = (cb, k]: the floats of c's sign past c up to
    // that infinity; NaN is above it, every other float below cb or of the
    // other sign (in the other half of the unsigned range). Modulo 2^32,
    // e = k - u is below m = k - cb exactly there (for u > k it wraps above
    // m), so k - max(e, m) is cb there and u elsewhere: no comparison mask
    using VU = typename uint_vector<VF>::type;
    const std::uint32_t cb = std::bit_cast<std::uint32_t>(c);
    const std::uint32_t k = (cb & 0x80000000u) | 0x7F800000u;
    const VU e = k - std::bit_cast<VU>(x);
    const VU m = VU{} + (k - cb);
    return std::bit_cast<VF>(k - (e > m ? e : m));
  } else {
    return c < 0 ? (x < c ? VF{} + c : x) : (x > c ? VF{} + c : x);
  }
}

/// The order-preserving integer key of softmax_max's bit comparison: the bits
/// of v as signed integers, with the magnitude bits of negative floats
/// flipped (key(a) > key(b) is softmax_max's a > b). Its own inverse:
/// softmax_key(softmax_key(v) as float bits) gives v's bits back. A running
/// maximum of keys (one integer maximum per step) is the bits of the running
/// softmax_max<VF, true>, which keeps the larger key at each step.
template <class VF>
MHA_DETAIL_INLINE typename exp_int<VF>::type softmax_key(VF v) noexcept {
  using VI = typename exp_int<VF>::type;
  const VI i = std::bit_cast<VI>(v);
  return i ^ ((i >> 31) & 0x7FFFFFFF);
}

/// a > b ? a : b lane by lane, for the maximum of a softmax row, whose
/// weights depend on the maximum only through e^(s - max): where
/// compare_float_bits holds, the comparison is made on order-preserving
/// integer keys of the bits, which agree with a > b except where a and b are
/// zeros of opposite sign (either zero is then the maximum: s - 0 and s + 0
/// have the same exponential) or one is NaN (a NaN score makes every weight of
/// its row NaN whatever the maximum).
template <class VF, bool Bits = compare_float_bits>
MHA_DETAIL_INLINE VF softmax_max(VF a, VF b) noexcept {
  if constexpr (Bits) {
    return softmax_key(a) > softmax_key(b) ? a : b;
  } else {
    return a > b ? a : b;
  }
}

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT) && \
    defined(__GNUC__) && !defined(__clang__)
#define MHA_DETAIL_SIMD_EXP_MVE 1
/// exp_impl's operations on one MVE vector (Cortex-M55), written with MVE's
/// vector-by-scalar forms (vfmaq_n, vfmasq_n, vsubq_n, ...), so that each
/// constant is a core register operand instead of a broadcast into one of the
/// eight Q registers, which GCC 12's generic vector code reloads for every
/// use (about 3 instructions each; QEMU counts, docs/embedded.md). Each step
/// is the same IEEE operation on the same operands as exp_impl's generic
/// code, so the same bits: the clamps are clamp_beyond<VF, true>'s integer
/// formula, every muladd is one fused multiply-add (MVE targets have FMA).
template <bool ClampAbove>
MHA_DETAIL_INLINE float32x4_t exp_mve(float32x4_t x) noexcept {
  // clamp_beyond<VF, true>(v, c): k - max(k - u, k - cb) on the bits u of v,
  // k - u as ~u + (k + 1)
  const auto clamp = [](float32x4_t v, float c) MHA_DETAIL_LAMBDA_INLINE {
    const std::uint32_t cb = std::bit_cast<std::uint32_t>(c);
    const std::uint32_t k = (cb & 0x80000000u) | 0x7F800000u;
    const uint32x4_t e = vaddq_n_u32(vmvnq_u32(vreinterpretq_u32_f32(v)), k + 1u);
    const uint32x4_t r = vmaxq_u32(e, vdupq_n_u32(k - cb));
    return vreinterpretq_f32_u32(vaddq_n_u32(vmvnq_u32(r), k + 1u));
  };
  x = clamp(x, -104.0f);
  if constexpr (ClampAbove) x = clamp(x, 88.0f);
  constexpr float round_magic = 12582912.0f;
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(round_magic), x, 1.44269504088896341f);
  const float32x4_t n = vsubq_n_f32(t, round_magic);
  float32x4_t r = vfmaq_n_f32(x, vnegq_f32(n), 0.693359375f);
  r = vfmaq_n_f32(r, n, 2.12194440e-4f);
  float32x4_t p = vfmaq_n_f32(vdupq_n_f32(1.0f / 120.0f), r, 1.0f / 720.0f);
  p = vfmasq_n_f32(p, r, 1.0f / 24.0f);
  p = vfmasq_n_f32(p, r, 1.0f / 6.0f);
  p = vfmasq_n_f32(p, r, 0.5f);
  p = vfmasq_n_f32(p, r, 1.0f);
  p = vfmasq_n_f32(p, r, 1.0f);
  const int32x4_t ni = vsubq_n_s32(vreinterpretq_s32_f32(t), 0x4B400000);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const auto power_of_2 = [](int32x4_t e) MHA_DETAIL_LAMBDA_INLINE {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_n_s32(e, 127), 23));
  };
  return vmulq_f32(vmulq_f32(p, power_of_2(n1)), power_of_2(vsubq_s32(ni, n1)));
}
#endif

/// True where one instruction loads or stores the 4 floats of a vector at 4
/// arbitrary offsets (gather4, scatter4): MVE's VLDRW/VSTRW with a vector of
/// offsets. Elsewhere they are 4 scalar loads or stores.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT)
inline constexpr bool gather_scatter = true;
#else
inline constexpr bool gather_scatter = false;
#endif

/// A 4-float vector (GCC/Clang vector extension).
typedef float float4 __attribute__((vector_size(16)));

/// The element offsets of the 4 lanes of gather4 / scatter4 (in floats, each
/// below 2^30).
struct offsets4 {
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT)
  uint32x4_t bytes;  // in bytes, as VLDRW's offset operand
  MHA_DETAIL_INLINE offsets4(const std::size_t (&o)[4]) noexcept
      : bytes{static_cast<std::uint32_t>(o[0] * 4), static_cast<std::uint32_t>(o[1] * 4),
              static_cast<std::uint32_t>(o[2] * 4), static_cast<std::uint32_t>(o[3] * 4)} {}
#else
  std::size_t elements[4];
  MHA_DETAIL_INLINE offsets4(const std::size_t (&o)[4]) noexcept
      : elements{o[0], o[1], o[2], o[3]} {}
#endif
};

/// {base[o[0]], base[o[1]], base[o[2]], base[o[3]]} for the offsets o.
MHA_DETAIL_INLINE float4 gather4(const float* base, const offsets4& o) noexcept {
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT)
  return std::bit_cast<float4>(vldrwq_gather_offset_f32(base, o.bytes));
#else
  return float4{base[o.elements[0]], base[o.elements[1]], base[o.elements[2]],
                base[o.elements[3]]};
#endif
}

/// base[o[l]] = v[l] for l = 0..3 (in that order where two offsets are equal).
MHA_DETAIL_INLINE void scatter4(float* base, const offsets4& o, float4 v) noexcept {
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MHA_DETAIL_FMA_FLOAT)
  vstrwq_scatter_offset_f32(base, o.bytes, std::bit_cast<float32x4_t>(v));
#else
  for (std::size_t l = 0; l < 4; ++l) base[o.elements[l]] = v[l];
#endif
}

/// e^x for a float or lane-wise for a GCC/Clang vector of float of any width
/// (vec<float>, or the narrower token vectors of kernels/token_major.hpp), for
/// x <= 88 (softmax arguments are <= 0); NaN gives NaN. Vectors are clamped
/// to 88 (their masked and padding lanes may hold anything; those results are
/// discarded); a float is not: its only callers, the softmax mirrors, pass
/// s - max(s) <= 0 (precondition x <= 88, for which the clamp changed
/// nothing). One definition for scalars and vectors, so that the constant-evaluation and scalar paths
/// compute exactly what one lane of the vector paths computes. constexpr for
/// float.
/// Cody-Waite reduction x = n ln2 + r with |r| <= ln2/2 (ln2 split in a high
/// and a low part as in Cephes' expf), degree-6 Taylor polynomial of e^r
/// (truncation error < 2e-7 relative, about 1-2 ulp), times 2^n built from the
/// exponent bits, applied in two exact halves 2^(n >> 1) * 2^(n - (n >> 1)), so that
/// results below the smallest normal float are p * 2^n rounded once to the
/// subnormal grid, and e^x for x < -103.97 (e^x under half the smallest
/// subnormal, e.g. a score of -inf or far below the row maximum) is 0, as
/// PyTorch's float exp gives; arguments are clamped at -104 first. Where
/// p * 2^n is normal both halves scale exactly, so those results are the bits
/// of the single product p * 2^n. (Until 2026-12-03 inputs below -87.33 gave
/// the smallest normal float, 1.2e-38, instead of a subnormal or 0: a weight
/// that PyTorch computes as 0 became 1.2e-38, visible against a value row of
/// 1e38.)
/// ClampAbove false (exp_of_nonpositive below) leaves out the vectors' clamp
/// to 88. On MVE a 4-lane vector takes exp_mve: the same operations.
template <bool ClampAbove, class VF>
MHA_DETAIL_INLINE constexpr VF exp_impl(VF x) noexcept {
#if defined(MHA_DETAIL_SIMD_EXP_MVE)
  if constexpr (!std::is_same_v<VF, float> && sizeof(VF) == 16)
    return std::bit_cast<VF>(exp_mve<ClampAbove>(std::bit_cast<float32x4_t>(x)));
#endif
  using vi = typename exp_int<VF>::type;
  // e^-104 is 0.49 of the smallest subnormal: rounds to 0. Clamps written so
  // that NaN compares false and passes through (PyTorch propagates NaN scores
  // to NaN weights; a clamp must not turn them finite).
  if constexpr (std::is_same_v<VF, float>)
    x = x < -104.0f ? -104.0f : x;
  else if constexpr (ClampAbove)
    x = clamp_beyond(clamp_beyond(x, -104.0f), 88.0f);
  else
    x = clamp_beyond(x, -104.0f);
  constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // every multiply-add a detail::muladd: fused exactly where the target has FMA
  const VF t = muladd(VF{} + round_magic, x, 1.44269504088896341f);
  const VF n = t - round_magic;
  VF r = muladd(x, -n, 0.693359375f);  // exact: n * 0.693359375 has at most 17 bits
  r = muladd(r, n, 2.12194440e-4f);
  // Horner steps c + p * r
  VF p = muladd(VF{} + (1.0f / 120.0f), r, 1.0f / 720.0f);
  p = muladd_constant(1.0f / 24.0f, p, r);
  p = muladd_constant(1.0f / 6.0f, p, r);
  p = muladd_constant(0.5f, p, r);
  p = muladd_constant(1.0f, p, r);
  p = muladd_constant(1.0f, p, r);
  // t's low mantissa bits hold n (two's complement) above 0x4B400000; n is in
  // [-150, 127], its halves n1 = n >> 1 and n2 = n - n1 in [-75, 64], so
  // 2^n1 and 2^n2 are normal floats and p * 2^n1 is exact.
  const vi ni = std::bit_cast<vi>(t) - 0x4B400000;
  const auto power_of_2 = [](vi e) {  // 2^e for e in [-126, 127], lane by lane
    if constexpr (std::is_same_v<VF, float>)
      return std::bit_cast<VF>(static_cast<std::uint32_t>(e + 127) << 23);
    else
      return std::bit_cast<VF>((e + 127) << 23);
  };
  // a scalar takes the one product when 2^n is normal (the softmax's usual
  // case; the same bits as the two halves, which scale exactly there)
  if constexpr (std::is_same_v<VF, float>)
    if (ni >= -126) return fp::mul(p, power_of_2(ni));
  const vi n1 = ni >> 1;
  // (fp::mul: a tiny result flushed in constant evaluation where the target
  // flushes subnormals, detail/arch/subnormals.hpp; p * 2^n1 is normal)
  return fp::mul(p * power_of_2(n1), power_of_2(ni - n1));
}

/// e^x (see exp_impl: float or a vector of float; constexpr for float).
template <class VF>
MHA_DETAIL_INLINE constexpr VF exp(VF x) noexcept {
  return exp_impl<true>(x);
}

/// e^x for a vector of float whose lanes that are used hold x <= 88 (a
/// softmax row's s - max(s) <= 0, or NaN): exactly exp's bits there. Lanes
/// above 88 (masked keys, whose result the caller replaces) give an
/// unspecified value (inf, NaN or a wrong finite float; no undefined
/// behaviour: C++20 defines the shifts of the exponent arithmetic). One
/// clamp less than exp: on Cortex-M55 about 10 instructions per vector.
template <class VF>
MHA_DETAIL_INLINE constexpr VF exp_of_nonpositive(VF x) noexcept {
  return exp_impl<false>(x);
}

}  // namespace simd
}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#undef MHA_DETAIL_SIMD_EXP_MVE

#include <mha/detail/macros_undef.hpp>
