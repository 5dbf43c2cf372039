// Other routers' session keys end to end against convoy-mock: SGLang Model Gateway's
// X-SMG-Routing-Key, SGLang's body session_id, vLLM's X-data-parallel-rank and custom keys, read
// from the mock's request log; and session_routing.verify showing the affinity the mock gives
// those keys (random routing moves nearly every conversation without them).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
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

// 6 conversations of 3 turns against a random-routing mock of 8 workers (DP size 2), with
// verify; `sets` add the routing keys. Returns summary.json and fills `log` with the mock's.
rapidjson::Document run_router_keys(const std::string& name, const std::vector<std::string>& sets,
                                    fs::path* log) {
  const fs::path dir = fresh_dir("e2e-router-keys-" + name);
  *log = dir / "requests.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20", "--workers", "8",
                   "--data-parallel-size", "2", "--router-mode", "random", "--log-requests",
                   log->string()});
  const std::string url = mock_url(mock);
  std::vector<std::string> all = {"target.url=" + url,           "dataset.conversations=6",
                                  "dataset.turns.mean=3",        "dataset.turns.stddev=0",
                                  "session_routing.verify=true", "output.html=false"};
  all.insert(all.end(), sets.begin(), sets.end());
  Subprocess run(quickstart_run_argv(dir / "out", all));
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());
  return read_json(dir / "out" / "summary.json");
}

}  // namespace

TEST_CASE("router keys: sglang_gateway and vllm_dp_rank keep every conversation on one worker") {
  fs::path log;
  const auto summary = run_router_keys(
      "gateway",
      {"session_routing.mode=[sglang_gateway, vllm_dp_rank]", "session_routing.dp_ranks=2"}, &log);
  std::map<std::string, std::set<std::string>> ranks;  // session -> X-data-parallel-rank values
  int requests = 0;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("body") || !line["body"].IsObject()) continue;
    ++requests;
    const std::string session = logged_header(line, "X-Correlation-ID");
    CHECK(logged_header(line, "X-SMG-Routing-Key") == session);
    ranks[session].insert(logged_header(line, "X-data-parallel-rank"));
    CHECK_FALSE(line["body"].HasMember("session_id"));
  }
  CHECK(requests == 18);
  REQUIRE(ranks.size() == 6);
  for (const auto& [session, seen] : ranks) {
    REQUIRE(seen.size() == 1);
    CHECK((*seen.begin() == "0" || *seen.begin() == "1"));
  }
  const auto& a = summary["affinity"];
  CHECK(a["conversations"].GetInt64() == 6);
  CHECK(a["conversations_moved"].GetInt64() == 0);
}

TEST_CASE("router keys: sglang_session writes the body session_id and custom its own places") {
  fs::path log;
  const auto summary = run_router_keys(
      "session",
      {"session_routing.mode=[sglang_session, custom]",
       "session_routing.custom={headers: {X-Tenant-Route: root}, body: {metadata.frontend: "
       "url_index}}"},
      &log);
  int requests = 0;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("body") || !line["body"].IsObject()) continue;
    ++requests;
    const auto& body = line["body"];
    const std::string session = logged_header(line, "X-Correlation-ID");
    REQUIRE(body.HasMember("session_id"));
    CHECK(std::string(body["session_id"].GetString()) == session);
    CHECK(logged_header(line, "X-Tenant-Route") == session);  // leads only: root == session
    REQUIRE(body.HasMember("metadata"));
    CHECK(body["metadata"]["frontend"].GetInt() == 0);
    CHECK(logged_header(line, "X-SMG-Routing-Key").empty());
  }
  CHECK(requests == 18);
  CHECK(summary["affinity"]["conversations_moved"].GetInt64() == 0);
}

TEST_CASE("router keys: two modes writing one header stop the run before anything is sent") {
  const fs::path dir = fresh_dir("e2e-router-keys-clash");
  Subprocess run(quickstart_run_argv(
      dir / "out", {"session_routing.mode=[sglang_gateway, custom]",
                    "session_routing.custom={headers: {x-smg-routing-key: root}}"}));
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find("session_routing.custom.headers.x-smg-routing-key") != std::string::npos);
  CHECK(run.output().find("both write the header") != std::string::npos);
}
