// target.server_timing: the server's own per-request timing (Dynamo's nvext.timing) beside the
// client's: the per-request facts, their distributions in summary.json, and the TTFT gap insight
// that uses them (or, without them, one histogram family and never a negative gap as network).
#include "controller/report/server_timing.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "controller/report/insights.hpp"
#include "controller/report/server_insights.hpp"
#include "insight_util.hpp"
#include "server_metrics_fixture.hpp"

using namespace convoy::controller;
using namespace convoy::test;
namespace proto = convoy::proto;

namespace {

constexpr int64_t kNsPerMsTiming = 1'000'000;

// A successful streamed request: client TTFT `client_ttft_ms`, latency `client_latency_ms`, and
// the server's timing.
proto::Record timed_record(double client_ttft_ms, double client_latency_ms, double server_ttft_ms,
                           double server_total_ms, int64_t osl) {
  proto::Record r;
  r.sent_ns = 1'000 * kNsPerMsTiming;
  r.first_token_ns = r.sent_ns + static_cast<int64_t>(client_ttft_ms * kNsPerMsTiming);
  r.second_token_ns = r.first_token_ns + kNsPerMsTiming;
  r.last_token_ns = r.sent_ns + static_cast<int64_t>(client_latency_ms * kNsPerMsTiming);
  r.end_ns = r.last_token_ns;
  r.intended_ns = r.sent_ns;
  r.output_tokens = osl;
  r.input_tokens = 10;
  r.http_status = 200;
  r.server_timing.queue_ms = 2;
  r.server_timing.prefill_ms = server_ttft_ms - 2;
  r.server_timing.ttft_ms = server_ttft_ms;
  r.server_timing.total_ms = server_total_ms;
  return r;
}

InsightInputs with_ttft_histogram(const std::string& family_json) {
  InsightInputs in;
  in.target_url = "http://127.0.0.1:8000";
  in.total_requests = 100;
  in.server = telemetry_of_json(server_metrics({endpoint_entry("dynamo", 20, 0)}, {family_json}));
  return in;
}

}  // namespace

TEST_CASE("server timing: one request's facts, the ITL derived when the server gives none") {
  const proto::Record r = timed_record(25, 125, 20, 110, 11);
  const auto t = request_server_timing(r, compute_request_metrics(r));
  REQUIRE(t.has_value());
  CHECK(*t->queue_ms == doctest::Approx(2));
  CHECK(*t->ttft_ms == doctest::Approx(20));
  CHECK(*t->itl_ms == doctest::Approx(9));  // (110 - 20) / (11 - 1)
  CHECK(*t->ttft_gap_ms == doctest::Approx(5));
  CHECK(*t->latency_gap_ms == doctest::Approx(15));
  proto::Record with_itl = r;
  with_itl.server_timing.avg_itl_ms = 7.5;
  CHECK(*request_server_timing(with_itl, compute_request_metrics(with_itl))->itl_ms ==
        doctest::Approx(7.5));
  proto::Record none = r;
  none.server_timing = {};
  CHECK_FALSE(request_server_timing(none, compute_request_metrics(none)).has_value());
}

TEST_CASE("server timing: distributions and gaps in summary.json, negative gaps kept") {
  ServerTimingAggregator agg;
  for (int i = 0; i < 9; ++i) {
    const proto::Record r = timed_record(20 + i, 120, 19, 100, 11);  // gaps 1..9 ms
    agg.add(r, compute_request_metrics(r));
  }
  const proto::Record ahead = timed_record(10, 120, 12, 100, 11);  // the server counts 2 ms more
  agg.add(ahead, compute_request_metrics(ahead));
  proto::Record untimed = timed_record(10, 120, 12, 100, 11);
  untimed.server_timing = {};
  agg.add(untimed, compute_request_metrics(untimed));

  const ServerTimingSummary s = agg.summary();
  CHECK(s.requests == 10);
  CHECK(s.requests_without_timing == 1);
  REQUIRE(s.ttft_gap.has_value());
  CHECK(s.ttft_gap->count == 10);
  CHECK(s.ttft_gap->min == doctest::Approx(-2));
  CHECK(s.ttft_gap->max == doctest::Approx(9));
  CHECK(s.ttft_gap->p(50) == doctest::Approx(4).epsilon(0.01));
  CHECK(s.ttft->p(50) == doctest::Approx(19).epsilon(0.01));

  rapidjson::Document doc;
  doc.Parse(server_timing_json(s).c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc["requests"].GetInt64() == 10);
  CHECK(doc["requests_without_timing"].GetInt64() == 1);
  for (const char* key : {"server_queue_time", "server_prefill_time", "server_time_to_first_token",
                          "server_inter_token_latency", "server_request_latency",
                          "ttft_client_minus_server", "request_latency_client_minus_server"}) {
    INFO(key);
    REQUIRE(doc[key].IsObject());
    CHECK(std::string(doc[key]["unit"].GetString()) == "ms");
    CHECK(doc[key]["count"].GetInt64() == 10);
  }
}

