#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "controller/dataset_test_util.hpp"
#include "controller/ids.hpp"
#include "controller/jsonl_dataset.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_jsonl_dataset(in, "data.jsonl", config);
}

// The ConfigError message for `text`, "" when it parses.
std::string error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse(text, config); });
}

}  // namespace

TEST_CASE("jsonl single-turn rows") {
  const auto all = parse(
      "{\"text\": \"Hello there\", \"max_tokens\": 7, \"extra\": {\"nvext\": {\"a\": 1}}}\n"
      "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
      " {\"role\": \"user\", \"content\": \"Hi\"}], \"reply\": \"Hello!\"}\n"
      "{\"text\": \"Named\", \"conversation_id\": \"abc\", \"max_tokens\": null}\n");
  REQUIRE(all.size() == 3);
  SUBCASE("text, max_tokens and extra") {
    const auto& t = all[0].turns.at(0);
    CHECK(t.user_text == "Hello there");
    CHECK(t.input_tokens_est == 3);
    CHECK(t.max_tokens == 7);
    CHECK(t.extra_json == "{\"nvext\":{\"a\":1}}");
    CHECK(t.messages_json.empty());
    CHECK(t.delay_ms == 0);
  }
  SUBCASE("messages become a compact JSON array; reply is kept") {
    const auto& t = all[1].turns.at(0);
    CHECK(t.user_text.empty());
    CHECK(
        t.messages_json ==
        "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]");
    CHECK(t.input_tokens_est == 3);  // 11 bytes of content
    CHECK(t.recorded_reply == "Hello!");
  }
  SUBCASE("missing max_tokens draws dataset.output_tokens; null means do not send") {
    CHECK(all[1].turns[0].max_tokens >= 1);
    CHECK(all[2].turns[0].max_tokens == 0);
  }
  SUBCASE("ids and indexes") {
    CHECK(all[0].conversation_id == "conv-0");
    CHECK(all[2].conversation_id == "abc");
    for (size_t i = 0; i < all.size(); ++i) {
      CHECK(all[i].index == i);
      CHECK(all[i].correlation_id == correlation_id(Config{}.seed, i));
    }
  }
}

TEST_CASE("jsonl multi-turn rows") {
  Config config;
  config.dataset.think_time_ms = Distribution{250, 0, 0, std::nullopt};
  const auto all = parse(
      "{\"conversation_id\": \"s1\", \"turns\": [{\"text\": \"first\", \"delay_ms\": 99},"
      " {\"text\": \"second\", \"delay_ms\": 1500, \"max_tokens\": 5},"
      " {\"messages\": [{\"role\": \"user\", \"content\": \"third\"}]}]}\n",
      config);
  REQUIRE(all.size() == 1);
  const auto& c = all[0];
  CHECK(c.conversation_id == "s1");
  REQUIRE(c.turns.size() == 3);
  CHECK(c.turns[0].user_text == "first");
  CHECK(c.turns[0].delay_ms == 0);  // the first turn starts at the schedule's time
  CHECK(c.turns[1].delay_ms == 1500);
  CHECK(c.turns[1].max_tokens == 5);
  CHECK(c.turns[2].delay_ms == 250);  // absent: dataset.think_time_ms
  CHECK(c.turns[2].messages_json == "[{\"role\":\"user\",\"content\":\"third\"}]");
}

TEST_CASE("jsonl: history recorded fills replies the file left out") {
  Config config;
  config.dataset.history = HistoryMode::kRecorded;
  const auto all = parse(
      "{\"turns\": [{\"text\": \"a\", \"max_tokens\": 3, \"reply\": \"given\"},"
      " {\"text\": \"b\", \"max_tokens\": 4}, {\"text\": \"c\"}]}\n",
      config);
  CHECK(all[0].turns[0].recorded_reply == "given");
  CHECK(all[0].turns[1].recorded_reply.size() == 16);
  CHECK(all[0].turns[2].recorded_reply.empty());
}

TEST_CASE("jsonl: dataset.conversations keeps the first N rows, blank lines are skipped") {
  Config config;
  config.dataset.conversations = 2;
  config.dataset.conversations_set = true;
  const auto all =
      parse("{\"text\": \"a\"}\n\n  \n{\"text\": \"b\"}\r\n{\"text\": \"c\"}\n", config);
  REQUIRE(all.size() == 2);
  CHECK(all[1].turns[0].user_text == "b");
}

