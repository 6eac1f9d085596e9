// mha/detail/cxx20_check.hpp -- the language-level check every mha header
// includes first: one error that names the requirement, instead of a cascade
// from the C++20 code that follows.
//
// When the check fails it also defines MHA_DETAIL_NO_CXX20, and every public
// header skips its body on it (#ifndef MHA_DETAIL_NO_CXX20 ... #endif), so
// the #error is the only error the library produces. _MSVC_LANG is MSVC's
// language level (its __cplusplus stays 199711L without /Zc:__cplusplus).
#pragma once

#if (defined(_MSVC_LANG) && _MSVC_LANG < 202002L) || (!defined(_MSVC_LANG) && __cplusplus < 202002L)
#error mha requires C++20 (-std=c++20)
#define MHA_DETAIL_NO_CXX20 1
#endif
