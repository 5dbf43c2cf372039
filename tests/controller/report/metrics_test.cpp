#include "controller/report/metrics.hpp"
#include "test_time.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

using convoy::Config;
using convoy::controller::compute_request_metrics;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::proto::ErrorKind;
using convoy::proto::Phase;
using convoy::proto::Record;

// A streamed request: intended at `at`, sent 2 ms late, TTFT `ttft_ms`, 10 ms per token after
// that, `osl` tokens in `osl` content chunks.
Record streamed(int64_t at, int64_t ttft_ms, int64_t osl, uint32_t turn = 0) {
  Record r;
  r.x_request_id = "req-" + std::to_string(at);
  r.x_correlation_id = "corr-" + std::to_string(at);
  r.turn_index = turn;
  r.intended_ns = at;
  r.sent_ns = at + 2 * kMs;
  r.first_byte_ns = r.sent_ns + ttft_ms * kMs - 1 * kMs;
  r.first_token_ns = r.sent_ns + ttft_ms * kMs;
  r.second_token_ns = osl > 1 ? r.first_token_ns + 10 * kMs : 0;
  r.last_token_ns = r.first_token_ns + (osl - 1) * 10 * kMs;
  r.end_ns = r.last_token_ns + 1 * kMs;
  for (int64_t i = 1; i < osl; ++i) r.chunk_gaps_ns.push_back(10 * kMs);
  r.input_tokens = 100;
  r.output_tokens = osl;
  r.cached_tokens = 25;
  r.usage_from_server = true;
  r.http_status = 200;
  return r;
}

Record failed(int64_t at, ErrorKind kind, int64_t http_status, std::string message,
              std::string correlation_id) {
  Record r;
  r.x_correlation_id = std::move(correlation_id);
  r.intended_ns = at;
  r.sent_ns = at;
  r.end_ns = at + 5 * kMs;
  r.http_status = http_status;
  r.error.kind = kind;
  r.error.code = http_status;
  r.error.message = std::move(message);
  return r;
}

