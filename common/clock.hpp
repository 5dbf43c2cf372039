// The one steady clock every convoy process stamps times with: the worker's event loop, its
// request timestamps and the controller's run loop read it, so that intervals computed across
// them (e.g. a record's times against the run's phase marks) share one timeline per host.
#pragma once

#include <time.h>

#include <cstdint>

namespace convoy {

// Steady-clock nanoseconds: CLOCK_MONOTONIC, the clock std::chrono::steady_clock reads on Linux.
inline int64_t steady_now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<int64_t>(ts.tv_nsec);
}

}  // namespace convoy
