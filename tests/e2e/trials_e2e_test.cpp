// load.trials end to end: configs/trials.yaml (three trials against the bundled mock) writes
// three complete trial folders and a combined summary.json whose TTFT interval holds the mock's
// configured TTFT (its prefill formula, docs/mock.md "Timing"); `convoy compare` of two such
// folders reads the intervals.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// The mock's prefill time for `t` uncached prompt tokens (Dynamo's mocker formula, speedup 1).
double mock_prefill_ms(double t) { return 4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142; }

// What the client adds to the server's TTFT on loopback: the request's trip, the HTTP and SSE
// framing, the mock's timer and the worker's event loop. Generous for a loaded 2-core CI box.
constexpr double kClientOverheadMs = 5.0;

int run_trials_config(const fs::path& out, const std::vector<std::string>& sets) {
  std::vector<std::string> argv = {
      bin("controller/convoy"), "run", src("configs/trials.yaml"), "-o", out.string(), "--quiet"};
  for (const std::string& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  Subprocess run(argv);
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  return *rc;
}

}  // namespace

TEST_CASE("load.trials 3 against the mock writes three trial folders and a combined interval") {
  TempDir dir("convoy-trials-e2e-");
  const fs::path out = dir.path() / "trials";
  REQUIRE(run_trials_config(out, {"dataset.conversations=24"}) == 0);
  for (int t = 1; t <= 3; ++t) {
    const fs::path trial = out / ("trial-" + std::to_string(t));
    CAPTURE(trial);
    CHECK(fs::exists(trial / "summary.json"));
    CHECK(fs::exists(trial / "summary.csv"));
    CHECK(fs::exists(trial / "records.jsonl"));
    const rapidjson::Document s = read_json(trial / "summary.json");
    CHECK(s["request_count"]["avg"].GetDouble() == 24);
    // Each trial ran with its own seed, so its conversations are fresh.
    const std::string yaml = s["run"]["config_yaml"].GetString();
    CHECK(yaml.find("seed: " + std::to_string(41 + t)) != std::string::npos);
  }
  const rapidjson::Document first = read_json(out / "trial-1" / "summary.json");
  const rapidjson::Document combined = read_json(out / "summary.json");
  REQUIRE(combined.IsObject());
  const auto& trials = combined["trials"];
  CHECK(trials["completed"].GetInt() == 3);
  const auto& ttft = trials["intervals"]["time_to_first_token"]["p50"];
  REQUIRE(ttft["values"].Size() == 3);
  // The configured TTFT: the prefill of the prompt's uncached tokens as the mock counted them.
  const double isl = first["input_sequence_length"]["p50"].GetDouble();
  const double cached =
      first.HasMember("cached_tokens") ? first["cached_tokens"]["p50"].GetDouble() : 0.0;
  const double configured = mock_prefill_ms(isl - cached);
  const double low = ttft["low"].GetDouble();
  const double high = ttft["high"].GetDouble();
  INFO("configured ", configured, " ms; interval [", low, ", ", high, "]");
  CHECK(low <= high);
  // The interval holds the configured TTFT, up to the client's own share of what it measures
  // (which only ever adds).
  CHECK(configured <= high);
  CHECK(configured >= low - kClientOverheadMs);
  for (const auto& v : ttft["values"].GetArray()) {
    CHECK(v.GetDouble() >= configured - 0.5);
    CHECK(v.GetDouble() <= configured + kClientOverheadMs);
  }
  for (const char* tag : {"request_throughput", "output_token_throughput", "error_rate"}) {
    CAPTURE(tag);
    CHECK(trials["intervals"][tag]["avg"]["values"].Size() == 3);
  }
  CHECK(trials["intervals"]["error_rate"]["avg"]["mean"].GetDouble() == 0);
}
