#include <doctest/doctest.h>

#include <msgpack.hpp>
#include <set>
#include <sstream>
#include <string>

#include "controller/dataset/ids.hpp"
#include "controller/dataset/jsonl_dataset.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse_jsonl(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_jsonl_dataset(in, "data.jsonl", config);
}

// The ConfigError message for `text`, "" when it parses.
std::string error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse_jsonl(text, config); });
}

}  // namespace

TEST_CASE("jsonl single-turn rows") {
  const auto all = parse_jsonl(
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
  const auto all = parse_jsonl(
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
  const auto all = parse_jsonl(
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
      parse_jsonl("{\"text\": \"a\"}\n\n  \n{\"text\": \"b\"}\r\n{\"text\": \"c\"}\n", config);
  REQUIRE(all.size() == 2);
  CHECK(all[1].turns[0].user_text == "b");
}

TEST_CASE("jsonl: the same input gives byte-identical conversations") {
  const std::string text =
      "{\"text\": \"a\"}\n{\"turns\": [{\"text\": \"b\"}, {\"text\": \"c\"}]}\n";
  const auto a = parse_jsonl(text);
  const auto b = parse_jsonl(text);
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
          "extra, reply, conversation_id, parent, spawn_after_turn, wait_for)");
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
          "data.jsonl:1: text: unknown key (expected one of: conversation_id, turns, parent, "
          "spawn_after_turn, wait_for)");
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
    const auto all =
        parse_jsonl("{\"text\": \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \\u00e9\"}\n");
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
    const auto all = parse_jsonl(text);
    for (uint64_t i = 0; i < 3; ++i) {
      CHECK(testing::packed(dataset->conversation(i)) == testing::packed(all[i]));
    }
  }
}

}  // namespace convoy::controller

// --- sub-agent families --------------------------------------------------------------------------

namespace convoy::controller {
namespace {

// A multi-turn row: `turns` turns of text "<id> k".
std::string family_row(const std::string& id, int turns, const std::string& link = "") {
  std::string row = "{\"conversation_id\": \"" + id + "\", \"turns\": [";
  for (int k = 0; k < turns; ++k) {
    row += std::string(k ? ", " : "") + "{\"text\": \"" + id + " " + std::to_string(k) + "\"}";
  }
  return row + "]" + link + "}\n";
}

std::string packed_turns(const std::vector<proto::Turn>& turns) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, turns);
  return std::string(buffer.data(), buffer.size());
}

std::string link(const std::string& parent, int after) {
  return ", \"parent\": \"" + parent + "\", \"spawn_after_turn\": " + std::to_string(after);
}

}  // namespace

