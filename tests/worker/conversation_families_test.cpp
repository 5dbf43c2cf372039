// ConversationRunner with sub-agent families, final_marker headers, verify and one url per
// family, against the FakeTransport.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worker/runner_harness.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;
using namespace convoy::worker::test;

namespace {

proto::SubAgent subagent(int32_t parent, uint32_t spawn_after_turn, const std::string& name,
                         int turns) {
  proto::SubAgent s;
  s.conversation_id = "sub-" + name;
  s.correlation_id = "corr-sub-" + name;
  s.parent = parent;
  s.spawn_after_turn = spawn_after_turn;
  for (int k = 0; k < turns; ++k) {
    proto::Turn t;
    t.user_text = name + " " + std::to_string(k);
    s.turns.push_back(t);
  }
  return s;
}

// The value of header `name` in a request ("" when absent).
std::string header(const HttpRequest& r, const std::string& name) {
  const std::string prefix = name + ": ";
  for (const auto& h : r.headers) {
    if (h.compare(0, prefix.size(), prefix) == 0) return h.substr(prefix.size());
  }
  return "";
}

// Every header but the fresh X-Request-ID, in order.
std::vector<std::string> stable_headers(const HttpRequest& r) {
  std::vector<std::string> out;
  for (const auto& h : r.headers) {
    if (h.rfind("X-Request-ID: ", 0) != 0) out.push_back(h);
  }
  return out;
}

std::vector<std::string> correlation_order(const Harness& h) {
  std::vector<std::string> out;
  for (const auto& s : h.http.started()) out.push_back(header(s.request, "X-Correlation-ID"));
  return out;
}

}  // namespace

TEST_CASE("runner: a sub-agent starts when its parent's turn k ends and turn k+1 waits for it") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kHeader;
  Harness h(s);
  proto::Conversation c = conversation(4, 3);
  c.subagents = {subagent(-1, 1, "a", 2)};
  h.runner.assign(c);
  REQUIRE(h.run_until_started(1));
  CHECK(header(h.http.started()[0].request, "X-Correlation-ID") == "corr-4");
  CHECK(header(h.http.started()[0].request, "X-Dynamo-Parent-Session-ID").empty());

  // The lead's turn 0 ends: the sub-agent starts, the lead's turn 1 does not (both would be due
  // at once without the join).
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok("lead reply")));
  REQUIRE(h.run_until_started(2));
  const HttpRequest& a0 = h.http.started()[1].request;
  CHECK(header(a0, "X-Correlation-ID") == "corr-sub-a");
  CHECK(header(a0, "X-Dynamo-Session-ID") == "corr-sub-a");
  CHECK(header(a0, "X-Dynamo-Parent-Session-ID") == "corr-4");
  REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok("a reply")));
  REQUIRE(h.run_until_started(3));
  CHECK(header(h.http.started()[2].request, "X-Correlation-ID") == "corr-sub-a");  // a's turn 1
  CHECK(h.http.started().size() == 3);

  // The sub-agent has its own history, not the lead's.
  const auto a_messages = h.messages(2);
  CHECK(a_messages == std::vector<std::pair<std::string, std::string>>{
                          {"user", "a 0"}, {"assistant", "a reply"}, {"user", "a 1"}});

  HttpResponse last_of_a = FakeTransport::ok();
  last_of_a.end_ns = steady_now_ns();
  REQUIRE(h.http.complete(h.http.started()[2].id, last_of_a));
  REQUIRE(h.run_until_started(4));
  CHECK(header(h.http.started()[3].request, "X-Correlation-ID") == "corr-4");  // lead's turn 1
  CHECK(h.http.started()[3].started_ns >= last_of_a.end_ns);
  CHECK(h.messages(3).back().second == "user 1");
  CHECK(h.ends.empty());

  REQUIRE(h.http.complete(h.http.started()[3].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(5));
  REQUIRE(h.http.complete(h.http.started()[4].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].conversation_index == 4);
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);

  REQUIRE(h.records.size() == 5);
  const proto::Record& child = h.records[1];
  CHECK(child.subagent == 0);
  CHECK(child.x_correlation_id == "corr-sub-a");
  CHECK(child.conversation_id == "sub-a");
  CHECK(child.conversation_index == 4);
  CHECK(child.turn_index == 0);
  CHECK(h.records[2].final_turn);  // a's last turn
  CHECK(h.records[0].subagent == -1);
  CHECK(h.records[4].final_turn);
}

