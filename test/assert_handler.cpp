// MHA_ASSERT_HANDLER (mha/config.hpp): a failed debug check calls the user's
// handler instead of assert. This unit defines a handler that records its
// arguments, breaks kv_cache::truncate's precondition (n <= size()), whose
// check is harmless to continue past, and checks that the handler ran once
// with the check's file, line and text, and not for a check that holds.
// The assert_handler_no_assert test (test/CMakeLists.txt) checks that the
// program references neither the C library's assert nor its stdio, and that
// the same unit without the handler (-DMHA_TEST_DEFAULT_ASSERT, compiled, not
// run) does reference assert, so the check can fail.
#undef NDEBUG  // the checks are debug-only: on in this unit whatever the build type

#include <cstring>

namespace handler_test {
struct failure {
  const char* file = nullptr;
  int line = 0;
  const char* expr = nullptr;
  int count = 0;
};
inline failure last{};
inline void failed(const char* file, int line, const char* expr) noexcept {
  last = {file, line, expr, last.count + 1};
}
}  // namespace handler_test

#ifndef MHA_TEST_DEFAULT_ASSERT
#define MHA_ASSERT_HANDLER(file, line, expr) handler_test::failed(file, line, expr)
#endif
#include <mha/kv_cache.hpp>

int main() {
  using handler_test::last;
  mha::kv_cache<float, 1, 1, 2, 4> cache{};
  cache.truncate(0);  // n <= size(): the check holds
  if (last.count != 0) return 1;
  cache.truncate(3);  // size() is 0: the check fails, the handler returns
  if (last.count != 1) return 2;
  if (std::strcmp(last.expr, "n <= size_") != 0) return 3;
  if (std::strstr(last.file, "mha/kv_cache.hpp") == nullptr) return 4;
  if (last.line <= 0) return 5;
  if (cache.size() != 0) return 6;  // truncate went on as with NDEBUG: nothing changed
  return 0;
}
