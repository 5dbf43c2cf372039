// target.server_timing end to end on convoy-mock, which answers nvext.timing with Dynamo
// 1.6.1's fields and its own exact times: every measured request carries the server's timing in
// records.jsonl, summary.json has its distributions and the client-minus-server gap, and
// without the key neither appears.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr int kTimingConversations = 8;
constexpr int kTimingTurns = 2;
constexpr double kTimingItlMs = 4;

fs::path run_timed(const fs::path& dir, bool server_timing) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: server-timing\nseed: 3\ntarget:\n  url: mock\n  server_timing: "
                     << (server_timing ? "true" : "false")
                     << "\nmock:\n  workers: 2\n  speedup: 1\n  itl_ms: " << kTimingItlMs
                     << "\ndataset:\n  type: synthetic\n  conversations: " << kTimingConversations
                     << "\n  turns: {mean: " << kTimingTurns << ", stddev: 0, min: " << kTimingTurns
                     << ", max: " << kTimingTurns
                     << "}\n  input_tokens: {mean: 64, stddev: 0}\n"
                        "  output_tokens: {mean: 10, stddev: 0}\n"
                        "load:\n  mode: concurrency\n  concurrency: 4\n"
                        "workers:\n  local: 1\noutput:\n  html: false\n";
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  return out;
}

}  // namespace

TEST_CASE("server_timing: the mock's own timing per request and the client-minus-server gap") {
  const fs::path out = run_timed(fresh_dir("e2e-server-timing"), true);
  const rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("server_timing"));
  const rapidjson::Value& st = summary["server_timing"];
  constexpr int kRequests = kTimingConversations * kTimingTurns;
  CHECK(st["requests"].GetInt64() == kRequests);
  CHECK(st["requests_without_timing"].GetInt64() == 0);
  // The mock's ITL is exact: the server's own ITL is the configured one.
  CHECK(st["server_inter_token_latency"]["p50"].GetDouble() ==
        doctest::Approx(kTimingItlMs).epsilon(0.1));
  // The client starts its clock before the server does and stops it after: the gap is >= 0 and
  // well under the TTFT itself on loopback.
  const double gap50 = st["ttft_client_minus_server"]["p50"].GetDouble();
  const double client50 = summary["time_to_first_token"]["p50"].GetDouble();
  const double server50 = st["server_time_to_first_token"]["p50"].GetDouble();
  CHECK(gap50 >= 0);
  CHECK(gap50 < client50);
  CHECK(server50 > 0);
  CHECK(server50 <= client50);
  int timed = 0;
  for (const rapidjson::Document& r : read_jsonl(out / "records.jsonl")) {
    REQUIRE(r.HasMember("server_timing"));
    REQUIRE(r["server_timing"].IsObject());
    CHECK(r["server_timing"]["ttft_ms"].GetDouble() > 0);
    CHECK(r["server_timing"]["total_ms"].GetDouble() >= r["server_timing"]["ttft_ms"].GetDouble());
    CHECK(r["server_timing"]["ttft_gap_ms"].IsNumber());
    ++timed;
  }
  CHECK(timed == kRequests);
}

TEST_CASE("server_timing off: no server timing in records.jsonl or summary.json") {
  const fs::path out = run_timed(fresh_dir("e2e-server-timing-off"), false);
  const rapidjson::Document summary = read_json(out / "summary.json");
  CHECK_FALSE(summary.HasMember("server_timing"));
  for (const rapidjson::Document& r : read_jsonl(out / "records.jsonl")) {
    CHECK(r["server_timing"].IsNull());
  }
}