TEST_CASE("runner: sub-agents of sub-agents join their parents and the family ends once") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kBind;
  Harness h(s);
  h.http.auto_reply = [](const HttpRequest&) { return FakeTransport::ok(); };
  proto::Conversation c = conversation(7, 2);
  // a after the lead's turn 1, b (a's child) after a's turn 1, c after the lead's final turn.
  c.subagents = {subagent(-1, 1, "a", 1), subagent(0, 1, "b", 2), subagent(-1, 2, "c", 1)};
  h.runner.assign(c);
  REQUIRE(h.run_until_ends(1));
  CHECK(correlation_order(h) == std::vector<std::string>{"corr-7", "corr-sub-a", "corr-sub-b",
                                                         "corr-sub-b", "corr-7", "corr-sub-c"});
  CHECK(h.ends.size() == 1);
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  REQUIRE(h.records.size() == 6);
  CHECK(h.records.back().subagent == 2);
  // bind: every member binds and closes its own session.
  std::vector<std::string> controls;
  for (const auto& r : h.records)
    controls.push_back(r.x_correlation_id + " " +
                       convoy::worker::session_control_json(r.session_control));
  CHECK(controls == std::vector<std::string>{
                        R"(corr-7 {"session_id":"corr-7","action":"bind","timeout":300})",
                        R"(corr-sub-a {"session_id":"corr-sub-a","action":"close"})",
                        R"(corr-sub-b {"session_id":"corr-sub-b","action":"bind","timeout":300})",
                        R"(corr-sub-b {"session_id":"corr-sub-b","action":"close"})",
                        R"(corr-7 {"session_id":"corr-7","action":"close"})",
                        R"(corr-sub-c {"session_id":"corr-sub-c","action":"close"})"});
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("runner: a family stops as one: cancel_all and stop_starting reach every sub-agent") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kLegacy;
  Harness h(s);
  proto::Conversation c = conversation(2, 3);
  c.subagents = {subagent(-1, 1, "a", 2), subagent(-1, 1, "b", 2)};
  h.runner.assign(c);
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(3));  // a and b run, the lead waits
  // Every member's legacy session was opened: each gets its release (else the server holds it
  // until its timeout), which the fake answers here; the family ends once they are back.
  auto answer_releases = [&] {
    return h.run_until([&] {
      for (auto id : h.http.pending_ids()) h.http.complete(id, FakeTransport::ok());
      return !h.ends.empty();
    });
  };
  SUBCASE("cancel_all") {
    h.runner.cancel_all();
    REQUIRE(answer_releases());
    CHECK(h.ends[0].reason == proto::EndReason::kCancelled);
    REQUIRE(h.records.size() == 6);
    CHECK(h.records[1].error.kind == proto::ErrorKind::kCancelled);
    CHECK(h.records[2].error.kind == proto::ErrorKind::kCancelled);
  }
  SUBCASE("stop_starting: requests in flight finish, nothing new starts") {
    h.runner.stop_starting();
    CHECK(h.ends.empty());
    REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
    REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
    REQUIRE(answer_releases());
    CHECK(h.ends[0].reason == proto::EndReason::kCancelled);
    CHECK(h.http.started().size() == 6);
    CHECK(h.records.size() == 6);
  }
  int64_t releases = 0;
  for (const auto& r : h.records) {
    if (!r.early_release) continue;
    ++releases;
    CHECK(r.session_control.action == convoy::proto::SessionAction::kClose);
  }
  CHECK(releases == 3);  // the lead and both sub-agents
  CHECK(h.ends[0].sessions_opened == 3);
  CHECK(h.ends[0].sessions_left_open == 0);
  CHECK(h.ends.size() == 1);
  CHECK(h.runner.active_conversations() == 0);
  CHECK(h.runner.legacy_open_sessions() == 0);
}

