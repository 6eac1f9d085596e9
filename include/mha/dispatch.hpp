// mha/dispatch.hpp -- x86-64 run-time dispatch: one binary, the kernels built
// for several x86-64 levels, one picked at run time by CPUID (docs/dispatch.md).
//
// The kernels' vector width and multiply-add fusion follow the instruction set
// a translation unit is compiled for (detail/arch/simd.hpp, detail/arch/muladd.hpp), and
// every function whose code depends on it lives in an ISA-named inline
// namespace (detail/macros.hpp, docs/design.md "ISA namespaces"), so copies of
// one translation unit built with -march=x86-64, -march=x86-64-v2,
// -march=x86-64-v3 and -march=x86-64-v4 link into one program without an ODR
// clash. This header is the user's side of that:
//
//   * CMake: `mha_dispatch_sources(<target> SOURCES kernels.cpp [LEVELS ...])`
//     (cmake/mha-dispatch.cmake, installed with the package) compiles
//     kernels.cpp once per level with -march=<level> and
//     -DMHA_DISPATCH_LEVEL=<1..4> and links every copy into <target>, each
//     self-contained (every symbol but the dispatched functions local).
//   * kernels.cpp defines the functions to dispatch inside
//     `namespace MHA_DISPATCH_NAMESPACE { ... }` (mha_dispatch_x86_64,
//     mha_dispatch_x86_64_v2, ... in the copy of each level).
//   * A header shared by kernels.cpp and its callers declares each one with
//     `MHA_DISPATCH_DECLARE(name, signature)`: the function in every level's
//     namespace, and `name`, a constexpr mha::dispatch::dispatcher that calls
//     the copy of active_level() (the CPU's best level, or the one forced by
//     force_level() or the environment variable MHA_ISA_LEVEL).
//
// Results: each copy gives the bits of a program built with that -march (the
// same code); levels with FMA (v3, v4) and without (x86-64, v2) differ in the
// last bits (docs/embedded.md, "Multiply-adds"), so a program that must give
// the same bits on every machine forces one level.
//
// Not for the fixed-size headers' users who must avoid the C library: this
// header reads an environment variable (std::getenv) once. No heap, no
// exceptions, no RTTI. On other targets than x86-64 there is one level
// (isa_level::baseline) and CMake builds one copy.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace mha::dispatch {

/// The x86-64 microarchitecture levels of the psABI (x86-64-v2: SSE4.2,
/// POPCNT; v3: AVX2, FMA, BMI2; v4: AVX-512 F/BW/CD/DQ/VL), as GCC's and
/// Clang's -march=x86-64-vN name them. `baseline` is -march=x86-64 (SSE2;
/// also the one level of non-x86 targets).
enum class isa_level : int { baseline = 1, x86_64_v2 = 2, x86_64_v3 = 3, x86_64_v4 = 4 };

/// The -march name of a level: "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4".
constexpr const char* level_name(isa_level level) noexcept {
  switch (level) {
    case isa_level::x86_64_v2: return "x86-64-v2";
    case isa_level::x86_64_v3: return "x86-64-v3";
    case isa_level::x86_64_v4: return "x86-64-v4";
    default: return "x86-64";
  }
}

/// The level named `name` (level_name's strings), or isa_level{0} (no level)
/// for any other string or a null pointer.
constexpr isa_level parse_level(const char* name) noexcept {
  if (name == nullptr) return isa_level{0};
  for (int l = 1; l <= 4; ++l) {
    const char* a = level_name(static_cast<isa_level>(l));
    const char* b = name;
    while (*a != '\0' && *a == *b) ++a, ++b;
    if (*a == '\0' && *b == '\0') return static_cast<isa_level>(l);
  }
  return isa_level{0};
}

#ifndef MHA_DISPATCH_LEVEL
// (The functions with code are defined only in translation units built for
// the program's own level, never in a dispatched copy: a copy built for
// x86-64-v4 would otherwise emit them with AVX-512 instructions, and the
// linker could keep that copy for a CPU without it.)

/// The highest level this CPU runs (CPUID, through GCC's and Clang's
/// __builtin_cpu_supports: every feature the level requires, and the OS's
/// AVX / AVX-512 state support that the builtin checks). isa_level::baseline
/// on other targets.
inline isa_level cpu_level() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("sse3") && __builtin_cpu_supports("ssse3") &&
                  __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("sse4.2") &&
                  __builtin_cpu_supports("popcnt");
  const bool v3 = v2 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                  __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? isa_level::x86_64_v4
            : v3 ? isa_level::x86_64_v3 : v2 ? isa_level::x86_64_v2 : isa_level::baseline;
