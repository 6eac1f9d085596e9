// mha/detail/dynamic_needs_exceptions.hpp -- included first by every
// mha::dynamic header: mha::dynamic reports its run-time errors as exceptions,
// so a build without them gets this one message first (not a "throw" deep
// in a helper). The fixed-size headers need no exceptions, and <mha/mha.hpp>
// leaves mha::dynamic out when they are disabled.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error "mha::dynamic needs exceptions (it reports bad shapes by throwing std::invalid_argument); with -fno-exceptions use the fixed-size modules: <mha/mha.hpp> includes them and leaves mha::dynamic out"
#endif