TEST_CASE("runner: the exact session headers of every request for each final_marker") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kHeader;
  const std::vector<std::string> plain = {"X-Correlation-ID: corr-1",
                                          "X-Dynamo-Session-ID: corr-1"};
  const std::vector<std::string> marked = {
      "X-Correlation-ID: corr-1", "X-Dynamo-Session-ID: corr-1", "X-Dynamo-Session-Final: true"};
  std::vector<std::vector<std::string>> expected;
  SUBCASE("off") {
    s.session_routing.final_marker = proto::FinalMarker::kOff;
    expected = {plain, plain};
  }
  SUBCASE("last_turn") {
    s.session_routing.final_marker = proto::FinalMarker::kLastTurn;
    expected = {plain, marked};
  }
  SUBCASE("close_request") {
    s.session_routing.final_marker = proto::FinalMarker::kCloseRequest;
    expected = {plain, plain, marked};
  }
  Harness h(s);
  h.http.auto_reply = [](const HttpRequest&) { return FakeTransport::ok("reply"); };
  proto::Conversation c = conversation(1, 2);
  c.turns[1].max_tokens = 64;
  h.runner.assign(c);
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  std::vector<std::vector<std::string>> sent;
  for (const auto& started : h.http.started()) sent.push_back(stable_headers(started.request));
  CHECK(sent == expected);
  REQUIRE(h.records.size() == expected.size());
  CHECK(h.records[1].final_turn);
  CHECK_FALSE(h.records[1].close_request);
  for (const auto& started : h.http.started()) {
    CHECK(started.request.body.find("agent_context") == std::string::npos);
    CHECK(started.request.body.find("session_control") == std::string::npos);
  }
  if (expected.size() == 3) {
    // One token for the final turn's prompt, recorded apart.
    const proto::Record& close = h.records[2];
    CHECK(close.close_request);
    CHECK_FALSE(close.final_turn);
    CHECK(close.turn_index == 2);
    CHECK(close.x_correlation_id == "corr-1");
    CHECK(close.error.kind == proto::ErrorKind::kNone);
    rapidjson::Document body;
    body.Parse(h.http.started()[2].request.body.c_str());
    CHECK(body["max_tokens"].GetInt64() == 1);
    CHECK(h.messages(2) == h.messages(1));
  }
}

TEST_CASE("runner: close_request also closes each sub-agent, with its parent header") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kHeader;
  s.session_routing.final_marker = proto::FinalMarker::kCloseRequest;
  Harness h(s);
  h.http.auto_reply = [](const HttpRequest&) { return FakeTransport::ok(); };
  proto::Conversation c = conversation(3, 1);
  c.subagents = {subagent(-1, 1, "a", 1)};
  h.runner.assign(c);
  REQUIRE(h.run_until_ends(1));
  REQUIRE(h.records.size() == 4);  // lead, its close, a, its close (lead's close and a overlap)
  size_t closes = 0;
  for (size_t n = 0; n < h.http.started().size(); ++n) {
    const HttpRequest& r = h.http.started()[n].request;
    if (header(r, "X-Dynamo-Session-Final") != "true") continue;
    ++closes;
    if (header(r, "X-Correlation-ID") == "corr-sub-a") {
      CHECK(header(r, "X-Dynamo-Parent-Session-ID") == "corr-3");
    } else {
      CHECK(header(r, "X-Dynamo-Parent-Session-ID").empty());
    }
  }
  CHECK(closes == 2);
  CHECK(std::count_if(h.records.begin(), h.records.end(),
                      [](const proto::Record& r) { return r.close_request; }) == 2);
}

