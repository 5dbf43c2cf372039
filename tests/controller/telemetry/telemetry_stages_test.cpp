// The series store's per-stage statistics, roles and headline timelines
// (controller/telemetry/series_store.hpp), from hand-fed scrapes: no clock, no network.
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

// A gauge `g`, a counter `c_total` and a histogram `h` (buckets 1 and +Inf).
std::string exposition(double gauge, double counter, double fast, double all) {
  return "# TYPE g gauge\ng " + std::to_string(gauge) + "\n# TYPE c counter\nc_total " +
         std::to_string(counter) + "\n# TYPE h histogram\nh_bucket{le=\"1\"} " +
         std::to_string(fast) + "\nh_bucket{le=\"+Inf\"} " + std::to_string(all) + "\nh_sum " +
         std::to_string(all) + "\nh_count " + std::to_string(all) + "\n";
}

}  // namespace

TEST_CASE("server metrics: each stage gets the statistics of its own window, settle excluded") {
  SeriesStore store({{"server", "http://127.0.0.1:1/metrics"}}, 1000);
  feed(store, 0, exposition(0, 100, 0, 0));  // before the window: the baseline
  store.start_window(kSecond);
  // Stage "base" from 1 s to 5 s: the gauge reads 1..4, the counter grows 10 a scrape, two
  // observations under 1 s per scrape.
  store.mark_stage("base", kSecond);
  for (int i = 1; i <= 4; ++i) {
    feed(store, i * kSecond, exposition(i, 100 + 10 * i, 2 * i, 2 * i));
  }
  // Its settle from 5 s to 7 s: huge values that belong to no stage.
  store.mark_settle(5 * kSecond);
  feed(store, 5 * kSecond, exposition(1000, 1000, 8, 500));
  feed(store, 6 * kSecond, exposition(1000, 2000, 8, 1000));
  // Stage "spike" from 7 s on: the gauge reads 50, the counter grows 100 a scrape, one slow
  // observation per scrape.
  store.mark_stage("spike", 7 * kSecond);
  for (int i = 7; i <= 9; ++i) {
    feed(store, i * kSecond, exposition(50, 2000 + 100 * (i - 6), 8, 1000 + (i - 6)));
  }
  const auto d = summary(store);
  REQUIRE(d["stages"].Size() == 2);
  CHECK(d["stages"][0]["end_ns"].GetInt64() == 5 * kSecond);
  CHECK(d["stages"][1]["end_ns"].IsNull());

  const auto& g = metric(d, "g");
  REQUIRE(g["stages"].Size() == 2);
  const auto& g0 = g["stages"][0];
  CHECK(std::string(g0["name"].GetString()) == "base");
  CHECK(g0["samples"].GetInt64() == 4);
  CHECK(g0["min"].GetDouble() == 1);
  CHECK(g0["max"].GetDouble() == 4);
  CHECK(g0["avg"].GetDouble() == doctest::Approx(2.5));
  CHECK(g0["last"].GetDouble() == 4);
  const auto& g1 = g["stages"][1];
  CHECK(std::string(g1["name"].GetString()) == "spike");
  CHECK(g1["samples"].GetInt64() == 3);
  CHECK(g1["max"].GetDouble() == 50);  // the settle's 1000 is in no stage
  CHECK(g1["p99"].GetDouble() == 50);
  CHECK(g["max"].GetDouble() == 1000);  // the whole window still has it

  const auto& c = metric(d, "c_total");
  CHECK(c["stages"][0]["delta"].GetDouble() == 40);
  CHECK(c["stages"][0]["rate_per_s"].GetDouble() == doctest::Approx(10));  // from the baseline
  CHECK(c["stages"][1]["delta"].GetDouble() == 300);  // from the settle's last value
  CHECK(c["stages"][1]["rate_per_s"].GetDouble() == doctest::Approx(100));
  CHECK(c["delta"].GetDouble() == 2200);

  const auto& h = metric(d, "h");
  REQUIRE(h["stages"].Size() == 2);
  CHECK(h["stages"][0]["count"].GetDouble() == 8);
  CHECK(h["stages"][0]["p99"].GetDouble() <= 1);
  CHECK(h["stages"][1]["count"].GetDouble() == 3);
  CHECK(h["stages"][1]["buckets"][0]["count"].GetDouble() == 0);  // none under 1 s
  CHECK(h["stages"][1]["p50"].GetDouble() == 1);  // in +Inf: the highest finite bound
  CHECK(h["count"].GetDouble() == 1003);
}

