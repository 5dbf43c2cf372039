// Sub-agents in a Mooncake file (convoy's parent_session_id and spawn_after_turn keys, which the
// dynamo_trace and weka_trace mappings write): a session naming an earlier session as its parent
// runs in the parent's family, spawned after that turn; every malformed link is named by file,
// line and key.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "controller/dataset/mooncake.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace mooncake_family_test {

std::vector<proto::Conversation> parse_family_rows(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_mooncake_trace(in, "fam.jsonl", config);
}

std::string family_rows_error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse_family_rows(text, config); });
}

// A lead "a" of three turns; "b" spawned after a's turn 1 (two turns), "c" after a's turn 2,
// "d" (a child of b) after b's turn 1, and an unrelated session "z" in between.
const char* const kFamily =
    R"({"session_id": "a", "timestamp": 0, "input_length": 8, "output_length": 3})"
    "\n"
    R"({"session_id": "b", "parent_session_id": "a", "spawn_after_turn": 1, "input_length": 6})"
    "\n"
    R"({"session_id": "z", "timestamp": 5, "input_length": 4})"
    "\n"
    R"({"session_id": "a", "delay": 100, "input_length": 5})"
    "\n"
    R"({"session_id": "b", "delay": 40, "input_length": 7})"
    "\n"
    R"({"session_id": "d", "parent_session_id": "b", "spawn_after_turn": 1, "input_length": 9})"
    "\n"
    R"({"session_id": "c", "parent_session_id": "a", "spawn_after_turn": 2, "input_length": 2})"
    "\n"
    R"({"session_id": "a", "delay": 10, "input_length": 3})"
    "\n";

}  // namespace mooncake_family_test

using namespace mooncake_family_test;

TEST_CASE("mooncake sub-agent rows join their parent's family, spawned after that turn") {
  Config config;
  config.load.mode = LoadMode::kTrace;
  const auto all = parse_family_rows(kFamily, config);
  REQUIRE(all.size() == 2);  // the family of a, and z
  const proto::Conversation& lead = all[0];
  CHECK(lead.conversation_id == "a");
  REQUIRE(lead.turns.size() == 3);
  CHECK(lead.turns[1].delay_ms == doctest::Approx(100));
  REQUIRE(lead.subagents.size() == 3);
  // In the order their first rows come: b, d, c; a parent before its children.
  CHECK(lead.subagents[0].conversation_id == "b");
  CHECK(lead.subagents[0].parent == -1);
  CHECK(lead.subagents[0].spawn_after_turn == 1);
  REQUIRE(lead.subagents[0].turns.size() == 2);
  CHECK(lead.subagents[0].turns[0].input_tokens_est == 6);
  CHECK(lead.subagents[0].turns[1].delay_ms == doctest::Approx(40));
  CHECK(lead.subagents[1].conversation_id == "d");
  CHECK(lead.subagents[1].parent == 0);  // b
  CHECK(lead.subagents[1].spawn_after_turn == 1);
  CHECK(lead.subagents[2].conversation_id == "c");
  CHECK(lead.subagents[2].parent == -1);
  CHECK(lead.subagents[2].spawn_after_turn == 2);
  // Each member has its own correlation id and text; a sub-agent's starts with its own tag.
  CHECK(lead.subagents[0].correlation_id != lead.correlation_id);
  CHECK(lead.subagents[0].correlation_id != lead.subagents[2].correlation_id);
  CHECK(lead.subagents[0].turns[0].user_text.rfind("[c0s1t0] ", 0) == 0);
  CHECK(lead.turns[0].user_text.rfind("[c0t0] ", 0) == 0);
  // A sub-agent starts when spawned: only the lead and z have trace starts.
  CHECK(all[1].conversation_id == "z");
  CHECK(all[1].start_ns == 5'000'000);
}

