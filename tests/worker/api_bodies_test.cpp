// Request bodies of the Responses and Messages APIs, and the route each endpoint posts to.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "worker/api_bodies.hpp"
#include "worker/conversation_runner.hpp"
#include "worker/request_builder.hpp"

using namespace convoy::worker;
using convoy::proto::Endpoint;
using convoy::proto::Turn;
using convoy::proto::WorkerSettings;

namespace {

WorkerSettings api_settings(Endpoint endpoint) {
  WorkerSettings s;
  s.endpoint = endpoint;
  s.model = "m";
  s.streaming = true;
  s.use_server_token_counts = true;
  return s;
}

Turn api_turn(const std::string& text, int64_t max_tokens = 0) {
  Turn t;
  t.user_text = text;
  t.max_tokens = max_tokens;
  return t;
}

const std::vector<ChatMessage> kApiHistory = {{"user", "u0"}, {"assistant", "a0"}};

}  // namespace

TEST_CASE("responses bodies: input items with roles, max_output_tokens, stream") {
  WorkerSettings s = api_settings(Endpoint::kResponses);
  SUBCASE("system, history and the new user item in order; no stream_options") {
    auto body = format_body(s, "sys", kApiHistory, api_turn("u1", 16));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","input":[{"role":"system","content":"sys"},)"
          R"({"role":"user","content":"u0"},{"role":"assistant","content":"a0"},)"
          R"({"role":"user","content":"u1"}],"max_output_tokens":16,"stream":true})");
  }
  SUBCASE("no limit: no max_output_tokens") {
    auto body = format_body(s, "", {}, api_turn("hi"));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","input":[{"role":"user","content":"hi"}],"stream":true})");
  }
  SUBCASE("messages_json items go in as input items") {
    Turn t = api_turn("ignored", 4);
    t.messages_json = R"([{"role":"user","content":"a"},{"role":"user","content":"b"}])";
    auto body = format_body(s, "", kApiHistory, t);
    CHECK(body["input"].Size() == 4);
    CHECK(std::string(body["input"][3]["content"].GetString()) == "b");
  }
  SUBCASE("with a previous response id: only this turn's input, chained") {
    RequestBuilder builder(s);
    rapidjson::Document body;
    std::string error;
    REQUIRE(builder.try_format("sys", kApiHistory, api_turn("u1", 8), &body, &error, "resp_7"));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","input":[{"role":"user","content":"u1"}],)"
          R"("previous_response_id":"resp_7","max_output_tokens":8,"stream":true})");
  }
}

TEST_CASE("messages bodies: system apart, messages, max_tokens always, stream") {
  WorkerSettings s = api_settings(Endpoint::kMessages);
  SUBCASE("system as its own field; history and the new user message") {
    auto body = format_body(s, "sys", kApiHistory, api_turn("u1", 16));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","system":"sys","messages":[{"role":"user","content":"u0"},)"
          R"({"role":"assistant","content":"a0"},{"role":"user","content":"u1"}],)"
          R"("max_tokens":16,"stream":true})");
  }
  SUBCASE("no limit on the turn: the API's required max_tokens gets the default") {
    auto body = format_body(s, "", {}, api_turn("hi"));
    CHECK_FALSE(body.HasMember("system"));
    CHECK(body["max_tokens"].GetInt64() == kMessagesDefaultMaxTokens);
  }
  SUBCASE("system items of messages_json join the system field; tool speaks as user") {
    Turn t = api_turn("ignored", 4);
    t.messages_json = R"([{"role":"system","content":"more"},{"role":"tool","content":"42"},)"
                      R"({"role":"user","content":[{"type":"text","text":"go"}]}])";
    auto body = format_body(s, "sys", {}, t);
    CHECK(std::string(body["system"].GetString()) == "sys\nmore");
    REQUIRE(body["messages"].Size() == 2);
    CHECK(std::string(body["messages"][0]["role"].GetString()) == "user");
    CHECK(std::string(body["messages"][1]["content"].GetString()) == "go");
  }
  SUBCASE("max_completion_tokens does not apply") {
    s.max_completion_tokens = true;
    auto body = format_body(s, "", {}, api_turn("hi", 3));
    CHECK(body["max_tokens"].GetInt64() == 3);
    CHECK_FALSE(body.HasMember("max_completion_tokens"));
  }
}

TEST_CASE("each endpoint's route, and target.path in its place") {
  CHECK(endpoint_url("http://h:1", Endpoint::kResponses) == "http://h:1/v1/responses");
  CHECK(endpoint_url("http://h:1/v1/", Endpoint::kMessages) == "http://h:1/v1/messages");
  CHECK(endpoint_url("http://h:1", Endpoint::kChat) == "http://h:1/v1/chat/completions");
  CHECK(endpoint_url("http://h:1/", Endpoint::kMessages, "/anthropic/v1/messages") ==
        "http://h:1/anthropic/v1/messages");
  CHECK(endpoint_url("http://h:1/v1", Endpoint::kChat, "/v2/chat") == "http://h:1/v1/v2/chat");
}
