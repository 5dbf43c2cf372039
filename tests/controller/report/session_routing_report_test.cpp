// The report side of session routing across frontends: close requests kept apart, TTFT lead /
// sub-agent, family makespan, targets[], affinity verified from the client, and the insights
// that explain moves, a failing frontend and the frontend's session-affinity rejections.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/insights.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/session_routing_json.hpp"
#include "controller/report/summary_writer.hpp"
#include "insight_util.hpp"
#include "test_time.hpp"

namespace {

using convoy::Config;
using convoy::controller::AffinitySummary;
using convoy::controller::AffinityTracker;
using convoy::controller::ErrorGroupView;
using convoy::controller::Insight;
using convoy::controller::InsightInputs;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::proto::Record;
using convoy::proto::SessionRoutingMode;

// A successful streamed request of one session: sent at `sent_ns`, TTFT `ttft_ms`, ends 50 ms
// after the first token.
Record request(const std::string& correlation_id, uint32_t turn, int64_t sent_ns,
               int64_t ttft_ms = 100) {
  Record r;
  r.x_request_id = correlation_id + "-" + std::to_string(turn);
  r.x_correlation_id = correlation_id;
  r.turn_index = turn;
  r.intended_ns = sent_ns;
  r.sent_ns = sent_ns;
  r.first_token_ns = sent_ns + ttft_ms * kMs;
  r.second_token_ns = r.first_token_ns + 10 * kMs;
  r.last_token_ns = r.first_token_ns + 50 * kMs;
  r.end_ns = r.last_token_ns + 1 * kMs;
  r.input_tokens = 10;
  r.output_tokens = 6;
  r.http_status = 200;
  return r;
}

Record failure(uint32_t url_index, int64_t at_ns) {
  Record r = request("fail-" + std::to_string(at_ns), 0, at_ns);
  r.first_token_ns = r.second_token_ns = r.last_token_ns = 0;
  r.http_status = 503;
  r.error.kind = convoy::proto::ErrorKind::kHttpStatus;
  r.error.code = 503;
  r.error.message = "down";
  r.url_index = url_index;
  return r;
}

// One session's turns as (worker, idle gap before the turn in s); turn k is sent `gap` after
// turn k-1 ended, the first at `start_ns`. Returns the end of the last turn.
int64_t session(AffinityTracker& t, const std::string& id,
                const std::vector<std::pair<std::string, double>>& turns, int64_t start_ns) {
  int64_t end = 0;
  for (uint32_t k = 0; k < turns.size(); ++k) {
    const int64_t sent =
        k == 0 ? start_ns : end + static_cast<int64_t>(turns[k].second * static_cast<double>(kS));
    Record r = request(id, k, sent);
    r.served_by = turns[k].first;
    t.add(r);
    end = r.end_ns;
  }
  return end;
}

Config verify_config(SessionRoutingMode mode = SessionRoutingMode::kHeader) {
  Config c;
  c.session_routing.mode = mode;
  c.session_routing.verify = true;
  return c;
}

InsightInputs affinity_inputs(const AffinitySummary& a, SessionRoutingMode mode,
                              int64_t timeout_s = 300) {
  InsightInputs in;
  in.session_routing_mode = mode;
  in.verify = true;
  in.affinity = a;
  in.timeout_s = timeout_s;
  return in;
}

bool has_text(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

ErrorGroupView group(int64_t code, std::string message, int64_t count = 4) {
  ErrorGroupView g;
  g.code = code;
  g.type = "http_status";
  g.message = std::move(message);
  g.count = count;
  g.example_correlation_ids = {"c-1"};
  return g;
}

}  // namespace

TEST_CASE("close_request records are in no metric and are counted apart") {
  MetricsAggregator agg{Config{}};
  Record last = request("a", 0, 1 * kS);
  last.final_turn = true;
  Record close = request("a", 1, 2 * kS, 900);
  close.close_request = true;
  agg.add(last);
  agg.add(close);
  const MetricsSnapshot s = agg.snapshot();
  CHECK(s.request_count == 1);
  CHECK(s.close_request_count == 1);
  REQUIRE(s.find("time_to_first_token") != nullptr);
  CHECK(s.find("time_to_first_token")->max == doctest::Approx(100));
  CHECK(s.find("time_to_first_token")->count == 1);

  convoy::controller::RunFacts facts;
  facts.add(last);
  facts.add(close);
  CHECK(facts.later_turn_requests == 0);  // the close request is turn 1: not counted either
}

TEST_CASE("TTFT is split lead and sub-agent only when the run has sub-agents") {
  MetricsAggregator plain{Config{}};
  plain.add(request("a", 0, 1 * kS, 100));
  CHECK(plain.snapshot().find("time_to_first_token_lead") == nullptr);
  CHECK(plain.snapshot().find("time_to_first_token_subagent") == nullptr);

  MetricsAggregator agg{Config{}};
  agg.add(request("lead", 0, 1 * kS, 100));
  Record child = request("child", 0, 2 * kS, 300);
  child.subagent = 0;
  agg.add(child);
  const MetricsSnapshot s = agg.snapshot();
  REQUIRE(s.find("time_to_first_token_lead") != nullptr);
  REQUIRE(s.find("time_to_first_token_subagent") != nullptr);
  CHECK(s.find("time_to_first_token_lead")->avg == doctest::Approx(100));
  CHECK(s.find("time_to_first_token_subagent")->avg == doctest::Approx(300));
  CHECK(s.find("time_to_first_token")->count == 2);
}

TEST_CASE("family makespan runs from the lead's first send to the family's last end") {
  MetricsAggregator agg{Config{}};
  // Family 7: lead turns at 1 s and 3 s, a sub-agent in between that ends last at ~5.151 s.
  Record lead0 = request("lead7", 0, 1 * kS);
  lead0.conversation_index = 7;
  Record child = request("child7", 0, 5 * kS);
  child.conversation_index = 7;
  child.subagent = 0;
  Record lead1 = request("lead7", 1, 3 * kS);
  lead1.conversation_index = 7;
  lead1.final_turn = true;
  // Family 8 has no sub-agent: no makespan.
  Record alone = request("lead8", 0, 1 * kS);
  alone.conversation_index = 8;
  alone.final_turn = true;
  agg.add(lead0);
  agg.add(lead1);  // the lead's final turn comes first: the child was spawned after it
  agg.add(child);
  agg.add(alone);
  const MetricsSnapshot s = agg.snapshot();
  const auto* makespan = s.find("family_makespan");
  REQUIRE(makespan != nullptr);
  CHECK(makespan->count == 1);
  CHECK(makespan->unit == "ms");
  CHECK(makespan->max == doctest::Approx(4151).epsilon(0.002));  // 1 s -> 5.151 s
}

TEST_CASE("targets lists requests errors and percentiles per URL") {
  Config c;
  c.target.urls = {"http://127.0.0.1:9001", "http://127.0.0.1:9002"};
  MetricsAggregator agg{c};
  agg.add(request("a", 0, 1 * kS, 100));
  Record b = request("b", 0, 1 * kS, 400);
  b.url_index = 1;
  agg.add(b);
  agg.add(failure(1, 2 * kS));
  const MetricsSnapshot s = agg.snapshot();
  REQUIRE(s.targets.size() == 2);
  CHECK(s.targets[0].url == "http://127.0.0.1:9001");
  CHECK(s.targets[0].requests == 1);
  CHECK(s.targets[0].errors == 0);
  CHECK(s.targets[1].requests == 1);
  CHECK(s.targets[1].errors == 1);
  CHECK(s.targets[1].error_rate() == doctest::Approx(0.5));
  REQUIRE(s.targets[1].ttft);
  CHECK(s.targets[1].ttft->p(99) == doctest::Approx(400));
  REQUIRE(s.targets[0].request_latency);
  CHECK(s.targets[0].request_latency->p(50) == doctest::Approx(150));

  rapidjson::Document doc;
  doc.Parse(convoy::controller::targets_json(s).c_str());
  REQUIRE(doc.IsArray());
  CHECK(doc[1]["url"].GetString() == std::string("http://127.0.0.1:9002"));
  CHECK(doc[1]["errors"].GetInt64() == 1);
  CHECK(doc[1]["time_to_first_token"]["p99"].GetDouble() == doctest::Approx(400));
  CHECK(doc[1]["request_latency"]["unit"].GetString() == std::string("ms"));

  MetricsAggregator single{Config{}};
  single.add(request("a", 0, 1 * kS));
  CHECK(single.snapshot().targets.empty());
}

TEST_CASE("affinity counts the sessions that moved and the moves") {
  AffinityTracker t;
  session(t, "stays", {{"1001", 0}, {"1001", 1}, {"1001", 1}}, 1 * kS);
  session(t, "once", {{"1001", 0}, {"1002", 1}}, 1 * kS);
  session(t, "back", {{"1001", 0}, {"1002", 1}, {"1001", 1}}, 1 * kS);
  // A move between DP ranks of one worker is a move too.
  Record r0 = request("rank", 0, 1 * kS);
  r0.served_by = "1003";
  r0.dp_rank = 0;
  Record r1 = request("rank", 1, 2 * kS);
  r1.served_by = "1003";
  r1.dp_rank = 1;
  t.add(r0);
  t.add(r1);
  // A close request never counts.
  Record close = request("stays", 3, 9 * kS);
  close.served_by = "1009";
  close.close_request = true;
  t.add(close);

  const AffinitySummary a = t.summary();
  CHECK(a.verified);
  CHECK(a.conversations == 4);
  CHECK(a.conversations_moved == 3);
  CHECK(a.moves == 4);
  CHECK(a.transitions == 6);
  CHECK(a.moves_back == 1);
  CHECK(a.workers == 4);  // 1001, 1002, 1003/dp0, 1003/dp1
  CHECK(a.requests_with_worker == 10);
  CHECK(a.max_workers_per_conversation == 2);
  CHECK(a.example_moved.size() == 3);
}

TEST_CASE("affinity is reported only with verify and is unverified when no reply names a worker") {
  MetricsAggregator off{Config{}};
  Record r = request("a", 0, 1 * kS);
  r.served_by = "1001";
  off.add(r);
  CHECK_FALSE(off.snapshot().affinity.has_value());

  MetricsAggregator on{verify_config()};
  on.add(request("a", 0, 1 * kS));  // no served_by
  const auto a = on.snapshot().affinity;
  REQUIRE(a.has_value());
  CHECK_FALSE(a->verified);
  CHECK(a->requests_without_worker == 1);

  const auto insights =
      convoy::controller::detect_insights(affinity_inputs(*a, SessionRoutingMode::kHeader));
  CHECK(convoy::test::find_insight(insights, "affinity_not_verified") != nullptr);
}

TEST_CASE("summary.json carries targets affinity and run.close_requests") {
  Config c = verify_config();
  c.target.urls = {"http://127.0.0.1:9001"};
  MetricsAggregator agg{c};
  Record a0 = request("a", 0, 1 * kS);
  a0.served_by = "1001";
  Record a1 = request("a", 1, 2 * kS);
  a1.served_by = "1002";
  Record close = request("a", 2, 3 * kS);
  close.close_request = true;
  agg.add(a0);
  agg.add(a1);
  agg.add(close);
  convoy::controller::SummaryExtras extras;
  extras.run_json = R"({"name":"x"})";
  rapidjson::Document doc;
  doc.Parse(convoy::controller::summary_json(agg.snapshot(), extras).c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc["run"]["name"].GetString() == std::string("x"));
  CHECK(doc["run"]["close_requests"].GetInt64() == 1);
  REQUIRE(doc.HasMember("targets"));
  CHECK(doc["targets"][0]["requests"].GetInt64() == 2);
  REQUIRE(doc.HasMember("affinity"));
  CHECK(doc["affinity"]["verified"].GetBool());
  CHECK(doc["affinity"]["conversations"].GetInt64() == 1);
  CHECK(doc["affinity"]["conversations_moved"].GetInt64() == 1);
  CHECK(doc["affinity"]["moves"].GetInt64() == 1);
  CHECK(doc["request_count"]["avg"].GetDouble() == doctest::Approx(2));

  MetricsAggregator plain{Config{}};
  plain.add(request("a", 0, 1 * kS));
  doc.Parse(convoy::controller::summary_json(plain.snapshot(), extras).c_str());
  CHECK_FALSE(doc.HasMember("targets"));
  CHECK_FALSE(doc.HasMember("affinity"));
  CHECK(doc["run"]["close_requests"].GetInt64() == 0);
}

TEST_CASE("records.jsonl carries subagent url_index served_by dp_rank and close_request") {
  Record r = request("child", 2, 1 * kS);
  r.subagent = 1;
  r.url_index = 1;
  r.served_by = "1001";
  r.dp_rank = 3;
  r.close_request = true;
  rapidjson::Document doc;
  doc.Parse(convoy::controller::record_json_line(r, "w-0", "host").c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc["subagent"].GetInt() == 1);
  CHECK(doc["url_index"].GetUint() == 1);
  CHECK(doc["served_by"].GetString() == std::string("1001"));
  CHECK(doc["dp_rank"].GetInt64() == 3);
  CHECK(doc["close_request"].GetBool());

  doc.Parse(convoy::controller::record_json_line(request("lead", 0, 1 * kS), "w", "h").c_str());
  CHECK(doc["subagent"].GetInt() == -1);
  CHECK(doc["served_by"].IsNull());
  CHECK(doc["dp_rank"].IsNull());
  CHECK_FALSE(doc["close_request"].GetBool());
}

TEST_CASE("affinity insight: moves on nearly every turn in header mode name the missing TTL") {
  AffinityTracker t;
  session(t, "a", {{"1", 0}, {"2", 1}, {"3", 1}, {"4", 1}}, 1 * kS);
  session(t, "b", {{"2", 0}, {"3", 1}, {"1", 1}, {"4", 1}}, 1 * kS);
  const auto insights = convoy::controller::detect_insights(
      affinity_inputs(t.summary(), SessionRoutingMode::kHeader));
  const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
  REQUIRE(i != nullptr);
  CHECK(i->severity == "warning");
  CHECK(has_text(i->problem, "2 sessions of 2 moved"));
  REQUIRE(i->likely_causes.size() == 5);
  CHECK(has_text(i->likely_causes[0], "without --router-session-affinity-ttl-secs"));
  CHECK(has_text(i->likely_causes[0], "100% of turns moved, 6 of 6"));
  CHECK(i->example_correlation_ids.size() == 2);
}

TEST_CASE("affinity insight: moves only after long idle gaps name the think time") {
  AffinityTracker t(5);  // timeout_s 5
  // Stays after 1 s gaps, moves after a 10 s gap; 1001 keeps serving, so it did not go away.
  session(t, "a", {{"1001", 0}, {"1001", 1}, {"1002", 10}, {"1002", 1}}, 1 * kS);
  session(t, "b", {{"1001", 0}, {"1001", 1}, {"1001", 1}, {"1001", 1}, {"1001", 30}}, 1 * kS);
  SUBCASE("header mode: the gaps separate moves from stays") {
    // b's last gap (30 s, a stay) would spoil the separation: drop it by using a fresh tracker.
    AffinityTracker h;
    session(h, "a", {{"1001", 0}, {"1001", 1}, {"1002", 10}, {"1002", 1}}, 1 * kS);
    session(h, "b", {{"1001", 0}, {"1001", 1}, {"1001", 1}, {"1001", 1}, {"1001", 1}}, 1 * kS);
    const auto insights = convoy::controller::detect_insights(
        affinity_inputs(h.summary(), SessionRoutingMode::kHeader));
    const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
    REQUIRE(i != nullptr);
    CHECK(has_text(i->likely_causes[0], "Think time"));
    CHECK(has_text(i->likely_causes[0], "at least 10.0 s"));
    CHECK(has_text(i->likely_causes[0], "at most 1.0 s"));
  }
  SUBCASE("bind mode: the move came after more than timeout_s") {
    const auto insights = convoy::controller::detect_insights(
        affinity_inputs(t.summary(), SessionRoutingMode::kBind, 5));
    const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
    REQUIRE(i != nullptr);
    CHECK(has_text(i->likely_causes[0], "Think time"));
    CHECK(has_text(i->likely_causes[0], "1 of 1 moves came after an idle gap longer than"));
  }
}

TEST_CASE("affinity insight: moves back between a few workers name several frontends") {
  AffinityTracker t;
  session(t, "a", {{"1", 0}, {"1", 1}, {"2", 1}, {"2", 1}, {"1", 1}, {"1", 1}}, 1 * kS);
  session(t, "b", {{"2", 0}, {"2", 1}, {"2", 1}, {"2", 1}, {"2", 1}, {"2", 1}}, 1 * kS);
  const auto insights = convoy::controller::detect_insights(
      affinity_inputs(t.summary(), SessionRoutingMode::kHeader));
  const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
  REQUIRE(i != nullptr);
  CHECK(has_text(i->likely_causes[0], "Several frontends"));
  CHECK(has_text(i->likely_causes[0], "1 of 2 moves went back"));
}

TEST_CASE("affinity insight: one move away from a worker that went away names it") {
  AffinityTracker t;
  // Worker 1001 serves the first turns until ~3.5 s, then nothing: every session moves once.
  session(t, "a", {{"1001", 0}, {"1001", 1}, {"1002", 5}, {"1002", 1}, {"1002", 1}}, 1 * kS);
  session(t, "b", {{"1001", 0}, {"1001", 1}, {"1003", 5}, {"1003", 1}, {"1003", 1}}, 1 * kS);
  const auto insights = convoy::controller::detect_insights(
      affinity_inputs(t.summary(), SessionRoutingMode::kHeader));
  const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
  REQUIRE(i != nullptr);
  // Moves after 5 s gaps where stays had 1 s: the think-time cause is supported too and comes
  // first in the issue's order; the gone worker is listed right after it with its evidence.
  CHECK(has_text(i->likely_causes[0], "Think time"));
  CHECK(has_text(i->likely_causes[1], "A worker went away"));
  CHECK(has_text(i->likely_causes[1], "2 of 2 moved sessions moved once"));
}

// Occasional moves to new workers, none after long gaps: the real 1.6.1 frontend's KV router
// without --router-session-affinity-ttl-secs moves 27% of turns just so (tests/dynamo), so the
// missing TTL comes first and soft mode, which looks the same from the client, right after it.
TEST_CASE("affinity insight: occasional moves to new workers name the missing TTL, then soft") {
  AffinityTracker t;
  session(t, "a", {{"1", 0}, {"1", 1}, {"2", 1}, {"2", 1}, {"3", 1}}, 1 * kS);
  session(t, "b", {{"1", 0}, {"1", 1}, {"1", 1}, {"1", 1}, {"1", 1}, {"1", 1}}, 1 * kS);
  const auto insights = convoy::controller::detect_insights(
      affinity_inputs(t.summary(), SessionRoutingMode::kHeader));
  const Insight* i = convoy::test::find_insight(insights, "affinity_moves");
  REQUIRE(i != nullptr);
  CHECK(has_text(i->likely_causes[0], "without --router-session-affinity-ttl-secs"));
  CHECK(has_text(i->likely_causes[0], "no worker gone"));
  CHECK(has_text(i->likely_causes[1], "--router-session-affinity-mode soft"));
  CHECK(has_text(i->likely_causes[1], "evidence"));
}

TEST_CASE("no affinity insight without moves or without verify") {
  AffinityTracker t;
  session(t, "a", {{"1", 0}, {"1", 1}, {"1", 1}}, 1 * kS);
  auto in = affinity_inputs(t.summary(), SessionRoutingMode::kHeader);
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in), "affinity_moves") ==
        nullptr);
  AffinityTracker moved;
  session(moved, "a", {{"1", 0}, {"2", 1}}, 1 * kS);
  in = affinity_inputs(moved.summary(), SessionRoutingMode::kHeader);
  in.verify = false;
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in), "affinity_moves") ==
        nullptr);
}

