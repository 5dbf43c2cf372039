// End to end: Dynamo conversation-aware routing with the real convoy binaries against a
// real convoy-mock. The affinity runs use the mock's random router, so that a conversation stays
// on one simulated worker only because of what convoy sends (bind, legacy open, or the header).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e/http_get.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// Every run: a few multi-turn conversations whose prompts are long enough that prefill
// dominates TTFT, so a prefix-cache hit on a later turn is plainly visible.
constexpr int kRoutingConversations = 8;
constexpr int kRoutingTurns = 8;
constexpr double kRunTimeoutS = 90;
// How much faster later turns must be with affinity than with random routing (the mock's prefix
// cache). Under AddressSanitizer the client's own time, the same in both runs, is several times
// larger and dilutes the ratio (CI measured 1.43 once under load): the claim checked there is
// that affinity still pays, by at least 20%.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kAffinitySpeedup = 1.2;
#else
constexpr double kAffinitySpeedup = 1.5;
#endif
// Timing runs keep the mock's simulated times well above the client's own overhead on a loaded
// machine: a later turn that hits the cache prefills ~2,060 new tokens (~50 ms), one that misses
// prefills the whole history (100 to 300 ms, growing with the turn). The other runs go fast.
const std::vector<std::string> kTimedMock = {"--workers", "16", "--speedup", "1", "--itl-ms", "1"};
// The bundled mock (target.url: mock) for runs where timing does not matter.
const char* const kFastMockYaml = "  workers: 4\n  speedup: 50\n  itl_ms: 1\n";

// A convoy-mock on an ephemeral loopback port, killed when it goes out of scope.
struct RoutingMock {
  std::unique_ptr<Subprocess> process;
  std::string url;  // http://127.0.0.1:PORT
  int port = 0;
};

RoutingMock start_mock(std::vector<std::string> flags) {
  std::vector<std::string> argv = {bin("mock/convoy-mock"), "--port", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  RoutingMock m;
  m.process = std::make_unique<Subprocess>(argv);
  const std::string prefix = "convoy-mock listening on ";
  REQUIRE_MESSAGE(m.process->wait_for_output("\n", 30), m.process->output());
  const std::string& out = m.process->output();
  const auto at = out.find(prefix);
  REQUIRE_MESSAGE(at != std::string::npos, out);
  m.url = out.substr(at + prefix.size(), out.find('\n', at) - at - prefix.size());
  m.port = std::stoi(m.url.substr(m.url.rfind(':') + 1));
  return m;
}

// GET `path` from the mock (its /mock/stats): the body of a 200 answer; anything else fails.
std::string ok_body(int port, const std::string& path) {
  auto response = http_get(port, path, 10);
  REQUIRE_MESSAGE(response.first == 200, response.second);
  return std::move(response.second);
}

struct RunSpec {
  std::string url;        // "mock" or the mock's address
  std::string mode;       // session_routing.mode
  std::string mock_yaml;  // the mock section's lines, when url is "mock"
  std::optional<double> fail_on_error_rate;
};

std::string config_yaml(const RunSpec& spec) {
  std::ostringstream y;
  y << "name: e2e-routing\n"
    << "seed: 7\n"
    << "target:\n  url: " << spec.url << "\n"
    << "dataset:\n"
    << "  type: synthetic\n"
    << "  conversations: " << kRoutingConversations << "\n"
    << "  turns: {mean: " << kRoutingTurns << ", stddev: 0, min: " << kRoutingTurns
    << ", max: " << kRoutingTurns << "}\n"
    << "  input_tokens: {mean: 2048, stddev: 0}\n"
    << "  output_tokens: {mean: 8, stddev: 0}\n"
    << "load:\n  mode: concurrency\n  concurrency: " << kRoutingConversations << "\n"
    << "session_routing:\n  mode: " << spec.mode << "\n  timeout_s: 60\n"
    << "workers:\n  local: 2\n"
    << "output:\n  html: false\n";
  if (spec.url == "mock") y << "mock:\n" << spec.mock_yaml;
  if (spec.fail_on_error_rate) y << "fail_on:\n  error_rate: " << *spec.fail_on_error_rate << "\n";
  return y.str();
}

struct RoutingRun {
  int exit_code = -1;
  std::string console;
  fs::path out;
  rapidjson::Document summary;
  std::vector<rapidjson::Document> records;
};

RoutingRun run_convoy(const fs::path& dir, const RunSpec& spec) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << config_yaml(spec);
  RoutingRun r;
  r.out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", r.out.string(), "--quiet"});
  auto rc = run.wait(kRunTimeoutS);
  r.console = run.output();
  INFO(r.console);
  REQUIRE(rc.has_value());
  r.exit_code = *rc;
  r.summary = parse_json(read_file(r.out / "summary.json"));
  REQUIRE_FALSE(r.summary.HasParseError());
  r.records = read_jsonl(r.out / "records.jsonl");
  return r;
}

