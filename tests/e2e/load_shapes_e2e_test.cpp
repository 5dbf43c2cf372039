// The load shapes AIPerf users ask for, end to end against a convoy-mock started here, checked
// from records.jsonl: a warmup at its own level (load.warmup), users each sending the next turn
// a fixed gap after the previous one ended (load.mode users), and a cap on the requests waiting
// for their first token (load.prefill_concurrency).
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

struct ShapesMock {
  explicit ShapesMock(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {bin("mock/convoy-mock"), "--port", "0", "--contract", "none"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process.emplace(argv);
    url = mock_url(*process);
  }
  ~ShapesMock() {
    process->signal(SIGTERM);
    process->wait(30);
  }
  std::optional<Subprocess> process;
  std::string url;
};

struct ShapeRecord {
  std::string phase;
  uint64_t conversation = 0;
  int64_t turn = 0;
  bool final_turn = false;
  int64_t intended_ns = 0;
  int64_t sent_ns = 0;
  int64_t first_token_ns = 0;  // 0: none
  int64_t end_ns = 0;
  bool ok = false;
};

struct ShapeRun {
  int rc = -1;
  std::string output;
  std::vector<ShapeRecord> records;
  fs::path out;
};

// `convoy run` with `dataset_yaml` and `load_yaml` (the dataset: and load: blocks), 2 workers.
ShapeRun run_shape(const std::string& name, const std::string& url, const std::string& dataset_yaml,
                   const std::string& load_yaml) {
  const fs::path dir = fresh_dir("e2e-shapes-" + name);
  const fs::path config = dir / "c.yaml";
  std::ofstream(config) << "name: " << name << "\nseed: 3\ntarget:\n  url: " << url << "\n"
                        << dataset_yaml << load_yaml
                        << "workers:\n  local: 2\noutput:\n  html: false\n";
  ShapeRun r;
  r.out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", r.out.string()});
  const auto rc = run.wait(120);
  r.output = run.output();
  REQUIRE(rc.has_value());
  r.rc = *rc;
  if (!fs::exists(r.out / "records.jsonl")) return r;
  for (const auto& d : read_jsonl(r.out / "records.jsonl")) {
    ShapeRecord rec;
    rec.phase = d["phase"].GetString();
    rec.conversation = d["conversation_index"].GetUint64();
    rec.turn = d["turn_index"].GetInt64();
    rec.final_turn = d["final_turn"].GetBool();
    rec.intended_ns = d["intended_ns"].GetInt64();
    rec.sent_ns = d["sent_ns"].IsInt64() ? d["sent_ns"].GetInt64() : 0;
    rec.first_token_ns = d["first_token_ns"].IsInt64() ? d["first_token_ns"].GetInt64() : 0;
    rec.end_ns = d["end_ns"].IsInt64() ? d["end_ns"].GetInt64() : 0;
    rec.ok = d["error"].IsNull();
    r.records.push_back(rec);
  }
  return r;
}

// The most intervals [from, to) open at once.
size_t max_overlap(std::vector<std::pair<int64_t, int64_t>> spans) {
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& [from, to] : spans) {
    edges.emplace_back(from, 1);
    edges.emplace_back(to, -1);
  }
  std::sort(edges.begin(), edges.end());  // an end sorts before a start at the same time
  int open = 0;
  int most = 0;
  for (const auto& e : edges) {
    open += e.second;
    most = std::max(most, open);
  }
  return static_cast<size_t>(most);
}

const char* const kOneTurn =
    "dataset:\n  type: synthetic\n  conversations: 100\n"
    "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
    "  input_tokens: {mean: 32, stddev: 0}\n  output_tokens: {mean: 8, stddev: 0}\n";

}  // namespace

