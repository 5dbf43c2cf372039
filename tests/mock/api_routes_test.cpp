// POST /v1/responses and POST /v1/messages on the mock: the events and bodies of each API as
// Dynamo 1.6.1 writes them, exact output lengths, usage, reasoning, and each route's errors.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "mock/response_store.hpp"
#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

struct NamedEvent {
  std::string type;  // the `event:` line ("" when none)
  std::string data;
};

// Each "event: T\ndata: D" block of an SSE body, in order.
std::vector<NamedEvent> named_events(const std::string& body) {
  std::vector<NamedEvent> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    const std::string block = body.substr(pos, end == std::string::npos ? end : end - pos);
    NamedEvent e;
    size_t line = 0;
    while (line < block.size()) {
      const size_t next = block.find('\n', line);
      const std::string text = block.substr(line, next == std::string::npos ? next : next - line);
      if (text.rfind("event: ", 0) == 0) e.type = text.substr(7);
      if (text.rfind("data: ", 0) == 0) e.data = text.substr(6);
      if (next == std::string::npos) break;
      line = next + 1;
    }
    if (!e.data.empty()) out.push_back(e);
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  return out;
}

std::vector<std::string> types_of(const std::vector<NamedEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.type);
  return out;
}

Options api_options() {
  auto options = test_options();
  options.itl_ms = 0.2;
  options.speedup = 50;
  return options;
}

const char* kResponsesInput =
    R"("input":[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"}])";

}  // namespace

TEST_CASE("mock /v1/responses streams Dynamo's event sequence with usage") {
  auto options = api_options();
  options.reasoning_tokens = 2;
  RunningMock mock(options);
  Client client(mock.port);
  const auto r =
      client.post("/v1/responses", std::string(R"({"model":"mock-model",)") + kResponsesInput +
                                       R"(,"max_output_tokens":5,"stream":true})");
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type").find("text/event-stream") != std::string::npos);
  const auto events = named_events(r.body);
  const std::vector<std::string> expected = {"response.created",
                                             "response.in_progress",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.reasoning_text.delta",
                                             "response.reasoning_text.delta",
                                             "response.output_text.delta",
                                             "response.output_text.delta",
                                             "response.output_text.delta",
                                             "response.output_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.incomplete",
                                             ""};
  CHECK(types_of(events) == expected);
  REQUIRE(events.size() == expected.size());
  CHECK(events.back().data == "[DONE]");
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const auto doc = parse_json(events[i].data);
    REQUIRE(doc.IsObject());
    CHECK(std::string(doc["type"].GetString()) == events[i].type);
    CHECK(doc["sequence_number"].GetInt64() == static_cast<int64_t>(i));
  }
  const auto created = parse_json(events[0].data);
  const std::string id = created["response"]["id"].GetString();
  CHECK(id.rfind("resp_", 0) == 0);
  const auto last = parse_json(events[events.size() - 2].data);
  CHECK(std::string(last["response"]["id"].GetString()) == id);
  const auto& usage = last["response"]["usage"];
  CHECK(usage["output_tokens"].GetInt64() == 5);
  CHECK(usage["output_tokens_details"]["reasoning_tokens"].GetInt64() == 2);
  CHECK(usage["input_tokens"].GetInt64() > 0);
  CHECK(usage.HasMember("input_tokens_details"));
}

TEST_CASE("mock /v1/responses without streaming: one response object") {
  RunningMock mock(api_options());
  Client client(mock.port);
  const auto r =
      client.post("/v1/responses", R"({"model":"mock-model","input":"hi","max_output_tokens":3})");
  REQUIRE(r.status == 200);
  const auto doc = parse_json(r.body);
  REQUIRE(doc.IsObject());
  CHECK(std::string(doc["object"].GetString()) == "response");
  CHECK(doc["usage"]["output_tokens"].GetInt64() == 3);
  CHECK(std::string(doc["output"][0]["content"][0]["type"].GetString()) == "output_text");
}