TEST_CASE("one URL failing alone gets an insight naming it") {
  InsightInputs in;
  in.targets = {{"http://127.0.0.1:9001", 50, 0}, {"http://127.0.0.1:9002", 1, 40}};
  auto insights = convoy::controller::detect_insights(in);
  const Insight* i = convoy::test::find_insight(insights, "target_url_failing");
  REQUIRE(i != nullptr);
  CHECK(i->severity == "error");
  CHECK(has_text(i->title, "http://127.0.0.1:9002"));
  CHECK(i->affected_requests == 40);
  CHECK(std::count_if(insights.begin(), insights.end(),
                      [](const Insight& x) { return x.id == "target_url_failing"; }) == 1);

  in.targets[0].errors = 50;  // both fail: not "alone"
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in), "target_url_failing") ==
        nullptr);
}

TEST_CASE("Dynamo's 256-byte session id rejection gets its insight") {
  InsightInputs in;
  in.errors = {group(400, "session affinity ID must not exceed N bytes")};
  in.errors[0].example = "session affinity ID must not exceed 256 bytes";
  const auto insights = convoy::controller::detect_insights(in);
  const Insight* i = convoy::test::find_insight(insights, "session_id_too_long");
  REQUIRE(i != nullptr);
  CHECK(i->affected_requests == 4);
  CHECK(has_text(i->problem, "HTTP 400"));
  CHECK(has_text(i->problem, "256 bytes"));
}

