// Load profiles end to end against a convoy-mock started here: a three-stage profile
// whose per-stage rates and in-flight levels are checked from the mock's request log and
// records.jsonl, a sweep, a capacity search that finds the mock's knee (--max-num-seqs), and
// the circuit breaker stopping an all-500 run early with exit 1.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

struct ProfileMock {
  explicit ProfileMock(const fs::path& log, const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {
        bin("mock/convoy-mock"), "--port",    "0", "--contract", "none",
        "--log-requests",        log.string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process.emplace(argv);
    url = mock_url(*process);
  }
  ~ProfileMock() {
    process->signal(SIGTERM);
    process->wait(30);
  }
  std::optional<Subprocess> process;
  std::string url;
};

struct ProfileRun {
  int rc = -1;
  double wall_s = 0;
  fs::path out;
  std::string output;
};

// `convoy run` of `load_yaml` (the load: block) with single-turn conversations.
ProfileRun run_profile(const fs::path& dir, const std::string& name, const std::string& url,
                       const std::string& load_yaml, int timeout_s = 120) {
  const fs::path config = dir / (name + ".yaml");
  std::ofstream(config) << "name: " << name << "\nseed: 7\ntarget:\n  url: " << url
                        << "\ndataset:\n  type: synthetic\n  conversations: 200\n"
                        << "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                        << "  input_tokens: {mean: 32, stddev: 0}\n"
                        << "  output_tokens: {mean: 8, stddev: 0}\n"
                        << load_yaml << "workers:\n  local: 2\noutput:\n  html: false\n";
  ProfileRun r;
  r.out = dir / ("out-" + name);
  const auto t0 = std::chrono::steady_clock::now();
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", r.out.string()});
  const auto rc = run.wait(timeout_s);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.output = run.output();
  REQUIRE(rc.has_value());
  r.rc = *rc;
  return r;
}

struct Rec {
  std::string stage;
  bool settle = false;
  int64_t intended_ns = 0;
  int64_t sent_ns = 0;
  int64_t end_ns = 0;
  std::string request_id;
};

std::vector<Rec> profile_records(const fs::path& out) {
  std::vector<Rec> recs;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    if (std::string(r["phase"].GetString()) != "measure") continue;
    Rec x;
    if (r.HasMember("stage") && r["stage"].IsString()) x.stage = r["stage"].GetString();
    if (r.HasMember("settle") && r["settle"].IsString()) {
      x.stage = r["settle"].GetString();
      x.settle = true;
    }
    x.intended_ns = r["intended_ns"].GetInt64();
    x.sent_ns = r["sent_ns"].GetInt64();
    x.end_ns = r["end_ns"].GetInt64();
    x.request_id = r["x_request_id"].GetString();
    recs.push_back(x);
  }
  return recs;
}

// Peak number of a stage's requests in flight at once (sent .. end).
int peak_in_flight(const std::vector<Rec>& recs, const std::string& stage) {
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& r : recs) {
    if (r.stage != stage || r.settle) continue;
    edges.push_back({r.sent_ns, 1});
    edges.push_back({r.end_ns, -1});
  }
  std::sort(edges.begin(), edges.end());  // an end before a send at the same ns
  int now = 0;
  int peak = 0;
  for (const auto& [t, d] : edges) peak = std::max(peak, now += d);
  return peak;
}

// The mock's arrival time (ms) of every logged chat request, by X-Request-ID.
std::map<std::string, int64_t> mock_arrivals(const fs::path& log) {
  std::map<std::string, int64_t> out;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("headers")) continue;
    for (const auto& h : line["headers"].GetObject()) {
      if (strcasecmp(h.name.GetString(), "x-request-id") == 0) {
        out[h.value.GetString()] = line["ts_ms"].GetInt64();
      }
    }
  }
  return out;
}