double later_turn_ttft_p50_ms(const RoutingRun& r) {
  REQUIRE(r.summary.HasMember("time_to_first_token_later_turns"));
  const auto& m = r.summary["time_to_first_token_later_turns"];
  REQUIRE(m["count"].GetInt64() == kRoutingConversations * (kRoutingTurns - 1));
  return m["p50"].GetDouble();
}

// The session_control each conversation sent, in turn order ("-" for none).
std::map<std::string, std::vector<std::string>> session_controls(const RoutingRun& r) {
  std::map<std::string, std::map<int64_t, std::string>> by_turn;
  for (const auto& rec : r.records) {
    std::string shown = "-";
    const auto& sc = rec["session_control"];
    if (sc.IsObject()) {
      CHECK(std::string(sc["session_id"].GetString()) == rec["x_correlation_id"].GetString());
      shown = sc.HasMember("action") ? sc["action"].GetString() : "bare";
      if (sc.HasMember("timeout")) shown += "+" + std::to_string(sc["timeout"].GetInt64());
    }
    by_turn[rec["x_correlation_id"].GetString()][rec["turn_index"].GetInt64()] = shown;
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [id, turns] : by_turn) {
    for (const auto& [turn, shown] : turns) out[id].push_back(shown);
  }
  return out;
}

bool has_insight(const RoutingRun& r, const std::string& id) {
  if (!r.summary.HasMember("insights")) return false;
  for (const auto& i : r.summary["insights"].GetArray()) {
    if (id == i["id"].GetString()) return true;
  }
  return false;
}

// An insight's problem and fixes, as one text ("" when absent).
std::string insight_text(const RoutingRun& r, const std::string& id) {
  if (!r.summary.HasMember("insights")) return "";
  for (const auto& i : r.summary["insights"].GetArray()) {
    if (id != i["id"].GetString()) continue;
    std::string text = i["problem"].GetString();
    for (const auto& f : i["fixes"].GetArray()) text += std::string("\n") + f.GetString();
    return text;
  }
  return "";
}

// Later-turn TTFT p50 of routing off against a mock that scatters turns at random; measured once.
double baseline_later_ttft_p50_ms() {
  static const double p50 = [] {
    const fs::path dir = fresh_dir("e2e-routing-off");
    RoutingMock mock = start_mock([] {
      auto flags = kTimedMock;
      flags.insert(flags.end(), {"--contract", "bind", "--router-mode", "random"});
      return flags;
    }());
    RoutingRun r = run_convoy(dir, {mock.url, "off", "", std::nullopt});
    INFO(r.console);
    REQUIRE(r.exit_code == 0);
    for (const auto& [id, seq] : session_controls(r)) {
      CHECK(seq == std::vector<std::string>(kRoutingTurns, "-"));
    }
    // Without routing the conversations do move between workers: the comparison means something.
    auto stats = parse_json(ok_body(mock.port, "/mock/stats"));
    CHECK(stats["sessions"]["worker_switches"].GetInt64() > 0);
    const double value = later_turn_ttft_p50_ms(r);
    fs::remove_all(dir);
    return value;
  }();
  return p50;
}