TEST_CASE("jsonl sub-agent rows join their lead's family, parents before children") {
  // The grandchild comes first in the file (a parent may be named before it appears), and an
  // unrelated lead sits between the family's rows.
  const std::string text = family_row("g1", 1, link("c1", 1)) + family_row("lead", 3) +
                           family_row("other", 2) + family_row("c1", 2, link("lead", 1)) +
                           family_row("c2", 1, link("lead", 3));
  const auto all = parse_jsonl(text);
  REQUIRE(all.size() == 2);  // families: "lead" and "other"
  const auto& lead = all[0];
  CHECK(lead.conversation_id == "lead");
  CHECK(lead.index == 0);
  REQUIRE(lead.subagents.size() == 3);
  // Depth first, siblings in file order: c1 (lead's child), g1 (c1's child), c2.
  CHECK(lead.subagents[0].conversation_id == "c1");
  CHECK(lead.subagents[0].parent == -1);
  CHECK(lead.subagents[0].spawn_after_turn == 1);
  CHECK(lead.subagents[0].turns.size() == 2);
  CHECK(lead.subagents[1].conversation_id == "g1");
  CHECK(lead.subagents[1].parent == 0);
  CHECK(lead.subagents[1].spawn_after_turn == 1);
  CHECK(lead.subagents[2].conversation_id == "c2");
  CHECK(lead.subagents[2].parent == -1);
  CHECK(lead.subagents[2].spawn_after_turn == 3);
  CHECK(lead.subagents[2].turns.at(0).user_text == "c2 0");
  CHECK(all[1].conversation_id == "other");
  CHECK(all[1].index == 1);
  CHECK(all[1].subagents.empty());

  SUBCASE("every member has its own correlation id, from seed + lead index + position") {
    std::set<std::string> ids{lead.correlation_id, all[1].correlation_id};
    for (size_t p = 0; p < lead.subagents.size(); ++p) {
      const auto& id = lead.subagents[p].correlation_id;
      CHECK(id == subagent_correlation_id(Config{}.seed, 0, p));
      CHECK(is_uuid4(id));
      CHECK(id.size() <= 256);
      ids.insert(id);
    }
    CHECK(ids.size() == 5);
  }
  SUBCASE("the same bytes give the same family, and the lead's draws do not depend on it") {
    CHECK(testing::packed(parse_jsonl(text)[0]) == testing::packed(lead));
    const auto alone = parse_jsonl(family_row("lead", 3));
    CHECK(packed_turns(alone[0].turns) == packed_turns(lead.turns));
  }
  SUBCASE("sub-agents get the configured draws for what their rows leave unset") {
    Config config;
    config.dataset.think_time_ms = Distribution{250, 0, 0, std::nullopt};
    const auto drawn = parse_jsonl(text, config);
    for (const auto& child : drawn[0].subagents) {
      CHECK(child.turns.at(0).delay_ms == 0);
      for (size_t k = 1; k < child.turns.size(); ++k) CHECK(child.turns[k].delay_ms == 250);
      for (const auto& turn : child.turns) CHECK(turn.max_tokens >= 1);
    }
  }
  SUBCASE("single-turn rows may be sub-agents; unnamed ones are named after the lead") {
    const auto mixed =
        parse_jsonl(family_row("L", 2) +
                    "{\"text\": \"helper\", \"parent\": \"L\", \"spawn_after_turn\": 2}\n");
    REQUIRE(mixed.size() == 1);
    REQUIRE(mixed[0].subagents.size() == 1);
    CHECK(mixed[0].subagents[0].conversation_id == "L/sub0");
    CHECK(mixed[0].subagents[0].turns.at(0).user_text == "helper");
  }
}

TEST_CASE("jsonl: dataset.conversations counts families, and a cut family goes whole") {
  Config config;
  config.dataset.conversations = 1;
  config.dataset.conversations_set = true;
  const auto all =
      parse_jsonl(family_row("a", 2) + family_row("b", 2) + family_row("b1", 1, link("b", 1)) +
                      family_row("a1", 1, link("a", 2)),
                  config);
  REQUIRE(all.size() == 1);
  CHECK(all[0].conversation_id == "a");
  REQUIRE(all[0].subagents.size() == 1);
  CHECK(all[0].subagents[0].conversation_id == "a1");
}

