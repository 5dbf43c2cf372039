// JSONL fan-in (wait_for): which family a waiting row joins, the edges that cross the wire, the
// same input giving the same bytes, and every mistake named by file, line and key (cycles with
// their lines), plus the pure cycle check over a family's shape.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "controller/dataset/family_dag.hpp"
#include "controller/dataset/jsonl_dataset.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace fan_in_test {

std::vector<proto::Conversation> parse_rows(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_jsonl_dataset(in, "dag.jsonl", config);
}

std::string error_of_rows(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse_rows(text, config); });
}

// Lead "L" (2 turns; its turn 2 waits for "j"); "a" and "b" after L's turn 1; "j" waits for
// both and is spawned by no turn.
const char* const kDiamond =
    R"({"conversation_id": "L", "turns": [{"text": "plan"}, {"text": "merge", "wait_for": ["j"]}]})"
    "\n"
    R"({"conversation_id": "a", "parent": "L", "spawn_after_turn": 1, "text": "search a"})"
    "\n"
    R"({"conversation_id": "b", "parent": "L", "spawn_after_turn": 1, "text": "search b"})"
    "\n"
    R"({"conversation_id": "j", "wait_for": ["a", "b"], "text": "join"})"
    "\n"
    R"({"conversation_id": "other", "text": "unrelated"})"
    "\n";

bool has_edge(const proto::Conversation& c, int32_t member, uint32_t turn, int32_t after) {
  for (const auto& e : c.fan_in) {
    if (e.member == member && e.turn == turn && e.after == after) return true;
  }
  return false;
}

}  // namespace fan_in_test

using namespace fan_in_test;

TEST_CASE("jsonl fan-in: a row that waits joins its family, spawned by no turn") {
  const auto all = parse_rows(kDiamond);
  REQUIRE(all.size() == 2);  // two leads: L's family and "other"
  const proto::Conversation& lead = all[0];
  CHECK(lead.conversation_id == "L");
  REQUIRE(lead.subagents.size() == 3);
  // Family order: depth first by anchor; j is anchored to a, the first row it waits for.
  CHECK(lead.subagents[0].conversation_id == "a");
  CHECK(lead.subagents[1].conversation_id == "j");
  CHECK(lead.subagents[1].parent == 0);
  CHECK(lead.subagents[1].spawn_after_turn == 0);
  CHECK(lead.subagents[2].conversation_id == "b");
  CHECK(lead.subagents[2].spawn_after_turn == 1);
  REQUIRE(lead.fan_in.size() == 3);
  CHECK(has_edge(lead, 1, 0, 0));   // j waits for a
  CHECK(has_edge(lead, 1, 0, 2));   // j waits for b
  CHECK(has_edge(lead, -1, 1, 1));  // L's turn 2 waits for j
  CHECK(all[1].fan_in.empty());
  CHECK(all[1].subagents.empty());
}

TEST_CASE("jsonl fan-in: the same file gives the same bytes, whatever else the file holds") {
  const auto once = parse_rows(kDiamond);
  const auto again = parse_rows(kDiamond);
  REQUIRE(once.size() == again.size());
  for (size_t i = 0; i < once.size(); ++i) {
    CHECK(testing::packed(once[i]) == testing::packed(again[i]));
  }
  // The edges cross the wire and come back equal.
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, once[0]);
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  const auto back = handle.get().as<proto::Conversation>();
  REQUIRE(back.fan_in.size() == 3);
  CHECK(back.fan_in[2].member == once[0].fan_in[2].member);
  CHECK(back.fan_in[2].turn == once[0].fan_in[2].turn);
  CHECK(back.fan_in[2].after == once[0].fan_in[2].after);
}

