// CircuitBreaker (load.abort_on): a sliding window over ended measured requests.
#include <doctest/doctest.h>

#include <string>

#include "controller/run/circuit_breaker.hpp"
#include "test_time.hpp"

using convoy::AbortOnConfig;
using convoy::controller::CircuitBreaker;

namespace {
constexpr int64_t kBreakerT0 = 100 * kS;
}  // namespace

TEST_CASE("circuit breaker: trips once the window's error rate reaches the limit") {
  CircuitBreaker b(AbortOnConfig{0.5, 10, 50});
  for (int i = 0; i < 49; ++i) b.add(kBreakerT0 + i * kMs, true);
  CHECK_FALSE(b.check(kBreakerT0 + kS).has_value());  // 49 < min_requests: no judgement
  b.add(kBreakerT0 + 50 * kMs, true);
  auto why = b.check(kBreakerT0 + kS);
  REQUIRE(why.has_value());
  CHECK(why->find("error rate 1 over the last 10 s (50 requests) >= 0.5") != std::string::npos);
  CHECK(b.tripped());
  CHECK_FALSE(b.check(kBreakerT0 + 2 * kS).has_value());  // once
}

TEST_CASE("circuit breaker: old requests leave the window") {
  CircuitBreaker b(AbortOnConfig{0.5, 10, 10});
  for (int i = 0; i < 100; ++i) b.add(kBreakerT0 + i * kMs, true);  // a burst of failures at 0 s
  for (int i = 0; i < 60; ++i) b.add(kBreakerT0 + 9 * kS + i * kMs, false);  // then successes
  // At 10.05 s the failures (before 0.05 s) are out of the window: 0 failed of 60 + 50.
  CHECK_FALSE(b.check(kBreakerT0 + 10 * kS + 50 * kMs).has_value());
  CHECK(b.window_requests() == 60 + 50);
  CHECK_FALSE(b.check(kBreakerT0 + 11 * kS).has_value());
  CHECK(b.window_requests() == 60);
  SUBCASE("successes keep it closed") {
    CircuitBreaker ok(AbortOnConfig{0.5, 10, 10});
    for (int i = 0; i < 100; ++i) ok.add(kBreakerT0 + i * kMs, i % 3 == 0);  // 34% failed
    CHECK_FALSE(ok.check(kBreakerT0 + kS).has_value());
  }
}
