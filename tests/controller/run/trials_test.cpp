// load.trials' driver with a fake trial runner: the seed sequence, one folder per trial, the
// combined summary.json with its intervals, and the exit-code rules (a failed criterion lets the
// trials go on, an incomplete trial or Ctrl-C stops them and keeps the finished ones).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "controller/run/trials.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::ConfigError;
using convoy::controller::run_trials;
using convoy::controller::RunOptions;
using namespace convoy::test;

// What the fake runner saw and what it answers, per trial index.
struct FakeTrials {
  std::vector<uint64_t> seeds;
  std::vector<std::string> folders;
  std::vector<int64_t> trials_keys;
  std::map<int, int> exit_codes;  // trial (1-based) -> its exit code (default 0)

  int run(const RunOptions& o) {
    seeds.push_back(o.config.seed);
    folders.push_back(o.output_dir.value_or(""));
    trials_keys.push_back(o.config.load.trials);
    const int t = static_cast<int>(seeds.size());
    fs::create_directories(*o.output_dir);
    // TTFT p50 10, 12, 14, ... ms; throughput 100, 110, 120, ... req/s; one error in 100.
    std::ofstream(fs::path(*o.output_dir) / "summary.json")
        << "{\"convoy_version\": \"test\", \"time_to_first_token\": {\"unit\": \"ms\", \"p50\": "
        << 8 + 2 * t << ", \"p99\": " << 30 + t << ", \"count\": 99}, \"request_throughput\": "
        << "{\"unit\": \"requests/sec\", \"avg\": " << 90 + 10 * t
        << "}, \"request_count\": {\"unit\": \"requests\", \"avg\": 99}, \"error_request_count\": "
           "{\"unit\": \"requests\", \"avg\": 1}, \"run\": {\"config_yaml\": \"seed: "
        << o.config.seed << "\\n\"}}";
    auto it = exit_codes.find(t);
    return it == exit_codes.end() ? 0 : it->second;
  }
};

RunOptions trials_options(const fs::path& out, int64_t trials) {
  RunOptions o;
  o.config.seed = 42;
  o.config.load.trials = trials;
  o.output_dir = out.string();
  o.quiet = true;
  return o;
}

}  // namespace

TEST_CASE("load.trials runs each trial with seed + t - 1 in OUT/trial-t and combines them") {
  TempDir dir("convoy-trials-");
  const fs::path out = dir.path() / "out";
  FakeTrials fake;
  const int rc =
      run_trials(trials_options(out, 3), [&](const RunOptions& o) { return fake.run(o); });
  CHECK(rc == convoy::kExitOk);
  CHECK(fake.seeds == std::vector<uint64_t>{42, 43, 44});
  CHECK(fake.trials_keys == std::vector<int64_t>{1, 1, 1});  // each trial is one run
  REQUIRE(fake.folders.size() == 3);
  CHECK(fs::path(fake.folders[0]) == out / "trial-1");
  CHECK(fs::path(fake.folders[2]) == out / "trial-3");

  const rapidjson::Document s = read_json(out / "summary.json");
  REQUIRE(s.IsObject());
  const auto& trials = s["trials"];
  CHECK(trials["planned"].GetInt() == 3);
  CHECK(trials["completed"].GetInt() == 3);
  CHECK(trials["confidence"].GetDouble() == 0.95);
  CHECK(std::string(trials["method"].GetString()) == "student_t");
  REQUIRE(trials["runs"].Size() == 3);
  CHECK(trials["runs"][1]["seed"].GetUint64() == 43);
  CHECK(std::string(trials["runs"][1]["folder"].GetString()) == "trial-2");

  const auto& ttft = trials["intervals"]["time_to_first_token"]["p50"];
  REQUIRE(ttft["values"].Size() == 3);
  CHECK(ttft["values"][0].GetDouble() == 10);
  CHECK(ttft["values"][2].GetDouble() == 14);
  CHECK(ttft["mean"].GetDouble() == doctest::Approx(12));
  const double half = 4.302653 * 2 / std::sqrt(3.0);  // s = 2, t(0.975, 2)
  CHECK(ttft["low"].GetDouble() == doctest::Approx(12 - half).epsilon(1e-6));
  CHECK(ttft["high"].GetDouble() == doctest::Approx(12 + half).epsilon(1e-6));
  CHECK(trials["intervals"]["request_throughput"]["avg"]["mean"].GetDouble() ==
        doctest::Approx(110));
  CHECK(trials["intervals"]["error_rate"]["avg"]["mean"].GetDouble() == doctest::Approx(1.0));
  // The means at top level, as a run's summary.json: what `convoy compare` reads.
  CHECK(s["time_to_first_token"]["p50"].GetDouble() == doctest::Approx(12));
  CHECK(s["time_to_first_token"]["count"].GetDouble() == 297);
  CHECK(s["request_throughput"]["avg"].GetDouble() == doctest::Approx(110));
  CHECK(s.HasMember("convoy_version"));
  CHECK(std::string(s["run"]["config_yaml"].GetString()).find("trials: 3") != std::string::npos);
  CHECK_FALSE(s["was_cancelled"].GetBool());
}

