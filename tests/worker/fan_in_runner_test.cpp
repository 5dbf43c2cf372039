// ConversationRunner with fan-in (Conversation.fan_in, a JSONL row's or turn's wait_for), against
// the FakeTransport: a join starts only when every member it waits for finished, a lead's turn
// waits for the join, a failed member still lets its waiters go, and a stopped family ends once.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "worker/runner_harness.hpp"

namespace proto = convoy::proto;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;
using namespace convoy::worker::test;

namespace fan_in_runner_test {

proto::SubAgent member(int32_t parent, uint32_t spawn_after_turn, const std::string& name) {
  proto::SubAgent s;
  s.conversation_id = name;
  s.correlation_id = "corr-" + name;
  s.parent = parent;
  s.spawn_after_turn = spawn_after_turn;
  proto::Turn t;
  t.user_text = name + " 0";
  s.turns.push_back(t);
  return s;
}

std::string header_of(const HttpRequest& r, const std::string& name) {
  const std::string prefix = name + ": ";
  for (const auto& h : r.headers) {
    if (h.compare(0, prefix.size(), prefix) == 0) return h.substr(prefix.size());
  }
  return "";
}

std::string who(const Harness& h, size_t n) {
  return header_of(h.http.started().at(n).request, "X-Correlation-ID");
}

// Lead "corr-7" (2 turns); a and b spawned after its turn 1; j (spawned by no turn, anchored to
// a) waits for a and b; the lead's turn 2 waits for j.
proto::Conversation diamond() {
  proto::Conversation c = conversation(7, 2);
  c.subagents = {member(-1, 1, "a"), member(-1, 1, "b"), member(0, 0, "j")};
  c.fan_in = {{2, 0, 0}, {2, 0, 1}, {-1, 1, 2}};
  return c;
}

HttpResponse failed_reply() {
  HttpResponse r;
  r.http_status = 500;
  r.request_reached_server = true;
  r.error = {proto::ErrorKind::kHttpStatus, 500, "http", "server error"};
  return r;
}

}  // namespace fan_in_runner_test

using namespace fan_in_runner_test;

TEST_CASE("runner fan-in: a join starts after its last parent ends, the lead's turn after it") {
  proto::WorkerSettings s = settings();
  s.session_routing.mode = proto::SessionRoutingMode::kHeader;
  Harness h(s);
  h.runner.assign(diamond());
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(3));  // a and b
  CHECK(who(h, 1) == "corr-a");
  CHECK(who(h, 2) == "corr-b");

  SUBCASE("a then b") {
    REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
    CHECK_FALSE(h.run_until_started(4));  // b still runs: j waits
    REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  }
  SUBCASE("b then a") {
    REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
    CHECK_FALSE(h.run_until_started(4));
    REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
  }
  REQUIRE(h.run_until_started(4));
  CHECK(who(h, 3) == "corr-j");
  // Its parent header names the first conversation it waits for.
  CHECK(header_of(h.http.started()[3].request, "X-Dynamo-Parent-Session-ID") == "corr-a");
  CHECK_FALSE(h.run_until_started(5));  // the lead's turn 2 waits for j
  REQUIRE(h.http.complete(h.http.started()[3].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(5));
  CHECK(who(h, 4) == "corr-7");
  CHECK(h.http.started()[4].started_ns >= h.http.started()[3].started_ns);
  CHECK(h.ends.empty());
  REQUIRE(h.http.complete(h.http.started()[4].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
  CHECK(h.records.size() == 5);
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("runner fan-in: a member that failed still lets its waiters go") {
  Harness h;
  h.runner.assign(diamond());
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(3));
  REQUIRE(h.http.complete(h.http.started()[1].id, failed_reply()));
  REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(4));
  CHECK(who(h, 3) == "corr-j");
  REQUIRE(h.http.complete(h.http.started()[3].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(5));
  REQUIRE(h.http.complete(h.http.started()[4].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kAborted);  // a's failure is the family's
}

TEST_CASE("runner fan-in: a family whose lead fails before spawning ends without its join") {
  Harness h;
  h.runner.assign(diamond());
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, failed_reply()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends[0].reason == proto::EndReason::kAborted);
  CHECK(h.http.started().size() == 1);  // a, b and j never ran
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("runner fan-in: stop_starting ends a family whose join is still waiting, once") {
  Harness h;
  h.runner.assign(diamond());
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_started(3));
  REQUIRE(h.http.complete(h.http.started()[1].id, FakeTransport::ok()));
  h.runner.stop_starting();
  CHECK(h.ends.empty());  // b is still out
  REQUIRE(h.http.complete(h.http.started()[2].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.ends.size() == 1);
  CHECK(h.ends[0].reason == proto::EndReason::kCancelled);
  CHECK(h.http.started().size() == 3);  // j never started
  CHECK(h.runner.active_conversations() == 0);
}

TEST_CASE("runner fan-in: a waiting member with every wait out of range never blocks the end") {
  Harness h;
  proto::Conversation c = conversation(9, 1);
  c.subagents = {member(-1, 0, "orphan")};  // spawned by no turn and no valid wait: not run
  c.fan_in = {{0, 0, 5}};
  h.runner.assign(c);
  REQUIRE(h.run_until_started(1));
  REQUIRE(h.http.complete(h.http.started()[0].id, FakeTransport::ok()));
  REQUIRE(h.run_until_ends(1));
  CHECK(h.http.started().size() == 1);
  CHECK(h.ends[0].reason == proto::EndReason::kCompleted);
}
