// The Responses and Messages APIs end to end: convoy against the bundled mock serving
// POST /v1/responses and POST /v1/messages with the same timing model as chat. TTFT is the
// prefill, ITL the mock's decode step, ISL/OSL and reasoning come from each API's own usage
// fields, and target.path moves the route.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr int kApiConversations = 4;
constexpr int kApiTurns = 2;
constexpr int kApiRequests = kApiConversations * kApiTurns;
constexpr int kApiOutputTokens = 10;
constexpr int kApiReasoningTokens = 3;
constexpr double kApiItlMs = 4;

struct ApiRun {
  std::string endpoint;
  bool streaming = true;
  std::string target_extra;  // more target.* lines
  std::string mock_extra;    // more mock.extra_args items
};

rapidjson::Document run_api(const fs::path& dir, const ApiRun& a, int* rc_out = nullptr) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: api\nseed: 3\ntarget:\n  url: mock\n  endpoint: " << a.endpoint
                     << "\n  streaming: " << (a.streaming ? "true" : "false") << "\n"
                     << a.target_extra
                     << "mock:\n  workers: 1\n  speedup: 1\n  itl_ms: " << kApiItlMs
                     << "\n  extra_args: [--reasoning-tokens, \"" << kApiReasoningTokens << "\""
                     << a.mock_extra
                     << "]\n"
                        "dataset:\n  type: synthetic\n  conversations: "
                     << kApiConversations << "\n  turns: {mean: " << kApiTurns
                     << ", stddev: 0, min: " << kApiTurns << ", max: " << kApiTurns
                     << "}\n  input_tokens: {mean: 48, stddev: 0}\n"
                        "  output_tokens: {mean: "
                     << kApiOutputTokens
                     << ", stddev: 0}\n"
                        "load:\n  mode: concurrency\n  concurrency: 2\n"
                        "workers:\n  local: 1\noutput:\n  html: false\n";
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  if (rc_out != nullptr) *rc_out = *rc;
  CHECK(*rc == 0);
  rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  return summary;
}

void check_streamed(const rapidjson::Document& s) {
  REQUIRE(s.HasMember("request_count"));
  CHECK(s["request_count"]["avg"].GetDouble() == kApiRequests);
  CHECK(s["error_request_count"]["avg"].GetDouble() == 0);
  REQUIRE(s.HasMember("time_to_first_token"));
  REQUIRE(s.HasMember("inter_token_latency"));
  CHECK(s["time_to_first_token"]["count"].GetInt64() == kApiRequests);
  // Each token event is one decode step of the mock apart.
  const double itl = s["inter_token_latency"]["avg"].GetDouble();
  CHECK(itl > kApiItlMs * 0.8);
  CHECK(itl < kApiItlMs * 3);
  // The answer starts kApiReasoningTokens decode steps after the first (reasoning) token.
  REQUIRE(s.HasMember("time_to_first_output_token"));
  const double gap_ms = s["time_to_first_output_token"]["avg"].GetDouble() -
                        s["time_to_first_token"]["avg"].GetDouble();
  CHECK(gap_ms > kApiReasoningTokens * kApiItlMs / 2);
  CHECK(s["output_sequence_length"]["avg"].GetDouble() == kApiOutputTokens);
  REQUIRE(s.HasMember("input_sequence_length"));
  CHECK(s["input_sequence_length"]["count"].GetInt64() == kApiRequests);
  CHECK(s["input_sequence_length"]["min"].GetDouble() > 0);
  CHECK(s["reasoning_token_count"]["avg"].GetDouble() == kApiReasoningTokens);
}

}  // namespace

