// The one conversion from a duration in (floating) seconds or milliseconds to int64 nanoseconds.
// `static_cast<int64_t>(std::llround(s * 1e9))` is undefined past 9.2e9 s and for NaN, and in
// practice gave LLONG_MIN: a duration of 1e300 s ended at once, a rate of 1e-300 sent a flood,
// an interval of 1e10 s looped a thread forever: these saturate instead: the
// result is the nearest nanosecond, clamped to [-kMaxDurationNs, kMaxDurationNs], and NaN is 0.
// kMaxDurationNs (about 73 years) leaves room to add a few such durations to a clock reading
// without overflow. The config's ranges (controller/config/limits.hpp) keep real values far
// inside; these make any value that still gets here harmless.
#pragma once

#include <cmath>
#include <cstdint>

namespace convoy {

inline constexpr int64_t kMaxDurationNs = int64_t{1} << 61;

// Seconds to nanoseconds, rounded to nearest, saturating; NaN -> 0.
inline int64_t seconds_to_ns(double seconds) noexcept {
  const double ns = seconds * 1e9;
  if (std::isnan(ns)) return 0;
  constexpr auto kMax = static_cast<double>(kMaxDurationNs);
  if (ns >= kMax) return kMaxDurationNs;
  if (ns <= -kMax) return -kMaxDurationNs;
  return static_cast<int64_t>(std::llround(ns));
}

// Milliseconds to nanoseconds, the same way.
inline int64_t ms_to_ns(double ms) noexcept { return seconds_to_ns(ms / 1e3); }

// Seconds to whole milliseconds for an API where 0 means "no limit" (libcurl's timeouts): a
// positive duration is at least 1 ms (rounded up), never 0; zero or less is 0.
inline int64_t seconds_to_limit_ms(double seconds) noexcept {
  const int64_t ns = seconds_to_ns(seconds);
  if (ns <= 0) return 0;
  return (ns + 999'999) / 1'000'000;
}

}  // namespace convoy