TEST_CASE("the real 1.6.1's bare \"Invalid request\" is explained by what convoy sent") {
  SUBCASE("with a session header over 256 bytes in target.headers: session_id_too_long") {
    InsightInputs in;
    in.session_headers_in_target = {"X-Dynamo-Session-ID"};
    in.longest_target_session_header_bytes = 300;
    in.errors = {group(400, "Invalid request")};
    const auto insights = convoy::controller::detect_insights(in);
    const Insight* i = convoy::test::find_insight(insights, "session_id_too_long");
    REQUIRE(i != nullptr);
    CHECK(has_text(i->problem, "HTTP 400: \"Invalid request\""));
    CHECK(has_text(i->problem, "300 bytes"));
    CHECK(convoy::test::find_insight(insights, "affinity_invalid_request") == nullptr);
  }
  SUBCASE("in header mode otherwise: both causes, and where to look") {
    InsightInputs in;
    in.session_routing_mode = SessionRoutingMode::kHeader;
    in.errors = {group(400, "Invalid request")};
    const auto insights = convoy::controller::detect_insights(in);
    const Insight* i = convoy::test::find_insight(insights, "affinity_invalid_request");
    REQUIRE(i != nullptr);
    CHECK(i->likely_causes.size() == 2);
    CHECK(has_text(i->investigate[0], "invalid request parameters"));
    CHECK(convoy::test::find_insight(insights, "session_id_too_long") == nullptr);
  }
  SUBCASE("without session routing, a generic 400 is not Dynamo's affinity") {
    InsightInputs in;
    in.errors = {group(400, "Invalid request")};
    const auto insights = convoy::controller::detect_insights(in);
    CHECK(convoy::test::find_insight(insights, "affinity_invalid_request") == nullptr);
    CHECK(convoy::test::find_insight(insights, "session_id_too_long") == nullptr);
  }
}

