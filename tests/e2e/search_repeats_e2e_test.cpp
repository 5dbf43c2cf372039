// load.search.repeats end to end: a step whose TTFT lies within 10% of the SLO's limit runs
// again as "concurrency=1 (run 2)", and summary.json's search block says so and reports the
// answer's confidence (runs, met_runs).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("a capacity search runs a step within the SLO's noise again") {
  TempDir dir("convoy-search-repeats-");
  // Single-turn 256-token prompts: the mock's TTFT is its prefill, about 20.6 ms (docs/mock.md
  // "Timing"), within 10% of the 21.5 ms limit whatever the loopback adds.
  const fs::path config = dir.path() / "search.yaml";
  std::ofstream(config)
      << "name: search-noise\nseed: 7\ntarget: {url: mock}\nmock: {workers: 1, itl_ms: 2}\n"
      << "dataset:\n  type: synthetic\n  conversations: 400\n"
      << "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
      << "  input_tokens: {mean: 256, stddev: 0}\n  output_tokens: {mean: 4, stddev: 0}\n"
      << "load:\n  grace_s: 5\n  search:\n    vary: concurrency\n    low: 1\n    high: 2\n"
      << "    step_requests: 10\n    precision: 0.6\n"
      << "    slo: {time_to_first_token: {p50: 21.5}}\n"
      << "workers: {local: 1}\noutput: {html: false}\n";
  const fs::path out = dir.path() / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "-q"});
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));
  const rapidjson::Document s = read_json(out / "summary.json");
  const auto& search = s["search"];
  CHECK(search["repeats"].GetInt() == 2);
  const auto& steps = search["steps"];
  REQUIRE(steps.Size() >= 2);
  CHECK(steps[0]["value"].GetDouble() == 1);
  CHECK(steps[0]["within_noise"].GetBool());
  CHECK(steps[0]["run"].GetInt() == 1);
  CHECK(steps[1]["value"].GetDouble() == 1);  // the same step again
  CHECK(steps[1]["run"].GetInt() == 2);
  CHECK(std::string(s["stages"][1]["name"].GetString()) == "concurrency=1 (run 2)");
  // Whichever bound 1 became, its verdict counts every run of it.
  const auto& result = search["result"];
  REQUIRE(result["confidence"].IsObject());
  for (const char* bound : {"max_meeting_slo", "min_failing"}) {
    if (result[bound].IsNumber() && result[bound].GetDouble() == 1) {
      CHECK(result["confidence"][bound]["runs"].GetInt() >= 2);
    }
  }
}