TEST_CASE("load.warmup runs at its own level, outside the metrics") {
  ShapesMock mock({"--speedup", "10"});
  const ShapeRun r = run_shape("warmup-level", mock.url, kOneTurn,
                               "load:\n  mode: concurrency\n  concurrency: 6\n  sessions: 24\n"
                               "  warmup: {concurrency: 2, sessions: 10}\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  std::vector<std::pair<int64_t, int64_t>> warm;
  std::vector<std::pair<int64_t, int64_t>> measured;
  int64_t last_warm_end = 0;
  int64_t first_measured = INT64_MAX;
  for (const auto& rec : r.records) {
    (rec.phase == "warmup" ? warm : measured).emplace_back(rec.sent_ns, rec.end_ns);
    if (rec.phase == "warmup") last_warm_end = std::max(last_warm_end, rec.end_ns);
    if (rec.phase != "warmup") first_measured = std::min(first_measured, rec.sent_ns);
  }
  CHECK(warm.size() == 10);
  CHECK(measured.size() == 24);
  CHECK(max_overlap(warm) <= 2);     // the warmup's own concurrency, not load.concurrency
  CHECK(max_overlap(measured) > 2);  // the measure runs at its own
  CHECK(last_warm_end <= first_measured);
  const auto summary = read_json(r.out / "summary.json");
  CHECK(summary["request_count"]["avg"].GetDouble() == 24);  // the warmup is not measured
}

TEST_CASE("load.warmup by rate and time starts its own rate of conversations") {
  ShapesMock mock({"--speedup", "10"});
  const ShapeRun r = run_shape("warmup-rate", mock.url, kOneTurn,
                               "load:\n  mode: concurrency\n  concurrency: 4\n  sessions: 8\n"
                               "  arrival: constant\n  warmup: {rate: 20, duration_s: 1}\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  int warm = 0;
  for (const auto& rec : r.records) warm += rec.phase == "warmup" ? 1 : 0;
  // 20/s for 1 s, constant arrivals, and those intended within the controller's 100 ms lookahead
  // past the end, already sent to their worker when the warmup's time ran out.
  CHECK(warm >= 18);
  CHECK(warm <= 24);
  CHECK(read_json(r.out / "summary.json")["request_count"]["avg"].GetDouble() == 8);
}

TEST_CASE("load.mode users: each user's next turn goes a fixed gap after its previous one ended") {
  ShapesMock mock({"--speedup", "20"});
  // 3 users at 10/s: a gap of 0.3 s; 9 conversations of 3 turns.
  const ShapeRun r =
      run_shape("users", mock.url,
                "dataset:\n  type: synthetic\n  conversations: 100\n"
                "  turns: {mean: 3, stddev: 0, min: 3, max: 3}\n"
                "  input_tokens: {mean: 32, stddev: 0}\n  output_tokens: {mean: 8, stddev: 0}\n"
                "  think_time_ms: {mean: 2000, stddev: 0}\n",  // replaced by the users' gap
                "load:\n  mode: users\n  concurrency: 3\n  rate: 10\n  sessions: 9\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.records.size() == 27);
  constexpr int64_t kGap = 300 * kMs;
  std::map<uint64_t, std::vector<ShapeRecord>> by_conversation;
  for (const auto& rec : r.records) {
    REQUIRE(rec.ok);
    by_conversation[rec.conversation].push_back(rec);
  }
  REQUIRE(by_conversation.size() == 9);
  std::vector<std::pair<int64_t, int64_t>> spans;  // a conversation: first send to last end
  std::vector<int64_t> starts;                     // each conversation's intended start
  std::vector<int64_t> ends;                       // and its last end
  for (auto& [index, turns] : by_conversation) {
    std::sort(turns.begin(), turns.end(),
              [](const ShapeRecord& a, const ShapeRecord& b) { return a.turn < b.turn; });
    for (size_t t = 1; t < turns.size(); ++t) {
      // Exact: the intended time is the previous end plus the gap (1 ms: the workers' clock
      // offsets, measured again during the run), the send close to it.
      CHECK(std::llabs(turns[t].intended_ns - (turns[t - 1].end_ns + kGap)) < kMs);
      CHECK(turns[t].sent_ns - turns[t].intended_ns < 50 * kMs);
    }
    spans.emplace_back(turns.front().sent_ns, turns.back().end_ns);
    starts.push_back(turns.front().intended_ns);
    ends.push_back(turns.back().end_ns);
  }
  CHECK(max_overlap(spans) <= 3);  // three users, one conversation each at a time
  std::sort(starts.begin(), starts.end());
  // The first three users start 1/rate apart.
  CHECK(std::llabs(starts[1] - starts[0] - 100 * kMs) < kMs);
  CHECK(std::llabs(starts[2] - starts[0] - 200 * kMs) < kMs);
  // Every later conversation starts the gap after some user's conversation ended.
  for (size_t i = 3; i < starts.size(); ++i) {
    int64_t closest = INT64_MAX;
    for (int64_t end : ends)
      closest = std::min<int64_t>(closest, std::llabs(starts[i] - (end + kGap)));
    CHECK(closest < 20 * kMs);
  }
}

TEST_CASE("load.prefill_concurrency: at most K requests wait for their first token at once") {
  // Long prompts: the mock's prefill takes about 65 ms each, with one token after it.
  ShapesMock mock({"--workers", "8"});
  const ShapeRun r =
      run_shape("prefill", mock.url,
                "dataset:\n  type: synthetic\n  conversations: 100\n"
                "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                "  input_tokens: {mean: 3000, stddev: 0}\n  output_tokens: {mean: 4, stddev: 0}\n",
                "load:\n  mode: concurrency\n  concurrency: 8\n  sessions: 24\n"
                "  prefill_concurrency: 2\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.records.size() == 24);  // the run completes
  std::vector<std::pair<int64_t, int64_t>> prefill;
  int64_t most_lag = 0;
  for (const auto& rec : r.records) {
    CHECK(rec.ok);
    prefill.emplace_back(rec.sent_ns, rec.first_token_ns != 0 ? rec.first_token_ns : rec.end_ns);
    most_lag = std::max(most_lag, rec.sent_ns - rec.intended_ns);
  }
  CHECK(max_overlap(prefill) <= 2);
  CHECK(most_lag > 30 * kMs);  // the cap held requests back: their wait is schedule lag
}
