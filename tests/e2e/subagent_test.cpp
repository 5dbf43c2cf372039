// Sub-agent families end to end: a JSONL dataset whose rows name a parent runs
// against a real convoy-mock in header mode. The children carry the parent's session id in
// X-Dynamo-Parent-Session-ID (read from the mock's request log), start after the parent's turn
// spawn_after_turn ends, finish before the parent's next turn starts, and a family never leaves
// its worker (records.jsonl).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// Two families: "lead" (3 turns) with c1 after its turn 1 (c1 has a child g1 after its own turn
// 1) and c2 after its turn 2; "solo" (2 turns) with s1 after its turn 1. Think time 0: a join
// that did not wait would show as a parent turn sent before a child ended.
const char* const kFamilies =
    R"({"conversation_id": "lead", "turns": [{"text": "lead 0", "max_tokens": 8}, {"text": "lead 1", "max_tokens": 8}, {"text": "lead 2", "max_tokens": 8}]})"
    "\n"
    R"({"conversation_id": "c1", "parent": "lead", "spawn_after_turn": 1, "turns": [{"text": "c1 0", "max_tokens": 16}, {"text": "c1 1", "max_tokens": 16}]})"
    "\n"
    R"({"conversation_id": "g1", "parent": "c1", "spawn_after_turn": 1, "text": "g1 0", "max_tokens": 24})"
    "\n"
    R"({"conversation_id": "c2", "parent": "lead", "spawn_after_turn": 2, "text": "c2 0", "max_tokens": 16})"
    "\n"
    R"({"conversation_id": "solo", "turns": [{"text": "solo 0", "max_tokens": 8}, {"text": "solo 1", "max_tokens": 8}]})"
    "\n"
    R"({"conversation_id": "s1", "parent": "solo", "spawn_after_turn": 1, "text": "s1 0", "max_tokens": 16})"
    "\n";

struct Turn {
  int64_t sent_ns = 0;
  int64_t end_ns = 0;
  std::string correlation_id;
  std::string worker;
};

}  // namespace

TEST_CASE(
    "sub-agents run inside their family: parent header, spawn after turn k, join before k+1") {
  const fs::path dir = fresh_dir("e2e-subagents");
  const fs::path data = dir / "families.jsonl";
  std::ofstream(data) << kFamilies;
  const fs::path log = dir / "requests.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20", "--contract",
                   "header", "--log-requests", log.string()});
  const std::string url = mock_url(mock);
  const fs::path out = dir / "out";
  Subprocess run(quickstart_run_argv(
      out, {"target.url=" + url, "dataset.type=jsonl", "dataset.path=" + data.string(),
            "dataset.conversations=2", "load.sessions=2", "session_routing.mode=header",
            "workers.local=2", "output.html=false"}));
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());

  // records.jsonl: every member's turns, by conversation_id and turn index.
  std::map<std::string, std::map<int64_t, Turn>> turns;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    CHECK(r["http_status"].GetInt64() == 200);
    Turn t{r["sent_ns"].GetInt64(), r["end_ns"].GetInt64(), r["x_correlation_id"].GetString(),
           r["worker_id"].GetString()};
    turns[r["conversation_id"].GetString()][r["turn_index"].GetInt64()] = t;
  }
  const std::map<std::string, size_t> expected_turns = {{"lead", 3}, {"c1", 2},   {"g1", 1},
                                                        {"c2", 1},   {"solo", 2}, {"s1", 1}};
  for (const auto& [id, count] : expected_turns) {
    INFO(id);
    REQUIRE(turns.count(id) == 1);
    CHECK(turns[id].size() == count);
  }

  SUBCASE("each member has its own correlation id and its family's worker") {
    std::set<std::string> ids;
    for (const auto& [id, by_turn] : turns) {
      for (const auto& [k, t] : by_turn) CHECK(t.correlation_id == by_turn.at(0).correlation_id);
      ids.insert(by_turn.at(0).correlation_id);
    }
    CHECK(ids.size() == 6);
    for (const char* member : {"c1", "g1", "c2"}) {
      for (const auto& [k, t] : turns[member]) CHECK(t.worker == turns["lead"][0].worker);
    }
    CHECK(turns["s1"][0].worker == turns["solo"][0].worker);
  }

  SUBCASE("a child starts after its parent's turn k ends and ends before turn k+1 starts") {
    struct Link {
      const char* child;
      const char* parent;
      int64_t k;  // spawn_after_turn
    };
    for (const Link& l : {Link{"c1", "lead", 1}, Link{"g1", "c1", 1}, Link{"c2", "lead", 2},
                          Link{"s1", "solo", 1}}) {
      INFO(l.child << " under " << l.parent << " after turn " << l.k);
      const auto& child = turns[l.child];
      const auto& parent = turns[l.parent];
      CHECK(child.begin()->second.sent_ns >= parent.at(l.k - 1).end_ns);
      if (parent.count(l.k) == 1) CHECK(child.rbegin()->second.end_ns <= parent.at(l.k).sent_ns);
    }
  }

  SUBCASE("the mock saw each child's turns carry its parent's session id, the leads none") {
    std::map<std::string, std::string> parent_of;  // session id -> parent header, per request
    std::map<std::string, int> requests;
    for (const auto& line : read_jsonl(log)) {
      const std::string session = logged_header(line, "x-dynamo-session-id");
      if (session.empty()) continue;
      const std::string parent = logged_header(line, "x-dynamo-parent-session-id");
      if (requests[session]++ == 0) {
        parent_of[session] = parent;
      } else {
        CHECK(parent_of[session] == parent);  // the same on every turn
      }
      CHECK(parent != session);
    }
    auto id = [&](const char* member) { return turns[member].at(0).correlation_id; };
    CHECK(parent_of[id("lead")].empty());
    CHECK(parent_of[id("solo")].empty());
    CHECK(parent_of[id("c1")] == id("lead"));
    CHECK(parent_of[id("c2")] == id("lead"));
    CHECK(parent_of[id("g1")] == id("c1"));
    CHECK(parent_of[id("s1")] == id("solo"));
    CHECK(requests[id("lead")] == 3);
    CHECK(requests[id("c1")] == 2);
  }
  fs::remove_all(dir);
}
