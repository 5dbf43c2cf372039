// Exact output lengths, and SSE framing as an independent client sees it.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

struct StreamRead {
  std::vector<std::string> tokens;  // content/text of each token chunk
  int64_t usage_completion_tokens = -1;
  bool done = false;
  bool first_has_role = false;
};

StreamRead read_stream(const std::string& body, bool chat) {
  StreamRead out;
  for (const auto& data : sse_data(body)) {
    if (data == "[DONE]") {
      out.done = true;
      continue;
    }
    const auto doc = parse_json(data);
    REQUIRE(doc.IsObject());
    if (doc.HasMember("usage")) {
      CHECK(doc["choices"].Empty());
      out.usage_completion_tokens = doc["usage"]["completion_tokens"].GetInt64();
      continue;
    }
    const auto& choice = doc["choices"][0];
    if (chat && !choice["delta"].HasMember("content")) {  // the finish chunk: no token
      CHECK(std::string(choice["finish_reason"].GetString()) == "length");
      continue;
    }
    if (chat) {
      if (out.tokens.empty()) out.first_has_role = choice["delta"].HasMember("role");
      out.tokens.emplace_back(choice["delta"]["content"].GetString());
    } else {
      out.tokens.emplace_back(choice["text"].GetString());
    }
  }
  return out;
}

TEST_CASE("mock generates exactly max_tokens / max_completion_tokens tokens") {
  auto options = test_options();
  options.itl_ms = 0.2;
  options.speedup = 50;
  RunningMock mock(options);
  Client client(mock.port);

  constexpr std::array<int64_t, 4> kLengths = {1, 2, 7, 33};

  SUBCASE("chat, streaming") {
    for (const int64_t n : kLengths) {
      CAPTURE(n);
      const auto res = client.post(
          "/v1/chat/completions",
          chat_body({{"user", "count"}}, n, true, R"("stream_options":{"include_usage":true})"));
      REQUIRE(res.status == 200);
      const auto read = read_stream(res.body, true);
      CHECK(static_cast<int64_t>(read.tokens.size()) == n);
      CHECK(read.usage_completion_tokens == n);
      CHECK(read.done);
    }
  }
  SUBCASE("chat, max_completion_tokens, not streaming") {
    for (const int64_t n : kLengths) {
      CAPTURE(n);
      const auto res =
          client.post("/v1/chat/completions",
                      R"({"model":"mock-model","messages":[{"role":"user","content":"x"}],)"
                      R"("max_completion_tokens":)" +
                          std::to_string(n) + "}");
      REQUIRE(res.status == 200);
      const auto doc = parse_json(res.body);
      CHECK(doc["usage"]["completion_tokens"].GetInt64() == n);
      // Output tokens are 4-byte words, so the text is exactly 4n bytes.
      CHECK(static_cast<int64_t>(doc["choices"][0]["message"]["content"].GetStringLength()) ==
            4 * n);
    }
  }
  SUBCASE("completions, streaming") {
    for (const int64_t n : kLengths) {
      CAPTURE(n);
      const auto res = client.post(
          "/v1/completions", R"({"model":"mock-model","prompt":"p","stream":true,"max_tokens":)" +
                                 std::to_string(n) + "}");
      REQUIRE(res.status == 200);
      const auto read = read_stream(res.body, false);
      CHECK(static_cast<int64_t>(read.tokens.size()) == n);
      CHECK(read.usage_completion_tokens == -1);  // no include_usage, no usage chunk
      CHECK(read.done);
    }
  }
}

// Runs a shell command and returns its stdout.
std::string run_command(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (const size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  return out;
}

TEST_CASE("mock SSE framing read back by curl") {
  auto options = test_options();
  options.itl_ms = 0.5;
  options.speedup = 20;
  RunningMock mock(options);

  const std::string body_path = std::string(CONVOY_BINARY_DIR) + "/mock_sse_test_body.json";
  {
    std::ofstream(body_path) << chat_body({{"system", "be brief"}, {"user", "hi"}}, 5, true,
                                          R"("stream_options":{"include_usage":true})");
  }
  const std::string out = run_command(
      "curl -sS -N -i --max-time 10 -H 'Content-Type: application/json' "
      "-H 'X-Request-ID: curl-1' --data-binary @" +
      body_path + " http://127.0.0.1:" + std::to_string(mock.port) + "/v1/chat/completions");
  std::remove(body_path.c_str());

  const auto split = out.find("\r\n\r\n");
  REQUIRE(split != std::string::npos);
  const std::string head = out.substr(0, split);
  const std::string body = out.substr(split + 4);
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(head.find("Content-Type: text/event-stream") != std::string::npos);
  CHECK(head.find("Transfer-Encoding: chunked") != std::string::npos);
  CHECK(head.find("x-request-id: curl-1") != std::string::npos);

  // Every event is exactly "data: <payload>\n\n", nothing else in between.
  std::string rebuilt;
  const auto events = sse_data(body);
  for (const auto& e : events) rebuilt += "data: " + e + "\n\n";
  CHECK(rebuilt == body);
  REQUIRE(events.size() == 5 + 3);  // 5 tokens, the finish chunk, usage, [DONE]
  CHECK(events.back() == "[DONE]");

  const auto read = read_stream(body, true);
  CHECK(read.first_has_role);
  CHECK(read.tokens.size() == 5);
  const auto usage = parse_json(events[6]);
  CHECK(usage["choices"].Empty());
  CHECK(usage["usage"]["completion_tokens"].GetInt() == 5);
  CHECK(usage["usage"]["total_tokens"].GetInt() == usage["usage"]["prompt_tokens"].GetInt() + 5);
  CHECK(usage["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt() == 0);
  // Only the finish chunk after the last token has a finish_reason, and no content (as the real
  // 1.6.1 frontend sends it).
  CHECK(parse_json(events[0])["choices"][0]["finish_reason"].IsNull());
  CHECK(parse_json(events[4])["choices"][0]["finish_reason"].IsNull());
  const auto finish = parse_json(events[5]);
  CHECK(std::string(finish["choices"][0]["finish_reason"].GetString()) == "length");
  CHECK(finish["choices"][0]["delta"].ObjectEmpty());
}

}  // namespace
}  // namespace convoy::mock::test
