// Insights that connect the client's and the server's figures, fed
// server_metrics JSON by hand: each fires on its evidence and stays quiet without it.
#include "controller/report/server_insights.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "controller/report/metrics.hpp"
#include "insight_util.hpp"
#include "server_metrics_fixture.hpp"
#include "test_time.hpp"

using namespace convoy::controller;
using namespace convoy::test;

namespace {

// 20 one-second buckets: the client's TTFT p50 per bucket.
std::vector<std::pair<double, double>> client_ttft(const std::function<double(int)>& ms) {
  std::vector<std::pair<double, double>> out;
  for (int i = 0; i < 20; ++i) out.emplace_back(i + 0.5, ms(i));
  return out;
}

std::string waiting_json(const std::function<double(int)>& waiting) {
  GaugeSpec g = gauge("vllm", "vllm:num_requests_waiting", "requests_waiting",
                      "requests waiting (vLLM)", "requests");
  g.max = 0;
  for (int i = 0; i < 20; ++i) g.max = std::max(g.max, waiting(i));
  g.timeline = gauge_timeline(20, waiting);
  return server_metrics({endpoint_entry("vllm", 20, 0)}, {gauge_entry(g)});
}

InsightInputs with_server(std::string json) {
  InsightInputs in;
  in.target_url = "http://127.0.0.1:8000";
  in.total_requests = 400;
  in.server = telemetry_of_json(std::move(json));
  return in;
}

}  // namespace

TEST_CASE("server_queueing fires when the client's TTFT rose with the server's waiting count") {
  // A step at 10 s: nothing waits and TTFT is 40 ms, then 15 wait and TTFT is 400 ms.
  InsightInputs in = with_server(waiting_json([](int i) { return i < 10 ? 0.0 : 15.0; }));
  in.client_ttft_p50_over_time = client_ttft([](int i) { return i < 10 ? 40.0 : 400.0; });
  const auto insights = detect_insights(in);
  const Insight* q = convoy::test::find_insight(insights, "server_queueing");
  REQUIRE(q != nullptr);
  CHECK(q->severity == "warning");
  CHECK(q->title == "Requests queue on the server: 'vllm'");
  CHECK(q->problem ==
        "The client's TTFT rose while the server's waiting count rose (evidence: requests "
        "waiting (vLLM) (vllm:num_requests_waiting) on endpoint 'vllm' peaked at 15; while it "
        "was at or above 15.0, the client's TTFT p50 was 400 ms, while at or below 0.0, 40 ms; "
        "correlation 1.00 over 20 time buckets). Time to first token is spent waiting for the "
        "engine to admit the request, not computing it.");
  CHECK_FALSE(q->fixes.empty());
}

TEST_CASE("server_queueing counts one vocabulary when a server exports waiting under several") {
  // The mock and Dynamo's frontend export the same waiting requests as vLLM's gauge and the
  // frontend's queued gauge: the evidence takes one family (vLLM's), not their sum (30).
  const auto step = [](int i) { return i < 10 ? 0.0 : 15.0; };
  GaugeSpec vllm = gauge("vllm", "vllm:num_requests_waiting", "requests_waiting",
                         "requests waiting (vLLM)", "requests");
  GaugeSpec dynamo = gauge("vllm", "dynamo_frontend_queued_requests", "queued",
                           "requests queued (Dynamo frontend)", "requests");
  for (GaugeSpec* g : {&vllm, &dynamo}) {
    g->max = 15;
    g->timeline = gauge_timeline(20, step);
  }
  InsightInputs in = with_server(
      server_metrics({endpoint_entry("vllm", 20, 0)}, {gauge_entry(dynamo), gauge_entry(vllm)}));
  in.client_ttft_p50_over_time = client_ttft([](int i) { return i < 10 ? 40.0 : 400.0; });
  const auto insights = detect_insights(in);  // find_insight points into it
  const Insight* q = convoy::test::find_insight(insights, "server_queueing");
  REQUIRE(q != nullptr);
  CHECK(q->problem.find("(vllm:num_requests_waiting) on endpoint 'vllm' peaked at 15;") !=
        std::string::npos);
  CHECK(q->problem.find("summed") == std::string::npos);
}

