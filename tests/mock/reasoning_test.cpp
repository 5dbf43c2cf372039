// convoy-mock --reasoning-tokens N: a reasoning model's replies.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "mock/options.hpp"
#include "mock/responses.hpp"
#include "mock/tokens.hpp"

using namespace convoy::mock;

namespace {

rapidjson::Document event_json(const std::string& event) {
  REQUIRE(event.rfind("data: ", 0) == 0);
  rapidjson::Document doc;
  doc.Parse(event.c_str() + 6, event.size() - 8);  // without "data: " and "\n\n"
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

ResponseInfo reasoning_info() {
  ResponseInfo info;
  info.id = "chatcmpl-1";
  info.model = "mock-model";
  info.prompt_tokens = 10;
  info.completion_tokens = 4;
  info.reasoning_tokens = 2;
  return info;
}

}  // namespace

TEST_CASE("mock reasoning: the first N chat tokens stream as reasoning_content") {
  const ResponseInfo info = reasoning_info();
  for (int64_t i = 0; i < info.completion_tokens; ++i) {
    CAPTURE(i);
    const auto doc = event_json(token_event(Endpoint::kChat, info, i));
    const auto& delta = doc["choices"][0]["delta"];
    CHECK(delta.HasMember("reasoning_content") == (i < 2));
    CHECK(delta.HasMember("content") == (i >= 2));
  }
  const auto usage = event_json(usage_event(Endpoint::kChat, info));
  CHECK(usage["usage"]["completion_tokens"].GetInt64() == 4);
  CHECK(usage["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt64() == 2);

  rapidjson::Document whole;
  whole.Parse(chat_response(info).c_str());
  REQUIRE_FALSE(whole.HasParseError());
  const auto& message = whole["choices"][0]["message"];
  CHECK(std::string(message["reasoning_content"].GetString()).size() == 2 * kBytesPerToken);
  CHECK(std::string(message["content"].GetString()).size() == 2 * kBytesPerToken);

  SUBCASE("off by default: no reasoning fields at all") {
    ResponseInfo plain = info;
    plain.reasoning_tokens = 0;
    CHECK(token_event(Endpoint::kChat, plain, 0).find("reasoning") == std::string::npos);
    CHECK(usage_event(Endpoint::kChat, plain).find("completion_tokens_details") ==
          std::string::npos);
    CHECK(chat_response(plain).find("reasoning") == std::string::npos);
  }
}

TEST_CASE("mock reasoning: --reasoning-tokens parses and is checked") {
  CHECK(parse_options({}).options->reasoning_tokens == 0);
  const auto ok = parse_options({"--reasoning-tokens", "8"});
  REQUIRE(ok.options);
  CHECK(ok.options->reasoning_tokens == 8);
  const auto bad = parse_options({"--reasoning-tokens", "-1"});
  CHECK_FALSE(bad.options);
  CHECK(bad.exit_code == 2);
}