TEST_CASE("mooncake sub-agents leave the lead's own text and draws as they were") {
  const auto with = parse_family_rows(kFamily);
  const auto without =
      parse_family_rows(R"({"session_id": "a", "input_length": 8, "output_length": 3})"
                        "\n"
                        R"({"session_id": "z", "input_length": 4})"
                        "\n"
                        R"({"session_id": "a", "delay": 100, "input_length": 5})"
                        "\n"
                        R"({"session_id": "a", "delay": 10, "input_length": 3})"
                        "\n");
  REQUIRE(with.size() == without.size());
  for (size_t k = 0; k < 3; ++k) {
    CHECK(with[0].turns[k].user_text == without[0].turns[k].user_text);
  }
  CHECK(with[0].correlation_id == without[0].correlation_id);
  CHECK(with[1].turns[0].user_text == without[1].turns[0].user_text);
}

TEST_CASE("mooncake dataset.conversations counts families, sub-agents come with their lead") {
  Config config;
  config.dataset.conversations = 1;
  config.dataset.conversations_set = true;
  const auto first = parse_family_rows(kFamily, config);
  REQUIRE(first.size() == 1);
  CHECK(first[0].subagents.size() == 3);
}

TEST_CASE("mooncake sub-agent links that cannot run are errors naming the line and key") {
  const std::string lead = R"({"session_id": "a", "input_length": 4})"
                           "\n";
  CHECK(family_rows_error_of(lead + R"({"session_id": "b", "parent_session_id": "x", )"
                                    R"("spawn_after_turn": 1, "input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: parent_session_id: \"x\" is no earlier session of the file (a sub-agent's "
        "parent's rows come first)");
  CHECK(family_rows_error_of(
            R"({"session_id": "b", "parent_session_id": "a", "spawn_after_turn": 1, )"
            R"("input_length": 4})"
            "\n" +
            lead)
            .find("fam.jsonl:1: parent_session_id: \"a\" is no earlier session") == 0);
  CHECK(family_rows_error_of(lead + R"({"session_id": "a", "parent_session_id": "q", )"
                                    R"("spawn_after_turn": 1, "input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: parent_session_id: only allowed on a session's first row (line 1)");
  CHECK(family_rows_error_of(lead +
                             R"({"session_id": "b", "spawn_after_turn": 1, "input_length": 4})"
                             "\n") ==
        "fam.jsonl:2: spawn_after_turn: only allowed with \"parent_session_id\"");
  CHECK(family_rows_error_of(lead +
                             R"({"session_id": "b", "parent_session_id": "a", "input_length": 4})"
                             "\n") ==
        "fam.jsonl:2: parent_session_id: needs \"spawn_after_turn\": after which of the "
        "parent's turns it starts");
  CHECK(family_rows_error_of(lead + R"({"parent_session_id": "a", "spawn_after_turn": 1, )"
                                    R"("input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: parent_session_id: needs \"session_id\": the sub-agent's own session");
  CHECK(family_rows_error_of(lead + R"({"session_id": "b", "parent_session_id": "b", )"
                                    R"("spawn_after_turn": 1, "input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: parent_session_id: names the row's own session");
  CHECK(family_rows_error_of(lead + R"({"session_id": "b", "parent_session_id": "a", )"
                                    R"("spawn_after_turn": 1, "timestamp": 3, "input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: timestamp: not allowed on a sub-agent's row: it starts when its parent's "
        "turn spawn_after_turn has ended");
  CHECK(family_rows_error_of(lead + R"({"session_id": "b", "parent_session_id": "a", )"
                                    R"("spawn_after_turn": 0, "input_length": 4})"
                                    "\n") == "fam.jsonl:2: spawn_after_turn: must be >= 1, got 0");
  // Checked once the parent's rows are all read: a has one row (turn).
  CHECK(family_rows_error_of(lead + R"({"session_id": "b", "parent_session_id": "a", )"
                                    R"("spawn_after_turn": 2, "input_length": 4})"
                                    "\n") ==
        "fam.jsonl:2: spawn_after_turn: 2 but the parent session (line 1) has 1 row(s), one per "
        "turn");
}

}  // namespace convoy::controller