TEST_CASE("runner: verify asks for worker_id and records the serving worker and DP rank") {
  proto::WorkerSettings s = settings();
  s.session_routing.verify = true;
  Harness h(s);
  h.http.auto_reply = [](const HttpRequest&) {
    HttpResponse r = FakeTransport::ok();
    r.served_by = "9";
    r.dp_rank = 2;
    return r;
  };
  h.runner.assign(conversation(1, 2));
  REQUIRE(h.run_until_ends(1));
  REQUIRE(h.records.size() == 2);
  for (const auto& r : h.records) {
    CHECK(r.served_by == "9");
    CHECK(r.dp_rank == 2);
  }
  rapidjson::Document body;
  body.Parse(h.http.started()[0].request.body.c_str());
  REQUIRE(body.HasMember("nvext"));
  REQUIRE(body["nvext"].HasMember("extra_fields"));
  CHECK(std::string(body["nvext"]["extra_fields"][0].GetString()) == "worker_id");
}

TEST_CASE("runner: a family's requests all go to target.urls[url_index]") {
  proto::WorkerSettings s = settings();
  SUBCASE("one of several urls") {
    s.urls = {"http://127.0.0.1:8001", "http://127.0.0.1:8002/v1"};
    Harness h(s);
    h.http.auto_reply = [](const HttpRequest&) { return FakeTransport::ok(); };
    proto::Conversation c = conversation(1, 2);
    c.url_index = 1;
    c.subagents = {subagent(-1, 1, "a", 1)};
    h.runner.assign(c);
    REQUIRE(h.run_until_ends(1));
    REQUIRE(h.http.started().size() == 3);
    for (const auto& started : h.http.started()) {
      CHECK(started.request.url == "http://127.0.0.1:8002/v1/chat/completions");
    }
    for (const auto& r : h.records) CHECK(r.url_index == 1);
  }
  SUBCASE("no urls: target.url") {
    Harness h(s);
    h.http.auto_reply = [](const HttpRequest&) { return FakeTransport::ok(); };
    h.runner.assign(conversation(1, 1));
    REQUIRE(h.run_until_ends(1));
    CHECK(h.http.started().at(0).request.url == "http://127.0.0.1:9/v1/chat/completions");
  }
  SUBCASE("an index past the urls fails the conversation, nothing is sent") {
    s.urls = {"http://127.0.0.1:8001"};
    Harness h(s);
    proto::Conversation c = conversation(5, 2);
    c.url_index = 1;
    h.runner.assign(c);
    REQUIRE(h.ends.size() == 1);
    CHECK(h.ends[0].reason == proto::EndReason::kAborted);
    REQUIRE(h.records.size() == 1);
    CHECK(h.records[0].error.type == "url_index");
    CHECK(h.http.started().empty());
  }
}

TEST_CASE("runner: a parent does not wait for a sub-agent's close request, the family end does") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kHeader;
  s.session_routing.final_marker = proto::FinalMarker::kCloseRequest;
  Harness h(s);
  proto::Conversation c = conversation(6, 2);
  c.subagents = {subagent(-1, 1, "a", 1)};
  h.runner.assign(c);
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));  // lead 0
  REQUIRE(h.run_until_started(2));
  REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));  // a 0 (its last)
  // a's close request and the lead's turn 1 both go out: the lead did not wait for the close.
  REQUIRE(h.run_until_started(4));
  const auto& started = h.http.started();
  size_t a_close = 0;
  size_t lead_1 = 0;
  for (size_t n = 2; n < 4; ++n) {
    (header(started[n].request, "X-Correlation-ID") == "corr-sub-a" ? a_close : lead_1) = n;
  }
  CHECK(header(started[a_close].request, "X-Dynamo-Session-Final") == "true");
  CHECK(header(started[lead_1].request, "X-Correlation-ID") == "corr-6");
  REQUIRE(h.http.complete(started[lead_1].id, FakeTransport::ok()));  // lead 1 (final)
  REQUIRE(h.run_until_started(5));
  REQUIRE(h.http.complete(h.http.started()[4].id, FakeTransport::ok()));  // the lead's close
  REQUIRE(h.run_until([&] { return h.records.size() == 4; }));
  CHECK(h.ends.empty());  // a's close request is still out
  REQUIRE(h.http.complete(h.http.started()[a_close].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  CHECK(h.records.size() == 5);
}
