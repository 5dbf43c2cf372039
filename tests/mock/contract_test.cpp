// Session contracts: each contract's accept/reject matrix with exact status
// and message, and what each contract does with pins when workers come and go.
#include <doctest/doctest.h>

#include <string>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

// A one-token chat request carrying `control` as nvext.session_control (omitted when empty).
std::string body_with(const std::string& control) {
  std::string nvext = R"("nvext":{"extra_fields":["worker_id"])";
  if (!control.empty()) nvext += R"(,"session_control":)" + control;
  return chat_body({{"user", "hello"}}, 1, false, nvext + "}");
}

// serde's column for a string value: one past its closing quote.
std::string column_after(const std::string& body, const std::string& token) {
  const auto at = body.find(token);
  REQUIRE(at != std::string::npos);
  return std::to_string(at + token.size());
}

int worker_of(const Response& res) {
  const auto doc = parse_json(res.body);
  REQUIRE(doc.IsObject());
  REQUIRE(doc.HasMember("nvext"));
  return served_worker(doc);
}

std::string error_message(const Response& res) {
  const auto doc = parse_json(res.body);
  REQUIRE(doc.IsObject());
  CHECK(doc["code"].GetInt() == res.status);
  return doc["message"].GetString();
}

const std::string kOpen = R"({"session_id":"s-1","action":"open","timeout":30})";
const std::string kBind = R"({"session_id":"s-1","action":"bind","timeout":30})";
const std::string kClose = R"({"session_id":"s-1","action":"close"})";
const std::string kBare = R"({"session_id":"s-1"})";
const std::string kBogus = R"({"session_id":"s-1","action":"frobnicate"})";

Response send(Client& client, const std::string& control) {
  return client.post("/v1/chat/completions", body_with(control));
}

TEST_CASE("contract none accepts and ignores any session_control") {
  auto options = test_options();
  options.contract = Contract::kNone;
  RunningMock mock(options);
  Client client(mock.port);
  for (const auto& control : {std::string(), kOpen, kBind, kClose, kBare, kBogus}) {
    CAPTURE(control);
    CHECK(send(client, control).status == 200);
  }
  CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Empty());
}

TEST_CASE("contract legacy accepts open/close/bare and rejects other actions like serde") {
  auto options = test_options();
  options.contract = Contract::kLegacy;
  RunningMock mock(options);
  Client client(mock.port);

  for (const auto& control : {std::string(), kOpen, kClose, kBare}) {
    CAPTURE(control);
    CHECK(send(client, control).status == 200);
  }
  SUBCASE("bind is an unknown variant, with serde's position") {
    const auto body = body_with(kBind);
    const auto res = client.post("/v1/chat/completions", body);
    CHECK(res.status == 400);
    CHECK(res.body ==
          R"({"message":"Failed to deserialize the JSON body into the target type: )"
          R"(nvext.session_control.action: unknown variant `bind`, expected `open` or `close` )"
          R"(at line 1 column )" +
              column_after(body, R"("bind")") + R"(","type":"Bad Request","code":400})");
  }
  SUBCASE("the message names the variant actually sent") {
    const auto res = send(client, kBogus);
    CHECK(res.status == 400);
    CHECK(error_message(res).find("unknown variant `frobnicate`, expected `open` or `close`") !=
          std::string::npos);
  }
  SUBCASE("a control without session_id is rejected") {
    const auto res = send(client, R"({"action":"open"})");
    CHECK(res.status == 400);
    CHECK(error_message(res).find("missing field `session_id`") != std::string::npos);
  }
}

TEST_CASE("contract bind accepts open/bind/close/bare and rejects unknown actions") {
  auto options = test_options();
  options.contract = Contract::kBind;
  RunningMock mock(options);
  Client client(mock.port);
  for (const auto& control : {std::string(), kOpen, kBind, kBare, kClose}) {
    CAPTURE(control);
    CHECK(send(client, control).status == 200);
  }
  const auto body = body_with(kBogus);
  const auto res = client.post("/v1/chat/completions", body);
  CHECK(res.status == 400);
  CHECK(error_message(res) ==
        "Failed to deserialize the JSON body into the target type: nvext.session_control.action: "
        "unknown variant `frobnicate`, expected one of `open`, `bind`, `close` at line 1 column " +
            column_after(body, R"("frobnicate")"));
}

