// judge_slo: a capacity search step's SLO over its metrics snapshot.
#include <doctest/doctest.h>

#include <string>

#include "controller/report/slo_check.hpp"

using convoy::SloSpec;
using convoy::controller::judge_slo;
using convoy::controller::MetricsSnapshot;
using convoy::controller::MetricStats;
using convoy::controller::slo_statistic;

namespace {

MetricStats stats(const char* tag, const char* unit, double p50, double p99, double avg) {
  MetricStats s;
  s.tag = tag;
  s.unit = unit;
  s.count = 100;
  s.avg = avg;
  s.min = p50 / 2;
  s.max = p99 * 2;
  s.percentiles[4] = p50;  // kReportedPercentiles: 1 5 10 25 50 75 90 95 99
  s.percentiles[8] = p99;
  return s;
}

MetricsSnapshot snapshot(int64_t ok, int64_t errors) {
  MetricsSnapshot m;
  m.request_count = ok;
  m.error_request_count = errors;
  m.metrics.push_back(stats("time_to_first_token", "ms", 120, 480, 150));
  m.metrics.push_back(stats("inter_token_latency", "ms", 10, 42, 12));
  m.metrics.push_back(stats("output_token_throughput_per_user", "tokens/sec", 90, 120, 95));
  return m;
}

}  // namespace

TEST_CASE("slo check: every named statistic within its limit meets the SLO") {
  SloSpec slo;
  slo.limits["time_to_first_token"]["p99"] = 500;
  slo.limits["inter_token_latency"]["p99"] = 50;
  slo.limits["time_to_first_token"]["avg"] = 200;
  slo.error_rate = 0.01;
  const auto j = judge_slo(slo, snapshot(1000, 5));
  CHECK(j.met);
  CHECK(j.failures.empty());
}

TEST_CASE("slo check: each limit missed is a failure that names tag, statistic and values") {
  SloSpec slo;
  slo.limits["time_to_first_token"]["p99"] = 400;
  slo.limits["inter_token_latency"]["p50"] = 5;
  slo.error_rate = 0.001;
  const auto j = judge_slo(slo, snapshot(1000, 5));
  CHECK_FALSE(j.met);
  REQUIRE(j.failures.size() == 3);
  CHECK(j.failures[0] == "inter_token_latency p50 10 ms > 5 ms");  // tags in name order
  CHECK(j.failures[1] == "time_to_first_token p99 480 ms > 400 ms");
  CHECK(j.failures[2].rfind("error_rate 0.004975 > 0.001", 0) == 0);
}

TEST_CASE("slo check: per-user throughput must be reached, not stayed under") {
  SloSpec slo;
  slo.limits["output_token_throughput_per_user"]["p50"] = 100;
  CHECK_FALSE(judge_slo(slo, snapshot(10, 0)).met);
  slo.limits["output_token_throughput_per_user"]["p50"] = 80;
  CHECK(judge_slo(slo, snapshot(10, 0)).met);
}

TEST_CASE("slo check: no successful request, or a metric not measured, cannot meet it") {
  SloSpec slo;
  slo.limits["time_to_first_token"]["p99"] = 500;
  MetricsSnapshot none;
  none.error_request_count = 40;
  auto j = judge_slo(slo, none);
  CHECK_FALSE(j.met);
  CHECK(j.failures.front() == "no successful request");
  slo.limits.clear();
  slo.limits["time_to_second_token"]["p99"] = 500;
  j = judge_slo(slo, snapshot(10, 0));
  CHECK_FALSE(j.met);
  CHECK(j.failures.front() == "time_to_second_token p99: not measured");
}

TEST_CASE("slo check: statistics are read by their summary.json names") {
  const MetricStats s = stats("time_to_first_token", "ms", 120, 480, 150);
  CHECK(slo_statistic(s, "avg") == 150);
  CHECK(slo_statistic(s, "p99") == 480);
  CHECK(slo_statistic(s, "p50") == 120);
  CHECK(slo_statistic(s, "max") == 960);
  CHECK_FALSE(slo_statistic(s, "p42").has_value());
  CHECK_FALSE(slo_statistic(s, "median").has_value());
  CHECK_FALSE(slo_statistic(s, "p").has_value());
}
