// The header contract as Dynamo's frontend behaves: affinity only with
// --affinity-ttl-s, hard and soft bindings, Dynamo's id and table limits with its errors,
// session-final and parent links in /mock/stats, several frontends with separate tables.
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

Options header_options() {
  auto o = test_options();
  o.contract = Contract::kHeader;
  o.workers = 2;
  o.router_mode = RouterMode::kRoundRobin;  // fresh routing moves; a binding holds
  return o;
}

// One one-token chat turn; returns the serving worker, or -status on an error.
int turn(Client& client, const Headers& headers, int max_tokens = 1, int dp = 1) {
  const auto res = client.post(
      "/v1/chat/completions",
      chat_body({{"user", "hi"}}, max_tokens, false, R"("nvext":{"extra_fields":["worker_id"]})"),
      headers);
  if (res.status != 200) return -res.status;
  return served_worker(parse_json(res.body), dp);
}

rapidjson::Document stats(Client& client) { return parse_json(client.get("/mock/stats").body); }

std::string header_error_message(const Response& res) {
  return parse_json(res.body)["message"].GetString();
}

TEST_CASE(
    "header contract: without --affinity-ttl-s nothing binds and every turn is routed fresh") {
  auto options = header_options();
  RunningMock mock(options);
  Client client(mock.port);
  std::set<int> workers;
  for (int i = 0; i < 4; ++i) workers.insert(turn(client, {{"X-Dynamo-Session-ID", "s-1"}}));
  CHECK(workers == std::set<int>{0, 1});
  const auto s = stats(client);
  CHECK(s["live_pins"].GetInt() == 0);
  CHECK(s["affinity"]["misses"].GetInt() == 0);
  // No table, no limit: a long id is accepted.
  CHECK(turn(client, {{"X-Dynamo-Session-ID", std::string(300, 'x')}}) >= 0);
}

TEST_CASE("header contract: with a TTL the trimmed session id binds every turn to one worker") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);
  const int first = turn(client, {{"X-Dynamo-Session-ID", "  s-1 "}});
  REQUIRE(first >= 0);
  for (int i = 0; i < 3; ++i) CHECK(turn(client, {{"X-Dynamo-Session-ID", "s-1"}}) == first);
  // An agent-native header names a session too; X-Dynamo-Session-ID wins when both are sent.
  CHECK(turn(client, {{"x-session-id", "s-1"}}) == first);
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "s-1"}, {"x-session-id", "other"}}) == first);
  const auto sessions = parse_json(client.get("/mock/sessions").body);
  REQUIRE(sessions["sessions"].Size() == 1);
  CHECK(std::string(sessions["sessions"][0]["session_id"].GetString()) == "s-1");
  const auto s = stats(client);
  CHECK(s["affinity"]["misses"].GetInt() == 1);
  CHECK(s["affinity"]["hits"].GetInt() == 5);
}

TEST_CASE("header contract: an id over 256 bytes is answered 400 \"Invalid request\" as in 1.6.1") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);
  CHECK(turn(client, {{"X-Dynamo-Session-ID", std::string(256, 'a')}}) >= 0);
  // Trimmed first, then measured.
  CHECK(turn(client, {{"X-Dynamo-Session-ID", " " + std::string(256, 'b') + " "}}) >= 0);
  const auto res = client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 1, false),
                               {{"X-Dynamo-Session-ID", std::string(257, 'c')}});
  CHECK(res.status == 400);
  CHECK(header_error_message(res) == "Invalid request");  // all the real 1.6.1 frontend says
  CHECK(stats(client)["affinity"]["rejected_id_too_long"].GetInt() == 1);
}

TEST_CASE("header contract: a full affinity table routes new sessions without affinity (1.6.1)") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  options.affinity_max_entries = 2;
  RunningMock mock(options);
  Client client(mock.port);
  const int a = turn(client, {{"X-Dynamo-Session-ID", "a"}});
  REQUIRE(a >= 0);
  REQUIRE(turn(client, {{"X-Dynamo-Session-ID", "b"}}) >= 0);
  // No error: "c" is served, routed fresh (round robin), and never binds.
  std::set<int> served;
  for (int i = 0; i < 4; ++i) served.insert(turn(client, {{"X-Dynamo-Session-ID", "c"}}));
  CHECK(served == std::set<int>{0, 1});
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "a"}}) == a);
  // Session-final frees nothing: the table stays full.
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "b"}, {"X-Dynamo-Session-Final", "true"}}) >= 0);
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "d"}}) >= 0);
  const auto s = stats(client);
  CHECK(s["affinity"]["unbound_table_full"].GetInt() == 5);
  CHECK(s["live_pins"].GetInt() == 2);
}

