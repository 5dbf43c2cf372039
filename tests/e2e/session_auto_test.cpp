// End to end with the real binaries against convoy-mock's contracts:
// session_routing.mode auto learns bind, legacy or header from one probe before any traffic (and
// exits 3, having sent nothing else, when the answer names none); conversations that end early
// get their session released, so the mock holds no pin after the run.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/http_get.hpp"
#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr double kAutoRunTimeoutS = 90;

struct Mock {
  std::unique_ptr<Subprocess> process;
  std::string url;
  int port = 0;
  fs::path log;
};

Mock start_mock(const fs::path& dir, std::vector<std::string> flags) {
  Mock m;
  m.log = dir / "mock-requests.jsonl";
  std::vector<std::string> argv = {bin("mock/convoy-mock"), "--port", "0", "--log-requests",
                                   m.log.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  m.process = std::make_unique<Subprocess>(argv);
  m.url = mock_url(*m.process);
  m.port = std::stoi(m.url.substr(m.url.rfind(':') + 1));
  return m;
}

struct Run {
  int exit_code = -1;
  std::string console;
  fs::path out;
};

Run run_convoy(const fs::path& dir, const std::string& yaml) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << yaml;
  Run r;
  r.out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", r.out.string()});
  const auto rc = run.wait(kAutoRunTimeoutS);
  r.console = run.output();
  REQUIRE_MESSAGE(rc.has_value(), r.console);
  r.exit_code = *rc;
  return r;
}

std::string config(const std::string& url, const std::string& routing, const std::string& extra) {
  std::ostringstream y;
  y << "name: e2e-session-auto\nseed: 11\ntarget:\n  url: " << url << "\n"
    << "dataset:\n  conversations: 6\n  turns: {mean: 3, stddev: 0, min: 3, max: 3}\n"
    << "  input_tokens: {mean: 64, stddev: 0}\n  output_tokens: {mean: 4, stddev: 0}\n"
    << "load:\n  concurrency: 3\n"
    << "session_routing:\n"
    << routing << "workers:\n  local: 2\noutput:\n  html: false\n"
    << extra;
  return y.str();
}

std::vector<rapidjson::Document> mock_log(const Mock& m) { return read_jsonl(m.log); }

// The mock logs a JSON body as the object it parsed.
bool is_probe(const rapidjson::Value& line) {
  const rapidjson::Value& body = line["body"];
  const std::string text = body.IsString() ? body.GetString() : to_json(body);
  return text.find("convoy-session-probe-") != std::string::npos;
}

}  // namespace

TEST_CASE("session_routing auto learns each convoy-mock contract from one probe") {
  std::string contract, expected, first_action;
  int64_t probe_status = 0;
  size_t probe_requests = 1;
  SUBCASE("bind") {
    contract = "bind", expected = "bind", first_action = "bind", probe_status = 200;
    probe_requests = 2;  // the probe's own session is closed again
  }
  SUBCASE("legacy") {
    contract = "legacy", expected = "legacy", first_action = "open", probe_status = 400;
  }
  SUBCASE("header") { contract = "header", expected = "header", probe_status = 400; }
  const fs::path dir = fresh_dir("e2e-session-auto-" + contract);
  Mock mock = start_mock(dir, {"--contract", contract, "--speedup", "50", "--itl-ms", "1"});
  Run r = run_convoy(dir, config(mock.url, "  mode: auto\n", ""));
  INFO(r.console);
  REQUIRE(r.exit_code == 0);
  CHECK(r.console.find("session_routing.mode auto: " + expected + " (probe of " + mock.url) !=
        std::string::npos);

  const auto summary = read_json(r.out / "summary.json");
  const auto& routing = summary["run"]["session_routing"];
  CHECK(std::string(routing["configured"].GetString()) == "auto");
  CHECK(std::string(routing["mode"].GetString()) == expected);
  CHECK(std::string(routing["detected_by"].GetString()) == "probe");
  CHECK(routing["probe"]["http_status"].GetInt64() == probe_status);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == 0);

  // What the run sent is that contract's, and the probes came first.
  const auto records = read_jsonl(r.out / "records.jsonl");
  REQUIRE(records.size() == 18);
  for (const auto& rec : records) {
    if (rec["turn_index"].GetInt64() != 0) continue;
    if (expected == "header") {
      CHECK(rec["session_control"].IsNull());
    } else {
      CHECK(std::string(rec["session_control"]["action"].GetString()) == first_action);
    }
  }
  const auto log = mock_log(mock);
  REQUIRE(log.size() == records.size() + probe_requests);
  for (size_t i = 0; i < log.size(); ++i) CHECK(is_probe(log[i]) == (i < probe_requests));
  if (expected == "header") CHECK(logged_header(log.back(), "X-Dynamo-Session-ID") != "");
  fs::remove_all(dir);
}