void check_affinity_run(const std::string& mode, std::vector<std::string> contract_flags,
                        const std::vector<std::string>& expected_sequence) {
  const double off_p50_ms = baseline_later_ttft_p50_ms();
  const fs::path dir = fresh_dir("e2e-routing-" + mode);
  auto flags = kTimedMock;
  flags.insert(flags.end(), {"--router-mode", "random"});
  flags.insert(flags.end(), contract_flags.begin(), contract_flags.end());
  RoutingMock mock = start_mock(flags);
  RoutingRun r = run_convoy(dir, {mock.url, mode, "", std::nullopt});
  INFO(r.console);
  CHECK(r.exit_code == 0);
  CHECK(r.summary["error_request_count"]["avg"].GetDouble() == 0);
  for (const auto& w : r.summary["workers"].GetArray()) {
    CHECK(w["legacy_open_sessions"].GetInt64() == 0);
  }

  // Every turn of every conversation carried exactly the sequence this mode sends.
  const auto sequences = session_controls(r);
  CHECK(sequences.size() == kRoutingConversations);
  for (const auto& [id, seq] : sequences) CHECK_MESSAGE(seq == expected_sequence, id);

  // The mock saw each conversation on one simulated worker only.
  const std::string stats_text = ok_body(mock.port, "/mock/stats");
  INFO(stats_text);
  auto stats = parse_json(stats_text);
  REQUIRE_FALSE(stats.HasParseError());
  const auto& sessions = stats["sessions"];
  CHECK(sessions["count"].GetInt64() == kRoutingConversations);
  CHECK(sessions["worker_switches"].GetInt64() == 0);
  CHECK(sessions["sessions_with_switches"].GetInt64() == 0);
  for (const auto& s : sessions["by_id"].GetObject()) {
    CHECK(s.value["requests"].GetInt64() == kRoutingTurns);
    CHECK(s.value["workers"].Size() == 1);
  }

  // And it pays: later turns hit the prefix cache, so their TTFT beats random routing.
  const double p50_ms = later_turn_ttft_p50_ms(r);
  INFO("later-turn TTFT p50: off+random " << off_p50_ms << " ms, " << mode << " " << p50_ms
                                          << " ms");
  CHECK(off_p50_ms >= kAffinitySpeedup * p50_ms);
  // The mock's own count of prompt tokens served from its prefix cache, whatever the contract
  // reports to the client.
  CHECK(stats["cache_hit_rate"].GetDouble() > 0.5);
  if (mode == "legacy") {
    // The legacy contract (Dynamo 1.2.1) sends no usage.prompt_tokens_details: convoy reports
    // no cached tokens rather than inventing them.
    for (const auto& rec : r.records) CHECK(rec["metrics"]["cached_tokens"].IsNull());
  } else {
    CHECK(r.summary["prefix_cache_hit_rate"]["avg"].GetDouble() > 50);
  }
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("session routing keeps each conversation on one mock worker and speeds up later turns") {
  SUBCASE("bind: bind+timeout on every non-final turn, close on the last") {
    std::vector<std::string> seq(kRoutingTurns - 1, "bind+60");
    seq.push_back("close");
    check_affinity_run("bind", {"--contract", "bind"}, seq);
  }
  SUBCASE("legacy against an engine with sessions: open, bare, ..., close") {
    std::vector<std::string> seq = {"open+60"};
    seq.insert(seq.end(), kRoutingTurns - 2, "bare");
    seq.push_back("close");
    check_affinity_run("legacy", {"--contract", "legacy", "--engine-sessions", "true"}, seq);
  }
  SUBCASE("header: nothing in the body, the pin comes from X-Dynamo-Session-ID") {
    check_affinity_run("header", {"--contract", "header", "--affinity-ttl-s", "60"},
                       std::vector<std::string>(kRoutingTurns, "-"));
  }
}

TEST_CASE("mode bind against a frontend that predates bind explains itself and fails fail_on") {
  const fs::path dir = fresh_dir("e2e-routing-bind-vs-legacy");
  RoutingRun r =
      run_convoy(dir, {"mock", "bind", std::string(kFastMockYaml) + "  contract: legacy\n", 0.1});
  INFO(r.console);
  CHECK(r.exit_code == 1);
  CHECK(fs::exists(r.out / "summary.csv"));
  CHECK(fs::exists(r.out / "records.jsonl"));

  // Each conversation's first turn carries bind, is rejected, and ends the conversation.
  CHECK(r.records.size() == kRoutingConversations);
  for (const auto& rec : r.records) {
    CHECK(rec["http_status"].GetInt() == 400);
    CHECK(std::string(rec["session_control"]["action"].GetString()) == "bind");
  }
  CHECK(r.summary["error_request_count"]["avg"].GetDouble() == kRoutingConversations);
  CHECK(std::string(r.summary["verdict"]["status"].GetString()) == "fail");
  CHECK(has_insight(r, "session_control_bind_unsupported"));
  CHECK(r.console.find("Unsupported Dynamo session_control action: bind") != std::string::npos);
  CHECK(insight_text(r, "session_control_bind_unsupported").find("mode: legacy") !=
        std::string::npos);
  CHECK_FALSE(has_insight(r, "session_control_removed"));
  fs::remove_all(dir);
}

TEST_CASE("mode bind against a frontend that removed body session control says to use header") {
  const fs::path dir = fresh_dir("e2e-routing-bind-vs-header");
  const std::string mock_yaml =
      std::string(kFastMockYaml) + "  contract: header\n  extra_args: [--affinity-ttl-s, \"60\"]\n";
  RoutingRun r = run_convoy(dir, {"mock", "bind", mock_yaml, std::nullopt});
  INFO(r.console);
  CHECK(r.exit_code == 1);  // no measured request succeeded: verdict fail, exit 1
  CHECK(r.records.size() == kRoutingConversations);
  for (const auto& rec : r.records) CHECK(rec["http_status"].GetInt() == 400);
  CHECK(has_insight(r, "session_control_removed"));
  CHECK_FALSE(has_insight(r, "session_control_bind_unsupported"));
  CHECK(r.console.find("no longer accepts nvext.session_control") != std::string::npos);
  const std::string text = insight_text(r, "session_control_removed");
  CHECK(text.find("unknown field `session_control`") != std::string::npos);
  CHECK(text.find("session_routing.mode: header") != std::string::npos);
  fs::remove_all(dir);
}
