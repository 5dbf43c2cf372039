// ConversationRunner against a FakeTransport on the real EventLoop: turn pacing, history,
// failure paths, cancellation injection, and the two ways a run stops.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "worker/runner_harness.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::ConversationRunner;
using convoy::worker::EventLoop;
using convoy::worker::HttpResponse;
using convoy::worker::RunnerSink;
using convoy::worker::test::FakeTransport;

using namespace convoy::worker::test;

TEST_CASE("runner: turn 0 starts at start_ns and turn k+1 at the end of turn k plus its delay") {
  Harness h;
  const int64_t start_ns = steady_now_ns() + 20 * kMs;
  proto::Conversation c = conversation(1, 2, start_ns);
  c.turns[1].delay_ms = 30;
  h.runner.assign(c);
  REQUIRE(h.run_until_started(1));
  CHECK(h.http.started()[0].started_ns >= start_ns);

  HttpResponse r = FakeTransport::ok("first");
  r.end_ns = steady_now_ns();
  const int64_t end0 = r.end_ns;
  REQUIRE(h.http.complete(h.http.started()[0].id, r));
  REQUIRE(h.run_until_started(2));
  CHECK(h.http.started()[1].started_ns >= end0 + 30 * kMs);

  REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok("second")));
  REQUIRE(h.run_until_ends(1));
  REQUIRE(h.records.size() == 2);
  CHECK(h.records[0].intended_ns == start_ns);
  CHECK(h.records[1].intended_ns == end0 + 30 * kMs);  // intended, not when it was sent
  CHECK(h.records[0].turn_index == 0);
  CHECK_FALSE(h.records[0].final_turn);
  CHECK(h.records[1].final_turn);
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("runner: a late conversation starts at once and is measured from its intended start") {
  Harness h;
  const int64_t start_ns = steady_now_ns() - 50 * kMs;
  h.runner.assign(conversation(1, 1, start_ns));
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.records.at(0).intended_ns == start_ns);
}

TEST_CASE("runner: the next turn's history carries the server's reply or the recorded one") {
  proto::WorkerSettings s = settings();
  std::string expected;
  SUBCASE("live") {
    s.history = proto::HistoryMode::kLive;
    expected = "the server said this";
  }
  SUBCASE("recorded") {
    s.history = proto::HistoryMode::kRecorded;
    expected = "recorded 0";
  }
  Harness h(s);
  h.runner.assign(conversation(1, 2));
  REQUIRE(h.run_until_started(1));
  CHECK(h.messages(0) == std::vector<std::pair<std::string, std::string>>{{"user", "user 0"}});
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok("the server said this")));
  REQUIRE(h.run_until_started(2));
  CHECK(h.messages(1) == std::vector<std::pair<std::string, std::string>>{
                             {"user", "user 0"}, {"assistant", expected}, {"user", "user 1"}});
}

TEST_CASE("runner: a failed request ends its conversation and no later turn is sent") {
  Harness h;
  h.runner.assign(conversation(1, 3));
  REQUIRE(h.run_until_started(1));
  HttpResponse r;
  proto::EndReason expected{};
  SUBCASE("aborted by an error") {
    r.http_status = 500;
    r.error = {proto::ErrorKind::kHttpStatus, 500, "", "HTTP 500"};
    r.request_reached_server = true;
    expected = proto::EndReason::kAborted;
  }
  SUBCASE("cancelled") {
    r.error = {proto::ErrorKind::kCancelled, 0, "", "cancelled"};
    expected = proto::EndReason::kCancelled;
  }
  REQUIRE(h.http.complete(h.http.started()[0].id, r));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == expected);
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].error.kind == r.error.kind);
  CHECK_FALSE(h.records[0].final_turn);
  CHECK(h.http.started().size() == 1);
  CHECK(h.runner.active_conversations() == 0);
  CHECK(h.loop.timer_count() == 0);  // nothing left scheduled for it
}

TEST_CASE("runner: a turn that cannot be formatted is recorded and aborts its conversation") {
  Harness h;
  proto::Conversation c = conversation(1, 2);
  c.turns[0].extra_json = "[1, 2]";  // must be an object
  h.runner.assign(c);
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kAborted);
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].error.kind == proto::ErrorKind::kOther);
  CHECK(h.records[0].error.type == "request_format");
  CHECK(h.http.started().empty());
}

TEST_CASE("runner: cancellation injection picks the same requests in every run") {
  // Which conversations' requests carry cancel_after_ms, for one seed, assigned in `order`.
  auto picked = [](uint64_t seed, bool reverse) {
    proto::WorkerSettings s = settings();
    s.seed = seed;
    s.cancel_fraction = 0.3;
    s.cancel_after_ms = 60'000;  // armed, never reached in this test
    Harness h(s);
    for (uint64_t k = 0; k < 200; ++k) h.runner.assign(conversation(reverse ? 199 - k : k, 2));
    REQUIRE(h.run_until_started(200));
    std::set<uint64_t> out;
    for (const auto& started : h.http.started()) {
      const bool injected = started.request.cancel_after_ms >= 0;
      if (injected) CHECK(started.request.cancel_after_ms == doctest::Approx(60'000));
      // The correlation id names the conversation.
      for (const auto& line : started.request.headers) {
        if (injected && line.rfind("X-Correlation-ID: corr-", 0) == 0) {
          out.insert(std::stoull(line.substr(23)));
        }
      }
    }
    return out;
  };
  const std::set<uint64_t> first = picked(42, false);
  CHECK(picked(42, true) == first);  // the order of assignment does not matter
  CHECK(first.size() > 30);
  CHECK(first.size() < 90);
  for (uint64_t k = 0; k < 200; ++k) {
    CHECK(first.count(k) == (convoy::worker::cancel_injected(42, k, 0, 0.3) ? 1u : 0u));
  }
  CHECK(picked(43, false) != first);  // the seed chooses them
}

TEST_CASE("runner: an injected cancellation ends its conversation as cancelled") {
  proto::WorkerSettings s = settings();
  s.cancel_fraction = 1;
  s.cancel_after_ms = 5;
  Harness h(s);
  h.runner.assign(conversation(1, 2));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kCancelled);
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].error.kind == proto::ErrorKind::kCancelled);
  CHECK(h.http.cancels() == 1);
}

