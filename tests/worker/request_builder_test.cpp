#include <doctest/doctest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

#include "proto/envelope.hpp"
#include "test_util.hpp"
#include "worker/request_builder.hpp"

using namespace convoy::worker;
using convoy::proto::Turn;
using convoy::proto::WorkerSettings;

namespace {

WorkerSettings builder_settings(convoy::proto::Endpoint endpoint) {
  WorkerSettings s;
  s.endpoint = endpoint;
  s.model = "m";
  s.streaming = true;
  s.use_server_token_counts = true;
  return s;
}

Turn builder_turn(const std::string& text, int64_t max_tokens = 0) {
  Turn t;
  t.user_text = text;
  t.max_tokens = max_tokens;
  return t;
}

const std::vector<ChatMessage> kHistory = {{"user", "u0"}, {"assistant", "a0"}};

}  // namespace

TEST_CASE("chat bodies carry model, messages, token limit, stream and usage options") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kChat);
  SUBCASE("system, history and the new user message in order") {
    auto body = format_body(s, "sys", kHistory, builder_turn("u1", 16));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","messages":[{"role":"system","content":"sys"},)"
          R"({"role":"user","content":"u0"},{"role":"assistant","content":"a0"},)"
          R"({"role":"user","content":"u1"}],"max_tokens":16,"stream":true,)"
          R"("stream_options":{"include_usage":true}})");
  }
  SUBCASE("no system message when the prompt is empty; max_tokens 0 is omitted") {
    auto body = format_body(s, "", {}, builder_turn("hi"));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,)"
          R"("stream_options":{"include_usage":true}})");
  }
  SUBCASE("max_completion_tokens replaces max_tokens when configured") {
    s.max_completion_tokens = true;
    auto body = format_body(s, "", {}, builder_turn("hi", 8));
    CHECK(body.HasMember("max_completion_tokens"));
    CHECK(body["max_completion_tokens"].GetInt64() == 8);
    CHECK_FALSE(body.HasMember("max_tokens"));
  }
  SUBCASE("no stream_options without server token counts or without streaming") {
    s.use_server_token_counts = false;
    CHECK_FALSE(format_body(s, "", {}, builder_turn("hi")).HasMember("stream_options"));
    s.use_server_token_counts = true;
    s.streaming = false;
    auto body = format_body(s, "", {}, builder_turn("hi"));
    CHECK_FALSE(body.HasMember("stream_options"));
    CHECK(body["stream"].IsFalse());
  }
  SUBCASE("text is escaped, not interpreted") {
    auto body = format_body(s, "", {}, builder_turn("say \"hi\"\n\\ {}"));
    CHECK(convoy::test::to_json(body).find(R"("content":"say \"hi\"\n\\ {}")") !=
          std::string::npos);
  }
}

TEST_CASE("chat messages_json is appended after history and validated") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kChat);
  Turn t = builder_turn("ignored");
  SUBCASE("the array replaces the user text") {
    t.messages_json =
        R"([{"role":"tool","content":"42","tool_call_id":"c1"},{"role":"user","content":[{"type":"text","text":"x"}]}])";
    auto body = format_body(s, "sys", kHistory, t);
    const auto& m = body["messages"];
    REQUIRE(m.Size() == 5);
    CHECK(std::string(m[0]["role"].GetString()) == "system");
    CHECK(std::string(m[2]["content"].GetString()) == "a0");
    CHECK(std::string(m[3]["tool_call_id"].GetString()) == "c1");
    CHECK(m[4]["content"].IsArray());
    CHECK(convoy::test::to_json(body).find("ignored") == std::string::npos);
  }
  SUBCASE("an invalid role is a clear error") {
    t.messages_json = R"([{"role":"user","content":"a"},{"role":"bot","content":"b"}])";
    CHECK_THROWS_WITH_AS(format_body(s, "", {}, t),
                         doctest::Contains("messages_json[1].role is \"bot\""), RequestFormatError);
  }
  SUBCASE("missing role, non-object element, non-array and bad JSON are errors") {
    RequestBuilder builder(s);
    rapidjson::Document out;
    std::string error;
    for (const char* bad :
         {R"([{"content":"a"}])", R"(["x"])", R"({"role":"user"})", R"([{"role":1}])", "[{"}) {
      t.messages_json = bad;
      CAPTURE(bad);
      error.clear();
      CHECK_FALSE(builder.try_format("", {}, t, &out, &error));
      CHECK(error.find("messages_json") != std::string::npos);
    }
  }
  SUBCASE("every valid role passes") {
    t.messages_json = R"([{"role":"system","content":""},{"role":"user","content":""},)"
                      R"({"role":"assistant","content":null},{"role":"tool","content":""}])";
    CHECK(format_body(s, "", {}, t)["messages"].Size() == 4);
  }
}

TEST_CASE("completions bodies flatten the conversation into a prompt") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kCompletions);
  SUBCASE("system, history and user text joined by newlines") {
    auto body = format_body(s, "sys", kHistory, builder_turn("u1", 4));
    CHECK(convoy::test::to_json(body) ==
          R"({"model":"m","prompt":"sys\nu0\na0\nu1","max_tokens":4,"stream":true,)"
          R"("stream_options":{"include_usage":true}})");
  }
  SUBCASE("each prompt starts with the previous turn's prompt") {
    std::string p0 = format_body(s, "sys", {}, builder_turn("u0"))["prompt"].GetString();
    std::string p1 = format_body(s, "sys", kHistory, builder_turn("u1"))["prompt"].GetString();
    CHECK(p1.rfind(p0, 0) == 0);
  }
  SUBCASE("max_completion_tokens does not apply to completions") {
    s.max_completion_tokens = true;
    auto body = format_body(s, "", {}, builder_turn("x", 3));
    CHECK(body["max_tokens"].GetInt64() == 3);
    CHECK_FALSE(body.HasMember("max_completion_tokens"));
  }
  SUBCASE("messages_json contents are flattened") {
    Turn t;
    t.messages_json =
        R"([{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"b"}]}])";
    CHECK(std::string(format_body(s, "", {}, t)["prompt"].GetString()) == "a\nb");
  }
}