TEST_CASE("jsonl sub-agent mistakes are errors naming the file, line and key") {
  SUBCASE("an unknown parent") {
    const auto e = error_of(family_row("a", 2) + family_row("b", 1, link("nobody", 1)));
    CHECK(e == "data.jsonl:2: parent: \"nobody\" is not the conversation_id of any row");
  }
  SUBCASE("spawn_after_turn beyond the parent's turns") {
    const auto e = error_of(family_row("a", 2) + family_row("b", 1, link("a", 3)));
    CHECK(e ==
          "data.jsonl:2: spawn_after_turn: 3 is beyond the 2 turn(s) of its parent \"a\" (line 1)");
  }
  SUBCASE("spawn_after_turn below 1") {
    const auto e = error_of(family_row("a", 2) + family_row("b", 1, link("a", 0)));
    CHECK(e == "data.jsonl:2: spawn_after_turn: must be >= 1, got 0");
  }
  SUBCASE("spawn_after_turn without parent, and parent without spawn_after_turn") {
    CHECK(error_of(family_row("a", 2, ", \"spawn_after_turn\": 1"))
              .find("data.jsonl:1: spawn_after_turn: only a sub-agent row") == 0);
    CHECK(error_of(family_row("a", 2) + family_row("b", 1, ", \"parent\": \"a\""))
              .find("data.jsonl:2: spawn_after_turn: is required with \"parent\"") == 0);
  }
  SUBCASE("a row that is its own parent") {
    const auto e = error_of(family_row("a", 2) + family_row("b", 1, link("b", 1)));
    CHECK(e == "data.jsonl:2: parent: \"b\" is this row's own conversation_id");
  }
  SUBCASE("a cycle of parents") {
    const auto e = error_of(family_row("lead", 1) + family_row("x", 1, link("z", 1)) +
                            family_row("y", 1, link("x", 1)) + family_row("z", 1, link("y", 1)));
    CHECK(e.find("data.jsonl:") == 0);
    CHECK(e.find("parent: the rows on lines ") != std::string::npos);
    CHECK(e.find("in a cycle") != std::string::npos);
    for (const char* line : {"2", "3", "4"}) CHECK(e.find(line) != std::string::npos);
  }
  SUBCASE("every row naming a parent is a cycle too") {
    const auto e = error_of(family_row("x", 1, link("y", 1)) + family_row("y", 1, link("x", 1)));
    CHECK(e.find("in a cycle") != std::string::npos);
  }
  SUBCASE("parent is checked as an id") {
    CHECK(error_of(family_row("a", 1) + "{\"text\": \"t\", \"parent\": \"\", "
                                        "\"spawn_after_turn\": 1}\n")
              .find("data.jsonl:2: parent: must not be empty") == 0);
  }
}

TEST_CASE("jsonl: the wire limit counts the whole family") {
  // Each row alone fits (recorded history generates a reply per non-final turn, ~14 MB each),
  // the lead and its two sub-agents together do not.
  Config config;
  config.dataset.history = HistoryMode::kRecorded;
  auto big_row = [](const std::string& id, const std::string& extra) {
    std::string row = "{\"conversation_id\": \"" + id + "\", \"turns\": [";
    for (int k = 0; k < 3; ++k) {
      row += std::string(k ? ", " : "") + "{\"text\": \"t\", \"max_tokens\": 3500000}";
    }
    return row + "]" + extra + "}\n";
  };
  CHECK(error_of(big_row("a", ""), config).empty());
  const auto e =
      error_of(big_row("a", "") + big_row("b", link("a", 1)) + big_row("c", link("a", 2)), config);
  CHECK(e.find("data.jsonl:1: conversation_id: its family (this row and 2 sub-agent row(s)) "
               "would be ") == 0);
  CHECK(e.find("a family crosses to its worker in one piece") != std::string::npos);
}

TEST_CASE("jsonl: a family of more than 10,000 sub-agent rows is rejected at load") {
  // Unbounded, a worker starting 100,000 children of one turn missed its heartbeats.
  auto family_of = [](int children) {
    std::string rows = family_row("lead", 1);
    for (int i = 0; i < children; ++i) rows += "{\"text\": \"t\"" + link("lead", 1) + "}\n";
    return rows;
  };
  CHECK(error_of(family_of(10'000)).empty());
  const auto e = error_of(family_of(10'001));
  CHECK(e.find("data.jsonl:1: conversation_id: its family has 10001 sub-agent rows, more than "
               "10000") == 0);
}

TEST_CASE("a cycled family gets new ids for every member") {
  auto family = parse_jsonl(family_row("lead", 2) + family_row("c", 1, link("lead", 1)))[0];
  const auto first = family;
  set_family_ids(family, Config{}.seed, 7, 3);
  CHECK(family.index == 7);
  CHECK(family.correlation_id == correlation_id(Config{}.seed, 7));
  CHECK(family.conversation_id == "lead#3");
  REQUIRE(family.subagents.size() == 1);
  CHECK(family.subagents[0].conversation_id == "c#3");
  CHECK(family.subagents[0].correlation_id == subagent_correlation_id(Config{}.seed, 7, 0));
  CHECK(family.subagents[0].correlation_id != first.subagents[0].correlation_id);
  CHECK(packed_turns(family.subagents[0].turns) == packed_turns(first.subagents[0].turns));
}

}  // namespace convoy::controller