const rapidjson::Value* stage_named(const rapidjson::Document& summary, const std::string& name) {
  if (!summary.HasMember("stages")) return nullptr;
  for (const auto& s : summary["stages"].GetArray()) {
    if (name == s["name"].GetString()) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("load profile: three stages run in order at their levels, seen by the mock") {
  const fs::path dir = fresh_dir("e2e-load-profile");
  const fs::path log = dir / "requests.jsonl";
  ProfileMock mock(log, {"--speedup", "20"});
  const ProfileRun r = run_profile(dir, "three", mock.url,
                                   "load:\n  concurrency: 16\n  grace_s: 5\n  stages:\n"
                                   "    - {name: slow, mode: rate, rate: 10, arrival: constant, "
                                   "duration_s: 2}\n"
                                   "    - {name: fast, mode: rate, rate: 40, arrival: constant, "
                                   "duration_s: 2, settle_s: 0.5}\n"
                                   "    - {name: pair, mode: concurrency, concurrency: 2, "
                                   "duration_s: 2}\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  const auto recs = profile_records(r.out);
  std::map<std::string, std::vector<const Rec*>> by_stage;
  for (const auto& x : recs) by_stage[x.stage].push_back(&x);
  // Constant arrivals: exactly rate x duration conversations intended in each rate stage.
  CHECK(by_stage["slow"].size() == 20);
  CHECK(by_stage["fast"].size() == 80);
  CHECK(by_stage["pair"].size() > 10);
  // What the mock received, by request id: each stage's arrivals span its window at its rate.
  const auto arrivals = mock_arrivals(log);
  auto rate_seen = [&](const std::string& stage) {
    std::vector<int64_t> ts;
    for (const Rec* x : by_stage[stage]) {
      auto it = arrivals.find(x->request_id);
      REQUIRE(it != arrivals.end());
      ts.push_back(it->second);
    }
    std::sort(ts.begin(), ts.end());
    return static_cast<double>(ts.size() - 1) / (static_cast<double>(ts.back() - ts.front()) / 1e3);
  };
  CHECK(rate_seen("slow") == doctest::Approx(10).epsilon(0.15));
  CHECK(rate_seen("fast") == doctest::Approx(40).epsilon(0.15));
  // Stages in order, and the concurrency stage holds exactly its level in flight.
  CHECK(peak_in_flight(recs, "pair") == 2);
  int64_t last_slow = 0;
  int64_t first_fast = INT64_MAX;
  for (const Rec* x : by_stage["slow"]) last_slow = std::max(last_slow, x->intended_ns);
  for (const Rec* x : by_stage["fast"]) first_fast = std::min(first_fast, x->intended_ns);
  CHECK(last_slow < first_fast);
  const auto summary = read_json(r.out / "summary.json");
  for (const char* name : {"slow", "fast", "pair"}) {
    CAPTURE(name);
    const rapidjson::Value* st = stage_named(summary, name);
    REQUIRE(st != nullptr);
    CHECK((*st)["end_s"].GetDouble() > (*st)["start_s"].GetDouble());
  }
  CHECK((*stage_named(summary, "fast"))["start_s"].GetDouble() ==
        doctest::Approx((*stage_named(summary, "slow"))["end_s"].GetDouble()));
}

TEST_CASE("load profile: a sweep runs one stage per value, each at its concurrency") {
  const fs::path dir = fresh_dir("e2e-load-sweep");
  ProfileMock mock(dir / "requests.jsonl", {"--speedup", "20"});
  const ProfileRun r = run_profile(dir, "sweep", mock.url,
                                   "load:\n  grace_s: 5\n  sweep:\n    concurrency: [1, 3]\n"
                                   "    duration_s: 1.5\n    settle_s: 0.5\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  const auto recs = profile_records(r.out);
  CHECK(peak_in_flight(recs, "concurrency=1") == 1);
  CHECK(peak_in_flight(recs, "concurrency=3") == 3);
  const auto summary = read_json(r.out / "summary.json");
  REQUIRE(summary.HasMember("stages"));
  CHECK(summary["stages"].Size() == 2);
}

TEST_CASE("load profile: a capacity search finds the mock's knee within its precision") {
  // One mock worker with 4 sequence slots: past 4 concurrent requests TTFT includes a queue
  // wait of a whole service time (~50 ms), below it TTFT is the prefill alone (~17 ms).
  const fs::path dir = fresh_dir("e2e-load-search");
  ProfileMock mock(dir / "requests.jsonl",
                   {"--workers", "1", "--max-num-seqs", "4", "--itl-ms", "4"});
  const ProfileRun r = run_profile(
      dir, "search", mock.url,
      "load:\n  grace_s: 5\n  search:\n    vary: concurrency\n    low: 1\n    high: 16\n"
      "    step_duration_s: 1.5\n    precision: 0.2\n"
      "    slo: {time_to_first_token: {p90: 40}}\n");
  INFO(r.output);
  REQUIRE((r.rc == 0 || r.rc == 1));
  const auto summary = read_json(r.out / "summary.json");
  REQUIRE(summary.HasMember("search"));
  const auto& result = summary["search"]["result"];
  REQUIRE(result["max_meeting_slo"].IsNumber());
  REQUIRE(result["min_failing"].IsNumber());
  const double met = result["max_meeting_slo"].GetDouble();
  const double failed = result["min_failing"].GetDouble();
  // At 4 every request has a slot; at 5 one request in five waits for one, and how long it
  // waits depends on how far the closed loop has drifted apart, so p90 straddles 40 ms there
  // (a sanitizer build met it at 5, missing at 6 with p90 49.9 ms). Past 6 it is always missed.
  CHECK(met >= 3);
  CHECK(met <= 5);
  CHECK((failed - met) / failed <= 0.2 + 1e-9);
  CHECK(summary["search"]["steps"].Size() == summary["stages"].Size());
  CHECK(summary["search"]["steps"][0]["value"].GetDouble() == 1);
  CHECK(summary["search"]["steps"][1]["value"].GetDouble() == 16);
}

TEST_CASE("load profile: the circuit breaker stops an all-500 run early with exit 1") {
  const fs::path dir = fresh_dir("e2e-load-breaker");
  ProfileMock mock(dir / "requests.jsonl", {"--error-rate", "1.0"});
  const ProfileRun r = run_profile(dir, "breaker", mock.url,
                                   "load:\n  mode: concurrency\n  concurrency: 4\n"
                                   "  duration_s: 600\n  grace_s: 2\n"
                                   "  abort_on: {error_rate: 0.5, window_s: 2, min_requests: 20}\n",
                                   60);
  INFO(r.output);
  CHECK(r.rc == 1);
  CHECK(r.wall_s < 2 + 15);  // window_s plus a few seconds (startup included), not 10 minutes
  CHECK(r.output.find("circuit breaker tripped") != std::string::npos);
  const auto summary = read_json(r.out / "summary.json");
  REQUIRE(summary.HasMember("verdict"));
  CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
  CHECK(summary["was_cancelled"].GetBool());  // cut short of its profile, as by Ctrl-C
  REQUIRE(summary["verdict"]["aborted_reason"].IsString());
  CHECK(std::string(summary["verdict"]["aborted_reason"].GetString()).find("error rate") !=
        std::string::npos);
  CHECK(fs::exists(r.out / "records.jsonl"));
  CHECK(fs::exists(r.out / "summary.csv"));
}

TEST_CASE("load.warmup_s runs warmup by time, excluded from the metrics") {
  const fs::path dir = fresh_dir("e2e-load-warmup-s");
  ProfileMock mock(dir / "requests.jsonl", {"--speedup", "20"});
  const ProfileRun r = run_profile(dir, "warmup", mock.url,
                                   "load:\n  mode: concurrency\n  concurrency: 2\n"
                                   "  warmup_s: 1\n  duration_s: 1\n  grace_s: 5\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  int warmup = 0;
  int measured = 0;
  int64_t last_warmup_end = 0;
  int64_t first_measured_sent = INT64_MAX;
  for (const auto& rec : read_jsonl(r.out / "records.jsonl")) {
    if (std::string(rec["phase"].GetString()) == "warmup") {
      ++warmup;
      last_warmup_end = std::max(last_warmup_end, rec["end_ns"].GetInt64());
    } else {
      ++measured;
      first_measured_sent = std::min(first_measured_sent, rec["sent_ns"].GetInt64());
    }
  }
  CHECK(warmup > 10);  // a whole second of it at concurrency 2
  CHECK(measured > 10);
  CHECK(last_warmup_end <= first_measured_sent);  // the measure starts once the warmup ended
  const auto summary = read_json(r.out / "summary.json");
  CHECK(summary["request_count"]["avg"].GetDouble() == measured);
}
