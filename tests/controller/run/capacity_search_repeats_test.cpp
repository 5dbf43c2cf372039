// load.search.repeats: a step whose result lies within the noise of the SLO runs again and the
// majority of its runs decides; the answer carries how many runs met the SLO. And the noise band
// itself (within_slo_noise: 10% of a limit either side).
#include <doctest/doctest.h>

#include <vector>

#include "controller/run/capacity_search.hpp"

using convoy::LoadMode;
using convoy::SearchConfig;
using convoy::SloSpec;
using convoy::controller::CapacitySearch;
using convoy::controller::MetricsSnapshot;
using convoy::controller::MetricStats;
using convoy::controller::within_slo_noise;

namespace {

SearchConfig repeats_search(int64_t repeats) {
  SearchConfig c;
  c.vary = LoadMode::kConcurrency;
  c.low = 1;
  c.high = 64;
  c.step_duration_s = 10;
  c.repeats = repeats;
  return c;
}

// A snapshot whose TTFT p99 is `p99_ms` (of 100 successes, `errors` failures).
MetricsSnapshot ttft_snapshot(double p99_ms, int64_t errors = 0) {
  MetricsSnapshot m;
  m.request_count = 100;
  m.error_request_count = errors;
  MetricStats s;
  s.tag = "time_to_first_token";
  s.unit = "ms";
  s.count = 100;
  s.percentiles[8] = p99_ms;  // kReportedPercentiles: 1 5 10 25 50 75 90 95 99
  m.metrics.push_back(s);
  return m;
}

}  // namespace

TEST_CASE("capacity search: a step within the SLO's noise runs again until a majority agrees") {
  SUBCASE("met, missed, met: met in 2 of 3 runs") {
    CapacitySearch s(repeats_search(2));
    CHECK(s.next() == 1);
    CHECK(s.next_run() == 1);
    s.record(1, true, /*within_noise=*/true);
    CHECK(s.next() == 1);  // the same value again
    CHECK(s.next_run() == 2);
    s.record(1, false, true);
    CHECK(s.next() == 1);
    CHECK(s.next_run() == 3);
    s.record(1, true, false);
    CHECK(s.next() == 64);  // decided: met, so high is next
    CHECK(s.steps() == 1);
    const auto v = s.verdict_of(1.0);
    REQUIRE(v.has_value());
    CHECK(v->runs == 3);
    CHECK(v->met_runs == 2);
    CHECK(v->met);
    CHECK(s.max_meeting_slo() == 1);
  }
  SUBCASE("two agreeing runs are already a majority of three") {
    CapacitySearch s(repeats_search(2));
    s.record(1, false, true);
    s.record(1, false, true);
    CHECK_FALSE(s.next().has_value());  // low missed: the search is over
    CHECK(s.verdict_of(1.0)->runs == 2);
    CHECK(s.min_failing() == 1);
  }
  SUBCASE("a step outside the noise runs once") {
    CapacitySearch s(repeats_search(2));
    s.record(1, true, false);
    CHECK(s.next() == 64);
    CHECK(s.verdict_of(1.0)->runs == 1);
  }
  SUBCASE("repeats 0: never again") {
    CapacitySearch s(repeats_search(0));
    s.record(1, true, true);
    CHECK(s.next() == 64);
  }
  SUBCASE("repeats 1: a tie misses") {
    CapacitySearch s(repeats_search(1));
    s.record(1, true, true);
    CHECK(s.next() == 1);
    s.record(1, false, true);
    CHECK_FALSE(s.next().has_value());
    CHECK_FALSE(s.verdict_of(1.0)->met);
    CHECK(s.verdict_of(1.0)->met_runs == 1);
  }
  CHECK_FALSE(CapacitySearch(repeats_search(2)).verdict_of(std::nullopt).has_value());
}

TEST_CASE("within_slo_noise: 10% of a limit either side") {
  SloSpec slo;
  slo.limits["time_to_first_token"]["p99"] = 500;
  CHECK(within_slo_noise(slo, ttft_snapshot(450)));
  CHECK(within_slo_noise(slo, ttft_snapshot(549)));
  CHECK_FALSE(within_slo_noise(slo, ttft_snapshot(449)));
  CHECK_FALSE(within_slo_noise(slo, ttft_snapshot(551)));
  MetricsSnapshot none = ttft_snapshot(500);
  none.request_count = 0;
  CHECK_FALSE(within_slo_noise(slo, none));  // nothing measured misses plainly

  SUBCASE("the error rate's limit has the same band, none at 0") {
    SloSpec errors;
    errors.error_rate = 0.1;
    CHECK(within_slo_noise(errors, ttft_snapshot(10, 11)));  // 11 of 111: 0.099
    CHECK_FALSE(within_slo_noise(errors, ttft_snapshot(10, 0)));
    errors.error_rate = 0;
    CHECK_FALSE(within_slo_noise(errors, ttft_snapshot(10, 0)));
  }
}