// `n` spelled in letters: a, b, ..., z, ba, bb, ...
std::string letters(int64_t n) {
  std::string out;
  do {
    out.insert(out.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return out;
}

}  // namespace

TEST_CASE("per-request metrics follow AIPerf's definitions") {
  SUBCASE("streamed request") {
    const auto m = compute_request_metrics(streamed(1 * kS, 50, 11));
    CHECK(m.ok);
    CHECK(*m.ttft_ns == 50 * kMs);
    CHECK(*m.ttst_ns == 10 * kMs);
    CHECK(*m.request_latency_ns == 150 * kMs);            // to the last content chunk, not the end
    CHECK(*m.corrected_request_latency_ns == 153 * kMs);  // end - intended
    CHECK(*m.schedule_lag_ns == 2 * kMs);
    CHECK(*m.itl_ns == doctest::Approx(10.0 * kMs));  // (150 - 50) / (11 - 1)
    CHECK(*m.output_tokens_per_s_per_user == doctest::Approx(100.0));
    CHECK(m.isl == 100);
    CHECK(m.osl == 11);
    CHECK(*m.cached_tokens == 25);
    CHECK(*m.prefix_cache_hit_pct == doctest::Approx(25.0));
  }
  SUBCASE("non-streaming request ends at the transfer end and has no TTFT or ITL") {
    Record r;
    r.intended_ns = 1 * kS;
    r.sent_ns = 1 * kS;
    r.end_ns = 1 * kS + 300 * kMs;
    r.output_tokens = 20;
    const auto m = compute_request_metrics(r);
    CHECK(*m.request_latency_ns == 300 * kMs);
    CHECK_FALSE(m.ttft_ns.has_value());
    CHECK_FALSE(m.itl_ns.has_value());
    CHECK_FALSE(m.cached_tokens.has_value());  // -1: not reported
    CHECK_FALSE(m.prefix_cache_hit_pct.has_value());
  }
  SUBCASE("a single output token has no ITL") {
    const auto m = compute_request_metrics(streamed(1 * kS, 50, 1));
    CHECK_FALSE(m.itl_ns.has_value());
    CHECK_FALSE(m.ttst_ns.has_value());
    CHECK(*m.request_latency_ns == 50 * kMs);
  }
}

TEST_CASE("aggregated metrics have exact expected values") {
  Config config;
  MetricsAggregator agg(config);
  agg.add(streamed(1 * kS, 50, 11, 0));  // ends at 1.153 s
  agg.add(streamed(2 * kS, 70, 21, 1));  // ttft 70, latency 270, itl 10; ends at 2.273 s
  const MetricsSnapshot s = agg.snapshot();

  CHECK(s.request_count == 2);
  CHECK(s.error_request_count == 0);
  const auto* ttft = s.find("time_to_first_token");
  REQUIRE(ttft != nullptr);
  CHECK(ttft->unit == "ms");
  CHECK(ttft->count == 2);
  CHECK(ttft->avg == doctest::Approx(60.0));
  CHECK(ttft->min == doctest::Approx(50.0));
  CHECK(ttft->max == doctest::Approx(70.0));
  CHECK(ttft->p(1) == doctest::Approx(50.0));
  CHECK(ttft->p(99) == doctest::Approx(70.0));
  CHECK(ttft->std == doctest::Approx(10.0));  // population
  CHECK(ttft->sum == doctest::Approx(120.0));

  CHECK(s.find("request_latency")->avg == doctest::Approx(210.0));
  CHECK(s.find("inter_token_latency")->avg == doctest::Approx(10.0));
  CHECK(s.find("inter_chunk_latency")->count == 30);
  CHECK(s.find("inter_chunk_latency")->avg == doctest::Approx(10.0));
  CHECK(s.find("time_to_second_token")->avg == doctest::Approx(10.0));
  CHECK(s.find("output_sequence_length")->sum == doctest::Approx(32.0));
  CHECK(s.find("input_sequence_length")->avg == doctest::Approx(100.0));
  CHECK(s.find("schedule_lag")->avg == doctest::Approx(2.0));
  CHECK(s.find("output_token_throughput_per_user")->avg == doctest::Approx(100.0));
  CHECK(s.find("output_token_throughput_per_user")->unit == "tokens/sec/user");
  CHECK(s.find("cached_tokens")->avg == doctest::Approx(25.0));
  CHECK(s.find("prefix_cache_hit_rate")->avg == doctest::Approx(25.0));
  CHECK(s.find("prefix_cache_hit_rate")->unit == "%");

  // Window: first send 1.002 s .. last end 2.273 s.
  CHECK(s.duration_s == doctest::Approx(1.271));
  CHECK(s.request_throughput == doctest::Approx(2 / 1.271));
  CHECK(s.output_token_throughput == doctest::Approx(32 / 1.271));
  CHECK(s.find("request_count")->avg == doctest::Approx(2.0));
  CHECK(s.find("benchmark_duration")->avg == doctest::Approx(1.271));
  CHECK(s.find("goodput") == nullptr);  // no slo

  SUBCASE("TTFT is split by turn index") {
    CHECK(s.find("time_to_first_token_first_turn")->avg == doctest::Approx(50.0));
    CHECK(s.find("time_to_first_token_later_turns")->avg == doctest::Approx(70.0));
    REQUIRE(s.ttft_by_turn.size() == 2);
    CHECK(s.ttft_by_turn[1].turn_index == 1);
    CHECK(s.ttft_by_turn[1].ttft.avg == doctest::Approx(70.0));
  }
  SUBCASE("over-time series by completion second") {
    REQUIRE(s.series.size() == 2);  // origin 1.002 s: ends at +0.151 s and +1.271 s
    CHECK(s.series[0].requests == 1);
    CHECK(s.series[0].output_tokens == 11);
    CHECK(*s.series[0].mean_ttft_ms == doctest::Approx(50.0));
    CHECK(s.series[1].requests == 1);
    CHECK(s.series_bucket_s == 1.0);
  }
  SUBCASE("distributions for the report") {
    REQUIRE(s.distributions.count("time_to_first_token") == 1);
    int64_t total = 0;
    for (const auto& bin : s.distributions.at("time_to_first_token")) total += bin.count;
    CHECK(total == 2);
  }
}

TEST_CASE("warmup records are excluded from metrics and counted") {
  MetricsAggregator agg{Config{}};
  Record warm = streamed(1 * kS, 5000, 5);
  warm.phase = Phase::kWarmup;
  agg.add(warm);
  Record warm_error = failed(1 * kS, ErrorKind::kConnect, 0, "refused", "w");
  warm_error.phase = Phase::kWarmup;
  agg.add(warm_error);
  agg.add(streamed(10 * kS, 50, 5));
  const auto s = agg.snapshot();
  CHECK(s.warmup_request_count == 2);
  CHECK(s.warmup_error_count == 1);
  CHECK(s.request_count == 1);
  CHECK(s.error_request_count == 0);
  CHECK(s.errors.empty());
  CHECK(s.find("time_to_first_token")->max == doctest::Approx(50.0));
  CHECK(s.first_send_ns == 10 * kS + 2 * kMs);
}

TEST_CASE("errors are counted and grouped by code, type and message") {
  MetricsAggregator agg{Config{}};
  agg.add(streamed(1 * kS, 50, 5));
  for (int i = 0; i < 5; ++i) {
    agg.add(failed(2 * kS, ErrorKind::kHttpStatus, 429, "rate limited", "c" + std::to_string(i)));
  }
  agg.add(failed(2 * kS, ErrorKind::kHttpStatus, 500, "boom", "x"));
  agg.add(failed(2 * kS, ErrorKind::kConnect, 0, "Connection refused", "y"));
  agg.add(failed(2 * kS, ErrorKind::kStreamDisconnected, 0, "Connection refused", "z"));
  const auto s = agg.snapshot();
  CHECK(s.request_count == 1);
  CHECK(s.error_request_count == 8);
  CHECK(s.error_rate() == doctest::Approx(8.0 / 9.0));
  CHECK(s.find("error_request_count")->avg == doctest::Approx(8.0));
  REQUIRE(s.errors.size() == 4);
  CHECK(s.errors[0].code == 429);
  CHECK(s.errors[0].type == "http_status");
  CHECK(s.errors[0].message == "rate limited");
  CHECK(s.errors[0].count == 5);
  CHECK(s.errors[0].example_correlation_ids == std::vector<std::string>{"c0", "c1", "c2"});
  bool saw_connect = false;
  bool saw_disconnect = false;
  for (const auto& e : s.errors) {
    if (e.type == "connect") saw_connect = e.code == 0 && e.count == 1;
    if (e.type == "stream_disconnected") saw_disconnect = e.code == 0 && e.count == 1;
  }
  CHECK(saw_connect);
  CHECK(saw_disconnect);
  // Errors take no part in latency metrics.
  CHECK(s.find("request_latency")->count == 1);
  // But their sends were late or not: schedule lag counts every measured request.
  CHECK(s.find("schedule_lag")->count == 9);

  SUBCASE("a server-given error type is kept for HTTP errors") {
    MetricsAggregator agg2{Config{}};
    Record r = failed(1 * kS, ErrorKind::kHttpStatus, 400, "bad", "q");
    r.error.type = "invalid_request_error";
    agg2.add(r);
    CHECK(agg2.snapshot().errors.at(0).type == "invalid_request_error");
  }
}

TEST_CASE("one failure mode is one error group whatever its numbers") {
  using convoy::controller::error_group_message;
  MetricsAggregator agg{Config{}};
  // One stall (the mock's --stall-ms) as curl words it: byte counts and milliseconds differ.
  const std::vector<std::string> stalls = {
      "Operation timed out after 2001 milliseconds with 1234 out of -1 bytes received",
      "Operation timed out after 2003 milliseconds with 987 out of -1 bytes received",
      "Operation timed out after 2000 milliseconds with 41 out of 1048576 bytes received"};
  for (size_t i = 0; i < stalls.size(); ++i) {
    agg.add(failed(2 * kS, ErrorKind::kTimeoutMidStream, 0, stalls[i], "s" + std::to_string(i)));
  }
  // An endless stream cut at different points.
  for (int64_t bytes : {70001, 70112, 69987, 1048577}) {
    agg.add(failed(2 * kS, ErrorKind::kStreamDisconnected, 0,
                   "transfer closed with " + std::to_string(bytes) + " bytes remaining to read",
                   "e"));
  }
  const auto s = agg.snapshot();
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0].type == "stream_disconnected");
  CHECK(s.errors[0].count == 4);
  CHECK(s.errors[0].message == "transfer closed with N bytes remaining to read");
  CHECK(s.errors[0].example == "transfer closed with 70001 bytes remaining to read");
  CHECK(s.errors[1].type == "timeout_mid_stream");
  CHECK(s.errors[1].count == 3);
  CHECK(s.errors[1].message ==
        "Operation timed out after N milliseconds with N out of N bytes received");
  CHECK(s.errors[1].example == stalls[0]);  // the first raw message
  CHECK(s.errors[1].example_correlation_ids == std::vector<std::string>{"s0", "s1", "s2"});

  SUBCASE("numbers, addresses, ports, hex and uuids become placeholders") {
    CHECK(error_group_message("Failed to connect to 127.0.0.1 port 8000 after 0 ms: Couldn't "
                              "connect to server") ==
          "Failed to connect to N port N after N ms: Couldn't connect to server");
    CHECK(error_group_message("expected value at line 1 column 187") ==
          "expected value at line N column N");
    CHECK(error_group_message("took 1.5s, limit 1,024 tokens (5000ms)") ==
          "took Ns, limit N tokens (Nms)");
    CHECK(error_group_message("session 6f1c2b7e-9d3a-4c5e-8f00-0123456789ab not found") ==
          "session ID not found");
    CHECK(error_group_message("bad pointer 0x7f3a9c at offset -12") == "bad pointer N at offset N");
  }
  SUBCASE("digits inside words stay") {
    for (const char* kept : {"model llama-3.1-8b does not exist", "h2 stream error on utf8",
                             "gpt-4o rejected max_tokens", "GET /v1/chat/completions"}) {
      CHECK(error_group_message(kept) == kept);
    }
  }
  SUBCASE("different failure modes stay apart") {
    std::set<std::string> groups;
    for (const char* m : {"Connection refused", "Connection reset by peer",
                          "Operation timed out after 5 milliseconds with 0 bytes received"}) {
      groups.insert(error_group_message(m));
    }
    CHECK(groups.size() == 3);
  }
}

