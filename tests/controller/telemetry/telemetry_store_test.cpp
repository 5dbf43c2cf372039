// The series store (controller/telemetry/series_store.hpp): statistics over the measured window
// from hand-fed scrapes, with no clock and no network.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>
#include <vector>

#include "controller/telemetry/known_metrics.hpp"
#include "controller/telemetry/series_store.hpp"
#include "series_store_test_util.hpp"

using namespace convoy::telemetry;
using namespace convoy::test;

namespace {

SeriesStore make_store(int64_t max_series = 10000) {
  return SeriesStore({{"server", "http://127.0.0.1:1/metrics"}}, max_series);
}

}  // namespace

TEST_CASE("server metrics: gauges get min, avg, p50, p99, max and last over the window only") {
  SeriesStore store = make_store();
  feed(store, 0, "# TYPE q gauge\nq 100\n");  // before the window: left out
  store.start_window(1 * kSecond);
  for (int i = 1; i <= 10; ++i) {
    feed(store, i * kSecond, "# TYPE q gauge\nq " + std::to_string(i) + "\n");
  }
  const auto d = summary(store);
  const auto& q = metric(d, "q");
  CHECK(std::string(q["type"].GetString()) == "gauge");
  CHECK(q["samples"].GetInt64() == 10);
  CHECK(q["min"].GetDouble() == 1);
  CHECK(q["max"].GetDouble() == 10);
  CHECK(q["avg"].GetDouble() == doctest::Approx(5.5));
  CHECK(q["p50"].GetDouble() == 5);
  CHECK(q["p99"].GetDouble() == 10);
  CHECK(q["last"].GetDouble() == 10);
  CHECK(d["window"]["start_ns"].GetInt64() == kSecond);
  CHECK(d["window"]["end_ns"].GetInt64() == 10 * kSecond);
  CHECK(d["endpoints"][0]["scrapes"].GetInt64() == 11);
}

TEST_CASE("server metrics: a counter's delta and rate survive a reset") {
  SeriesStore store = make_store();
  feed(store, 0, "# TYPE reqs_total counter\nreqs_total 1000\n");  // the baseline
  store.start_window(kSecond / 2);
  feed(store, 1 * kSecond, "# TYPE reqs_total counter\nreqs_total 1010\n");
  feed(store, 2 * kSecond, "# TYPE reqs_total counter\nreqs_total 1030\n");
  feed(store, 3 * kSecond, "# TYPE reqs_total counter\nreqs_total 5\n");  // the server restarted
  feed(store, 4 * kSecond, "# TYPE reqs_total counter\nreqs_total 45\n");
  const auto d = summary(store);
  const auto& c = metric(d, "reqs_total");
  CHECK(std::string(c["type"].GetString()) == "counter");
  // 10 + 20 since the baseline, 5 counted from zero after the reset, then 40.
  CHECK(c["delta"].GetDouble() == 75);
  CHECK(c["resets"].GetInt64() == 1);
  CHECK(c["rate_per_s"].GetDouble() == doctest::Approx(75.0 / 4));
  CHECK(c["last"].GetDouble() == 45);

  SUBCASE("without a baseline the first sample in the window is the start") {
    SeriesStore fresh = make_store();
    fresh.start_window(0);
    feed(fresh, 1 * kSecond, "# TYPE n counter\nn_total 7\n");
    feed(fresh, 3 * kSecond, "# TYPE n counter\nn_total 10\n");
    const auto f = summary(fresh);
    CHECK(metric(f, "n_total")["delta"].GetDouble() == 3);
    CHECK(metric(f, "n_total")["rate_per_s"].GetDouble() == doctest::Approx(1.5));
  }
}

TEST_CASE("server metrics: histogram count, sum and percentiles come from bucket deltas") {
  auto histogram = [](int a, int b, int c, double sum) {
    return "# TYPE ttft histogram\n"
           "ttft_bucket{model=\"m\",le=\"0.1\"} " +
           std::to_string(a) + "\n" + "ttft_bucket{model=\"m\",le=\"0.5\"} " + std::to_string(b) +
           "\n" + "ttft_bucket{model=\"m\",le=\"+Inf\"} " + std::to_string(c) + "\n" +
           "ttft_sum{model=\"m\"} " + std::to_string(sum) + "\n" + "ttft_count{model=\"m\"} " +
           std::to_string(c) + "\n";
  };
  SeriesStore store = make_store();
  feed(store, 0, histogram(50, 50, 50, 2.0));  // 50 fast requests before the window
  store.start_window(1);
  // In the window: 10 more under 0.1 s, 80 between 0.1 and 0.5 s, 10 above.
  feed(store, kSecond, histogram(60, 140, 150, 30.0));
  const auto d = summary(store);
  const auto& h = metric(d, "ttft");
  CHECK(std::string(h["type"].GetString()) == "histogram");
  CHECK(h["labels"].HasMember("model"));
  CHECK_FALSE(h["labels"].HasMember("le"));
  CHECK(h["count"].GetDouble() == 100);
  CHECK(h["sum"].GetDouble() == doctest::Approx(28.0));
  CHECK(h["avg"].GetDouble() == doctest::Approx(0.28));
  // Rank 50 of 100 lies 40/80 into the (0.1, 0.5] bucket: 0.1 + 0.4 * 0.5.
  CHECK(h["p50"].GetDouble() == doctest::Approx(0.3));
  CHECK(h["p90"].GetDouble() == doctest::Approx(0.5));
  CHECK(h["p99"].GetDouble() == doctest::Approx(0.5));  // in +Inf: the highest finite bound
  CHECK(h["buckets"].Size() == 3);
  CHECK(h["buckets"][0]["count"].GetDouble() == 10);
  CHECK(std::string(h["buckets"][2]["le"].GetString()) == "+Inf");
  // The bucket series are folded into the histogram, not listed on their own.
  for (const auto& m : d["metrics"].GetArray()) CHECK(std::string(m["name"].GetString()) == "ttft");
}