TEST_CASE("server metrics: without stages no entry has a stages list") {
  SeriesStore store({{"server", "http://127.0.0.1:1/metrics"}}, 1000);
  store.start_window(0);
  feed(store, kSecond, exposition(1, 1, 1, 1));
  const auto d = summary(store);
  CHECK(d["stages"].Size() == 0);
  for (const auto& m : d["metrics"].GetArray()) CHECK_FALSE(m.HasMember("stages"));
}

TEST_CASE("server metrics: a series first seen in a later stage reports null in the earlier") {
  SeriesStore store({{"server", "http://127.0.0.1:1/metrics"}}, 1000);
  store.start_window(0);
  store.mark_stage("one", 0);
  feed(store, kSecond, "# TYPE a gauge\na 1\n");
  store.mark_stage("two", 2 * kSecond);  // no settle: the next stage ends the first
  feed(store, 3 * kSecond, "# TYPE a gauge\na 2\n# TYPE b gauge\nb 7\n");
  const auto d = summary(store);
  CHECK(d["stages"][0]["end_ns"].GetInt64() == 2 * kSecond);
  const auto& b = metric(d, "b");
  CHECK(b["stages"][0]["samples"].GetInt64() == 0);
  CHECK(b["stages"][0]["min"].IsNull());
  CHECK(b["stages"][1]["min"].GetDouble() == 7);
  CHECK(metric(d, "a")["stages"][0]["last"].GetDouble() == 1);
  CHECK(metric(d, "a")["stages"][1]["last"].GetDouble() == 2);
}

TEST_CASE("server metrics: vLLM families as prometheus_client writes them carry a role") {
  // vLLM's /metrics (names from vllm/v1/metrics/loggers.py, labels model_name and engine) as
  // prometheus_client's generate_latest() writes 0.0.4 text (prometheus/client_python
  // prometheus_client/exposition.py): a counter's TYPE line and sample named NAME_total, every
  // `_created` sample in a gauge family of its own after the family, labels sorted.
  const std::string text =
      "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
      "# TYPE vllm:num_requests_waiting gauge\n"
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 3.0\n"
      "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
      "# TYPE vllm:kv_cache_usage_perc gauge\n"
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
      "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n"
      "# TYPE vllm:num_preemptions_total counter\n"
      "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 2.0\n"
      "# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.\n"
      "# TYPE vllm:num_preemptions_created gauge\n"
      "vllm:num_preemptions_created{engine=\"0\",model_name=\"m\"} 1.7e+09\n"
      "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n"
      "# TYPE vllm:time_to_first_token_seconds histogram\n"
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.1\",model_name=\"m\"} 1.0\n"
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 2.0\n"
      "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} 2.0\n"
      "vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m\"} 0.5\n"
      "# HELP vllm:time_to_first_token_seconds_created Histogram of time to first token.\n"
      "# TYPE vllm:time_to_first_token_seconds_created gauge\n"
      "vllm:time_to_first_token_seconds_created{engine=\"0\",model_name=\"m\"} 1.7e+09\n"
      // OpenMetrics keeps `_created` inside the counter's family.
      "# TYPE vllm:prompt_tokens counter\n"
      "vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 100.0\n"
      "vllm:prompt_tokens_created{engine=\"0\",model_name=\"m\"} 1.7e+09\n";
  SeriesStore store({{"vllm", "http://127.0.0.1:1/metrics"}}, 1000);
  feed(store, 0, text);
  const auto d = summary(store);
  auto role = [&](const std::string& name) {
    const auto& m = metric(d, name);
    REQUIRE(m.HasMember("role"));
    CHECK(m["headline"].GetBool());
    return std::string(m["role"].GetString());
  };
  CHECK(role("vllm:num_requests_waiting") == "requests_waiting");
  CHECK(role("vllm:kv_cache_usage_perc") == "kv_usage");
  CHECK(std::string(metric(d, "vllm:kv_cache_usage_perc")["unit"].GetString()) == "fraction");
  CHECK(role("vllm:num_preemptions_total") == "preemptions");
  CHECK(role("vllm:prompt_tokens_total") == "prompt_tokens");
  CHECK(role("vllm:time_to_first_token_seconds") == "ttft");
  // `_created` is a timestamp, not the measurement: listed, never a headline.
  CHECK_FALSE(metric(d, "vllm:prompt_tokens_created").HasMember("role"));
  CHECK_FALSE(metric(d, "vllm:num_preemptions_created").HasMember("headline"));
  CHECK_FALSE(metric(d, "vllm:time_to_first_token_seconds_created").HasMember("headline"));
  CHECK(std::string(
            metric(d, "vllm:time_to_first_token_seconds")["labels"]["model_name"].GetString()) ==
        "m");
  CHECK(known_metric("vllm:generation_tokens_total")->role == "generation_tokens");
  CHECK(known_metric("dynamo_frontend_queued_requests")->role == "queued");
  CHECK(known_metric("DCGM_FI_DEV_GPU_UTIL")->role == "gpu_util");
}