TEST_CASE("embeddings bodies carry model and input only") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kEmbeddings);
  auto body = format_body(s, "sys", kHistory, builder_turn("embed me", 64));
  CHECK(convoy::test::to_json(body) == R"({"model":"m","input":"embed me"})");
}

TEST_CASE("extra_body and the turn's extra_json merge in that order") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kChat);
  s.extra_body_json =
      R"({"ignore_eos":true,"stream_options":{"continuous_usage_stats":true},"nvext":{"extra_fields":["a"]},"temperature":0.5})";
  Turn t = builder_turn("hi", 4);
  t.extra_json = R"({"temperature":0,"nvext":{"priority":1},"max_tokens":9})";
  auto body = format_body(s, "", {}, t);
  SUBCASE("new keys are added") { CHECK(body["ignore_eos"].IsTrue()); }
  SUBCASE("objects merge recursively") {
    CHECK(body["stream_options"]["include_usage"].IsTrue());
    CHECK(body["stream_options"]["continuous_usage_stats"].IsTrue());
    CHECK(body["nvext"]["extra_fields"].IsArray());
    CHECK(body["nvext"]["priority"].GetInt() == 1);
  }
  SUBCASE("later wins") {
    CHECK(body["temperature"].GetDouble() == 0.0);
    CHECK(body["max_tokens"].GetInt() == 9);
  }
  SUBCASE("a builder reused across turns is not changed by a turn's extra") {
    RequestBuilder builder(s);
    auto first = builder.format("", {}, t);
    auto second = builder.format("", {}, builder_turn("hi", 4));
    CHECK(second["temperature"].GetDouble() == 0.5);
    CHECK_FALSE(second["nvext"].HasMember("priority"));
    CHECK(second["max_tokens"].GetInt() == 4);
  }
  SUBCASE("the stored turn is unchanged") {
    CHECK(t.extra_json == R"({"temperature":0,"nvext":{"priority":1},"max_tokens":9})");
    CHECK(t.user_text == "hi");
  }
}

TEST_CASE("bad settings and bad turn extras are errors") {
  WorkerSettings s = builder_settings(convoy::proto::Endpoint::kChat);
  SUBCASE("extra_body must be a JSON object") {
    s.extra_body_json = "[1]";
    CHECK_THROWS_WITH_AS(RequestBuilder{s}, doctest::Contains("extra_body must be a JSON object"),
                         RequestFormatError);
    s.extra_body_json = "{";
    CHECK_THROWS_AS(RequestBuilder{s}, RequestFormatError);
  }
  SUBCASE("an empty extra_body means none") {
    s.extra_body_json = "";
    CHECK(format_body(s, "", {}, builder_turn("x")).IsObject());
  }
  SUBCASE("turn extra_json must be an object") {
    Turn t = builder_turn("x");
    t.extra_json = "3";
    CHECK_THROWS_WITH_AS(format_body(s, "", {}, t), doctest::Contains("extra_json"),
                         RequestFormatError);
  }
}

TEST_CASE("merge_json_object: objects merge, everything else replaces") {
  rapidjson::Document dst;
  dst.Parse(R"({"a":{"x":1,"y":{"k":1}},"b":[1],"c":{"z":1}})");
  rapidjson::Document src;
  src.Parse(R"({"a":{"y":{"j":2},"w":3},"b":{"o":1},"c":5,"d":null})");
  merge_json_object(dst, src, dst.GetAllocator());
  CHECK(convoy::test::to_json(dst) ==
        R"({"a":{"x":1,"y":{"k":1,"j":2},"w":3},"b":{"o":1},"c":5,"d":null})");
  CHECK(convoy::test::to_json(src) == R"({"a":{"y":{"j":2},"w":3},"b":{"o":1},"c":5,"d":null})");
}

TEST_CASE("the request follows the typed endpoint of the Welcome") {
  // target.endpoint crosses the wire as an enum (protocol 3): what the worker decodes is what
  // picks the body shape and the path, with no name to parse or misread.
  for (auto endpoint : {convoy::proto::Endpoint::kChat, convoy::proto::Endpoint::kCompletions,
                        convoy::proto::Endpoint::kEmbeddings}) {
    convoy::proto::Welcome w;
    w.settings = builder_settings(endpoint);
    const std::string bytes = convoy::proto::encode(w);
    std::string error;
    auto decoded = convoy::proto::decode(bytes.data(), bytes.size(), &error);
    REQUIRE_MESSAGE(decoded.has_value(), error);
    auto welcome = decoded->as<convoy::proto::Welcome>();
    REQUIRE(welcome.has_value());
    CAPTURE(convoy::proto::to_string(endpoint));
    CHECK(welcome->settings.endpoint == endpoint);
    auto body = RequestBuilder(welcome->settings).format("", {}, builder_turn("hi", 4));
    CHECK(body.HasMember("messages") == (endpoint == convoy::proto::Endpoint::kChat));
    CHECK(body.HasMember("prompt") == (endpoint == convoy::proto::Endpoint::kCompletions));
    CHECK(body.HasMember("input") == (endpoint == convoy::proto::Endpoint::kEmbeddings));
    CHECK(body.HasMember("stream") == (endpoint != convoy::proto::Endpoint::kEmbeddings));
  }
}