TEST_CASE("server_queueing stays quiet when TTFT did not follow the waiting count") {
  SUBCASE("TTFT flat while requests waited") {
    InsightInputs in = with_server(waiting_json([](int i) { return i < 10 ? 0.0 : 15.0; }));
    in.client_ttft_p50_over_time = client_ttft([](int) { return 40.0; });
    CHECK(convoy::test::find_insight(detect_insights(in), "server_queueing") == nullptr);
  }
  SUBCASE("TTFT rose while nothing waited") {
    InsightInputs in = with_server(waiting_json([](int) { return 0.0; }));
    in.client_ttft_p50_over_time = client_ttft([](int i) { return i < 10 ? 40.0 : 400.0; });
    CHECK(convoy::test::find_insight(detect_insights(in), "server_queueing") == nullptr);
  }
  SUBCASE("too few client buckets") {
    InsightInputs in = with_server(waiting_json([](int i) { return i < 10 ? 0.0 : 15.0; }));
    in.client_ttft_p50_over_time = {{10.5, 400}, {11.5, 400}, {0.5, 40}};
    CHECK(convoy::test::find_insight(detect_insights(in), "server_queueing") == nullptr);
  }
  SUBCASE("no telemetry") {
    InsightInputs in = with_server("");
    in.client_ttft_p50_over_time = client_ttft([](int i) { return i < 10 ? 40.0 : 400.0; });
    CHECK(detect_insights(in).empty());
  }
}

namespace {

std::string kv_json(double peak, double preempted, const std::string& unit = "fraction") {
  const double scale = unit == "%" ? 100 : 1;
  GaugeSpec g =
      gauge("vllm", "vllm:kv_cache_usage_perc", "kv_usage", "KV cache usage (vLLM)", unit);
  g.max = peak * scale;
  g.avg = 0.8 * scale;
  g.timeline = gauge_timeline(20, [&](int i) { return (i < 15 ? 0.8 : peak) * scale; });
  return server_metrics(
      {endpoint_entry("vllm", 20, 0)},
      {gauge_entry(g), counter_entry("vllm", "vllm:num_preemptions_total", "preemptions",
                                     "preemptions (vLLM)", preempted, preempted / 20)});
}

}  // namespace

TEST_CASE("kv_cache_pressure fires on usage above 95 percent with preemptions increasing") {
  SUBCASE("a fraction") {
    const auto insights = detect_insights(with_server(kv_json(0.99, 12)));
    const Insight* kv = convoy::test::find_insight(insights, "kv_cache_pressure");
    REQUIRE(kv != nullptr);
    CHECK(kv->severity == "warning");
    CHECK(kv->problem ==
          "KV cache usage went above 95% with preemptions increasing (evidence: KV cache usage "
          "(vLLM) (vllm:kv_cache_usage_perc) on endpoint 'vllm' peaked at 99%, averaged 80%, "
          "above 95% in 5 of 20 points over time; preemptions (vLLM) (vllm:num_preemptions_total) "
          "on endpoint 'vllm' rose by 12 (0.60/s)). A preempted request loses its cache and is "
          "recomputed, so its latency grows and the server's throughput falls.");
  }
  SUBCASE("a percentage") {
    CHECK(convoy::test::find_insight(detect_insights(with_server(kv_json(0.97, 3, "%"))),
                                     "kv_cache_pressure") != nullptr);
  }
}

TEST_CASE("kv_cache_pressure stays quiet below 95 percent or without preemptions") {
  CHECK(convoy::test::find_insight(detect_insights(with_server(kv_json(0.99, 0))),
                                   "kv_cache_pressure") == nullptr);
  CHECK(convoy::test::find_insight(detect_insights(with_server(kv_json(0.90, 12))),
                                   "kv_cache_pressure") == nullptr);
  CHECK(convoy::test::find_insight(detect_insights(with_server(kv_json(0.90, 12, "%"))),
                                   "kv_cache_pressure") == nullptr);
}

namespace {

// 100 observations: 10 up to 50 ms, 60 more up to 75 ms, all by 100 ms: p50 = 66.7 ms.
std::string ttft_json() {
  return server_metrics(
      {endpoint_entry("vllm", 20, 0)},
      {ttft_histogram_entry("vllm", "vllm:time_to_first_token_seconds",
                            {{0.025, 0}, {0.05, 10}, {0.075, 70}, {0.1, 100}, {1e300, 100}})});
}

}  // namespace