TEST_CASE("jsonl fan-in mistakes are errors naming the file, line and key") {
  const std::string lead = R"({"conversation_id": "L", "turns": [{"text": "x"}, {"text": "y"}]})"
                           "\n";
  const std::string a = R"({"conversation_id": "a", "parent": "L", "spawn_after_turn": 1, )"
                        R"("text": "a"})"
                        "\n";
  SUBCASE("an unknown id") {
    CHECK(error_of_rows(lead + a + R"({"wait_for": ["a", "nobody"], "text": "j"})" + "\n") ==
          "dag.jsonl:3: wait_for: \"nobody\" is not the conversation_id of any row");
    CHECK(error_of_rows(lead + R"({"wait_for": ["nobody"], "text": "j"})" + "\n") ==
          "dag.jsonl:2: wait_for: \"nobody\" is not the conversation_id of any row");
  }
  SUBCASE("a row that waits for itself") {
    CHECK(error_of_rows(lead + R"({"conversation_id": "j", "wait_for": ["j"], "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for[0]: \"j\" is this row's own conversation_id") == 0);
  }
  SUBCASE("not an array, an element that is not an id, an empty list, a repeated id") {
    CHECK(error_of_rows(lead + R"({"wait_for": "L", "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for: expected an array") == 0);
    CHECK(error_of_rows(lead + R"({"wait_for": ["L", true], "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for[1]: expected a conversation_id") == 0);
    CHECK(error_of_rows(lead + R"({"wait_for": [{"id": "L"}], "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for[0]: expected a conversation_id") == 0);
    CHECK(error_of_rows(lead + R"({"wait_for": [], "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for: must name at least one") == 0);
    CHECK(error_of_rows(lead + R"({"wait_for": ["L", "L"], "text": "j"})" + "\n")
              .find("dag.jsonl:2: wait_for[1]: \"L\" is listed twice") == 0);
  }
  SUBCASE("the first turn's wait belongs on the row") {
    CHECK(error_of_rows(lead + R"({"turns": [{"text": "j", "wait_for": ["L"]}]})" + "\n")
              .find("dag.jsonl:2: turns[0].wait_for: the first turn's wait is the row's") == 0);
  }
  SUBCASE("a cycle of waits lists its lines") {
    const std::string e =
        error_of_rows(lead + a +
                      R"({"conversation_id": "p", "wait_for": ["a", "q"], "text": "p"})"
                      "\n"
                      R"({"conversation_id": "q", "wait_for": ["p"], "text": "q"})"
                      "\n");
    INFO(e);
    CHECK(e.find("wait_for: the rows on lines ") != std::string::npos);
    CHECK(e.find("3") != std::string::npos);
    CHECK(e.find("4") != std::string::npos);
    CHECK(e.find("in a cycle") != std::string::npos);
  }
  SUBCASE("a sub-agent that waits for its own parent can never start") {
    const std::string e =
        error_of_rows(lead + R"({"conversation_id": "c", "parent": "L", "spawn_after_turn": 1, )"
                             R"("wait_for": ["L"], "text": "c"})"
                             "\n");
    INFO(e);
    CHECK(e.find("dag.jsonl:") == 0);
    CHECK(e.find("wait_for: the rows on lines ") != std::string::npos);
    CHECK(e.find("1") != std::string::npos);
  }
  SUBCASE("a lead's turn that waits for a sub-agent spawned after it") {
    const std::string e = error_of_rows(
        R"({"conversation_id": "L", "turns": [{"text": "x"}, {"text": "y", "wait_for": ["c"]}]})"
        "\n"
        R"({"conversation_id": "c", "parent": "L", "spawn_after_turn": 2, "text": "c"})"
        "\n");
    INFO(e);
    CHECK(e.find("wait_for: the rows on lines 1, 2") != std::string::npos);
  }
  SUBCASE("a wait that joins two leads' families") {
    const std::string e =
        error_of_rows(lead + a +
                      R"({"conversation_id": "M", "text": "other lead"})"
                      "\n" +
                      R"({"conversation_id": "m", "parent": "M", "spawn_after_turn": 1, )"
                      R"("wait_for": ["a"], "text": "m"})"
                      "\n");
    INFO(e);
    CHECK(e.find("dag.jsonl:4: wait_for: \"a\" (line 2) belongs to the family of the lead on "
                 "line 1, this row to that of the lead on line 3") == 0);
    const std::string two = error_of_rows(lead +
                                          R"({"conversation_id": "M", "text": "m"})"
                                          "\n" +
                                          R"({"wait_for": ["L", "M"], "text": "both"})"
                                          "\n");
    CHECK(two.find("dag.jsonl:3: wait_for: \"M\" (line 2) belongs to the family of the lead on "
                   "line 2, this row to that of the lead on line 1") == 0);
  }
  SUBCASE("a cycle in a family that dataset.conversations leaves out is still an error") {
    Config config;
    config.dataset.conversations = 1;
    config.dataset.conversations_set = true;
    const std::string e = error_of_rows(
        R"({"text": "first"})"
        "\n" +
            lead +
            R"({"conversation_id": "c", "parent": "L", "spawn_after_turn": 1, "wait_for": ["L"], )"
            R"("text": "c"})"
            "\n",
        config);
    CHECK(e.find("wait_for: the rows on lines ") != std::string::npos);
  }
}

TEST_CASE("family dag: waits that can all be met, and the members of a cycle in order") {
  // Lead of 3 turns; s0 after its turn 1; s1 spawned by no turn.
  const std::vector<DagMember> shape = {{-1, 1, 3}, {-1, 1, 1}, {0, 0, 2}};
  CHECK(find_wait_cycle(shape, {}).empty());
  CHECK(find_wait_cycle(shape, {{1, 0, 0}, {-1, 2, 1}}).empty());  // s1 after s0, turn 3 after s1
  // The lead's turn 2 waits for s1, which waits for the lead to finish.
  const auto cycle = find_wait_cycle(shape, {{-1, 1, 1}, {1, 0, -1}});
  REQUIRE(cycle.size() == 2);
  CHECK(((cycle[0] == 0 && cycle[1] == 2) || (cycle[0] == 2 && cycle[1] == 0)));
  // s0 waits for its own parent's finish.
  CHECK_FALSE(find_wait_cycle(shape, {{0, 0, -1}}).empty());
  // Out-of-range edges are ignored, not a crash.
  CHECK(find_wait_cycle(shape, {{7, 0, 0}, {0, 9, -1}, {0, 0, 42}}).empty());
}

}  // namespace convoy::controller
