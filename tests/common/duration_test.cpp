// common/duration.hpp: the one conversion to nanoseconds saturates instead of
// wrapping (llround of 1e300 s was LLONG_MIN: a duration that ended at once, a rate of 1e-300
// that flooded), and a positive timeout never becomes libcurl's 0 = "no timeout".
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "common/duration.hpp"

using convoy::kMaxDurationNs;
using convoy::ms_to_ns;
using convoy::seconds_to_limit_ms;
using convoy::seconds_to_ns;

TEST_CASE("seconds_to_ns rounds to the nearest ns and saturates beyond about 73 years") {
  CHECK(seconds_to_ns(1.5) == 1'500'000'000);
  CHECK(seconds_to_ns(0.1) == 100'000'000);
  CHECK(seconds_to_ns(1e-10) == 0);
  CHECK(seconds_to_ns(-2) == -2'000'000'000);
  CHECK(seconds_to_ns(1e300) == kMaxDurationNs);
  CHECK(seconds_to_ns(1e10) == kMaxDurationNs);  // 1e19 ns: past int64
  CHECK(seconds_to_ns(-1e300) == -kMaxDurationNs);
  CHECK(seconds_to_ns(std::numeric_limits<double>::infinity()) == kMaxDurationNs);
  CHECK(seconds_to_ns(std::nan("")) == 0);
  // A saturated duration added to a clock reading still fits int64.
  CHECK(seconds_to_ns(1e300) + (int64_t{1} << 61) > 0);
}

TEST_CASE("ms_to_ns is the same conversion in milliseconds") {
  CHECK(ms_to_ns(2.5) == 2'500'000);
  CHECK(ms_to_ns(1e300) == kMaxDurationNs);
  CHECK(ms_to_ns(0) == 0);
}

TEST_CASE("seconds_to_limit_ms keeps a positive timeout positive") {
  CHECK(seconds_to_limit_ms(0.0004) == 1);  // was llround(0.4) = 0: no timeout at all
  CHECK(seconds_to_limit_ms(0.0015) == 2);
  CHECK(seconds_to_limit_ms(600) == 600'000);
  CHECK(seconds_to_limit_ms(0) == 0);
  CHECK(seconds_to_limit_ms(-1) == 0);
  CHECK(seconds_to_limit_ms(1e300) == kMaxDurationNs / 1'000'000 + 1);
}