TEST_CASE(
    "session_routing auto exits 3 on an answer that names no contract, sending nothing else") {
  const fs::path dir = fresh_dir("e2e-session-auto-500");
  Mock mock = start_mock(dir, {"--contract", "bind", "--error-rate", "1"});
  Run r = run_convoy(dir, config(mock.url, "  mode: auto\n", ""));
  INFO(r.console);
  CHECK(r.exit_code == 3);
  CHECK(r.console.find("session_routing.mode auto: the probe of " + mock.url +
                       "/v1/chat/completions decides nothing: HTTP 500: \"") != std::string::npos);
  CHECK(r.console.find("Nothing else was sent.") != std::string::npos);
  const auto log = mock_log(mock);
  REQUIRE(log.size() == 1);
  CHECK(is_probe(log[0]));
  CHECK_FALSE(fs::exists(r.out / "summary.json"));
  fs::remove_all(dir);
}

TEST_CASE("sessions of conversations that end early are released: the mock holds no pin after") {
  std::string contract_flags_name, routing, extra;
  std::vector<std::string> flags = {"--speedup", "1", "--itl-ms", "2", "--workers", "4"};
  SUBCASE("bind, cancelled mid-turn") {
    flags.insert(flags.end(), {"--contract", "bind"});
    routing = "  mode: bind\n  timeout_s: 600\n";
    extra = "";
    contract_flags_name = "bind-cancel";
  }
  SUBCASE("legacy with engine sessions, cancelled mid-turn") {
    flags.insert(flags.end(), {"--contract", "legacy", "--engine-sessions", "true"});
    routing = "  mode: legacy\n  timeout_s: 600\n";
    contract_flags_name = "legacy-cancel";
  }
  const fs::path dir = fresh_dir("e2e-session-release-" + contract_flags_name);
  Mock mock = start_mock(dir, flags);
  std::string yaml = config(mock.url, routing, "");
  // Most turns are cancelled 5 ms in, while the mock streams their 4 tokens over ~8 ms or more.
  const std::string load = "load:\n  concurrency: 3\n";
  yaml.replace(yaml.find(load), load.size(),
               "load:\n  concurrency: 3\n  cancel: {fraction: 0.4, after_ms: 5}\n");
  Run r = run_convoy(dir, yaml);
  INFO(r.console);
  REQUIRE(r.exit_code == 0);

  const auto records = read_jsonl(r.out / "records.jsonl");
  int64_t releases = 0, measured = 0;
  for (const auto& rec : records) {
    if (!rec["early_release"].GetBool()) {
      ++measured;
      continue;
    }
    ++releases;
    CHECK(std::string(rec["session_control"]["action"].GetString()) == "close");
    CHECK(rec["http_status"].GetInt64() == 200);
  }
  REQUIRE(releases > 0);
  const auto summary = read_json(r.out / "summary.json");
  const auto& sessions = summary["run"]["session_routing"]["sessions"];
  CHECK(sessions["tracked"].GetBool());
  CHECK(sessions["releases_sent"].GetInt64() == releases);
  CHECK(sessions["releases_failed"].GetInt64() == 0);
  CHECK(sessions["left_open"].GetInt64() == 0);
  CHECK(sessions["opened"].GetInt64() > 0);
  // Releases are in no metric: every measured request, cancelled or not, and nothing else.
  CHECK(summary["request_count"]["avg"].GetDouble() +
            summary["error_request_count"]["avg"].GetDouble() ==
        static_cast<double>(measured));
  CHECK(r.console.find("released early (0 failed), 0 left open at the server") !=
        std::string::npos);

  const auto stats = parse_json(http_get(mock.port, "/mock/stats", 10).second);
  CHECK(stats["live_pins"].GetInt64() == 0);
  fs::remove_all(dir);
}
