// Pin expiry: TTLs run out (swept by the reaper), re-binding resets them,
// and an expired session binds afresh. Waits poll the server with a bounded deadline.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

using std::chrono::steady_clock;

// Polls `done` until it holds or `limit` passes; returns whether it held.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = steady_clock::now() + limit;
  for (int i = 0; i < 1000000 && steady_clock::now() < deadline; ++i) {
    if (done()) return true;
  }
  return done();
}

std::string control_body(const std::string& id, const std::string& action, int timeout_s) {
  std::string control = R"({"session_id":")" + id + "\"";
  if (!action.empty()) control += R"(,"action":")" + action + "\"";
  if (timeout_s > 0) control += R"(,"timeout":)" + std::to_string(timeout_s);
  control += "}";
  return chat_body({{"user", "hi"}}, 1, false,
                   R"("nvext":{"extra_fields":["worker_id"],"session_control":)" + control + "}");
}

double expires_in_ms(Client& client) {
  const auto doc = parse_json(client.get("/mock/sessions").body);
  if (doc["sessions"].Empty()) return -1;
  return doc["sessions"][0]["expires_in_ms"].GetDouble();
}

int64_t live_pins(Client& client) {
  return parse_json(client.get("/mock/stats").body)["live_pins"].GetInt64();
}

TEST_CASE("bind pins expire after their timeout and are swept by the reaper") {
  auto options = test_options();
  options.contract = Contract::kBind;
  options.speedup = 20;  // timeout 1 s -> 50 ms
  options.reaper_period_ms = 5;
  RunningMock mock(options);
  Client client(mock.port);

  REQUIRE(client.post("/v1/chat/completions", control_body("t-1", "bind", 1)).status == 200);
  CHECK(live_pins(client) == 1);
  // /mock/stats does not sweep, so reaching zero here is the reaper's doing.
  CHECK(eventually([&] { return live_pins(client) == 0; }));
  CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Empty());

  SUBCASE("an expired session binds afresh") {
    REQUIRE(client.post("/v1/chat/completions", control_body("t-1", "bind", 1)).status == 200);
    CHECK(live_pins(client) == 1);
  }
  SUBCASE("a bare turn after expiry is routed, not pinned") {
    REQUIRE(client.post("/v1/chat/completions", control_body("t-1", "", 0)).status == 200);
    CHECK(live_pins(client) == 0);
  }
}

TEST_CASE("re-binding resets the TTL, legacy turns refresh it") {
  auto options = test_options();
  options.speedup = 5;  // timeout 2 s -> 400 ms
  options.reaper_period_ms = 1000;

  SUBCASE("bind") {
    options.contract = Contract::kBind;
    RunningMock mock(options);
    Client client(mock.port);
    REQUIRE(client.post("/v1/chat/completions", control_body("r-1", "bind", 2)).status == 200);
    REQUIRE(eventually([&] {
      const double left = expires_in_ms(client);
      return left >= 0 && left < 250;
    }));
    // A bare turn follows the pin but does not extend it.
    REQUIRE(client.post("/v1/chat/completions", control_body("r-1", "", 0)).status == 200);
    CHECK(expires_in_ms(client) < 250);
    REQUIRE(client.post("/v1/chat/completions", control_body("r-1", "bind", 2)).status == 200);
    CHECK(expires_in_ms(client) > 330);
  }
  SUBCASE("legacy with engine sessions") {
    options.contract = Contract::kLegacy;
    options.engine_sessions = true;
    RunningMock mock(options);
    Client client(mock.port);
    REQUIRE(client.post("/v1/chat/completions", control_body("r-2", "open", 2)).status == 200);
    REQUIRE(eventually([&] {
      const double left = expires_in_ms(client);
      return left >= 0 && left < 250;
    }));
    REQUIRE(client.post("/v1/chat/completions", control_body("r-2", "", 0)).status == 200);
    CHECK(expires_in_ms(client) > 330);
  }
}

TEST_CASE("header affinity expires after --affinity-ttl-s of idleness") {
  auto options = test_options();
  options.contract = Contract::kHeader;
  options.affinity_ttl_s = 1;
  options.speedup = 20;  // 50 ms
  options.reaper_period_ms = 5;
  RunningMock mock(options);
  Client client(mock.port);
  REQUIRE(client
              .post("/v1/chat/completions", chat_body({{"user", "x"}}, 1, false),
                    {{"X-Dynamo-Session-ID", "h-1"}})
              .status == 200);
  CHECK(live_pins(client) == 1);
  CHECK(eventually([&] { return live_pins(client) == 0; }));
}

}  // namespace
}  // namespace convoy::mock::test
