// The live view's window: per-second buckets over the last five seconds, a fixed latency
// histogram, late records in the totals only, and the most frequent error kinds.
#include <doctest/doctest.h>

#include <cmath>

#include "controller/run/live_window.hpp"
#include "test_time.hpp"

using convoy::controller::LiveHistogram;
using convoy::controller::LiveWindow;
using convoy::proto::ErrorKind;

TEST_CASE("live window: a latency histogram's quantiles are within its bucket width") {
  LiveHistogram h;
  CHECK_FALSE(h.quantile_ns(0.5).has_value());
  for (int64_t v = 1; v <= 1000; ++v) h.add(v * kMs);  // 1..1000 ms
  CHECK(h.count() == 1000);
  const double p50 = *h.quantile_ns(0.50);
  const double p99 = *h.quantile_ns(0.99);
  CHECK(std::abs(p50 - 500.0 * kMs) <= 500.0 * kMs * 0.0625);
  CHECK(std::abs(p99 - 990.0 * kMs) <= 990.0 * kMs * 0.0625);
  SUBCASE("every value lies in the bucket whose midpoint reports it") {
    for (int64_t v : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{1023}, 50 * kMs, 3600 * kS}) {
      const double mid = LiveHistogram::bucket_midpoint(LiveHistogram::bucket_of(v));
      CHECK(std::abs(mid - static_cast<double>(v)) <= static_cast<double>(v) * 0.0625 + 0.5);
    }
  }
  SUBCASE("merge and clear") {
    LiveHistogram other;
    other.add(kS);
    h.merge(other);
    CHECK(h.count() == 1001);
    h.clear();
    CHECK(h.count() == 0);
    CHECK_FALSE(h.quantile_ns(0.99).has_value());
  }
}

TEST_CASE("live window: rates and quantiles cover the last five seconds") {
  LiveWindow w;
  w.begin(10 * kS);  // the measure's origin
  // Seconds 0..9 of the measure: second s has s+1 ok requests of 100 tokens, TTFT (s+1)*10 ms.
  for (int64_t s = 0; s < 10; ++s) {
    for (int64_t i = 0; i <= s; ++i) {
      w.add(10 * kS + s * kS + i * kMs, true, 100, (s + 1) * 10 * kMs, 5.0 * kMs);
    }
  }
  w.add(10 * kS + 9 * kS, false, 0, std::nullopt, std::nullopt);
  const auto stats = w.stats(10 * kS + 9 * kS + kS / 2);  // 9.5 s in: seconds 5..9
  CHECK(stats.seconds == doctest::Approx(4.5));
  CHECK(stats.ok == 6 + 7 + 8 + 9 + 10);
  CHECK(stats.failed == 1);
  CHECK(stats.requests_per_s == doctest::Approx(41 / 4.5));
  CHECK(stats.output_tokens_per_s == doctest::Approx(4000 / 4.5));
  // TTFTs 60..100 ms, 10 ms having most weight: the p99 lies in 100 ms's bucket.
  CHECK(*stats.ttft_p99_ms == doctest::Approx(100).epsilon(0.0625));
  CHECK(*stats.itl_p50_ms == doctest::Approx(5).epsilon(0.0625));
  CHECK(w.ok_total() == 55);
  CHECK(w.failed_total() == 1);

  SUBCASE("a record older than the ring counts in the totals only") {
    w.add(10 * kS, true, 100, kS, std::nullopt);  // second 0: its bucket holds second 8 now
    CHECK(w.ok_total() == 56);
    CHECK(w.stats(10 * kS + 9 * kS + kS / 2).ok == stats.ok);
  }
  SUBCASE("the first seconds: the window is as long as the measure") {
    LiveWindow fresh;
    fresh.begin(0);
    fresh.add(kS / 2, true, 10, kMs, std::nullopt);
    const auto early = fresh.stats(kS);
    CHECK(early.seconds == doctest::Approx(1.0));
    CHECK(early.requests_per_s == doctest::Approx(1.0));
  }
}

TEST_CASE("live window: the most frequent error kinds, HTTP statuses apart") {
  LiveWindow w;
  w.begin(0);
  for (int i = 0; i < 3; ++i) w.add_error(ErrorKind::kHttpStatus, 503);
  for (int i = 0; i < 5; ++i) w.add_error(ErrorKind::kConnect, 0);
  w.add_error(ErrorKind::kHttpStatus, 429);
  w.add_error(ErrorKind::kTimeoutMidStream, 0);
  w.add_error(ErrorKind::kTimeoutMidStream, 0);
  const auto top = w.top_errors();
  CHECK(convoy::controller::error_label(top[0]) == "connect");
  CHECK(top[0].count == 5);
  CHECK(convoy::controller::error_label(top[1]) == "http 503");
  CHECK(top[1].count == 3);
  CHECK(convoy::controller::error_label(top[2]) == "timeout_mid_stream");
  CHECK(top[2].count == 2);
  SUBCASE("statuses beyond its slots count under http_status") {
    for (int64_t status = 500; status < 520; ++status) w.add_error(ErrorKind::kHttpStatus, status);
    int64_t total = 0;
    for (const auto& e : w.top_errors()) total += e.count;
    CHECK(total >= 5 + 3 + 2);
  }
}
