// dataset.tenants and dataset.agent_hints against the real Dynamo 1.6.1 frontend: it takes
// nvext.cache_salt and every agent_hints field convoy sends (priority, strict_priority, osl,
// speculative_prefill: its AgentHints denies unknown fields, so a misspelt one would be a 400),
// and the run reports per tenant and per priority.
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

TEST_CASE("real Dynamo 1.6.1: tenants and agent_hints are accepted and reported per class") {
  DynamoStack stack({.workers = 1, .speedup_ratio = 10});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-request-hints");
  const fs::path config = dir / "hints.yaml";
  std::ofstream(config)
      << "name: hints\ntarget:\n  url: " << stack.url()
      << "\n  model: Qwen/Qwen3-0.6B\n  streaming: true\n"
      << "dataset:\n  type: synthetic\n  conversations: 8\n"
      << "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
      << "  input_tokens: {mean: 48, stddev: 0}\n  output_tokens: {mean: 6, stddev: 0}\n"
      << "  tenants: [{name: acme}, {name: globex}]\n"
      << "  agent_hints:\n    priority: {mix: [{weight: 1, mean: 5, stddev: 0}, "
      << "{weight: 1, mean: -1, stddev: 0}]}\n    strict_priority: 1\n    osl: true\n"
      << "    speculative_prefill: false\n"
      << "load: {mode: concurrency, concurrency: 2}\nworkers: {local: 1}\noutput: {html: false}\n";
  const fs::path out = dir / "out";
  Subprocess p({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "-q"});
  const auto rc = p.wait(240);
  INFO(p.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  const rapidjson::Document summary = read_json(out / "summary.json");
  CHECK(summary["request_count"]["avg"].GetDouble() == 16);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == 0);
  REQUIRE(summary.HasMember("tenants"));
  REQUIRE(summary.HasMember("priorities"));
  int64_t by_priority = 0;
  for (const rapidjson::Value& c : summary["priorities"].GetArray()) {
    by_priority += c["requests"].GetInt64();
  }
  CHECK(by_priority == 16);
}