TEST_CASE("client_side_overhead: measured per request when the server times each request") {
  InsightInputs in;
  in.client_ttft_p50_ms = 40;
  in.ttft_gap = InsightInputs::TtftGap{12, 30, 500};
  const auto insights = detect_insights(in);  // no telemetry at all: the per-request gap speaks
  const Insight* o = find_insight(insights, "client_side_overhead");
  REQUIRE(o != nullptr);
  CHECK(o->title == "TTFT outside the server, measured per request");
  CHECK(o->problem.find("p50 12 ms (30% of the client's TTFT p50 40 ms), p99 30 ms") !=
        std::string::npos);
  CHECK(o->problem.find("500 requests with server timing") != std::string::npos);
  SUBCASE("a small measured gap stays quiet, and the histogram is not used instead") {
    in.ttft_gap = InsightInputs::TtftGap{1, 2, 500};
    in.server = telemetry_of_json(
        server_metrics({endpoint_entry("vllm", 20, 0)},
                       {ttft_histogram_entry("vllm", "vllm:time_to_first_token_seconds",
                                             {{0.005, 0}, {0.01, 100}, {1e300, 100}})}));
    CHECK(find_insight(detect_insights(in), "client_side_overhead") == nullptr);
  }
}

TEST_CASE("client_side_overhead never calls a negative histogram gap network time") {
  // p50 of the server's histogram: 67 ms; the client saw 40 ms.
  InsightInputs in = with_ttft_histogram(
      ttft_histogram_entry("dynamo", "vllm:time_to_first_token_seconds",
                           {{0.025, 0}, {0.05, 10}, {0.075, 70}, {0.1, 100}, {1e300, 100}}));
  in.client_ttft_p50_ms = 40;
  const auto insights = detect_insights(in);
  const Insight* o = find_insight(insights, "client_side_overhead");
  REQUIRE(o != nullptr);
  CHECK(o->severity == "info");
  CHECK(o->title == "Server TTFT above the client's: 'dynamo'");
  CHECK(o->problem.find("network") == std::string::npos);
  CHECK(o->problem.find("no overhead") != std::string::npos);
}

TEST_CASE("client_side_overhead reads one TTFT family, the frontend's when it is scraped") {
  // The engine's family says 67 ms, the frontend's 160 ms: merged they would mix two counts of
  // the same requests. The frontend's alone gives the gap from 200 ms.
  const std::string engine =
      ttft_histogram_entry("dynamo", "vllm:time_to_first_token_seconds",
                           {{0.025, 0}, {0.05, 10}, {0.075, 70}, {0.1, 100}, {1e300, 100}});
  const std::string frontend =
      ttft_histogram_entry("dynamo", "dynamo_frontend_time_to_first_token_seconds",
                           {{0.1, 0}, {0.15, 40}, {0.2, 60}, {0.25, 100}, {1e300, 100}});
  InsightInputs in;
  in.target_url = "http://127.0.0.1:8000";
  in.total_requests = 100;
  in.server =
      telemetry_of_json(server_metrics({endpoint_entry("dynamo", 20, 0)}, {engine, frontend}));
  in.client_ttft_p50_ms = 200;
  const auto insights = detect_insights(in);  // alive while `o` is read
  const Insight* o = find_insight(insights, "client_side_overhead");
  REQUIRE(o != nullptr);
  CHECK(o->problem.find("the server's own is 175 ms") != std::string::npos);
  CHECK(o->problem.find("dynamo_frontend_time_to_first_token_seconds") != std::string::npos);
  CHECK(o->problem.find("100 observations") != std::string::npos);  // one family's count
}
