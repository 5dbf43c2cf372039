// target.server_timing against the real Dynamo 1.6.1 frontend: it answers nvext.extra_fields
// ["timing"] with its own per-request timing on the finish chunk, which convoy records beside
// its own TTFT and folds into the client-minus-server gap.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("real Dynamo 1.6.1: server_timing records the frontend's own TTFT and the gap") {
  DynamoStack stack({.workers = 1, .speedup_ratio = 10});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-server-timing");
  const fs::path config = dir / "timing.yaml";
  std::ofstream(config) << "name: timing\ntarget:\n  url: " << stack.url()
                        << "\n  model: Qwen/Qwen3-0.6B\n  streaming: true\n  server_timing: true\n"
                        << "dataset:\n  type: synthetic\n  conversations: 6\n"
                        << "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
                        << "  input_tokens: {mean: 64, stddev: 0}\n"
                        << "  output_tokens: {mean: 8, stddev: 0}\n"
                        << "load: {mode: concurrency, concurrency: 2}\nworkers: {local: 1}\n"
                        << "output: {html: false}\n";
  const fs::path out = dir / "out";
  Subprocess p({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "-q"});
  const auto rc = p.wait(240);
  INFO(p.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  const rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("server_timing"));
  const rapidjson::Value& st = summary["server_timing"];
  CHECK(st["requests"].GetInt64() == 12);
  CHECK(st["requests_without_timing"].GetInt64() == 0);
  CHECK(st["server_time_to_first_token"]["p50"].GetDouble() > 0);
  CHECK(st["server_queue_time"]["count"].GetInt64() == 12);
  const double gap50 = st["ttft_client_minus_server"]["p50"].GetDouble();
  CHECK(gap50 >= 0);
  CHECK(gap50 < summary["time_to_first_token"]["p50"].GetDouble());
  for (const rapidjson::Document& r : read_jsonl(out / "records.jsonl")) {
    REQUIRE(r["server_timing"].IsObject());
    CHECK(r["server_timing"]["ttft_ms"].GetDouble() > 0);
    CHECK(r["server_timing"]["total_ms"].GetDouble() >= r["server_timing"]["ttft_ms"].GetDouble());
  }
}
