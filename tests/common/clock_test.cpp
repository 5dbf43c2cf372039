// common/clock.hpp: the one steady clock.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>

#include "common/clock.hpp"

TEST_CASE("steady clock: the clock std::chrono::steady_clock reads, never going back") {
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  using std::chrono::steady_clock;
  const int64_t chrono_before =
      duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
  const int64_t a = convoy::steady_now_ns();
  const int64_t b = convoy::steady_now_ns();
  const int64_t chrono_after =
      duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
  CHECK(a >= chrono_before);
  CHECK(b >= a);
  CHECK(chrono_after >= b);
}
