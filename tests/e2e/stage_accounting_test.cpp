// Honest stage results end to end against a convoy-mock started here: a stage
// that ends on `requests: N` holds exactly N requests in its table, whatever turns of its
// conversations land after it ended, and its console line says when it is provisional; a
// capacity search cut short by Ctrl-C claims nothing of a step it never judged.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// A config of 3-turn conversations against `url` with `load_yaml` as its load: block.
fs::path write_config(const fs::path& dir, const std::string& name, const std::string& url,
                      const std::string& load_yaml) {
  const fs::path config = dir / (name + ".yaml");
  std::ofstream(config) << "name: " << name << "\nseed: 5\ntarget:\n  url: " << url
                        << "\ndataset:\n  type: synthetic\n  conversations: 200\n"
                        << "  turns: {mean: 3, stddev: 0, min: 3, max: 3}\n"
                        << "  input_tokens: {mean: 16, stddev: 0}\n"
                        << "  output_tokens: {mean: 4, stddev: 0}\n"
                        << "  think_time_ms: {mean: 30, stddev: 0}\n"
                        << load_yaml << "workers:\n  local: 1\noutput:\n  html: false\n";
  return config;
}

double stage_requests(const rapidjson::Value& stage) {
  return stage["request_count"]["avg"].GetDouble() +
         (stage.HasMember("error_request_count") ? stage["error_request_count"]["avg"].GetDouble()
                                                 : 0.0);
}

}  // namespace

TEST_CASE("a stage that ends on requests: N holds exactly N requests in its table") {
  const fs::path dir = fresh_dir("e2e-stage-requests");
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20"});
  const std::string url = mock_url(mock);
  // 31 of 3-turn conversations: 11 are started (33 planned), the last one's third turn is past
  // the stage's 31 and every conversation's later turns are intended after the stage ended.
  // The last stage ends on requests too: the profile waits for its conversations' later turns
  // (up to load.grace_s) before the run drains, so it holds its 12 as well.
  const fs::path config =
      write_config(dir, "stage-requests", url,
                   "load:\n  stages:\n"
                   "    - {name: first, mode: concurrency, concurrency: 4, requests: 31}\n"
                   "    - {name: second, mode: concurrency, concurrency: 4, requests: 12}\n");
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  const auto summary = read_json(out / "summary.json");
  REQUIRE(summary["stages"].Size() == 2);
  CHECK(stage_requests(summary["stages"][0]) == 31);
  CHECK(stage_requests(summary["stages"][1]) == 12);
  // records.jsonl agrees: each record names its stage, the rest are settle requests.
  std::map<std::string, int> by_stage;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    if (r.HasMember("stage") && r["stage"].IsString()) ++by_stage[r["stage"].GetString()];
  }
  CHECK(by_stage["first"] == 31);
  CHECK(by_stage["second"] == 12);
  // Each stage's console line is its final table, or says it is provisional.
  for (const char* name : {"stage first", "stage second"}) {
    const size_t at = run.output().find(std::string(name) + " (");
    REQUIRE(at != std::string::npos);
    const std::string line = run.output().substr(at, run.output().find('\n', at) - at);
    INFO(line);
    const bool exact =
        line.find(name == std::string("stage first") ? ": 31 requests" : ": 12 requests") !=
        std::string::npos;
    CHECK((exact || line.find("provisional") != std::string::npos));
  }
  mock.signal(SIGTERM);
  CHECK(mock.wait(30).has_value());
}

TEST_CASE("a capacity search cut short by Ctrl-C claims nothing of a step it never judged") {
  const fs::path dir = fresh_dir("e2e-search-interrupted");
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20"});
  const std::string url = mock_url(mock);
  const fs::path config = write_config(
      dir, "search-cut", url,
      "load:\n  grace_s: 2\n  search:\n    vary: concurrency\n    low: 1\n    high: 64\n"
      "    step_duration_s: 2\n    precision: 0.1\n"
      "    slo: {time_to_first_token: {p99: 60000}}\n");
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  // Interrupted during its second step (high, 64): low met the SLO, high was never judged.
  REQUIRE(run.wait_for_output("stage 1 ", 60));
  run.signal(SIGINT);
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 130);
  CHECK(run.output().find("still met the SLO") == std::string::npos);
  CHECK(run.output().find("even low") == std::string::npos);
  const auto summary = read_json(out / "summary.json");
  CHECK(summary["was_cancelled"].GetBool());
  CHECK_FALSE(summary["search"]["result"]["complete"].GetBool());
  std::string reasons;
  for (const auto& r : summary["verdict"]["reasons"].GetArray()) reasons += r.GetString();
  CHECK(reasons.find("still met the SLO") == std::string::npos);
  CHECK(reasons.find("capacity search interrupted after 1 judged step(s): the highest load that "
                     "met the SLO so far is 1.00") != std::string::npos);
  mock.signal(SIGTERM);
  CHECK(mock.wait(30).has_value());
}