TEST_CASE("runner: stop_starting ends idle conversations and lets requests in flight finish") {
  Harness h;
  h.runner.assign(conversation(1, 2));                                  // in flight
  h.runner.assign(conversation(2, 2, steady_now_ns() + 60'000 * kMs));  // not started yet
  REQUIRE(h.run_until_started(1));
  h.runner.stop_starting();
  REQUIRE(h.ends.size() == 1);  // at once
  CHECK(h.ends[0].conversation_index == 2);
  CHECK(h.ends[0].reason == proto::EndReason::kCancelled);
  CHECK(h.http.cancels() == 0);
  CHECK(h.http.in_flight() == 1);

  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(2));
  CHECK(h.ends[1].conversation_index == 1);
  CHECK(h.ends[1].reason == proto::EndReason::kCancelled);  // its next turn is not sent
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].error.kind == proto::ErrorKind::kNone);  // the request itself finished
  CHECK(h.http.started().size() == 1);

  h.runner.assign(conversation(3, 1));  // after a stop: ends at once, nothing sent
  REQUIRE(h.ends.size() == 3);
  CHECK(h.ends[2].reason == proto::EndReason::kCancelled);
  CHECK(h.http.started().size() == 1);
}

TEST_CASE("runner: cancel_all cancels the requests in flight and ends every conversation") {
  Harness h;
  h.runner.assign(conversation(1, 2));
  h.runner.assign(conversation(2, 2));
  h.runner.assign(conversation(3, 2, steady_now_ns() + 60'000 * kMs));
  REQUIRE(h.run_until_started(2));
  h.runner.cancel_all();
  CHECK(h.http.cancels() == 2);  // each turn in flight, one by one (releases are spared)
  CHECK(h.ends.size() == 1);     // the idle one at once; the cancelled transfers report later
  REQUIRE(h.run_until_ends(3));
  CHECK(h.http.in_flight() == 0);
  CHECK(h.runner.active_conversations() == 0);
  for (const auto& e : h.ends) CHECK(e.reason == proto::EndReason::kCancelled);
  REQUIRE(h.records.size() == 2);
  for (const auto& r : h.records) CHECK(r.error.kind == proto::ErrorKind::kCancelled);
  CHECK(h.http.started().size() == 2);
}

TEST_CASE("runner: the session-routing overlay rides on each request and its record") {
  proto::WorkerSettings s = settings();
  SUBCASE("bind: bind on every turn but the last, close on the last") {
    s.session_routing.mode = proto::SessionRoutingMode::kBind;
    Harness h(s);
    h.runner.assign(conversation(1, 2));
    REQUIRE(h.run_until_started(1));
    REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
    REQUIRE(h.run_until_started(2));
    REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
    REQUIRE(h.run_until_ends(1));
    std::vector<std::string> actions;
    for (size_t n = 0; n < 2; ++n) {
      rapidjson::Document body;
      body.Parse(h.http.started()[n].request.body.c_str());
      const auto& control = body["nvext"]["session_control"];
      CHECK(std::string(control["session_id"].GetString()) == "corr-1");
      actions.emplace_back(control["action"].GetString());
      CHECK(h.records[n].session_control.session_id == "corr-1");
    }
    CHECK(actions == std::vector<std::string>{"bind", "close"});
  }
  SUBCASE("header: the conversation's id in the configured header") {
    s.session_routing.mode = proto::SessionRoutingMode::kHeader;
    s.session_routing.header_name = "X-Session";
    Harness h(s);
    h.runner.assign(conversation(1, 1));
    REQUIRE(h.run_until_started(1));
    const auto& headers = h.http.started()[0].request.headers;
    CHECK(std::count(headers.begin(), headers.end(), "X-Session: corr-1") == 1);
    CHECK(h.http.started()[0].request.body.find("session_control") == std::string::npos);
  }
  SUBCASE("legacy: a failed conversation leaves nothing in the open set") {
    s.session_routing.mode = proto::SessionRoutingMode::kLegacy;
    Harness h(s);
    h.runner.assign(conversation(1, 3));
    REQUIRE(h.run_until_started(1));
    CHECK(h.runner.legacy_open_sessions() == 1);  // the open is in flight
    HttpResponse r;
    r.error = {proto::ErrorKind::kConnect, 0, "", "connection refused"};
    r.request_reached_server = false;
    REQUIRE(h.http.complete(h.http.started()[0].id, r));
    REQUIRE(h.run_until_ends(1));
    CHECK(h.ends[0].reason == proto::EndReason::kAborted);
    CHECK(h.runner.legacy_open_sessions() == 0);
  }
}