TEST_CASE("bucket percentiles follow histogram_quantile") {
  using B = std::vector<std::pair<double, double>>;
  CHECK(std::isnan(bucket_percentile(B{}, 0.5)));
  CHECK(std::isnan(bucket_percentile(B{{1, 0}, {INFINITY, 0}}, 0.5)));
  CHECK(bucket_percentile(B{{1, 10}, {INFINITY, 10}}, 0.5) == doctest::Approx(0.5));
  CHECK(bucket_percentile(B{{1, 0}, {2, 10}, {INFINITY, 10}}, 0.25) == doctest::Approx(1.25));
  CHECK(bucket_percentile(B{{1, 5}, {INFINITY, 10}}, 0.9) == 1);
  CHECK(std::isnan(bucket_percentile(B{{INFINITY, 10}}, 0.5)));
}

TEST_CASE("server metrics: series past max_series are dropped and counted") {
  SeriesStore store = make_store(3);
  std::string text = "# TYPE g gauge\n";
  for (int i = 0; i < 5; ++i) text += "g{i=\"" + std::to_string(i) + "\"} 1\n";
  int64_t dropped = 0;
  const int64_t kept = store.add_scrape(0, 0, scrape_of(text), 0, "", &dropped);
  CHECK(kept == 3);
  CHECK(dropped == 2);
  store.add_scrape(0, kSecond, scrape_of(text), 0, "", &dropped);
  CHECK(store.size() == 3);
  const auto d = summary(store);
  CHECK(d["endpoints"][0]["dropped_series"].GetInt64() == 2);  // per scrape, not summed
  CHECK(d["metrics"].Size() == 3);
  CHECK(d["max_series"].GetInt64() == 3);
}

TEST_CASE("server metrics: a gauge's memory stays bounded over a long run") {
  ValueSample values;
  for (int i = 0; i < 100000; ++i) values.add(static_cast<double>(i % 100));
  CHECK(values.size() <= ValueSample::kCapacity);
  CHECK(values.size() >= ValueSample::kCapacity / 2);
  CHECK(values.percentile(0.5) == doctest::Approx(50).epsilon(0.1));
  CHECK(values.percentile(1.0) <= 99);
}

TEST_CASE("server metrics: malformed lines and errors are reported per endpoint") {
  SeriesStore store({{"a", "http://a/metrics"}, {"b", "http://b/metrics"}}, 100);
  store.add_scrape(0, 0, scrape_of("x 1\n"), 2, "line 3: bad value \"?\"");
  store.add_error(1, "Connection refused");
  store.add_error(1, "HTTP 503");
  const auto d = summary(store);
  CHECK(d["endpoints"][0]["malformed_lines"].GetInt64() == 2);
  CHECK(std::string(d["endpoints"][0]["first_malformed"].GetString()) == "line 3: bad value \"?\"");
  CHECK(d["endpoints"][0]["last_error"].IsNull());
  CHECK(d["endpoints"][1]["errors"].GetInt64() == 2);
  CHECK(d["endpoints"][1]["scrapes"].GetInt64() == 2);
  CHECK(std::string(d["endpoints"][1]["last_error"].GetString()) == "HTTP 503");
  CHECK(std::string(metric(d, "x")["endpoint"].GetString()) == "a");
}

TEST_CASE("server metrics: the known families are marked headline with a title and unit") {
  CHECK(known_metric("vllm:num_requests_waiting") != nullptr);
  CHECK(known_metric("vllm:num_preemptions_total") != nullptr);  // prometheus_client's _total
  CHECK(known_metric("DCGM_FI_DEV_GPU_UTIL")->unit == "%");
  CHECK(known_metric("node_cpu_seconds_total") == nullptr);
  SeriesStore store = make_store();
  feed(store, 0,
       "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 0.5\n"
       "# TYPE other gauge\nother 1\n");
  const auto d = summary(store);
  const auto& kv = metric(d, "vllm:kv_cache_usage_perc");
  CHECK(kv["headline"].GetBool());
  CHECK(std::string(kv["unit"].GetString()) == "fraction");
  CHECK_FALSE(metric(d, "other").HasMember("headline"));
}
