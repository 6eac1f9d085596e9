// fixture_parameters.hpp -- a fixture's parameters into a module, for the
// tests that compare modules with test/variant_fixture.hpp's fixtures
// (test_variants.cpp, test_scores.cpp, test_sinks.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include <mha/mha.hpp>

#include "variant_fixture.hpp"

namespace variant_fixture {

/// The elements of a fixed-size or dynamic tensor.
template <class T>
T* elements_of(mha::dynamic::tensor<T>& t) {
  return t.data();
}
template <class T, std::size_t... E>
T* elements_of(mha::tensor<T, E...>& t) {
  return t.data();
}

/// Every parameter of `model` (fixed or dynamic) from the fixture, by the
/// library's (book) names; checks that each one exists with the same size
/// and that the fixture has no other.
template <class M, class T>
void load(M& model, const fixture<T>& fx) {
  const auto lib = fx.library_parameters();
  std::size_t loaded = 0;
  mha::for_each_parameter(model, [&](std::string_view name, auto& tensor) {
    const auto it = lib.find(std::string(name));
    INFO("parameter " << name);
    REQUIRE(it != lib.end());
    REQUIRE(it->second.size() == tensor.size());
    std::copy(it->second.data.begin(), it->second.data.end(), elements_of(tensor));
    ++loaded;
  });
  CHECK(loaded == lib.size());
}

}  // namespace variant_fixture
