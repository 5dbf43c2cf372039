// End to end: `convoy run` against the bundled mock scrapes its /metrics (vLLM and Dynamo
// frontend names, mock/server_metrics.hpp) and the counters' deltas over the measured window are
// exactly the tokens and requests the records show.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// No warmup: the window's counter baseline is the scrape before any traffic.
constexpr const char* kMetricsConfig =
    "name: mock-metrics-e2e\n"
    "seed: 11\n"
    "target: {url: mock, streaming: true}\n"
    "mock: {workers: 2, contract: bind, speedup: 20}\n"
    "dataset:\n"
    "  type: synthetic\n"
    "  conversations: 8\n"
    "  turns: {mean: 3, stddev: 0, min: 3, max: 3}\n"
    "  input_tokens: {mean: 96, stddev: 16}\n"
    "  output_tokens: {mean: 12, stddev: 4}\n"
    "load: {mode: concurrency, concurrency: 4}\n"
    "session_routing: {mode: bind}\n"
    "workers: {local: 1}\n"
    "output: {html: false}\n"
    "telemetry: {interval_s: 0.1, timeout_s: 1}\n";

struct MetricDeltas {
  double total = 0;
  std::set<std::string> engines;  // the `engine` label values seen
};

// Sums `delta` (counters) or `count` (histograms) of the mock endpoint's series `name` whose
// labels include `label` = `value` (any when `label` is empty).
MetricDeltas deltas(const rapidjson::Value& metrics, const std::string& name,
                    const std::string& label = "", const std::string& value = "") {
  MetricDeltas out;
  for (const auto& m : metrics.GetArray()) {
    if (std::string(m["endpoint"].GetString()) != "mock" || m["name"].GetString() != name) {
      continue;
    }
    const auto& labels = m["labels"];
    if (!label.empty() &&
        !(labels.HasMember(label.c_str()) && labels[label.c_str()].GetString() == value)) {
      continue;
    }
    if (labels.HasMember("engine")) out.engines.insert(labels["engine"].GetString());
    out.total += m.HasMember("delta") ? m["delta"].GetDouble() : m["count"].GetDouble();
  }
  return out;
}

}  // namespace

TEST_CASE("convoy run against the mock: vLLM and Dynamo counter deltas equal the records") {
  const fs::path dir = fresh_path("e2e-mock-metrics");
  fs::create_directories(dir);
  const fs::path config = dir / "convoy.yaml";
  std::ofstream(config) << kMetricsConfig;
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);

  double input_tokens = 0;
  double output_tokens = 0;
  const auto records = read_jsonl(out / "records.jsonl");
  for (const auto& r : records) {
    CHECK(r["error"].IsNull());
    input_tokens += static_cast<double>(r["metrics"]["isl"].GetInt64());
    output_tokens += static_cast<double>(r["metrics"]["osl"].GetInt64());
  }
  REQUIRE(records.size() == 24);
  CHECK(input_tokens > 24 * 64);

  const auto summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("server_metrics"));
  const auto& metrics = summary["server_metrics"]["metrics"];
  const MetricDeltas prompt = deltas(metrics, "vllm:prompt_tokens_total");
  CHECK(prompt.total == input_tokens);
  CHECK(prompt.engines == std::set<std::string>{"0", "1"});  // one engine per mock worker
  CHECK(deltas(metrics, "vllm:generation_tokens_total").total == output_tokens);
  CHECK(deltas(metrics, "vllm:prefix_cache_queries_total").total == input_tokens);
  CHECK(deltas(metrics, "vllm:prefix_cache_hits_total").total > 0);  // later turns hit
  CHECK(deltas(metrics, "vllm:num_preemptions_total").total == 0);
  CHECK(deltas(metrics, "vllm:time_to_first_token_seconds").total == 24);
  const auto n = static_cast<double>(records.size());
  CHECK(deltas(metrics, "dynamo_frontend_requests_total", "status", "success").total == n);
  CHECK(deltas(metrics, "dynamo_frontend_requests_total", "status", "error").total == 0);
  CHECK(deltas(metrics, "dynamo_frontend_output_tokens_total").total == output_tokens);
  CHECK(deltas(metrics, "dynamo_frontend_time_to_first_token_seconds").total == n);
  fs::remove_all(dir);
}
