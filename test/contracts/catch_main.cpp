// Catch2 main for the issue-3 contract tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