#else
  return isa_level::baseline;
#endif
}

namespace detail {
/// The forced level (0: none) and the level dispatched calls use.
struct dispatch_state {
  std::atomic<int> active{0};  // 0 until the first call reads the CPU and MHA_ISA_LEVEL
};
inline dispatch_state& state() noexcept {
  static dispatch_state s;
  return s;
}
inline int initial_level() noexcept {
  const int cpu = static_cast<int>(cpu_level());
  const int env = static_cast<int>(parse_level(std::getenv("MHA_ISA_LEVEL")));
  return env != 0 && env <= cpu ? env : cpu;
}
}  // namespace detail

/// The level dispatched calls use: the one force_level() set, else the one
/// the environment variable MHA_ISA_LEVEL names ("x86-64", "x86-64-v2",
/// "x86-64-v3", "x86-64-v4"; ignored when the CPU does not run it or the
/// name is none of these), else cpu_level(). Read once, then cached
/// (thread-safe).
inline isa_level active_level() noexcept {
  auto& s = detail::state();
  int l = s.active.load(std::memory_order_relaxed);
  if (l == 0) {
    int expected = 0;
    l = detail::initial_level();
    if (!s.active.compare_exchange_strong(expected, l, std::memory_order_relaxed)) l = expected;
  }
  return static_cast<isa_level>(l);
}

/// Makes dispatched calls use `level` from now on (tests run every copy on
/// one machine this way; a product forces one level to get the same bits on
/// every machine). Returns false, and changes nothing, when the CPU does not
/// run `level` (cpu_level() is lower) or `level` is not a level. A
/// dispatcher whose copy of `level` was not built uses its highest built
/// level below it (dispatcher::level()).
inline bool force_level(isa_level level) noexcept {
  const int l = static_cast<int>(level);
  if (l < 1 || l > 4 || l > static_cast<int>(cpu_level())) return false;
  detail::state().active.store(l, std::memory_order_relaxed);
  return true;
}

/// Forgets force_level(): the next call reads the CPU and MHA_ISA_LEVEL again.
inline void reset_level() noexcept { detail::state().active.store(0, std::memory_order_relaxed); }
#else
// In a dispatched copy: declared only (see above), and a call from a
// dispatched function is a compile-time error.
#define MHA_DETAIL_DISPATCH_NOT_HERE                                                   \
  __attribute__((error("mha::dispatch: cpu_level, active_level, force_level and "   \
                       "reset_level are not for a dispatched copy's functions; call " \
                       "them from the program's own code (docs/dispatch.md, Limits)")))
inline MHA_DETAIL_DISPATCH_NOT_HERE isa_level cpu_level() noexcept;
inline MHA_DETAIL_DISPATCH_NOT_HERE isa_level active_level() noexcept;
inline MHA_DETAIL_DISPATCH_NOT_HERE bool force_level(isa_level level) noexcept;
inline MHA_DETAIL_DISPATCH_NOT_HERE void reset_level() noexcept;
#undef MHA_DETAIL_DISPATCH_NOT_HERE
#endif  // MHA_DISPATCH_LEVEL

namespace detail {
/// The copies of one dispatched function, one per level (baseline first;
/// null for a level not built), and the choice among them.
template <class Function>
class dispatch_table {
 public:
  using function = Function;
  /// One function per level, baseline first; null for a level not built.
  constexpr dispatch_table(function baseline, function v2, function v3, function v4) noexcept
      : copies_{baseline, v2, v3, v4} {}
  /// The level whose copy a call runs now: the highest built level <=
  /// active_level().
  isa_level level() const noexcept {
    int l = static_cast<int>(active_level());
    while (l > 1 && copies_[l - 1] == nullptr) --l;
    return static_cast<isa_level>(l);
  }
  /// The copy of `level` (null when it was not built).
  function copy(isa_level level) const noexcept {
    const int l = static_cast<int>(level);
    return l >= 1 && l <= 4 ? copies_[l - 1] : nullptr;
  }

 protected:
  function current() const noexcept { return copies_[static_cast<int>(level()) - 1]; }

 private:
  function copies_[4];
};
}  // namespace detail

template <class Signature>
class dispatcher;