// vLLM-named gauge, counter and histogram at scrape `i`: the gauge reads i, the counter grows
// `rate` a scrape, the histogram gets `fast` observations under 0.1 s and as many above 1 s.
std::string vllm_scrape(int i, int rate, int fast) {
  const std::string n = std::to_string(fast);
  return "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running " + std::to_string(i) +
         "\n# TYPE vllm:generation_tokens counter\n" + "vllm:generation_tokens_total " +
         std::to_string(rate * i) + "\n" + "# TYPE vllm:e2e_request_latency_seconds histogram\n" +
         "vllm:e2e_request_latency_seconds_bucket{le=\"0.1\"} " + n + "\n" +
         "vllm:e2e_request_latency_seconds_bucket{le=\"1\"} " + n + "\n" +
         "vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} " + std::to_string(2 * fast) + "\n";
}

TEST_CASE("server metrics: a headline timeline keeps at most 600 right points over 10000 scrapes") {
  SeriesStore store({{"vllm", "http://127.0.0.1:1/metrics"}}, 1000);
  feed(store, 0, vllm_scrape(0, 5, 0));
  store.start_window(0);
  constexpr int kScrapes = 10000;
  for (int i = 1; i <= kScrapes; ++i) feed(store, i * kSecond, vllm_scrape(i, 5, i));
  const auto d = summary(store);

  const auto& gauge = metric(d, "vllm:num_requests_running")["timeline"];
  CHECK(gauge.Size() <= 600);
  CHECK(gauge.Size() >= 300);
  double last_t = -1;
  for (const auto& p : gauge.GetArray()) {
    CHECK(p[1].GetDouble() == doctest::Approx(p[0].GetDouble()));  // averaged alike
    CHECK(p[0].GetDouble() > last_t);
    last_t = p[0].GetDouble();
  }
  CHECK(gauge[0][0].GetDouble() < 40);  // spread over the whole run
  CHECK(last_t > kScrapes - 40);

  const auto& counter = metric(d, "vllm:generation_tokens_total")["timeline"];
  CHECK(counter.Size() <= 600);
  for (const auto& p : counter.GetArray()) CHECK(p[1].GetDouble() == doctest::Approx(5));

  // Each interval: one observation under 0.1 s, one above 1 s: p50 0.1 (histogram_quantile,
  // linear in the first bucket), p99 in +Inf, so the highest finite bound.
  const auto& h = metric(d, "vllm:e2e_request_latency_seconds")["timeline"];
  CHECK(h.Size() <= 600);
  CHECK(h.Size() >= 300);
  for (const auto& p : h.GetArray()) {
    REQUIRE(p.Size() == 3);
    CHECK(p[1].GetDouble() == doctest::Approx(0.1));
    CHECK(p[2].GetDouble() == doctest::Approx(1));
  }
}

TEST_CASE("server metrics: a timeline point is a rate or null where nothing was observed") {
  SeriesStore store({{"vllm", "http://127.0.0.1:1/metrics"}}, 1000);
  feed(store, 0, vllm_scrape(0, 0, 0));  // before the window: the baseline of both
  store.start_window(kSecond / 2);
  feed(store, 2 * kSecond, vllm_scrape(2, 30, 4));  // 60 tokens in 2 s
  feed(store, 3 * kSecond, vllm_scrape(3, 20, 4));  // no new observation; the counter: 0 -> 60
  const auto d = summary(store);
  const auto& counter = metric(d, "vllm:generation_tokens_total")["timeline"];
  REQUIRE(counter.Size() == 2);
  CHECK(counter[0][0].GetDouble() == doctest::Approx(1.5));  // seconds since the window start
  CHECK(counter[0][1].GetDouble() == doctest::Approx(30));
  CHECK(counter[1][1].GetDouble() == doctest::Approx(0));  // 60 -> 60
  const auto& h = metric(d, "vllm:e2e_request_latency_seconds")["timeline"];
  REQUIRE(h.Size() == 2);
  CHECK(h[0][1].GetDouble() == doctest::Approx(0.1));
  CHECK(h[1][1].IsNull());
  CHECK(h[1][2].IsNull());
  CHECK_FALSE(metric(d, "vllm:num_requests_running")["timeline"].Empty());
}
