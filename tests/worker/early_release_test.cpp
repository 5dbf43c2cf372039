// Sessions the server still holds (until their timeout, unless released): a conversation that ends
// early in bind or legacy mode (cancelled, failed, cut by the run's end), or in header mode with
// final_marker close_request, gets the release its final turn would have sent; each ConversationEnd
// says how many sessions were opened and how many were left open. ConversationRunner on a
// FakeTransport.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "worker/runner_harness.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;
using convoy::worker::test::FakeTransport;

using namespace convoy::worker::test;
using convoy::test::to_json;

namespace {

proto::WorkerSettings routed(proto::SessionRoutingMode mode) {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = mode;
  s.session_routing.timeout_s = 30;
  return s;
}

// The n-th request's nvext.session_control as JSON text ("" when none) and its max_tokens.
std::string control_of(const HttpRequest& request) {
  rapidjson::Document body;
  body.Parse(request.body.c_str());
  if (!body.HasMember("nvext") || !body["nvext"].HasMember("session_control")) return "";
  return to_json(body["nvext"]["session_control"]);
}

int64_t max_tokens_of(const HttpRequest& request) {
  rapidjson::Document body;
  body.Parse(request.body.c_str());
  return body.HasMember("max_tokens") ? body["max_tokens"].GetInt64() : -1;
}

bool has_header(const HttpRequest& request, const std::string& line) {
  for (const auto& h : request.headers) {
    if (h == line) return true;
  }
  return false;
}

HttpResponse failed(proto::ErrorKind kind, int64_t status, bool reached) {
  HttpResponse r;
  r.http_status = status;
  r.error = {kind, status, "", "failed"};
  r.request_reached_server = reached;
  return r;
}

}  // namespace

namespace {

// One 4-turn conversation in `mode` whose turn 1 ends with `cut`; checks the release it sends.
void check_release_after(proto::SessionRoutingMode mode, const std::string& first_control,
                         const HttpResponse& cut, proto::EndReason reason) {
  Harness h(routed(mode));
  h.runner.assign(conversation(1, 4));
  REQUIRE(h.run_until_started(1));
  CHECK(control_of(h.http.started()[0].request) == first_control);
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(2));
  REQUIRE(h.http.complete(h.http.started()[1].id, cut));
  REQUIRE(h.run_until_started(3));
  const HttpRequest& release = h.http.started()[2].request;
  CHECK(control_of(release) == R"({"session_id":"corr-1","action":"close"})");
  CHECK(max_tokens_of(release) == 1);
  CHECK(release.request_timeout_s <= 3);
  CHECK(release.cancel_after_ms < 0);  // never picked by cancellation injection
  CHECK(h.ends.empty());               // the family waits for its release
  REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == reason);
  CHECK(h.ends[0].sessions_opened == 1);
  CHECK(h.ends[0].sessions_left_open == 0);
  REQUIRE(h.records.size() == 3);
  const proto::Record& r = h.records[2];
  CHECK(r.early_release);
  CHECK_FALSE(r.close_request);
  CHECK_FALSE(r.final_turn);
  CHECK(r.turn_index == 1);  // the turn it cut
  CHECK(convoy::worker::session_control_json(r.session_control) ==
        R"({"session_id":"corr-1","action":"close"})");
  CHECK(proto::session_release_only(r));
  CHECK_FALSE(proto::session_release_only(h.records[1]));
  CHECK(h.http.started().size() == 3);
}

}  // namespace

TEST_CASE("early release: a conversation that ends early sends the close its final turn would") {
  HttpResponse cut;
  proto::EndReason reason{};
  SUBCASE("cancelled mid-turn") {
    cut = failed(proto::ErrorKind::kCancelled, 0, true);
    reason = proto::EndReason::kCancelled;
  }
  SUBCASE("failed with a 500") {
    cut = failed(proto::ErrorKind::kHttpStatus, 500, true);
    reason = proto::EndReason::kAborted;
  }
  INFO("bind");
  check_release_after(proto::SessionRoutingMode::kBind,
                      R"({"session_id":"corr-1","action":"bind","timeout":30})", cut, reason);
  INFO("legacy");
  check_release_after(proto::SessionRoutingMode::kLegacy,
                      R"({"session_id":"corr-1","action":"open","timeout":30})", cut, reason);
}

TEST_CASE("early release: a release that fails leaves its session counted open") {
  Harness h(routed(proto::SessionRoutingMode::kBind));
  h.runner.assign(conversation(1, 3));
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(2));
  REQUIRE(h.http.complete(h.http.started()[1].id, failed(proto::ErrorKind::kCancelled, 0, true)));
  REQUIRE(h.run_until_started(3));
  REQUIRE(
      h.http.complete(h.http.started()[2].id, failed(proto::ErrorKind::kHttpStatus, 503, true)));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].sessions_opened == 1);
  CHECK(h.ends[0].sessions_left_open == 1);
  CHECK(h.http.started().size() == 3);  // one release, never retried
}

