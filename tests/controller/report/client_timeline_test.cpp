// The client's lines of report.html's Server section: TTFT p50/p99 per bucket
// by first-token time and requests in flight averaged over each bucket, in bounded memory.
#include "controller/report/client_timeline.hpp"

#include <doctest/doctest.h>

#include <cstdint>

#include "controller/report/metrics.hpp"
#include "test_time.hpp"

using convoy::controller::ClientTimeline;
using convoy::controller::ClientTimePoint;

namespace {
constexpr int64_t kTimelineOrigin = 5 * kS;
}  // namespace

TEST_CASE("client timeline: TTFT p50 and p99 per bucket by first-token time") {
  ClientTimeline t;
  // Bucket 0: 1..100 ms. Bucket 2: one 250 ms TTFT, exact (its min and max).
  for (int64_t v = 1; v <= 100; ++v)
    t.add_ttft(kTimelineOrigin, kTimelineOrigin + 500 * kMs, v * kMs);
  t.add_ttft(kTimelineOrigin, kTimelineOrigin + 2 * kS + 1, 250 * kMs);
  const auto points = t.points();
  REQUIRE(points.size() == 3);
  CHECK(points[0].ttft_count == 100);
  REQUIRE(points[0].ttft_p50_ms.has_value());
  CHECK(*points[0].ttft_p50_ms == doctest::Approx(50).epsilon(0.05));
  CHECK(*points[0].ttft_p99_ms == doctest::Approx(99).epsilon(0.05));
  CHECK_FALSE(points[1].ttft_p50_ms.has_value());
  CHECK(points[2].start_s == doctest::Approx(2));
  CHECK(*points[2].ttft_p50_ms == doctest::Approx(250));
  CHECK(*points[2].ttft_p99_ms == doctest::Approx(250));
  SUBCASE("bins cover microseconds to half an hour") {
    CHECK(ClientTimeline::bin_of(0) == 0);
    CHECK(ClientTimeline::bin_of(1'000) == 0);
    CHECK(ClientTimeline::bin_of(int64_t{1} << 14) == ClientTimeline::kBinsPerOctave);
    CHECK(ClientTimeline::bin_of(INT64_MAX) == ClientTimeline::kBins - 1);
  }
}

TEST_CASE("client timeline: requests in flight averaged over each bucket") {
  ClientTimeline t;
  t.add_in_flight(kTimelineOrigin, kTimelineOrigin + 500 * kMs,
                  kTimelineOrigin + 3500 * kMs);  // 0.5 s to 3.5 s
  t.add_in_flight(kTimelineOrigin, kTimelineOrigin + 1000 * kMs, kTimelineOrigin + 1500 * kMs);
  t.add_in_flight(kTimelineOrigin, kTimelineOrigin + 3200 * kMs,
                  kTimelineOrigin + 3200 * kMs);  // nothing: no time
  const auto points = t.points();
  REQUIRE(points.size() == 4);
  CHECK(points[0].in_flight == doctest::Approx(0.5));
  CHECK(points[1].in_flight == doctest::Approx(1.5));
  CHECK(points[2].in_flight == doctest::Approx(1.0));
  CHECK(points[3].in_flight == doctest::Approx(0.5));
}

TEST_CASE("client timeline: a run longer than kMaxPoints buckets coarsens and keeps its time") {
  ClientTimeline t;
  t.add_in_flight(kTimelineOrigin, kTimelineOrigin, kTimelineOrigin + 100 * kS);
  t.add_ttft(kTimelineOrigin, kTimelineOrigin + 10 * kS, 30 * kMs);
  // 2999 s: the width doubles to 4 s (750 buckets); the first request's 100 s stay counted.
  t.add_in_flight(kTimelineOrigin, kTimelineOrigin, kTimelineOrigin + 2999 * kS);
  const auto points = t.points();
  CHECK(t.bucket_s() == doctest::Approx(4));
  REQUIRE(points.size() == 750);
  CHECK(points.size() <= ClientTimeline::kMaxPoints);
  double busy_s = 0;
  for (const ClientTimePoint& p : points) busy_s += p.in_flight * t.bucket_s();
  CHECK(busy_s == doctest::Approx(3099));
  CHECK(points[0].in_flight == doctest::Approx(2));
  CHECK(points[30].in_flight == doctest::Approx(1));
  CHECK(*points[2].ttft_p50_ms == doctest::Approx(30));
  const size_t bytes = t.memory_bytes();
  for (int i = 0; i < 1000; ++i) {
    t.add_in_flight(kTimelineOrigin, kTimelineOrigin + i * kS, kTimelineOrigin + (i + 5) * kS);
    t.add_ttft(kTimelineOrigin, kTimelineOrigin + i * kS, (1 + i) * kMs);
  }
  CHECK(t.memory_bytes() == bytes);
}

TEST_CASE("the aggregator's snapshot carries the client timeline of measured requests") {
  convoy::Config config;
  convoy::controller::MetricsAggregator agg(config);
  agg.set_origin_ns(kS);
  for (int i = 0; i < 4; ++i) {
    convoy::proto::Record r;
    r.sent_ns = kS + i * kS;
    r.first_byte_ns = r.first_token_ns = r.sent_ns + 100 * kMs * (i + 1);
    r.last_token_ns = r.first_token_ns;
    r.end_ns = r.sent_ns + 500 * kMs;
    r.output_tokens = 1;
    r.http_status = 200;
    if (i == 3) r.phase = convoy::proto::Phase::kWarmup;  // in no metric
    agg.add(r);
  }
  const auto s = agg.snapshot();
  CHECK(s.client_timeline_bucket_s == doctest::Approx(1));
  REQUIRE(s.client_timeline.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(s.client_timeline[i].in_flight == doctest::Approx(0.5));
    CHECK(*s.client_timeline[i].ttft_p50_ms == doctest::Approx(100.0 * (i + 1)));
  }
}