TEST_CASE("a trial that fails a criterion lets the others run and the trials exit 1") {
  TempDir dir("convoy-trials-");
  FakeTrials fake;
  fake.exit_codes[2] = convoy::kExitCriterionFailed;
  const int rc = run_trials(trials_options(dir.path() / "out", 3),
                            [&](const RunOptions& o) { return fake.run(o); });
  CHECK(rc == convoy::kExitCriterionFailed);
  CHECK(fake.seeds.size() == 3);
  const rapidjson::Document s = read_json(dir.path() / "out" / "summary.json");
  CHECK(s["trials"]["completed"].GetInt() == 3);
  CHECK(s["trials"]["runs"][1]["exit_code"].GetInt() == 1);
}

TEST_CASE("a trial that cannot complete stops the trials and the finished ones are combined") {
  TempDir dir("convoy-trials-");
  FakeTrials fake;
  fake.exit_codes[2] = convoy::kExitIncomplete;
  const int rc = run_trials(trials_options(dir.path() / "out", 4),
                            [&](const RunOptions& o) { return fake.run(o); });
  CHECK(rc == convoy::kExitIncomplete);
  CHECK(fake.seeds.size() == 2);
  const rapidjson::Document s = read_json(dir.path() / "out" / "summary.json");
  CHECK(s["trials"]["completed"].GetInt() == 1);
  CHECK_FALSE(s["trials"]["runs"][1]["included"].GetBool());
  CHECK(s["trials"]["intervals"]["time_to_first_token"]["p50"]["n"].GetInt() == 1);
}

TEST_CASE("an interrupted trial stops the trials with 130 and the finished ones are combined") {
  TempDir dir("convoy-trials-");
  FakeTrials fake;
  fake.exit_codes[3] = convoy::kExitInterrupted;  // Ctrl-C during trial 3
  const int rc = run_trials(trials_options(dir.path() / "out", 5),
                            [&](const RunOptions& o) { return fake.run(o); });
  CHECK(rc == convoy::kExitInterrupted);
  CHECK(fake.seeds.size() == 3);
  const rapidjson::Document s = read_json(dir.path() / "out" / "summary.json");
  CHECK(s["was_cancelled"].GetBool());
  CHECK(s["trials"]["completed"].GetInt() == 2);
  CHECK(s["trials"]["intervals"]["time_to_first_token"]["p50"]["values"].Size() == 2);
  CHECK(fs::exists(dir.path() / "out" / "trial-3" / "summary.json"));  // its partial results stay
}

TEST_CASE("load.trials with convoy controller is refused before anything runs") {
  TempDir dir("convoy-trials-");
  FakeTrials fake;
  RunOptions o = trials_options(dir.path() / "out", 2);
  o.controller_only = true;
  CHECK_THROWS_AS(run_trials(o, [&](const RunOptions& t) { return fake.run(t); }), ConfigError);
  CHECK(fake.seeds.empty());
}
