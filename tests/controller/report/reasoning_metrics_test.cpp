// The metrics AIPerf users look for. Reasoning models (time to first output
// token, reasoning token counts), token totals and total token throughput, good_request_count
// beside goodput, and no streaming metrics for non-streamed or embeddings requests.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "controller/report/metrics.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/summary_writer.hpp"
#include "test_time.hpp"

namespace {

using convoy::Config;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::summary_json;
using convoy::proto::Record;

constexpr int64_t kBase = 1'000'000'000;

// A streamed reply sent at `at`: first token after 20 ms, then one token every 10 ms; the first
// `reasoning` tokens are reasoning, so the first output token comes `reasoning` tokens later.
Record reply(int64_t at, int64_t osl, int64_t reasoning) {
  at += kBase;  // a send time of 0 means "not sent"
  Record r;
  r.intended_ns = at;
  r.sent_ns = at;
  r.first_byte_ns = at + 19 * kMs;
  r.first_token_ns = at + 20 * kMs;
  r.second_token_ns = r.first_token_ns + 10 * kMs;
  r.last_token_ns = r.first_token_ns + (osl - 1) * 10 * kMs;
  r.end_ns = r.last_token_ns + kMs;
  for (int64_t i = 1; i < osl; ++i) r.chunk_gaps_ns.push_back(10 * kMs);
  r.first_output_token_ns = reasoning < osl ? r.first_token_ns + reasoning * 10 * kMs : 0;
  r.reasoning_tokens = reasoning;
  r.input_tokens = 100;
  r.output_tokens = osl;
  r.usage_from_server = true;
  r.http_status = 200;
  return r;
}

// The same reply, not streamed: the worker records no token times.
Record whole_body(int64_t at, int64_t osl) {
  Record r = reply(at, osl, 0);
  r.first_token_ns = r.second_token_ns = r.last_token_ns = r.first_output_token_ns = 0;
  r.chunk_gaps_ns.clear();
  return r;
}

double aggregate(const MetricsSnapshot& s, const char* tag) {
  const auto* m = s.find(tag);
  REQUIRE(m != nullptr);
  CHECK(m->aggregate);
  return m->avg;
}

rapidjson::Document summary_of(const MetricsSnapshot& s) {
  rapidjson::Document doc;
  doc.Parse(summary_json(s).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

}  // namespace

TEST_CASE("reasoning: time_to_first_output_token waits for the first non-reasoning content") {
  MetricsAggregator agg{Config{}};
  agg.add(reply(0, 10, 4));       // TTFT 20 ms, TTFO 60 ms
  agg.add(reply(kMs, 10, 0));     // no reasoning: TTFO = TTFT = 20 ms
  agg.add(reply(2 * kMs, 5, 5));  // reasoning only: no TTFO
  const MetricsSnapshot s = agg.snapshot();
  const auto* ttft = s.find("time_to_first_token");
  const auto* ttfo = s.find("time_to_first_output_token");
  REQUIRE(ttft != nullptr);
  REQUIRE(ttfo != nullptr);
  CHECK(ttft->count == 3);  // TTFT as today: the first token of any kind
  CHECK(ttft->max == doctest::Approx(20).epsilon(0.01));
  CHECK(ttfo->count == 2);
  CHECK(ttfo->unit == "ms");
  CHECK(ttfo->min == doctest::Approx(20).epsilon(0.01));
  CHECK(ttfo->max == doctest::Approx(60).epsilon(0.01));
  const auto doc = summary_of(s);
  REQUIRE(doc.HasMember("time_to_first_output_token"));
  CHECK(doc["time_to_first_output_token"].HasMember("p99"));  // a distribution
}

TEST_CASE("reasoning: reasoning_token_count per request and total_reasoning_tokens") {
  MetricsAggregator agg{Config{}};
  agg.add(reply(0, 10, 4));
  agg.add(reply(kMs, 10, 6));
  agg.add(reply(2 * kMs, 10, 0));  // a request without reasoning is not in the distribution
  const MetricsSnapshot s = agg.snapshot();
  const auto* count = s.find("reasoning_token_count");
  REQUIRE(count != nullptr);
  CHECK(count->count == 2);
  CHECK(count->unit == "tokens");
  CHECK(count->avg == doctest::Approx(5));
  CHECK(aggregate(s, "total_reasoning_tokens") == doctest::Approx(10));
  // AIPerf: OSL counts reasoning and output tokens; total_output_tokens only the output ones.
  CHECK(s.find("output_sequence_length")->sum == doctest::Approx(30));
  CHECK(aggregate(s, "total_output_tokens") == doctest::Approx(20));
  const auto doc = summary_of(s);
  CHECK(doc["reasoning_token_count"].HasMember("p50"));
  CHECK_FALSE(doc["total_reasoning_tokens"].HasMember("count"));
  CHECK(doc["total_reasoning_tokens"]["avg"].GetDouble() == doctest::Approx(10));

  SUBCASE("a run without reasoning has neither") {
    MetricsAggregator plain{Config{}};
    plain.add(reply(0, 10, 0));
    const MetricsSnapshot p = plain.snapshot();
    CHECK(p.find("reasoning_token_count") == nullptr);
    CHECK(p.find("total_reasoning_tokens") == nullptr);
  }
  SUBCASE("a reasoning count past the OSL is cut to it") {
    MetricsAggregator odd{Config{}};
    odd.add(reply(0, 3, 0));
    Record r = reply(kMs, 3, 0);
    r.reasoning_tokens = 7;
    odd.add(r);
    const MetricsSnapshot o = odd.snapshot();
    CHECK(o.find("reasoning_token_count")->max == doctest::Approx(3));
    CHECK(aggregate(o, "total_output_tokens") == doctest::Approx(3));
  }
}

TEST_CASE("token totals: total_input_tokens, total_output_tokens, total_token_throughput") {
  MetricsAggregator agg{Config{}};
  agg.add(reply(0, 10, 0));  // ends at 20 + 90 + 1 = 111 ms
  Record later = reply(89 * kMs, 10, 0);
  later.input_tokens = 300;
  agg.add(later);  // ends at 200 ms: duration 0.2 s
  const MetricsSnapshot s = agg.snapshot();
  CHECK(s.duration_s == doctest::Approx(0.2));
  CHECK(aggregate(s, "total_input_tokens") == doctest::Approx(400));
  CHECK(aggregate(s, "total_output_tokens") == doctest::Approx(20));
  // AIPerf's total_token_throughput: (total_isl + total_osl) / benchmark duration.
  CHECK(aggregate(s, "total_token_throughput") == doctest::Approx(420 / 0.2));
  CHECK(aggregate(s, "output_token_throughput") == doctest::Approx(20 / 0.2));
  const auto doc = summary_of(s);
  for (const char* tag : {"total_input_tokens", "total_output_tokens", "total_token_throughput"}) {
    CAPTURE(tag);
    REQUIRE(doc.HasMember(tag));
    CHECK(doc[tag].MemberCount() == 2);  // {unit, avg}
  }
  CHECK(std::string(doc["total_token_throughput"]["unit"].GetString()) == "tokens/sec");
}

TEST_CASE("goodput: good_request_count beside goodput, only with an slo") {
  Config config;
  config.slo["time_to_first_token"] = 30;
  MetricsAggregator agg{config};
  agg.add(reply(0, 10, 0));  // TTFT 20 ms: good
  Record slow = reply(kMs, 10, 0);
  slow.first_token_ns += 20 * kMs;  // TTFT 40 ms: not good
  slow.second_token_ns += 20 * kMs;
  agg.add(slow);
  const MetricsSnapshot s = agg.snapshot();
  CHECK(aggregate(s, "good_request_count") == doctest::Approx(1));
  CHECK(aggregate(s, "goodput") == doctest::Approx(1 / s.duration_s));
  CHECK(summary_of(s)["good_request_count"]["avg"].GetDouble() == doctest::Approx(1));

  MetricsAggregator no_slo{Config{}};
  no_slo.add(reply(0, 10, 0));
  CHECK(no_slo.snapshot().find("good_request_count") == nullptr);
}

TEST_CASE("non-streamed replies have no TTFT, TTST or ITL, only latency and lengths") {
  MetricsAggregator agg{Config{}};
  agg.add(whole_body(0, 10));
  agg.add(whole_body(kMs, 12));
  const MetricsSnapshot s = agg.snapshot();
  for (const char* tag : {"time_to_first_token", "time_to_second_token", "inter_token_latency",
                          "inter_chunk_latency", "output_token_throughput_per_user",
                          "time_to_first_output_token", "time_to_first_token_first_turn"}) {
    CAPTURE(tag);
    CHECK(s.find(tag) == nullptr);
  }
  REQUIRE(s.find("request_latency") != nullptr);
  CHECK(s.find("request_latency")->count == 2);
  CHECK(s.find("request_latency")->min == doctest::Approx(111));  // sent to end of the body
  CHECK(s.find("input_sequence_length")->count == 2);
  CHECK(s.find("output_sequence_length")->max == doctest::Approx(12));
  const auto doc = summary_of(s);
  CHECK_FALSE(doc.HasMember("time_to_first_token"));
  CHECK_FALSE(doc.HasMember("inter_token_latency"));
  CHECK(doc.HasMember("request_latency"));
}

TEST_CASE("embeddings have no output_sequence_length") {
  Config config;
  config.target.endpoint = convoy::proto::Endpoint::kEmbeddings;
  config.target.streaming = false;
  MetricsAggregator agg{config};
  Record r = whole_body(0, 1);
  r.output_tokens = 3;  // the worker's fallback counts data[] entries
  agg.add(r);
  const MetricsSnapshot s = agg.snapshot();
  CHECK(s.find("output_sequence_length") == nullptr);
  CHECK(s.find("input_sequence_length") != nullptr);
  CHECK(s.find("request_latency") != nullptr);
  CHECK(s.find("time_to_first_token") == nullptr);
  CHECK(aggregate(s, "total_output_tokens") == doctest::Approx(0));
}

TEST_CASE("console: time to first output token and reasoning tokens rows only when reasoning") {
  MetricsAggregator agg{Config{}};
  agg.add(reply(0, 10, 4));
  std::ostringstream with;
  convoy::controller::print_results_table(with, agg.snapshot());
  CHECK(with.str().find("Time to First Output Token (ms)") != std::string::npos);
  CHECK(with.str().find("Reasoning Token Count (tokens)") != std::string::npos);

  MetricsAggregator plain{Config{}};
  plain.add(reply(0, 10, 0));
  std::ostringstream without;
  convoy::controller::print_results_table(without, plain.snapshot());
  CHECK(without.str().find("Time to First Token (ms)") != std::string::npos);
  CHECK(without.str().find("First Output Token") == std::string::npos);
  CHECK(without.str().find("Reasoning") == std::string::npos);
}