TEST_CASE("mock /v1/messages streams Anthropic's events with usage and thinking") {
  auto options = api_options();
  options.reasoning_tokens = 1;
  RunningMock mock(options);
  Client client(mock.port);
  const auto r = client.post(
      "/v1/messages",
      R"({"model":"mock-model","system":"be brief","messages":[{"role":"user","content":"hi"}],)"
      R"("max_tokens":3,"stream":true})");
  REQUIRE(r.status == 200);
  const auto events = named_events(r.body);
  const std::vector<std::string> expected = {"message_start",
                                             "content_block_start",
                                             "content_block_delta",
                                             "content_block_stop",
                                             "content_block_start",
                                             "content_block_delta",
                                             "content_block_delta",
                                             "content_block_stop",
                                             "message_delta",
                                             "message_stop",
                                             ""};
  CHECK(types_of(events) == expected);
  REQUIRE(events.size() == expected.size());
  const auto start = parse_json(events[0].data);
  CHECK(std::string(start["message"]["id"].GetString()).rfind("msg_", 0) == 0);
  CHECK(start["message"]["usage"]["input_tokens"].GetInt64() > 0);
  CHECK(std::string(parse_json(events[2].data)["delta"]["type"].GetString()) == "thinking_delta");
  CHECK(std::string(parse_json(events[5].data)["delta"]["type"].GetString()) == "text_delta");
  const auto delta = parse_json(events[8].data);
  CHECK(std::string(delta["delta"]["stop_reason"].GetString()) == "max_tokens");
  CHECK(delta["usage"]["output_tokens"].GetInt64() == 3);
}

TEST_CASE("mock /v1/messages without streaming, and its errors in Anthropic's shape") {
  RunningMock mock(api_options());
  Client client(mock.port);
  SUBCASE("a whole message") {
    const auto r = client.post(
        "/v1/messages",
        R"({"model":"mock-model","messages":[{"role":"user","content":"hi"}],"max_tokens":4})");
    REQUIRE(r.status == 200);
    const auto doc = parse_json(r.body);
    CHECK(std::string(doc["type"].GetString()) == "message");
    CHECK(doc["usage"]["output_tokens"].GetInt64() == 4);
    CHECK(std::string(doc["content"][0]["type"].GetString()) == "text");
  }
  SUBCASE("max_tokens is required") {
    const auto r = client.post(
        "/v1/messages", R"({"model":"mock-model","messages":[{"role":"user","content":"hi"}]})");
    CHECK(r.status == 400);
    const auto doc = parse_json(r.body);
    CHECK(std::string(doc["type"].GetString()) == "error");
    CHECK(std::string(doc["error"]["type"].GetString()) == "invalid_request_error");
    CHECK(std::string(doc["error"]["message"].GetString()).find("missing field `max_tokens`") !=
          std::string::npos);
  }
  SUBCASE("an unknown model") {
    const auto r = client.post(
        "/v1/messages",
        R"({"model":"nope","messages":[{"role":"user","content":"hi"}],"max_tokens":4})");
    CHECK(r.status == 404);
    CHECK(std::string(parse_json(r.body)["error"]["type"].GetString()) == "not_found_error");
  }
  SUBCASE("responses keeps Dynamo's own error shape") {
    const auto r = client.post("/v1/responses", R"({"model":"nope","input":"hi"})");
    CHECK(r.status == 404);
    CHECK(parse_json(r.body)["code"].GetInt() == 404);
  }
}

}  // namespace convoy::mock::test

namespace convoy::mock::test {

TEST_CASE("mock /v1/responses: previous_response_id chains to the kept conversation") {
  RunningMock mock(api_options());
  Client client(mock.port);
  const auto first = client.post(
      "/v1/responses", R"({"model":"mock-model","input":"hello there","max_output_tokens":4})");
  REQUIRE(first.status == 200);
  const auto one = parse_json(first.body);
  const std::string id = one["id"].GetString();
  const int64_t first_input = one["usage"]["input_tokens"].GetInt64();
  const auto second = client.post("/v1/responses", R"({"model":"mock-model","input":"more",)"
                                                   R"("previous_response_id":")" +
                                                       id + R"(","max_output_tokens":2})");
  REQUIRE(second.status == 200);
  const auto two = parse_json(second.body);
  CHECK(std::string(two["previous_response_id"].GetString()) == id);
  // The first prompt, its 4 output tokens and the new input.
  CHECK(two["usage"]["input_tokens"].GetInt64() > first_input + 4);
  SUBCASE("an id the mock never gave is a 400") {
    const auto r = client.post(
        "/v1/responses", R"({"model":"mock-model","input":"x","previous_response_id":"resp_0"})");
    CHECK(r.status == 400);
    CHECK(r.body.find("Previous response with id 'resp_0' not found.") != std::string::npos);
  }
}

TEST_CASE("mock response store: bounded, the oldest id forgotten first") {
  ResponseStore store(2);
  store.put("a", "1");
  store.put("b", "2");
  store.put("c", "3");
  CHECK(store.size() == 2);
  CHECK_FALSE(store.find("a"));
  CHECK(store.find("c") == std::optional<std::string>("3"));
}

}  // namespace convoy::mock::test