/// A function built at several levels (MHA_DISPATCH_DECLARE): calling it
/// calls the copy of the highest built level <= active_level() (one relaxed
/// atomic load and an indirect call). The baseline copy is always there (a
/// program without it does not link); the other levels' pointers are null
/// when mha_dispatch_sources did not build them (LEVELS): their
/// declarations are weak. level() and copy(level) as in detail::dispatch_table.
template <class R, class... Args>
class dispatcher<R(Args...)> : public detail::dispatch_table<R (*)(Args...)> {
 public:
  using detail::dispatch_table<R (*)(Args...)>::dispatch_table;
  /// Calls the copy of level() with `args`.
  R operator()(Args... args) const { return this->current()(static_cast<Args&&>(args)...); }
};

/// The same for a noexcept signature (calls are noexcept).
template <class R, class... Args>
class dispatcher<R(Args...) noexcept> : public detail::dispatch_table<R (*)(Args...) noexcept> {
 public:
  using detail::dispatch_table<R (*)(Args...) noexcept>::dispatch_table;
  /// Calls the copy of level() with `args`.
  R operator()(Args... args) const noexcept {
    return this->current()(static_cast<Args&&>(args)...);
  }
};

}  // namespace mha::dispatch

/// MHA_DISPATCH_NAMESPACE: in a copy built by mha_dispatch_sources
/// (MHA_DISPATCH_LEVEL is 1..4), the namespace that copy's dispatched
/// functions are defined in. Elsewhere using it is a compile-time error
/// (the file is not built by mha_dispatch_sources).
#if defined(MHA_DISPATCH_LEVEL)
#if MHA_DISPATCH_LEVEL == 1
#define MHA_DISPATCH_NAMESPACE mha_dispatch_x86_64
#elif MHA_DISPATCH_LEVEL == 2
#define MHA_DISPATCH_NAMESPACE mha_dispatch_x86_64_v2
#elif MHA_DISPATCH_LEVEL == 3
#define MHA_DISPATCH_NAMESPACE mha_dispatch_x86_64_v3
#elif MHA_DISPATCH_LEVEL == 4
#define MHA_DISPATCH_NAMESPACE mha_dispatch_x86_64_v4
#else
#error "mha/dispatch.hpp: MHA_DISPATCH_LEVEL must be 1 (x86-64), 2, 3 or 4 (x86-64-v2..v4)"
#endif
#else
#define MHA_DISPATCH_NAMESPACE                                                              \
  _Pragma("GCC error \"MHA_DISPATCH_NAMESPACE: this file is not built by mha_dispatch_sources (docs/dispatch.md)\"") \
      mha_dispatch_not_built
#endif

/// MHA_DISPATCH_DECLARE(name, signature): declares the function `name` of
/// type `signature` (e.g. `void(const float*, float*)`, also noexcept) in the
/// namespace of every level (mha_dispatch_x86_64, ..._v2, ..._v3, ..._v4,
/// nested in the namespace where the macro is used; the levels above the
/// baseline weak, so that a level mha_dispatch_sources did not build is a
/// null pointer, not a link error; all with default visibility, the copies'
/// only symbols that leave them) and defines `name`, an
/// mha::dispatch::dispatcher<signature> over them. Use it at namespace scope
/// in a header that the dispatched sources and their callers include; each
/// dispatched source defines `name` inside `namespace MHA_DISPATCH_NAMESPACE`.
#define MHA_DISPATCH_DECLARE(name, ...)                                                      \
  using name##_mha_dispatch_signature = __VA_ARGS__;                                         \
  namespace mha_dispatch_x86_64 {                                                            \
  [[gnu::visibility("default")]] name##_mha_dispatch_signature name;                         \
  }                                                                                          \
  namespace mha_dispatch_x86_64_v2 {                                                         \
  [[gnu::weak, gnu::visibility("default")]] name##_mha_dispatch_signature name;              \
  }                                                                                          \
  namespace mha_dispatch_x86_64_v3 {                                                         \
  [[gnu::weak, gnu::visibility("default")]] name##_mha_dispatch_signature name;              \
  }                                                                                          \
  namespace mha_dispatch_x86_64_v4 {                                                         \
  [[gnu::weak, gnu::visibility("default")]] name##_mha_dispatch_signature name;              \
  }                                                                                          \
  inline constexpr ::mha::dispatch::dispatcher<__VA_ARGS__> name {                               \
    &mha_dispatch_x86_64::name, &mha_dispatch_x86_64_v2::name, &mha_dispatch_x86_64_v3::name,  \
        &mha_dispatch_x86_64_v4::name                                                        \
  }

#endif  // MHA_DETAIL_NO_CXX20
