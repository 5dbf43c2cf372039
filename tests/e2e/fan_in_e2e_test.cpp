// Fan-in end to end: a JSONL family whose join row waits for two sub-agents (wait_for) and whose
// lead's last turn waits for the join runs against a real convoy-mock; records.jsonl's send and
// end times show the DAG's order on one worker. A cycle of waits is refused before anything is
// sent (exit 2, the mock saw no request).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace fan_in_e2e {

// "plan" (2 turns; its turn 2 waits for "review"); "read-a" and "read-b" after plan's turn 1
// with different reply lengths (so they end apart); "review" waits for both. Think time 0: a
// join that did not wait would show as a request sent before its last parent ended.
const char* const kDag =
    R"({"conversation_id": "plan", "turns": [{"text": "plan 0", "max_tokens": 8}, {"text": "plan 1", "max_tokens": 8, "wait_for": ["review"]}]})"
    "\n"
    R"({"conversation_id": "read-a", "parent": "plan", "spawn_after_turn": 1, "text": "read a", "max_tokens": 40})"
    "\n"
    R"({"conversation_id": "read-b", "parent": "plan", "spawn_after_turn": 1, "text": "read b", "max_tokens": 4})"
    "\n"
    R"({"conversation_id": "review", "wait_for": ["read-a", "read-b"], "text": "review", "max_tokens": 8})"
    "\n";

struct Sent {
  int64_t sent_ns = 0;
  int64_t end_ns = 0;
  std::string worker;
};

}  // namespace fan_in_e2e

using namespace fan_in_e2e;

TEST_CASE("fan-in on the mock: a join starts after its last parent ended, the lead after it") {
  const fs::path dir = fresh_dir("e2e-fan-in");
  const fs::path data = dir / "dag.jsonl";
  std::ofstream(data) << kDag;
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20"});
  const std::string url = mock_url(mock);
  const fs::path out = dir / "out";
  Subprocess run(quickstart_run_argv(
      out, {"target.url=" + url, "dataset.type=jsonl", "dataset.path=" + data.string(),
            "load.sessions=1", "workers.local=2", "output.html=false"}));
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());

  std::map<std::string, std::map<int64_t, Sent>> turns;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    CHECK(r["http_status"].GetInt64() == 200);
    turns[r["conversation_id"].GetString()][r["turn_index"].GetInt64()] = {
        r["sent_ns"].GetInt64(), r["end_ns"].GetInt64(), r["worker_id"].GetString()};
  }
  REQUIRE(turns["plan"].size() == 2);
  REQUIRE(turns["read-a"].size() == 1);
  REQUIRE(turns["read-b"].size() == 1);
  REQUIRE(turns["review"].size() == 1);
  const int64_t last_parent_end = std::max(turns["read-a"][0].end_ns, turns["read-b"][0].end_ns);
  CHECK(turns["read-a"][0].sent_ns >= turns["plan"][0].end_ns);
  CHECK(turns["read-b"][0].sent_ns >= turns["plan"][0].end_ns);
  CHECK(turns["review"][0].sent_ns >= last_parent_end);
  CHECK(turns["plan"][1].sent_ns >= turns["review"][0].end_ns);
  for (const char* member : {"read-a", "read-b", "review"}) {
    CHECK(turns[member][0].worker == turns["plan"][0].worker);  // one family, one worker
  }
  fs::remove_all(dir);
}

TEST_CASE("fan-in on the mock: a cycle of waits exits 2 naming its lines, nothing sent") {
  const fs::path dir = fresh_dir("e2e-fan-in-cycle");
  const fs::path data = dir / "cycle.jsonl";
  std::ofstream(data) << R"({"conversation_id": "L", "text": "lead"})"
                         "\n"
                      << R"({"conversation_id": "p", "wait_for": ["L", "q"], "text": "p"})"
                         "\n"
                      << R"({"conversation_id": "q", "wait_for": ["p"], "text": "q"})"
                         "\n";
  const fs::path log = dir / "requests.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--log-requests", log.string()});
  const std::string url = mock_url(mock);
  Subprocess run(quickstart_run_argv(
      dir / "out", {"target.url=" + url, "dataset.type=jsonl", "dataset.path=" + data.string(),
                    "workers.local=1", "output.html=false"}));
  const auto rc = run.wait(60);
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find("cycle.jsonl:2: wait_for: the rows on lines 2, 3") != std::string::npos);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());
  std::ifstream in(log);
  std::string line;
  int requests = 0;
  while (std::getline(in, line)) requests += line.find("completions") != std::string::npos ? 1 : 0;
  CHECK(requests == 0);
  fs::remove_all(dir);
}