TEST_CASE("header contract hard mode: a bound worker taken down is invalidated, the turn retried") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);
  const int first = turn(client, {{"X-Dynamo-Session-ID", "s"}});
  REQUIRE(first >= 0);
  REQUIRE(client.post("/mock/workers/" + std::to_string(first) + "/down", "").status == 200);
  const int moved = turn(client, {{"X-Dynamo-Session-ID", "s"}});
  CHECK(moved == 1 - first);
  // The session re-bound where the retry ran, and stays there once the worker is back.
  REQUIRE(client.post("/mock/workers/" + std::to_string(first) + "/up", "").status == 200);
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "s"}}) == moved);
  CHECK(stats(client)["affinity"]["invalidated"].GetInt() == 1);
}

// Holds worker `session`'s bound worker busy with a long request while `probe` runs.
int turn_while_busy(RunningMock& mock, const std::string& session) {
  Client control(mock.port);
  std::jthread busy([&] {
    Client c(mock.port);
    turn(c, {{"X-Dynamo-Session-ID", session}}, 100);  // 100 tokens at 5 ms: 0.5 s
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool active = false;
  while (!active && std::chrono::steady_clock::now() < deadline) {
    const auto s = stats(control);
    for (const auto& w : s["workers"].GetArray()) active = active || w["active"].GetInt() > 0;
  }
  REQUIRE(active);
  return turn(control, {{"X-Dynamo-Session-ID", session}});
}

TEST_CASE(
    "header contract soft mode: a saturated bound worker is passed over and the session moves") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  options.max_num_seqs = 1;
  options.affinity_mode = AffinityMode::kSoft;
  RunningMock mock(options);
  Client client(mock.port);
  const int first = turn(client, {{"X-Dynamo-Session-ID", "s"}});
  REQUIRE(first >= 0);
  const int second = turn_while_busy(mock, "s");
  CHECK(second == 1 - first);
  // Rebound where it ran.
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "s"}}) == second);
  CHECK(stats(client)["affinity"]["soft_moves"].GetInt() == 1);

  SUBCASE("hard mode waits for the bound worker instead") {
    auto hard = header_options();
    hard.affinity_ttl_s = 60;
    hard.max_num_seqs = 1;
    RunningMock hard_mock(hard);
    Client c(hard_mock.port);
    const int bound = turn(c, {{"X-Dynamo-Session-ID", "s"}});
    CHECK(turn_while_busy(hard_mock, "s") == bound);
    CHECK(stats(c)["affinity"]["soft_moves"].GetInt() == 0);
  }
}

TEST_CASE("X-Dynamo-Session-Final is counted in /mock/stats and changes nothing else") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);
  const Headers h = {{"X-Correlation-ID", "s"}, {"X-Dynamo-Session-ID", "s"}};
  const int first = turn(client, h);
  auto final_headers = h;
  final_headers.emplace_back("X-Dynamo-Session-Final", "true");
  CHECK(turn(client, final_headers) == first);
  auto s = stats(client);
  CHECK(s["session_headers"]["session_final"].GetInt() == 1);
  CHECK(s["sessions"]["by_id"]["s"]["finals"].GetInt() == 1);
  // The binding survives the final turn.
  CHECK(s["live_pins"].GetInt() == 1);
  CHECK(turn(client, h) == first);
  final_headers.back().second = "no";
  CHECK(turn(client, final_headers) == first);
  s = stats(client);
  CHECK(s["session_headers"]["session_final"].GetInt() == 1);
  CHECK(s["session_headers"]["session_final_false"].GetInt() == 1);
}