TEST_CASE("the responses endpoint on the mock: TTFT, ITL, ISL, OSL and reasoning") {
  const fs::path dir = fresh_dir("e2e-api-responses");
  SUBCASE("streamed") { check_streamed(run_api(dir, {"responses", true, "", ""})); }
  SUBCASE("whole bodies") {
    const rapidjson::Document s = run_api(dir, {"responses", false, "", ""});
    CHECK(s["request_count"]["avg"].GetDouble() == kApiRequests);
    CHECK_FALSE(s.HasMember("time_to_first_token"));
    CHECK(s["output_sequence_length"]["avg"].GetDouble() == kApiOutputTokens);
    CHECK(s["reasoning_token_count"]["avg"].GetDouble() == kApiReasoningTokens);
  }
  fs::remove_all(dir);
}

TEST_CASE("the messages endpoint on the mock: TTFT, ITL, ISL, OSL and thinking") {
  const fs::path dir = fresh_dir("e2e-api-messages");
  SUBCASE("streamed") { check_streamed(run_api(dir, {"messages", true, "", ""})); }
  SUBCASE("whole bodies") {
    const rapidjson::Document s = run_api(dir, {"messages", false, "", ""});
    CHECK(s["request_count"]["avg"].GetDouble() == kApiRequests);
    CHECK_FALSE(s.HasMember("time_to_first_token"));
    CHECK(s["output_sequence_length"]["avg"].GetDouble() == kApiOutputTokens);
    CHECK(s["input_sequence_length"]["count"].GetInt64() == kApiRequests);
  }
  fs::remove_all(dir);
}

TEST_CASE("target.path moves the route: a path the mock does not serve fails every request") {
  const fs::path dir = fresh_dir("e2e-api-path");
  SUBCASE("the default route, named") {
    const auto s = run_api(dir, {"messages", true, "  path: /v1/messages\n", ""});
    CHECK(s["request_count"]["avg"].GetDouble() == kApiRequests);
  }
  SUBCASE("another route") {
    const fs::path cfg = dir / "config.yaml";
    std::ofstream(cfg) << "name: api\ntarget:\n  url: mock\n  endpoint: responses\n"
                          "  path: /anthropic/v1/nowhere\n"
                          "dataset:\n  type: synthetic\n  conversations: 2\n"
                          "load:\n  mode: concurrency\n  concurrency: 1\n"
                          "workers:\n  local: 1\noutput:\n  html: false\n";
    const fs::path out = dir / "out";
    Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string(), "--quiet"});
    const auto rc = run.wait(90);
    INFO(run.output());
    REQUIRE(rc.has_value());
    const std::string log = read_file(out / "records.jsonl");
    CHECK(log.find("\"http_status\":404") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("responses_state server: turn 2 sends only its input and previous_response_id") {
  const fs::path dir = fresh_dir("e2e-api-server-state");
  const fs::path log = dir / "requests.jsonl";
  const std::string log_arg = ", --log-requests, \"" + log.string() + "\"";
  const auto server = run_api(dir, {"responses", true, "  responses_state: server\n", log_arg});
  CHECK(server["request_count"]["avg"].GetDouble() == kApiRequests);
  CHECK(server["error_request_count"]["avg"].GetDouble() == 0);
  int chained = 0;
  int whole = 0;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("body") || !line["body"].IsObject()) continue;
    const auto& body = line["body"];
    if (!body.HasMember("input")) continue;
    if (body.HasMember("previous_response_id")) {
      ++chained;
      CHECK(std::string(body["previous_response_id"].GetString()).rfind("resp_", 0) == 0);
      CHECK(body["input"].Size() == 1);  // the new user item only
    } else {
      ++whole;
      CHECK(body["input"].Size() >= 1);
    }
  }
  CHECK(chained == kApiConversations * (kApiTurns - 1));
  CHECK(whole == kApiConversations);
  // The mock prepends the kept conversation: the server counts the same input as when the
  // client resends the history.
  const fs::path client_dir = dir / "client";
  fs::create_directories(client_dir);
  const auto client = run_api(client_dir, {"responses", true, "", ""});
  CHECK(server["input_sequence_length"]["avg"].GetDouble() ==
        doctest::Approx(client["input_sequence_length"]["avg"].GetDouble()).epsilon(0.05));
  fs::remove_all(dir);
}