TEST_CASE("jsonl: the same input gives byte-identical conversations") {
  const std::string text =
      "{\"text\": \"a\"}\n{\"turns\": [{\"text\": \"b\"}, {\"text\": \"c\"}]}\n";
  const auto a = parse(text);
  const auto b = parse(text);
  for (size_t i = 0; i < a.size(); ++i) CHECK(testing::packed(a[i]) == testing::packed(b[i]));
}

TEST_CASE("jsonl errors name the file, the line and what is wrong") {
  SUBCASE("invalid JSON") {
    CHECK(error_of("{\"text\": \"a\"}\n\n{\"text\": \"b\",}\n") ==
          "data.jsonl:3: invalid JSON at column 14: Missing a name for object member.");
  }
  SUBCASE("not an object") {
    CHECK(error_of("[1, 2]\n") == "data.jsonl:1: a row must be a JSON object, not an array");
  }
  SUBCASE("neither text nor messages") {
    CHECK(error_of("{\"text\": \"a\"}\n{\"max_tokens\": 3}\n") ==
          "data.jsonl:2: text: one of \"text\" or \"messages\" is required");
  }
  SUBCASE("both text and messages") {
    CHECK(error_of("{\"text\": \"a\", \"messages\": []}\n") ==
          "data.jsonl:1: text: \"text\" and \"messages\" are mutually exclusive");
  }
  SUBCASE("wrong types") {
    CHECK(error_of("{\"text\": 5}\n") == "data.jsonl:1: text: expected a string, got a number");
    CHECK(error_of("{\"text\": \"a\", \"max_tokens\": \"many\"}\n") ==
          "data.jsonl:1: max_tokens: expected an integer, got a string");
    CHECK(error_of("{\"text\": \"a\", \"max_tokens\": 0}\n") ==
          "data.jsonl:1: max_tokens: must be >= 1, got 0");
    CHECK(error_of("{\"text\": \"a\", \"extra\": [1]}\n") ==
          "data.jsonl:1: extra: expected an object, got an array");
    CHECK(error_of("{\"text\": \"\"}\n") == "data.jsonl:1: text: must not be empty");
  }
  SUBCASE("unknown keys") {
    CHECK(error_of("{\"text\": \"a\", \"max_token\": 3}\n") ==
          "data.jsonl:1: max_token: unknown key (expected one of: text, messages, max_tokens, "
          "extra, reply, conversation_id)");
  }
  SUBCASE("roles in messages") {
    CHECK(error_of("{\"text\": \"a\"}\n{\"messages\": [{\"role\": \"user\", \"content\": \"x\"},"
                   " {\"role\": \"bot\", \"content\": \"y\"}]}\n") ==
          "data.jsonl:2: messages[1].role: \"bot\" is not one of system, user, assistant, tool");
    CHECK(error_of("{\"messages\": [{\"content\": \"x\"}]}\n") ==
          "data.jsonl:1: messages[0]: \"role\" is required");
    CHECK(error_of("{\"messages\": [{\"role\": \"user\"}]}\n") ==
          "data.jsonl:1: messages[0]: \"content\" is required");
    CHECK(error_of("{\"messages\": []}\n") == "data.jsonl:1: messages: must not be empty");
    CHECK(error_of("{\"messages\": [{\"role\": \"assistant\", \"content\": null, \"tool_calls\": "
                   "[]}, {\"role\": \"tool\", \"content\": \"42\"}]}\n") == "");
  }
  SUBCASE("multi-turn structure") {
    CHECK(error_of("{\"conversation_id\": \"x\", \"turns\": []}\n") ==
          "data.jsonl:1: turns: must not be empty");
    CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"delay_ms\": -1}]}\n") ==
          "data.jsonl:1: turns[1].delay_ms: must be >= 0, got -1");
    CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"messages\": [{\"role\": \"robot\", "
                   "\"content\": \"b\"}]}]}\n") ==
          "data.jsonl:1: turns[1].messages[0].role: \"robot\" is not one of system, user, "
          "assistant, tool");
    CHECK(error_of("{\"turns\": [{\"text\": \"a\"}], \"text\": \"b\"}\n") ==
          "data.jsonl:1: text: unknown key (expected one of: conversation_id, turns)");
  }
  SUBCASE("duplicate conversation ids") {
    CHECK(error_of("{\"conversation_id\": \"a\", \"text\": \"x\"}\n{\"text\": \"y\"}\n"
                   "{\"conversation_id\": \"a\", \"turns\": [{\"text\": \"z\"}]}\n") ==
          "data.jsonl:3: conversation_id: \"a\" is already used on line 1");
  }
  SUBCASE("an empty file") { CHECK(error_of("\n\n") == "data.jsonl: the dataset has no rows"); }
}

}  // namespace convoy::controller
