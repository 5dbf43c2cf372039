// Session affinity by header against a real Dynamo 1.6.1 frontend: with
// --router-session-affinity-ttl-secs no conversation moves and served_by is the real
// nvext.worker_id of a mocker worker; without it moves are counted and the affinity_moves
// insight names the missing TTL first.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// configs/dynamo-local.yaml against `url`: 16 conversations of 4 turns, header mode, verify.
int run_local_config(const std::string& url, const fs::path& out) {
  Subprocess run({bin("controller/convoy"), "run", src("configs/dynamo-local.yaml"), "-o",
                  out.string(), "--quiet", "--set", "target.url=" + url, "--set",
                  "output.html=false"});
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  return *rc;
}

const rapidjson::Value* find_insight(const rapidjson::Document& summary, const std::string& id) {
  if (!summary.HasMember("insights") || !summary["insights"].IsArray()) return nullptr;
  for (const auto& i : summary["insights"].GetArray()) {
    if (i.HasMember("id") && i["id"].GetString() == id) return &i;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("real Dynamo 1.6.1: header affinity with a TTL keeps every conversation on its worker") {
  DynamoOptions options;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "dynamo-affinity-ttl");
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path out = fresh_path("dynamo-affinity-ttl-out");
  REQUIRE(run_local_config(stack.url(), out) == 0);

  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  REQUIRE(summary.HasMember("affinity"));
  const auto& a = summary["affinity"];
  CHECK(a["verified"].GetBool());
  CHECK(a["conversations"].GetInt64() == 16);
  CHECK(a["requests_without_worker"].GetInt64() == 0);
  CHECK(a["conversations_moved"].GetInt64() == 0);
  CHECK(a["moves"].GetInt64() == 0);
  CHECK(find_insight(summary, "affinity_moves") == nullptr);

  // served_by is the id a real mocker worker reports, and the router used more than one.
  const std::vector<std::string> ids = stack.worker_ids();
  const std::set<std::string> known(ids.begin(), ids.end());
  std::set<std::string> used;
  int64_t records = 0;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    REQUIRE(r["served_by"].IsString());
    const std::string served_by = r["served_by"].GetString();
    INFO("served_by " << served_by);
    CHECK(known.count(served_by) == 1);
    used.insert(served_by);
    ++records;
  }
  CHECK(records == 64);
  CHECK(used.size() >= 2);
}

TEST_CASE("real Dynamo 1.6.1: without an affinity TTL moves are counted, the missing TTL first") {
  DynamoStack stack(DynamoOptions{}, "dynamo-affinity-nottl");
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path out = fresh_path("dynamo-affinity-nottl-out");
  REQUIRE(run_local_config(stack.url(), out) == 0);

  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  const auto& a = summary["affinity"];
  CHECK(a["verified"].GetBool());
  CHECK(a["conversations"].GetInt64() == 16);
  INFO("moves " << a["moves"].GetInt64() << " of " << a["transitions"].GetInt64());
  CHECK(a["moves"].GetInt64() > 0);
  CHECK(a["conversations_moved"].GetInt64() > 0);
  const rapidjson::Value* moves = find_insight(summary, "affinity_moves");
  REQUIRE(moves != nullptr);
  REQUIRE((*moves)["likely_causes"].Size() > 0);
  const std::string first = (*moves)["likely_causes"][0].GetString();
  INFO("first cause: " << first);
  CHECK(first.find("without --router-session-affinity-ttl-secs") != std::string::npos);
}
