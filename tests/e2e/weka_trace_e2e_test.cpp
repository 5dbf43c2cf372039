// Weka agent traces end to end: a folder holding one trace (written here from the documented
// shape: a lead of three calls with two sub-agents spawned after its first) runs against a real
// convoy-mock; records.jsonl's send and end times show the sub-agents starting after the lead's
// first turn ended and the lead's second turn waiting for both, all on one worker. A trace whose
// time goes backwards is refused before anything is sent (exit 2, file and key path named).
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

namespace weka_e2e {

// One call at `t` seconds (every t 0: no idle gaps, so an order the family did not enforce
// would show as a request sent before the one it waits for ended).
std::string weka_e2e_call(int64_t in, int64_t out) {
  return R"({"t": 0, "type": "s", "model": "m", "in": )" + std::to_string(in) + R"(, "out": )" +
         std::to_string(out) + "}";
}

// "lead": three calls; "a" (two calls, long replies) and "b" (one short) after its first.
std::string weka_e2e_trace() {
  return R"({"id": "lead", "models": ["m"], "block_size": 16, "hash_id_scope": "local", )"
         R"("requests": [)" +
         weka_e2e_call(40, 8) +
         R"(, {"t": 0, "type": "subagent", "agent_id": "a", "subagent_type": "Explore", )"
         R"("status": "completed", "models": ["m"], "requests": [)" +
         weka_e2e_call(30, 40) + ", " + weka_e2e_call(80, 30) + "]}" +
         R"(, {"t": 0, "type": "subagent", "agent_id": "b", "subagent_type": "Explore", )"
         R"("status": "completed", "models": ["m"], "requests": [)" +
         weka_e2e_call(20, 4) + "]}, " + weka_e2e_call(60, 8) + ", " + weka_e2e_call(80, 8) + "]}";
}

struct WekaSent {
  int64_t sent_ns = 0;
  int64_t end_ns = 0;
  std::string worker;
};

}  // namespace weka_e2e

using namespace weka_e2e;

TEST_CASE("weka_trace on the mock: sub-agents run after the lead's turn, the lead waits") {
  const fs::path dir = fresh_dir("e2e-weka");
  fs::create_directories(dir / "traces");
  std::ofstream(dir / "traces" / "lead.json") << weka_e2e_trace();
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20"});
  const std::string url = mock_url(mock);
  const fs::path out = dir / "out";
  Subprocess run(quickstart_run_argv(
      out,
      {"target.url=" + url, "dataset.type=weka_trace", "dataset.path=" + (dir / "traces").string(),
       "load.sessions=1", "workers.local=2", "output.html=false"}));
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());

  std::map<std::string, std::map<int64_t, WekaSent>> turns;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    CHECK(r["http_status"].GetInt64() == 200);
    turns[r["conversation_id"].GetString()][r["turn_index"].GetInt64()] = {
        r["sent_ns"].GetInt64(), r["end_ns"].GetInt64(), r["worker_id"].GetString()};
  }
  REQUIRE(turns["lead"].size() == 3);
  REQUIRE(turns["lead/a"].size() == 2);
  REQUIRE(turns["lead/b"].size() == 1);
  CHECK(turns["lead/a"][0].sent_ns >= turns["lead"][0].end_ns);
  CHECK(turns["lead/b"][0].sent_ns >= turns["lead"][0].end_ns);
  const int64_t last_end = std::max(turns["lead/a"][1].end_ns, turns["lead/b"][0].end_ns);
  CHECK(turns["lead"][1].sent_ns >= last_end);
  CHECK(turns["lead"][2].sent_ns >= turns["lead"][1].end_ns);
  for (const char* member : {"lead/a", "lead/b"}) {
    for (const auto& [k, sent] : turns[member]) {
      CHECK(sent.worker == turns["lead"][0].worker);  // one family, one worker
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("weka_trace on the mock: time going backwards exits 2 naming the key, nothing sent") {
  const fs::path dir = fresh_dir("e2e-weka-bad");
  const fs::path data = dir / "back.json";
  std::ofstream(data)
      << R"({"id": "x", "models": ["m"], "block_size": 16, "hash_id_scope": "local", )"
         R"("requests": [{"t": 5, "type": "n", "model": "m", "in": 8, "out": 2}, )"
         R"({"t": 4, "type": "n", "model": "m", "in": 9, "out": 2}]})";
  const fs::path log = dir / "requests.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--log-requests", log.string()});
  const std::string url = mock_url(mock);
  Subprocess run(quickstart_run_argv(
      dir / "out", {"target.url=" + url, "dataset.type=weka_trace", "dataset.path=" + data.string(),
                    "workers.local=1", "output.html=false"}));
  const auto rc = run.wait(60);
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find("back.json: requests[1].t: 4 s is before the 5 s of requests[0]") !=
        std::string::npos);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());
  std::ifstream in(log);
  std::string line;
  int requests = 0;
  while (std::getline(in, line)) requests += line.find("completions") != std::string::npos ? 1 : 0;
  CHECK(requests == 0);
  fs::remove_all(dir);
}
