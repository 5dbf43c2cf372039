#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "controller/dataset/ids.hpp"
#include "controller/dataset/jsonl_dataset.hpp"
#include "controller/dataset_test_util.hpp"
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

namespace convoy::controller {

TEST_CASE("jsonl: a string longer than the wire carries is rejected at load") {
  const std::string big(proto::kMaxStringBytes + 1, 'a');
  CHECK(error_of("{\"text\": \"ok\"}\n{\"text\": \"" + big + "\"}\n") ==
        "data.jsonl:2: text: 16777217 bytes (16 MiB) is longer than one string may be on the wire "
        "(16777216 bytes (16 MiB))");
  CHECK(
      error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"reply\": \"" + big + "\"}]}\n")
          .starts_with("data.jsonl:1: turns[1].reply: 16777217 bytes"));
  CHECK(error_of("{\"text\": \"a\", \"extra\": {\"k\": \"" + big + "\"}}\n")
            .starts_with("data.jsonl:1: extra: 16777225 bytes"));
  CHECK(error_of("{\"messages\": [{\"role\": \"user\", \"content\": \"" + big + "\"}]}\n")
            .starts_with("data.jsonl:1: messages: 16777"));
  const std::string fits(proto::kMaxStringBytes, 'a');
  CHECK(error_of("{\"text\": \"" + fits + "\"}\n") == "");
}

TEST_CASE("jsonl: a conversation heavier than one wire message is rejected at load") {
  Config config;
  config.dataset.history = HistoryMode::kRecorded;
  SUBCASE("generated replies over the message limit in all") {
    std::string turns;
    for (int k = 0; k < 6; ++k) {
      turns += std::string(k ? ", " : "") + "{\"text\": \"a\", \"max_tokens\": 4000000}";
    }
    CHECK(error_of("{\"turns\": [" + turns + "]}\n", config)
              .starts_with("data.jsonl:1: turns: the conversation would be 800"));
  }
  SUBCASE("one generated reply over the string limit") {
    CHECK(error_of("{\"turns\": [{\"text\": \"a\", \"max_tokens\": 5000000}, {\"text\": \"b\"}]}\n",
                   config)
              .starts_with("data.jsonl:1: turns[0].max_tokens: with history: recorded the "
                           "generated reply of 20000000 bytes"));
  }
  SUBCASE("configured draws whose reply could not cross the wire") {
    config.dataset.output_tokens = Distribution{5e6, 0, 1, std::nullopt};
    CHECK(error_of("{\"text\": \"a\"}\n", config)
              .starts_with("dataset.output_tokens: with history: recorded, rows without "
                           "max_tokens get a reply of up to 5e+06 tokens"));
  }
  SUBCASE("the last turn gets no reply: one big max_tokens there is fine") {
    CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"max_tokens\": 5000000}]}\n",
                   config) == "");
  }
}

TEST_CASE("jsonl: invalid UTF-8 anywhere in a row is rejected at load") {
  CHECK(error_of("{\"text\": \"ok\"}\n{\"text\": \"caf\xC3\"}\n") ==
        "data.jsonl:2: text: invalid UTF-8 at byte 3 of the string");
  CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\xFF\"}]}\n") ==
        "data.jsonl:1: turns[1].text: invalid UTF-8 at byte 1 of the string");
  CHECK(error_of("{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", "
                 "\"text\": \"\xED\xA0\x80\"}]}]}\n") ==
        "data.jsonl:1: messages[0].content[0].text: invalid UTF-8 at byte 0 of the string");
  CHECK(error_of("{\"text\": \"a\", \"extra\": {\"k\": \"\xC0\x80\"}}\n") ==
        "data.jsonl:1: extra.k: invalid UTF-8 at byte 0 of the string");
  CHECK(error_of("{\"text\": \"a\", \"extra\": {\"\xF5\": 1}}\n") ==
        "data.jsonl:1: extra: a key is not valid UTF-8");
  SUBCASE("valid multi-byte text and escapes pass") {
    const auto all = parse("{\"text\": \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \\u00e9\"}\n");
    CHECK(all[0].turns[0].user_text == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9");
  }
  SUBCASE("a lone surrogate escape is invalid JSON") {
    CHECK(error_of("{\"text\": \"\\ud800\"}\n").starts_with("data.jsonl:1: invalid JSON"));
  }
}

TEST_CASE("jsonl: a row that repeats a key is rejected") {
  CHECK(error_of("{\"text\": \"a\", \"text\": \"b\"}\n") == "data.jsonl:1: text: duplicate key");
  CHECK(error_of("{\"text\": \"a\", \"extra\": {\"temperature\": 0, \"temperature\": 1}}\n") ==
        "data.jsonl:1: extra.temperature: duplicate key");
  CHECK(error_of("{\"turns\": [{\"text\": \"a\", \"delay_ms\": 1, \"delay_ms\": 2}]}\n") ==
        "data.jsonl:1: turns[0].delay_ms: duplicate key");
}

TEST_CASE("jsonl: think times are bounded") {
  CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"delay_ms\": 1e300}]}\n") ==
        "data.jsonl:1: turns[1].delay_ms: must be <= 1e+09, got 1e+300 (about 11.6 days)");
  CHECK(error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"delay_ms\": 1e9}]}\n") == "");
}

TEST_CASE("jsonl: rows are read back by their offset when asked, nothing is kept") {
  // A row source that records every read.
  class CountingRows final : public RowSource {
   public:
    explicit CountingRows(std::string text) : inner_(row_text(std::move(text))) {}
    std::string line_at(uint64_t offset) const override {
      reads.push_back(offset);
      return inner_->line_at(offset);
    }
    mutable std::vector<uint64_t> reads;

   private:
    std::shared_ptr<const RowSource> inner_;
  };
  const std::string text = "{\"text\": \"zero\"}\n\n{\"text\": \"one\"}\n{\"text\": \"two\"}";
  auto rows = std::make_shared<CountingRows>(text);
  std::istringstream in(text);
  const auto dataset = index_jsonl_dataset(in, "data.jsonl", rows, Config{});
  REQUIRE(dataset->size() == 3);
  CHECK(rows->reads.empty());
  const auto two = dataset->conversation(2);
  CHECK(two.turns[0].user_text == "two");
  CHECK(two.index == 2);
  CHECK(dataset->conversation(1).turns[0].user_text == "one");
  CHECK(rows->reads == std::vector<uint64_t>{34, 18});
  SUBCASE("and equal what a whole parse gives") {
    const auto all = parse(text);
    for (uint64_t i = 0; i < 3; ++i) {
      CHECK(testing::packed(dataset->conversation(i)) == testing::packed(all[i]));
    }
  }
}

}  // namespace convoy::controller
