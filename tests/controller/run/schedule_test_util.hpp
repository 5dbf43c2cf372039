// Shared by the schedule tests (schedule_test.cpp, schedule_stage_test.cpp): the steady-clock
// origin the hand-advanced clocks start at, and a plain concurrency load.
#pragma once

#include <cstdint>

#include "controller/config/config.hpp"
#include "test_time.hpp"

namespace convoy::test {

inline constexpr int64_t kScheduleStart = 1'000 * kS;  // an arbitrary steady-clock origin

inline LoadConfig schedule_concurrency_load(int64_t n) {
  LoadConfig load;
  load.mode = LoadMode::kConcurrency;
  load.concurrency = n;
  return load;
}

}  // namespace convoy::test