TEST_CASE("parent links show in /mock/stats") {
  auto options = header_options();
  RunningMock mock(options);
  Client client(mock.port);
  REQUIRE(turn(client, {{"X-Correlation-ID", "lead"}, {"X-Dynamo-Session-ID", "lead"}}) >= 0);
  REQUIRE(turn(client, {{"X-Correlation-ID", "child"},
                        {"X-Dynamo-Session-ID", "child"},
                        {"X-Dynamo-Parent-Session-ID", "lead"}}) >= 0);
  // A parent equal to the session id is dropped.
  REQUIRE(turn(client, {{"X-Correlation-ID", "self"},
                        {"X-Dynamo-Session-ID", "self"},
                        {"X-Dynamo-Parent-Session-ID", "self"}}) >= 0);
  const auto s = stats(client);
  const auto& by_id = s["sessions"]["by_id"];
  CHECK(std::string(by_id["child"]["parent"].GetString()) == "lead");
  CHECK_FALSE(by_id["lead"].HasMember("parent"));
  CHECK_FALSE(by_id["self"].HasMember("parent"));
  CHECK(s["session_headers"]["with_parent"].GetInt() == 1);
}

TEST_CASE("several frontends without ingress hashing split a session, session hashing keeps it") {
  auto options = header_options();
  options.affinity_ttl_s = 60;
  options.frontends = 2;
  const Headers h = {{"X-Correlation-ID", "s"}, {"X-Dynamo-Session-ID", "s"}};

  SUBCASE("ingress by request: each frontend binds the session on its own") {
    RunningMock mock(options);
    Client client(mock.port);
    std::set<int> workers;
    for (int i = 0; i < 4; ++i) workers.insert(turn(client, h));
    CHECK(workers == std::set<int>{0, 1});
    const auto s = stats(client);
    CHECK(s["sessions"]["by_id"]["s"]["frontends"].Size() == 2);
    CHECK(s["sessions"]["by_id"]["s"]["switches"].GetInt() >= 1);
    CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Size() == 2);
  }
  SUBCASE("ingress hashing on the session header: one frontend, one worker") {
    options.ingress_hash = IngressHash::kSession;
    RunningMock mock(options);
    Client client(mock.port);
    std::set<int> workers;
    for (int i = 0; i < 4; ++i) workers.insert(turn(client, h));
    CHECK(workers.size() == 1);
    const auto s = stats(client);
    CHECK(s["sessions"]["by_id"]["s"]["frontends"].Size() == 1);
    CHECK(s["sessions"]["by_id"]["s"]["switches"].GetInt() == 0);
  }
}

}  // namespace
}  // namespace convoy::mock::test

namespace convoy::mock::test {
namespace {

TEST_CASE("an explicit worker pin routes exactly, and a bound session must agree with it") {
  auto options = header_options();
  options.workers = 4;
  options.data_parallel_size = 2;  // instances 1000 (workers 0, 1) and 1001 (workers 2, 3)
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);
  // x-worker-instance-id and x-dp-rank name the worker exactly; nvext.backend_instance_id too.
  CHECK(turn(client, {{"x-worker-instance-id", "1001"}, {"x-dp-rank", "1"}}, 1, 2) == 3);
  const auto res = client.post(
      "/v1/chat/completions",
      chat_body(
          {{"user", "hi"}}, 1, false,
          R"("nvext":{"extra_fields":["worker_id"],"backend_instance_id":1001,"dp_rank":0})"));
  REQUIRE(res.status == 200);
  CHECK(served_worker(parse_json(res.body), 2) == 2);

  // A new session binds where the pin sent it; later pins must agree (400 "Invalid request").
  REQUIRE(turn(client,
               {{"X-Dynamo-Session-ID", "s"}, {"x-worker-instance-id", "1000"}, {"x-dp-rank", "1"}},
               1, 2) == 1);
  CHECK(turn(client, {{"X-Dynamo-Session-ID", "s"}, {"x-worker-instance-id", "1000"}}, 1, 2) == 1);
  auto conflict = client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 1, false),
                              {{"X-Dynamo-Session-ID", "s"}, {"x-worker-instance-id", "1001"}});
  CHECK(conflict.status == 400);
  CHECK(header_error_message(conflict) == "Invalid request");  // 1.6.1 names no detail
  conflict = client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 1, false),
                         {{"X-Dynamo-Session-ID", "s"}, {"x-dp-rank", "0"}});
  CHECK(conflict.status == 400);
  CHECK(header_error_message(conflict) == "Invalid request");
}

}  // namespace
}  // namespace convoy::mock::test
