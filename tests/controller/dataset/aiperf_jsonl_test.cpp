// dataset.type aiperf_single_turn and aiperf_multi_turn. Fixtures are written here from AIPerf
// 0.13.0's SingleTurn / MultiTurn models (aiperf/dataset/loader/models.py), never copied.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "controller/dataset/aiperf_jsonl.hpp"
#include "controller/dataset/corpus.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse_aiperf(const std::string& text, bool multi,
                                              Config config = {}, AiperfStats* stats = nullptr) {
  std::istringstream in(text);
  return parse_aiperf_dataset(in, "aiperf.jsonl", multi, config, stats);
}

std::string aiperf_error_of(const std::string& text, bool multi) {
  return test::error_message<ConfigError>([&] { parse_aiperf(text, multi); });
}

}  // namespace

TEST_CASE("aiperf_single_turn: rows map onto turns, and a session_id groups rows") {
  const std::string text =
      "{\"text\": \"What is deep learning?\", \"output_length\": 40}\n"
      "{\"session_id\": \"s1\", \"text\": \"First.\", \"extra\": {\"temperature\": 0}}\n"
      "{\"type\": \"single_turn\", \"texts\": [\"Alone in a list\"], \"delay\": 250}\n"
      "{\"session_id\": \"s1\", \"texts\": [{\"name\": \"a\", \"contents\": [\"Part one\", "
      "\"Part two\"]}], \"delay\": 1500, \"role\": \"user\"}\n";
  AiperfStats stats;
  const auto all = parse_aiperf(text, false, Config{}, &stats);
  REQUIRE(all.size() == 3);
  CHECK(all[0].turns[0].user_text == "What is deep learning?");
  CHECK(all[0].turns[0].max_tokens == 40);
  SUBCASE("rows sharing a session_id are one conversation, in file order") {
    CHECK(all[1].conversation_id == "s1");
    REQUIRE(all[1].turns.size() == 2);
    CHECK(all[1].turns[0].user_text == "First.");
    CHECK(all[1].turns[0].extra_json == "{\"temperature\":0}");
    CHECK(all[1].turns[1].delay_ms == 1500);
    CHECK(all[1].turns[1].messages_json ==
          "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Part one\"},"
          "{\"type\":\"text\",\"text\":\"Part two\"}]}]");
  }
  SUBCASE("one text in texts is the user text; a first turn's delay is not honoured") {
    CHECK(all[2].turns[0].user_text == "Alone in a list");
    CHECK(all[2].turns[0].delay_ms == 0);
  }
  CHECK(stats.rows == 4);
  CHECK(stats.conversations == 3);
  CHECK(stats.turns == 4);
  CHECK(stats.texts_joined == 1);
  CHECK(stats.output_lengths == 1);
  CHECK(stats.delays == 2);
  CHECK(stats.first_delays == 1);
  CHECK(stats.sessions == 1);
  const auto lines = describe_aiperf_stats(stats);
  CHECK(std::find(lines.begin(), lines.end(), "output_length -> max_tokens: 1 turns") !=
        lines.end());
}

TEST_CASE("aiperf_multi_turn: a row is a conversation, max_turns cuts it") {
  const std::string text =
      "{\"session_id\": \"chat-9\", \"type\": \"multi_turn\", \"turns\": [{\"text\": \"Hi\", "
      "\"output_length\": 8}, {\"text\": \"More\", \"delay\": 2000}, {\"text\": \"End\"}]}\n"
      "{\"turns\": [{\"texts\": [\"Only\"]}]}\n";
  const auto all = parse_aiperf(text, true);
  REQUIRE(all.size() == 2);
  CHECK(all[0].conversation_id == "chat-9");
  REQUIRE(all[0].turns.size() == 3);
  CHECK(all[0].turns[0].max_tokens == 8);
  CHECK(all[0].turns[1].delay_ms == 2000);
  CHECK(all[0].turns[1].user_text == "More");
  CHECK(all[1].turns[0].user_text == "Only");
  Config capped;
  capped.dataset.max_turns = 2;
  AiperfStats stats;
  const auto cut = parse_aiperf(text, true, capped, &stats);
  CHECK(cut[0].turns.size() == 2);
  CHECK(stats.cut_turns == 1);
}

TEST_CASE("aiperf JSONL: what convoy cannot honour is an error naming file, line and key") {
  CHECK(aiperf_error_of("{\"text\": \"a\"}\n{\"text\": \"b\", \"image\": \"/x.png\"}", false)
            .rfind("aiperf.jsonl:2: image: convoy sends text only", 0) == 0);
  CHECK(aiperf_error_of("{\"text\": \"a\", \"timestamp\": 1000}", false)
            .rfind("aiperf.jsonl:1: timestamp: convoy replays timestamps from mooncake", 0) == 0);
  CHECK(aiperf_error_of("{\"text\": \"a\", \"role\": \"assistant\"}", false) ==
        "aiperf.jsonl:1: role: \"assistant\": convoy sends every turn as the user's message");
  CHECK(aiperf_error_of("{\"text\": \"a\", \"texts\": [\"b\"]}", false) ==
        "aiperf.jsonl:1: text: \"text\" and \"texts\" cannot be set together (as in AIPerf)");
  CHECK(aiperf_error_of("{\"output_length\": 3}", false) ==
        "aiperf.jsonl:1: text: one of \"text\" or \"texts\" is required");
  CHECK(aiperf_error_of("{\"text\": \"a\", \"output_length\": 0}", false)
            .rfind("aiperf.jsonl:1: output_length: ", 0) == 0);
  CHECK(aiperf_error_of("{\"text\": \"a\", \"tokens\": 3}", false)
            .rfind("aiperf.jsonl:1: tokens: unknown key", 0) == 0);
  CHECK(aiperf_error_of("{\"turns\": [{\"text\": \"a\"}]}", false) ==
        "aiperf.jsonl:1: turns: a multi_turn row in a dataset.type aiperf_single_turn file");
  CHECK(aiperf_error_of("{\"session_id\": \"s\", \"turns\": []}", true) ==
        "aiperf.jsonl:1: turns: must not be empty (as in AIPerf)");
  CHECK(aiperf_error_of("{\"turns\": [{\"text\": \"a\"}, {\"text\": \"\"}]}", true) ==
        "aiperf.jsonl:1: turns[1].text: must not be empty");
  CHECK(aiperf_error_of("{\"turns\": [{\"text\": \"a\", \"delay\": -5}]}", true)
            .rfind("aiperf.jsonl:1: turns[0].delay: ", 0) == 0);
  CHECK(aiperf_error_of("{\"type\": \"single_turn\", \"turns\": [{\"text\": \"a\"}]}", true) ==
        "aiperf.jsonl:1: type: \"single_turn\" in a dataset.type aiperf_multi_turn file");
}

}  // namespace convoy::controller
