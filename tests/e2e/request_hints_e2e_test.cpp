// dataset.tenants and dataset.agent_hints end to end on convoy-mock, whose worker queue admits
// the highest nvext.agent_hints.priority first (as Dynamo's router orders its queue): with one
// worker of two slots and twelve conversations at once, the high class waits less, and
// summary.json's priorities[] and tenants[] show it per class.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("agent_hints priority: the high class gets the lower TTFT, per class in summary.json") {
  const fs::path dir = fresh_dir("e2e-request-hints");
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: hints\nseed: 5\ntarget:\n  url: mock\n"
                        "mock:\n  workers: 1\n  speedup: 1\n  itl_ms: 2\n"
                        "  extra_args: [--max-num-seqs, \"2\"]\n"
                        "dataset:\n  type: synthetic\n  conversations: 48\n"
                        "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                        "  input_tokens: {mean: 32, stddev: 0}\n"
                        "  output_tokens: {mean: 12, stddev: 0}\n"
                        "  tenants: [{name: gold, weight: 1}, {name: free, weight: 1}]\n"
                        "  agent_hints:\n"
                        "    priority: {mix: [{weight: 1, mean: 10, stddev: 0}, "
                        "{weight: 1, mean: 0, stddev: 0}]}\n"
                        "    osl: true\n"
                        "load:\n  mode: concurrency\n  concurrency: 12\n"
                        "workers:\n  local: 1\noutput:\n  html: false\n";
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  const rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("priorities"));
  const rapidjson::Value& p = summary["priorities"];
  REQUIRE(p.Size() == 2);
  CHECK(p[0]["priority"].GetInt64() == 10);  // highest first
  CHECK(p[1]["priority"].GetInt64() == 0);
  CHECK(p[0]["requests"].GetInt64() + p[1]["requests"].GetInt64() == 48);
  const double high = p[0]["time_to_first_token"]["p50"].GetDouble();
  const double low = p[1]["time_to_first_token"]["p50"].GetDouble();
  INFO("TTFT p50: priority 10 " << high << " ms, priority 0 " << low << " ms");
  CHECK(high < low);
  REQUIRE(summary.HasMember("tenants"));
  const rapidjson::Value& t = summary["tenants"];
  REQUIRE(t.Size() == 2);
  CHECK(t[0]["requests"].GetInt64() + t[1]["requests"].GetInt64() == 48);
  std::map<std::string, int> per_tenant;
  for (const rapidjson::Document& r : read_jsonl(out / "records.jsonl")) {
    REQUIRE(r["tenant"].IsString());
    REQUIRE(r["priority"].IsInt64());
    ++per_tenant[r["tenant"].GetString()];
  }
  for (const rapidjson::Value& entry : t.GetArray()) {
    CHECK(per_tenant[entry["tenant"].GetString()] == entry["requests"].GetInt64());
  }
}
