// Reasoning models end to end: convoy against the bundled mock playing a reasoning model
// (--reasoning-tokens: the first N output tokens of each chat reply are reasoning_content).
// Streamed, the summary has time_to_first_output_token beside TTFT and the reasoning counts;
// not streamed, it has no TTFT, TTST or ITL at all.
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

constexpr int kConversations = 6;
constexpr int kTurns = 2;
constexpr int kRequests = kConversations * kTurns;
constexpr int kOutputTokens = 12;
constexpr int kReasoningTokens = 4;
constexpr double kItlMs = 5;

rapidjson::Document run_reasoning(const fs::path& dir, bool streaming) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: reasoning\n"
                        "seed: 7\n"
                        "target:\n"
                        "  url: mock\n"
                        "  streaming: "
                     << (streaming ? "true" : "false")
                     << "\n"
                        "mock:\n"
                        "  workers: 2\n"
                        "  speedup: 1\n"
                        "  itl_ms: "
                     << kItlMs
                     << "\n"
                        "  extra_args: [--reasoning-tokens, \""
                     << kReasoningTokens
                     << "\"]\n"
                        "dataset:\n"
                        "  type: synthetic\n"
                        "  conversations: "
                     << kConversations
                     << "\n"
                        "  turns: {mean: "
                     << kTurns << ", stddev: 0, min: " << kTurns << ", max: " << kTurns
                     << "}\n"
                        "  input_tokens: {mean: 64, stddev: 0}\n"
                        "  output_tokens: {mean: "
                     << kOutputTokens
                     << ", stddev: 0}\n"
                        "load:\n"
                        "  mode: concurrency\n"
                        "  concurrency: 3\n"
                        "workers:\n"
                        "  local: 1\n"
                        "output:\n"
                        "  html: false\n";
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  REQUIRE(summary.HasMember("request_count"));
  CHECK(summary["request_count"]["avg"].GetDouble() == kRequests);
  return summary;
}

}  // namespace

TEST_CASE("a reasoning model: time to first output token and reasoning counts, end to end") {
  const fs::path dir = fresh_dir("e2e-reasoning-stream");
  const rapidjson::Document s = run_reasoning(dir, true);
  REQUIRE(s.HasMember("time_to_first_token"));
  REQUIRE(s.HasMember("time_to_first_output_token"));
  REQUIRE(s.HasMember("reasoning_token_count"));
  CHECK(s["time_to_first_token"]["count"].GetInt64() == kRequests);
  CHECK(s["time_to_first_output_token"]["count"].GetInt64() == kRequests);
  // The answer starts kReasoningTokens decode steps after the first (reasoning) token.
  const double gap_ms = s["time_to_first_output_token"]["avg"].GetDouble() -
                        s["time_to_first_token"]["avg"].GetDouble();
  CHECK(gap_ms > kReasoningTokens * kItlMs / 2);
  CHECK(s["reasoning_token_count"]["count"].GetInt64() == kRequests);
  CHECK(s["reasoning_token_count"]["avg"].GetDouble() == kReasoningTokens);
  CHECK(s["total_reasoning_tokens"]["avg"].GetDouble() == kRequests * kReasoningTokens);
  CHECK(s["output_sequence_length"]["avg"].GetDouble() == kOutputTokens);
  CHECK(s["total_output_tokens"]["avg"].GetDouble() ==
        kRequests * (kOutputTokens - kReasoningTokens));
  CHECK(s["total_token_throughput"]["avg"].GetDouble() >
        s["output_token_throughput"]["avg"].GetDouble());
  fs::remove_all(dir);
}

TEST_CASE("non-streamed requests report latency and lengths but no TTFT, TTST or ITL") {
  const fs::path dir = fresh_dir("e2e-reasoning-whole");
  const rapidjson::Document s = run_reasoning(dir, false);
  for (const char* tag :
       {"time_to_first_token", "time_to_second_token", "inter_token_latency", "inter_chunk_latency",
        "output_token_throughput_per_user", "time_to_first_output_token"}) {
    CAPTURE(tag);
    CHECK_FALSE(s.HasMember(tag));
  }
  REQUIRE(s.HasMember("request_latency"));
  CHECK(s["request_latency"]["count"].GetInt64() == kRequests);
  CHECK(s["request_latency"]["min"].GetDouble() >= kOutputTokens * kItlMs * 0.9);
  CHECK(s["output_sequence_length"]["avg"].GetDouble() == kOutputTokens);
  CHECK(s["input_sequence_length"]["count"].GetInt64() == kRequests);
  // The server's usage.completion_tokens_details still counts the reasoning.
  CHECK(s["reasoning_token_count"]["avg"].GetDouble() == kReasoningTokens);
  fs::remove_all(dir);
}