TEST_CASE("early release: nothing to release when no request could have opened the session") {
  proto::WorkerSettings s = routed(proto::SessionRoutingMode::kBind);
  HttpResponse first;
  SUBCASE("turn 0 never reached the server") {
    first = failed(proto::ErrorKind::kConnect, 0, false);
  }
  SUBCASE("turn 0 was refused (a bind this frontend does not know)") {
    first = failed(proto::ErrorKind::kHttpStatus, 400, true);
  }
  SUBCASE("mode off") {
    s.session_routing.mode = proto::SessionRoutingMode::kOff;
    first = failed(proto::ErrorKind::kCancelled, 0, true);
  }
  SUBCASE("header mode without close_request: Dynamo frees nothing on a release") {
    s.session_routing.mode = proto::SessionRoutingMode::kHeader;
    s.session_routing.final_marker = proto::FinalMarker::kLastTurn;
    first = failed(proto::ErrorKind::kCancelled, 0, true);
  }
  Harness h(s);
  h.runner.assign(conversation(1, 3));
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, first));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.http.started().size() == 1);
  CHECK(h.ends[0].sessions_opened == 0);
  CHECK(h.ends[0].sessions_left_open == 0);
}

TEST_CASE("early release: a conversation that completes is closed by its final turn alone") {
  Harness h(routed(proto::SessionRoutingMode::kBind));
  h.runner.assign(conversation(1, 2));
  for (size_t n = 1; n <= 2; ++n) {
    REQUIRE(h.run_until_started(n));
    REQUIRE(h.http.complete(h.http.started()[n - 1].id, FakeTransport::ok()));
  }
  REQUIRE(h.run_until_ends(1));
  CHECK(h.http.started().size() == 2);
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  CHECK(h.ends[0].sessions_opened == 1);
  CHECK(h.ends[0].sessions_left_open == 0);
}

TEST_CASE("early release: a final turn whose close failed is released again") {
  Harness h(routed(proto::SessionRoutingMode::kBind));
  h.runner.assign(conversation(1, 2));
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(2));
  // A 503 for the final turn: its close was not taken (a 200 that broke mid-stream was).
  REQUIRE(
      h.http.complete(h.http.started()[1].id, failed(proto::ErrorKind::kHttpStatus, 503, true)));
  REQUIRE(h.run_until_started(3));
  CHECK(control_of(h.http.started()[2].request) == R"({"session_id":"corr-1","action":"close"})");
  REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.records.back().early_release);
  CHECK(h.records.back().turn_index == 1);
}

TEST_CASE("early release: the run's end releases conversations in flight and between turns") {
  Harness h(routed(proto::SessionRoutingMode::kBind));
  proto::Conversation waiting = conversation(2, 3);
  waiting.turns[1].delay_ms = 60'000;  // its next turn is far off when the run ends
  h.runner.assign(conversation(1, 3));
  h.runner.assign(waiting);
  REQUIRE(h.run_until_started(2));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(3));  // conversation 1's turn 1; conversation 2 thinks
  h.runner.cancel_all();
  // Conversation 2's release goes at once, conversation 1's once its cancelled turn reports.
  REQUIRE(h.run_until_started(5));
  CHECK(h.http.cancels() == 1);
  h.runner.cancel_all();  // a second cancel spares the releases
  CHECK(h.http.cancels() == 1);
  for (size_t n = 3; n < 5; ++n) {
    CHECK(control_of(h.http.started()[n].request) == R"({"session_id":")" +
                                                         std::string(n == 3 ? "corr-2" : "corr-1") +
                                                         R"(","action":"close"})");
    REQUIRE(h.http.complete(h.http.started()[n].id, FakeTransport::ok()));
  }
  REQUIRE(h.run_until_ends(2));
  for (const auto& e : h.ends) {
    CHECK(e.reason == proto::EndReason::kCancelled);
    CHECK(e.sessions_opened == 1);
    CHECK(e.sessions_left_open == 0);
  }
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("early release: header mode with close_request sends the close request's headers") {
  proto::WorkerSettings s = routed(proto::SessionRoutingMode::kHeader);
  s.session_routing.final_marker = proto::FinalMarker::kCloseRequest;
  Harness h(s);
  h.runner.assign(conversation(1, 3));
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(2));
  REQUIRE(h.http.complete(h.http.started()[1].id, failed(proto::ErrorKind::kCancelled, 0, true)));
  REQUIRE(h.run_until_started(3));
  const HttpRequest& release = h.http.started()[2].request;
  CHECK(has_header(release, "X-Dynamo-Session-ID: corr-1"));
  CHECK(has_header(release, "X-Dynamo-Session-Final: true"));
  CHECK(control_of(release).empty());
  REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.records.back().early_release);
  CHECK(h.ends[0].sessions_opened == 1);
  CHECK(h.ends[0].sessions_left_open == 0);
}