TEST_CASE("goodput counts requests within every slo") {
  Config config;
  config.slo["time_to_first_token"] = 60;
  config.slo["inter_token_latency"] = 10.5;
  MetricsAggregator agg(config);
  agg.add(streamed(1 * kS, 50, 11));  // good
  agg.add(streamed(2 * kS, 70, 21));  // ttft 70 > 60
  Record slow_tokens = streamed(3 * kS, 40, 11);
  slow_tokens.last_token_ns += 20 * kMs;  // itl 12 ms > 10.5
  slow_tokens.end_ns += 20 * kMs;
  agg.add(slow_tokens);
  agg.add(failed(4 * kS, ErrorKind::kConnect, 0, "refused", "e"));  // errors are never good
  const auto s = agg.snapshot();
  CHECK(s.has_slo);
  CHECK(s.good_request_count == 1);
  REQUIRE(s.find("goodput") != nullptr);
  CHECK(s.goodput == doctest::Approx(1.0 / s.duration_s));
  CHECK(s.find("goodput")->avg == doctest::Approx(s.goodput));

  SUBCASE("per-user throughput must be met or exceeded") {
    Config c2;
    c2.slo["output_token_throughput_per_user"] = 90;
    MetricsAggregator agg2(c2);
    agg2.add(streamed(1 * kS, 50, 11));  // 100 tokens/s/user
    agg2.add(slow_tokens);               // 83 tokens/s/user
    CHECK(agg2.snapshot().good_request_count == 1);
  }
  SUBCASE("slo tags") {
    CHECK(convoy::controller::is_slo_metric("time_to_first_token"));
    CHECK_FALSE(convoy::controller::is_slo_metric("time_to_first_tokn"));
  }
}