TEST_CASE("contract header rejects any session_control and pins by X-Dynamo-Session-ID") {
  auto options = test_options();
  options.contract = Contract::kHeader;
  options.affinity_ttl_s = 60;
  RunningMock mock(options);
  Client client(mock.port);

  SUBCASE("every session_control is an unknown field") {
    for (const auto& control : {kOpen, kBind, kClose, kBare, kBogus}) {
      CAPTURE(control);
      const auto res = send(client, control);
      CHECK(res.status == 400);
      CHECK(res.header("content-type") == "application/json");
      const auto doc = parse_json(res.body);
      CHECK(std::string(doc["type"].GetString()) == "Bad Request");
      CHECK(std::string(doc["message"].GetString()).find("unknown field `session_control`") !=
            std::string::npos);
    }
    CHECK(send(client, "").status == 200);
  }
  SUBCASE("the first request binds; later ones follow; a down worker re-routes") {
    const Headers h{{"X-Dynamo-Session-ID", "hs-1"}};
    const int first = worker_of(client.post("/v1/chat/completions", body_with(""), h));
    for (int i = 0; i < 6; ++i) {
      CHECK(worker_of(client.post("/v1/chat/completions",
                                  chat_body({{"user", "turn " + std::to_string(i)}}, 1, false,
                                            R"("nvext":{"extra_fields":["worker_id"]})"),
                                  h)) == first);
    }
    REQUIRE(client.post("/mock/workers/" + std::to_string(first) + "/down", "").status == 200);
    const int moved = worker_of(client.post("/v1/chat/completions", body_with(""), h));
    CHECK(moved != first);
    CHECK(worker_of(client.post("/v1/chat/completions", body_with(""), h)) == moved);
  }
}

TEST_CASE("legacy open pins only with engine sessions, and a lost worker fails until close") {
  auto options = test_options();
  options.contract = Contract::kLegacy;

  SUBCASE("engine sessions: open pins, bare follows, down is 500, close recovers") {
    options.engine_sessions = true;
    RunningMock mock(options);
    Client client(mock.port);
    const int pinned = worker_of(send(client, kOpen));
    const auto sessions = parse_json(client.get("/mock/sessions").body);
    REQUIRE(sessions["sessions"].Size() == 1);
    CHECK(std::string(sessions["sessions"][0]["kind"].GetString()) == "engine");
    CHECK(sessions["sessions"][0]["worker"].GetInt() == pinned);
    for (int i = 0; i < 4; ++i) CHECK(worker_of(send(client, kBare)) == pinned);

    REQUIRE(client.post("/mock/workers/" + std::to_string(pinned) + "/down", "").status == 200);
    const auto failed = send(client, kBare);
    CHECK(failed.status == 500);
    CHECK(parse_json(failed.body)["type"].GetString() == std::string("Internal Server Error"));
    CHECK(send(client, kBare).status == 500);
    const auto closed = send(client, kClose);
    CHECK(closed.status == 200);
    CHECK(worker_of(closed) != pinned);
    CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Empty());
    CHECK(send(client, kBare).status == 200);  // unknown sessions are never errors
  }
  SUBCASE("no engine sessions: open succeeds and pins nothing") {
    options.engine_sessions = false;
    RunningMock mock(options);
    Client client(mock.port);
    CHECK(send(client, kOpen).status == 200);
    CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Empty());
  }
}

TEST_CASE("bind pins at the router, a lost worker re-routes and re-binds, close unpins") {
  auto options = test_options();
  options.contract = Contract::kBind;
  RunningMock mock(options);
  Client client(mock.port);

  const int pinned = worker_of(send(client, kBind));
  auto sessions = parse_json(client.get("/mock/sessions").body);
  REQUIRE(sessions["sessions"].Size() == 1);
  CHECK(std::string(sessions["sessions"][0]["kind"].GetString()) == "router");
  for (int i = 0; i < 4; ++i) CHECK(worker_of(send(client, kBare)) == pinned);

  REQUIRE(client.post("/mock/workers/" + std::to_string(pinned) + "/down", "").status == 200);
  const int moved = worker_of(send(client, kBind));
  CHECK(moved != pinned);
  CHECK(worker_of(send(client, kBare)) == moved);
  REQUIRE(client.post("/mock/workers/" + std::to_string(pinned) + "/up", "").status == 200);
  CHECK(worker_of(send(client, kBare)) == moved);

  CHECK(send(client, kClose).status == 200);
  CHECK(parse_json(client.get("/mock/sessions").body)["sessions"].Empty());
  CHECK(client.post("/mock/workers/99/down", "").status == 404);
}

}  // namespace
}  // namespace convoy::mock::test
