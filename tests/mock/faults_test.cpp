// Seeded fault injection.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

std::string stream_body(int64_t max_tokens) {
  return chat_body({{"user", "faults"}}, max_tokens, true,
                   R"("stream_options":{"include_usage":true})");
}

std::string error_pattern(uint16_t port, int requests) {
  Client client(port);
  std::string pattern;
  for (int i = 0; i < requests; ++i) {
    const auto res = client.post("/v1/chat/completions", chat_body({{"user", "x"}}, 1, false));
    pattern += res.status == 200 ? '.' : (res.status == 500 ? 'E' : '?');
  }
  return pattern;
}

TEST_CASE("error-rate answers 500 in Dynamo's shape, reproducibly per seed") {
  auto options = test_options();
  options.seed = 3;
  options.speedup = 20;

  SUBCASE("rate 1 fails everything") {
    options.error_rate = 1;
    RunningMock mock(options);
    Client client(mock.port);
    const auto res = client.post("/v1/chat/completions", stream_body(3));
    CHECK(res.status == 500);
    const auto doc = parse_json(res.body);
    CHECK(doc["code"].GetInt() == 500);
    CHECK(std::string(doc["type"].GetString()) == "Internal Server Error");
    CHECK(parse_json(client.get("/mock/stats").body)["faults"]["error"].GetInt() == 1);
  }
  SUBCASE("the same seed gives the same faults") {
    options.error_rate = 0.5;
    std::string first;
    {
      RunningMock mock(options);
      first = error_pattern(mock.port, 40);
      Client(mock.port).post("/mock/reset", "");
      CHECK(error_pattern(mock.port, 40) == first);
    }
    RunningMock again(options);
    CHECK(error_pattern(again.port, 40) == first);
    CHECK(first.find('.') != std::string::npos);
    CHECK(first.find('E') != std::string::npos);
    CHECK(first.find('?') == std::string::npos);
  }
}

TEST_CASE("stream faults: reset, malformed event, stall") {
  auto options = test_options();
  options.itl_ms = 0.1;
  options.speedup = 10;

  SUBCASE("reset cuts the connection mid-stream") {
    options.reset_rate = 1;
    RunningMock mock(options);
    Client client(mock.port);
    const auto res = client.post("/v1/chat/completions", stream_body(8));
    CHECK(res.status == 0);
    CHECK_FALSE(res.error.empty());
    // Non-streaming requests are not cut, and the server keeps serving.
    CHECK(client.post("/v1/chat/completions", chat_body({{"user", "x"}}, 2, false)).status == 200);
  }
  SUBCASE("malformed inserts one event that is not JSON") {
    options.malformed_rate = 1;
    RunningMock mock(options);
    Client client(mock.port);
    const auto res = client.post("/v1/chat/completions", stream_body(8));
    REQUIRE(res.status == 200);
    int invalid = 0;
    int tokens = 0;
    for (const auto& data : sse_data(res.body)) {
      if (data == "[DONE]") continue;
      const auto doc = parse_json(data);
      if (doc.HasParseError()) {
        ++invalid;
      } else if (!doc["choices"].Empty() && doc["choices"][0]["delta"].HasMember("content")) {
        ++tokens;
      }
    }
    CHECK(invalid == 1);
    CHECK(tokens == 8);
  }
  SUBCASE("stall pauses the stream for stall-ms") {
    options.stall_ms = 150;
    RunningMock mock(options);
    Client client(mock.port);
    const auto start = std::chrono::steady_clock::now();
    const auto res = client.post("/v1/chat/completions", stream_body(4));
    const auto elapsed = std::chrono::steady_clock::now() - start;
    REQUIRE(res.status == 200);
    CHECK(sse_data(res.body).size() == 4 + 3);  // tokens, the finish chunk, usage, [DONE]
    CHECK(elapsed >= std::chrono::milliseconds(150));
    CHECK(parse_json(client.get("/mock/stats").body)["faults"]["stall"].GetInt() == 1);
  }
}

}  // namespace
}  // namespace convoy::mock::test
