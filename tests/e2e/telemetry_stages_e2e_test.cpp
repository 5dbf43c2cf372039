// End to end: server telemetry per load-profile stage through a real staged
// `convoy run` against the bundled mock, whose own /metrics is scraped without being listed.
// Each stage's counter delta in summary.json is exactly what convoy sent in that stage (the
// records' `stage`), the stage deltas add up to the whole window's, and the running-requests
// gauge peaks higher in the busier stage.
//
// A stage's server window ends where its settle starts, and a request is in the stage it was
// intended in: a request still running at the stage's end finishes in the settle, counted by
// the server in no stage but by the records in that stage. A closed-loop (concurrency) stage
// always has requests running at its end, so exact deltas need stages that go quiet before they
// end: rate stages whose last arrival is well before the end (here by more than a request's
// latency plus a scrape interval), which then settle at once (nothing in flight).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// One mock engine (one series per family); a request is ~17 ms of prefill and 8 tokens at
// 25 ms: ~0.22 s. Stage "one": constant 1/s for 2.6 s, arrivals at 0, 1 and 2 s (never two
// running), quiet from ~2.22 s. Stage "burst": a linear ramp from 20/s to 0 over 2.49 s holds
// 24.9 arrivals, so 25 (at units 0..24), ~4 running at its start, the last ~0.47 s before its
// end (sqrt(2 x 2.49 s x 0.9 / 20/s)), quiet ~0.25 s: five scrapes at 0.05 s.
constexpr const char* kStagesConfig =
    "name: telemetry-stages-e2e\n"
    "seed: 5\n"
    "target: {url: mock, streaming: true}\n"
    "mock: {workers: 1, itl_ms: 25}\n"
    "dataset:\n"
    "  type: synthetic\n"
    "  conversations: 64\n"
    "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
    "  input_tokens: {mean: 32, stddev: 0}\n"
    "  output_tokens: {mean: 8, stddev: 0}\n"
    "load:\n"
    "  concurrency: 16\n"
    "  grace_s: 5\n"
    "  stages:\n"
    "    - {name: one, mode: rate, rate: 1, arrival: constant, duration_s: 2.6, settle_s: 0.5}\n"
    "    - {name: burst, mode: rate, rate: {from: 20, to: 0}, arrival: constant,\n"
    "       duration_s: 2.49, settle_s: 0.5}\n"
    "workers: {local: 1}\n"
    "output: {html: false}\n"
    "telemetry: {interval_s: 0.05, timeout_s: 1}\n";

const std::vector<std::string> kStages = {"one", "burst"};

// What the records say convoy sent in each stage.
struct Sent {
  double requests = 0;
  double output_tokens = 0;
};

std::map<std::string, Sent> sent_by_stage(const fs::path& records) {
  std::map<std::string, Sent> out;
  for (const auto& r : read_jsonl(records)) {
    CHECK(r["error"].IsNull());
    CHECK_FALSE(r.HasMember("settle"));  // nothing was intended in a settle
    REQUIRE(r.HasMember("stage"));
    Sent& s = out[r["stage"].GetString()];
    s.requests += 1;
    s.output_tokens += static_cast<double>(r["metrics"]["osl"].GetInt64());
  }
  return out;
}

// The mock endpoint's entries named `name` whose label `label` is `value` (any when empty).
std::vector<const rapidjson::Value*> entries(const rapidjson::Value& metrics,
                                             const std::string& name, const std::string& label = "",
                                             const std::string& value = "") {
  std::vector<const rapidjson::Value*> out;
  for (const auto& m : metrics.GetArray()) {
    if (std::string(m["endpoint"].GetString()) != "mock" || m["name"].GetString() != name) {
      continue;
    }
    const auto& labels = m["labels"];
    if (!label.empty() &&
        !(labels.HasMember(label.c_str()) && labels[label.c_str()].GetString() == value)) {
      continue;
    }
    out.push_back(&m);
  }
  return out;
}

// A counter family's deltas: the whole window's and each stage's (by position), summed over
// its series.
struct StageDeltas {
  double window = 0;
  std::vector<double> stages;
};

StageDeltas deltas(const std::vector<const rapidjson::Value*>& series) {
  StageDeltas out;
  out.stages.assign(kStages.size(), 0);
  for (const rapidjson::Value* m : series) {
    out.window += (*m)["delta"].GetDouble();
    REQUIRE((*m)["stages"].Size() == kStages.size());
    for (size_t i = 0; i < kStages.size(); ++i) {
      const auto& stage = (*m)["stages"][static_cast<rapidjson::SizeType>(i)];
      CHECK(stage["name"].GetString() == kStages[i]);
      REQUIRE(stage["delta"].IsNumber());  // seen in every stage
      out.stages[i] += stage["delta"].GetDouble();
    }
  }
  return out;
}

}  // namespace

TEST_CASE("telemetry stages e2e: each stage's server counter deltas equal what convoy sent in it") {
  const fs::path dir = fresh_dir("e2e-telemetry-stages");
  const fs::path config = dir / "convoy.yaml";
  std::ofstream(config) << kStagesConfig;
  const fs::path out = dir / "out";
  const auto start = std::chrono::steady_clock::now();
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(120);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  CHECK(wall_s < 60);

  const auto sent = sent_by_stage(out / "records.jsonl");
  REQUIRE(sent.size() == kStages.size());
  CHECK(sent.at("one").requests == 3);
  CHECK(sent.at("burst").requests == 25);

  const auto summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("server_metrics"));
  const auto& sm = summary["server_metrics"];
  REQUIRE(sm["stages"].Size() == kStages.size());
  for (size_t i = 0; i < kStages.size(); ++i) {
    const auto& window = sm["stages"][static_cast<rapidjson::SizeType>(i)];
    CHECK(window["name"].GetString() == kStages[i]);
    CHECK(window["end_ns"].GetInt64() > window["start_ns"].GetInt64());
  }
  const auto& metrics = sm["metrics"];

  // Tokens: counted by the mock at each request's end.
  const auto tokens = entries(metrics, "vllm:generation_tokens_total");
  REQUIRE(tokens.size() == 1);
  const StageDeltas t = deltas(tokens);
  // Requests: the Dynamo frontend's counter of successful requests.
  const auto ok = entries(metrics, "dynamo_frontend_requests_total", "status", "success");
  REQUIRE_FALSE(ok.empty());
  const StageDeltas r = deltas(ok);
  double stage_tokens = 0;
  double stage_requests = 0;
  for (size_t i = 0; i < kStages.size(); ++i) {
    CAPTURE(kStages[i]);
    CHECK(t.stages[i] == sent.at(kStages[i]).output_tokens);
    CHECK(r.stages[i] == sent.at(kStages[i]).requests);
    stage_tokens += t.stages[i];
    stage_requests += r.stages[i];
  }
  CHECK(stage_tokens == t.window);
  CHECK(stage_requests == r.window);
  CHECK(r.window == 28);

  // The running gauge: never two at once in "one", several at once early in "burst".
  const auto running = entries(metrics, "vllm:num_requests_running");
  REQUIRE(running.size() == 1);
  const auto& per_stage = (*running[0])["stages"];
  REQUIRE(per_stage.Size() == kStages.size());
  REQUIRE(per_stage[0]["max"].IsNumber());
  REQUIRE(per_stage[1]["max"].IsNumber());
  CHECK(per_stage[0]["max"].GetDouble() <= 1);
  CHECK(per_stage[1]["max"].GetDouble() > per_stage[0]["max"].GetDouble());
  fs::remove_all(dir);
}