TEST_CASE("client_side_overhead gives the gap between the client's and the server's TTFT p50") {
  SUBCASE("a moderate gap is information") {
    InsightInputs in = with_server(ttft_json());
    in.client_ttft_p50_ms = 100;
    const auto insights = detect_insights(in);
    const Insight* o = convoy::test::find_insight(insights, "client_side_overhead");
    REQUIRE(o != nullptr);
    CHECK(o->severity == "info");
    CHECK(o->problem ==
          "The client's TTFT p50 is 100 ms; the server's own is 67 ms: a gap of 33 ms (33% of "
          "the client's), spent in the network, the frontend and the client (evidence: TTFT "
          "(vLLM) (vllm:time_to_first_token_seconds) on endpoint 'vllm'; its p50 lies in the "
          "bucket 50 ms to 75 ms, 100 observations in the window).");
  }
  SUBCASE("a gap over half the client's TTFT is a warning") {
    InsightInputs in = with_server(ttft_json());
    in.client_ttft_p50_ms = 300;
    const auto insights = detect_insights(in);
    const Insight* o = convoy::test::find_insight(insights, "client_side_overhead");
    REQUIRE(o != nullptr);
    CHECK(o->severity == "warning");
    CHECK(o->problem.find("a gap of 233 ms (78% of the client's)") != std::string::npos);
  }
}

TEST_CASE("client_side_overhead stays quiet when client and server agree or one is missing") {
  InsightInputs in = with_server(ttft_json());
  in.client_ttft_p50_ms = 70;  // 3 ms above the server's 67 ms
  CHECK(convoy::test::find_insight(detect_insights(in), "client_side_overhead") == nullptr);
  in.client_ttft_p50_ms.reset();
  CHECK(convoy::test::find_insight(detect_insights(in), "client_side_overhead") == nullptr);
  InsightInputs no_histogram = with_server(waiting_json([](int) { return 0.0; }));
  no_histogram.client_ttft_p50_ms = 100;
  CHECK(convoy::test::find_insight(detect_insights(no_histogram), "client_side_overhead") ==
        nullptr);
}

TEST_CASE("telemetry_endpoint_failed fires for an endpoint whose every scrape failed") {
  const std::string json =
      server_metrics({endpoint_entry("gpus", 7, 7, "connect: Connection refused"),
                      endpoint_entry("vllm", 7, 2), endpoint_entry("late", 0, 0)},
                     {});
  const auto insights = detect_insights(with_server(json));
  REQUIRE(insights.size() == 1);
  CHECK(insights[0].id == "telemetry_endpoint_failed");
  CHECK(insights[0].title == "Telemetry endpoint 'gpus' failed every scrape");
  CHECK(insights[0].problem ==
        "Every scrape of http://127.0.0.1:9/gpus/metrics failed (evidence: 7 of 7 scrapes; last "
        "error: \"connect: Connection refused\"). The report has no server figures from it.");
}

TEST_CASE("add_server_inputs takes the client's TTFT p50 overall and per bucket") {
  MetricsAggregator agg{convoy::Config{}};
  agg.set_origin_ns(kS);
  for (int i = 0; i < 30; ++i) {
    convoy::proto::Record r;
    r.sent_ns = kS + i * kS / 10;  // 3 s of sends
    r.first_byte_ns = r.first_token_ns = r.sent_ns + (i < 10 ? 40 : 400) * 1'000'000;
    r.last_token_ns = r.first_token_ns;
    r.end_ns = r.first_token_ns + 1'000'000;
    r.output_tokens = 1;
    r.http_status = 200;
    agg.add(r);
  }
  InsightInputs in;
  add_server_inputs(agg.snapshot(), telemetry_of_json("{}"), &in);
  REQUIRE(in.server);
  CHECK(in.server->view.metrics.empty());
  REQUIRE(in.client_ttft_p50_ms.has_value());
  CHECK(*in.client_ttft_p50_ms == doctest::Approx(400).epsilon(0.01));
  REQUIRE(in.client_ttft_p50_over_time.size() == 4);  // first tokens from 0.04 s to 3.3 s
  CHECK(in.client_ttft_p50_over_time[0].first == doctest::Approx(0.5));
  CHECK(in.client_ttft_p50_over_time[0].second == doctest::Approx(40).epsilon(0.05));
  CHECK(in.client_ttft_p50_over_time[2].second == doctest::Approx(400).epsilon(0.05));
}