TEST_CASE("a full affinity table gets its insight with what to lower") {
  SUBCASE("the table's own message") {
    InsightInputs in;
    in.sessions_started = 70'000;
    in.errors = {group(429, "session affinity entry limit reached")};
    const auto insights = convoy::controller::detect_insights(in);
    const Insight* i = convoy::test::find_insight(insights, "affinity_table_full");
    REQUIRE(i != nullptr);
    CHECK(has_text(i->problem, "65,536"));
    CHECK(has_text(i->problem, "70000 sessions"));
    CHECK(has_text(i->likely_causes[0], "idle"));
    CHECK(has_text(i->likely_causes[1], "does not free a binding"));
    CHECK(has_text(i->fixes[0], "Lower --router-session-affinity-ttl-secs"));
  }
  SUBCASE("the frontend's public overload message, only in header mode") {
    InsightInputs in;
    in.errors = {group(529, "Service temporarily overloaded")};
    CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in),
                                     "affinity_table_full") == nullptr);
    in.session_routing_mode = SessionRoutingMode::kHeader;
    CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in),
                                     "affinity_table_full") != nullptr);
  }
}

TEST_CASE("a conflict with an explicit worker or DP-rank pin gets its insight") {
  for (const char* message :
       {"session ID is bound to worker N, not N", "session ID is bound to DP rank N, not N",
        "session ID has worker-only affinity and cannot add DP rank N",
        "DP rank requires an explicit worker for session affinity"}) {
    CAPTURE(message);
    InsightInputs in;
    in.errors = {group(400, message)};
    CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in),
                                     "affinity_pin_conflict") != nullptr);
  }
  InsightInputs unrelated;
  unrelated.errors = {group(400, "bad request")};
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(unrelated),
                                   "affinity_pin_conflict") == nullptr);
  InsightInputs unavailable;  // an engine session whose worker died is no pin conflict
  unavailable.errors = {group(500, "session ID is bound to worker N, which is unavailable")};
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(unavailable),
                                   "affinity_pin_conflict") == nullptr);
}

TEST_CASE("add_session_routing_inputs takes the config and the snapshot") {
  Config c = verify_config();
  c.session_routing.timeout_s = 42;
  c.target.headers = {{"X-Session-ID", "s"}, {"Authorization", "x"}};
  c.target.urls = {"http://127.0.0.1:9001", "http://127.0.0.1:9002"};
  MetricsAggregator agg{c};
  agg.add(request("a", 0, 1 * kS));
  agg.add(failure(1, 2 * kS));
  InsightInputs in;
  convoy::controller::add_session_routing_inputs(c, agg.snapshot(), &in);
  CHECK(in.timeout_s == 42);
  CHECK(in.verify);
  CHECK(in.affinity.has_value());
  CHECK(in.sessions_started == 2);
  REQUIRE(in.targets.size() == 2);
  CHECK(in.targets[1].errors == 1);
  REQUIRE(in.session_headers_in_target.size() == 1);
  CHECK(in.session_headers_in_target[0] == "X-Session-ID");
  CHECK(in.longest_target_session_header_bytes == 1);
  CHECK(convoy::test::find_insight(convoy::controller::detect_insights(in),
                                   "session_header_in_target_headers") != nullptr);
}