TEST_CASE("aggregator memory does not grow with the number of records") {
  MetricsAggregator agg{Config{}};
  agg.set_origin_ns(1 * kS);
  uint64_t state = 12345;
  auto next = [&state](int64_t range) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(range));
  };
  auto add_one = [&](int64_t i, int64_t offset_ms, int64_t ttft_ms, int64_t osl) {
    const int64_t at = 1 * kS + offset_ms * kMs;
    // Two content chunks recorded, `osl` tokens: keeps building the record cheap.
    Record r = streamed(at, ttft_ms, 3, static_cast<uint32_t>(i % 40));
    r.output_tokens = osl;
    r.last_token_ns = r.first_token_ns + (osl - 1) * 10 * kMs;
    r.end_ns = r.last_token_ns + 1 * kMs;
    // Distinct messages (letters: numbers are normalised away): the error groups are capped.
    if (i % 97 == 0) r = failed(at, ErrorKind::kOther, 0, "oops " + letters(i), "c");
    agg.add(r);
  };
  // The latest completion and the largest values of every turn come first; after that the
  // records repeat over one minute of sends, so the series spans a fixed time.
  // Histograms hold only the buckets between the smallest and largest value seen, so the
  // smallest values of every turn come first too.
  for (int64_t i = 1; i <= 40; ++i) add_one(i, 59'999, 10'000, 4096);
  for (int64_t i = 1; i <= 40; ++i) add_one(i, 0, 1, 2);
  for (int64_t i = 41; i < 10'000; ++i) add_one(i, next(60'000), 1 + next(10'000), 2 + next(4000));
  const size_t warm_bytes = agg.memory_bytes();
  for (int64_t i = 10'000; i <= 1'000'000; ++i) {
    add_one(i, next(60'000), 1 + next(10'000), 2 + next(4000));
  }
  CHECK(agg.memory_bytes() == warm_bytes);
  CHECK(agg.request_count() + agg.error_request_count() == 1'000'040);  // the 40 smallest first too
  const auto s = agg.snapshot();
  CHECK(s.errors.size() == MetricsAggregator::kMaxErrorGroups + 1);
  CHECK(s.ttft_by_turn.size() == MetricsAggregator::kMaxTurnGroups);
  CHECK(s.ttft_by_turn.back().and_later);
}

TEST_CASE("the over-time series coarsens instead of growing without bound") {
  MetricsAggregator agg{Config{}};
  agg.set_origin_ns(1 * kS);
  agg.add(streamed(1 * kS, 50, 2));
  // 200,000 seconds later: more than kMaxSeriesPoints one-second buckets.
  agg.add(streamed(200'000 * kS, 50, 2));
  const auto s = agg.snapshot();
  CHECK(s.series.size() <= MetricsAggregator::kMaxSeriesPoints);
  CHECK(s.series_bucket_s == 4.0);
  int64_t total = 0;
  for (const auto& p : s.series) total += p.requests;
  CHECK(total == 2);
  CHECK(s.series.front().requests == 1);
  CHECK(s.series.back().requests == 1);
}
