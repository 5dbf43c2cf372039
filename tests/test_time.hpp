// The run clock's units for tests (every time in convoy is int64 nanoseconds). One definition
// for every test file, so test files compile side by side in a unity batch.
#pragma once

#include <cstdint>

namespace convoy::test {

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kS = 1'000'000'000;

}  // namespace convoy::test

using convoy::test::kMs;
using convoy::test::kS;
