// mha/detail/kernels/dropout.hpp -- counter-based dropout decisions shared by the
// fixed-size and the runtime-sized implementations.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mha/config.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// SplitMix64 finaliser (S. Vigna, "splitmix64.c", public domain constants):
/// a bijective 64-bit mixer with good avalanche.
constexpr std::uint64_t splitmix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Dropout state of one forward call. Inactive in inference mode or with p = 0.
///
/// The decision for attention weight (batch b, head h, query i, key j) is a pure
/// function of (seed, h, b, i, j): it does not depend on loop order, so the
/// fixed-size and the runtime-sized forward draw identical masks, and a forward
/// call is reproducible for a given seed. A weight is dropped when the 53-bit
/// draw is below p * 2^53 (probability p); kept weights are multiplied by
/// scale = 1 / (1 - p), as torch.nn.Dropout does in training mode; p >= 1 drops
/// every weight.
template <class T>
struct dropout_state {
  bool active = false;
  std::uint64_t seed = 0;
  std::uint64_t threshold = 0;  ///< drop iff draw < threshold (53-bit draws)
  T scale = T(1);

  /// State for probability `p` and `seed`; inactive unless `training` and
  /// p > 0. Precondition (training): 0 <= p <= 1, checked by MHA_ASSERT in
  /// debug builds (mha::dynamic throws std::invalid_argument instead); in
  /// release builds NaN or p < 0 mean no dropout and p > 1 drops everything.
  static constexpr dropout_state make(T p, std::uint64_t seed, bool training) noexcept {
    MHA_ASSERT(!training || (p >= T(0) && p <= T(1)));
    dropout_state s;
    if (!training || !(p > T(0))) return s;  // also maps NaN to "no dropout"
    s.active = true;
    s.seed = splitmix64(seed);
    constexpr double two53 = 9007199254740992.0;
    if (p >= T(1)) {
      s.threshold = std::uint64_t{1} << 53;
      s.scale = T(0);
    } else {
      s.threshold = static_cast<std::uint64_t>(static_cast<double>(p) * two53);
      s.scale = T(1) / (T(1) - p);
    }
    return s;
  }

  /// True: this state may drop weights (see no_dropout_state), whether it
  /// does is `active`.
  static constexpr bool may_drop = true;

  /// True when weight (b, h, i, j) is kept.
  constexpr bool keep(std::size_t b, std::size_t h, std::size_t i, std::size_t j) const noexcept {
    std::uint64_t z = splitmix64(seed ^ static_cast<std::uint64_t>(h));
    z = splitmix64(z ^ static_cast<std::uint64_t>(b));
    z = splitmix64(z ^ ((static_cast<std::uint64_t>(i) << 32) | static_cast<std::uint64_t>(j)));
    return (z >> 11) >= threshold;
  }
};

/// The dropout of an inference call, decided by the type: never drops
/// (may_drop false), so a kernel that tests `Drop::may_drop` with `if
/// constexpr` compiles no dropout code for it. Same interface as
/// dropout_state (`active` false, `scale` 1, every weight kept).
template <class T>
struct no_dropout_state {
  static constexpr bool may_drop = false;
  static constexpr bool active = false;
  static constexpr T scale = T(1);
  constexpr bool keep(std::size_t, std::size_t, std::size_t, std::size_t) const noexcept {
    return true;
  }
};

/// dropout_state<T>::make(p, seed, training) for a run-time `training`
/// (bool); no_dropout_state<T> when `training` is std::false_type or a type
/// derived from it (an inference call: detail::inference_mode,
/// detail::inference_any_path_mode).
template <class T, class Training>
constexpr auto make_dropout(T p, std::uint64_t seed, Training training) noexcept {
  if constexpr (std::is_convertible_v<Training, std::false_type>) {
    static_cast<void>(p);
    static_cast<void>(seed);
    return no_dropout_state<T>{};
  } else {
    return dropout_state<T>::make(p, seed, static_cast<bool>(training));
  }
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
