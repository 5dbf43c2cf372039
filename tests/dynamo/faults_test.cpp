// Faults against a real Dynamo 1.6.1: the frontend killed mid-run, and
// one mocker worker killed mid-run. Each run ends on its own with every request it sent counted
// once (records.jsonl = successes + errors), and verify blames the moves that follow a worker's
// death on the worker that went away.
//
// What the real frontend does when a bound worker dies depends on --router-session-affinity-mode:
// in hard mode (the default) the binding is an exact constraint, so every later turn of those
// sessions fails with 500 "no endpoints available to route work" until the TTL lapses (and
// convoy aborts the conversation); in soft mode the router binds them elsewhere: one move each.
// The worker test runs soft mode, where there are moves to explain.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/http_get.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// 16 conversations of 8 turns, 800 ms apart (a run of ~6 s), header mode with verify.
Subprocess start_run(const std::string& url, const fs::path& out) {
  return Subprocess({bin("controller/convoy"), "run", src("configs/dynamo-local.yaml"), "-o",
                     out.string(), "--quiet", "--set", "target.url=" + url, "--set",
                     "output.html=false", "--set", "dataset.turns={mean: 8, stddev: 0}", "--set",
                     "dataset.think_time_ms={mean: 800, stddev: 0}", "--set",
                     "load.concurrency=16"});
}

// Sum of the samples of `family` in a Prometheus text body whose labels contain `label`.
double sum_samples(const std::string& body, const std::string& family, const std::string& label) {
  double sum = 0;
  size_t at = 0;
  while ((at = body.find(family + "{", at)) != std::string::npos) {
    const size_t eol = body.find('\n', at);
    const std::string line = body.substr(at, eol - at);
    at = eol;
    if (line.find(label) == std::string::npos) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

int port_of(const std::string& url) {
  const size_t colon = url.rfind(':');
  return std::stoi(url.substr(colon + 1, url.find('/', colon) - colon - 1));
}

// Waits (at most 30 s) until the frontend has answered `n` requests successfully: mid-run.
bool wait_for_successes(const DynamoStack& stack, double n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto [status, body] = http_get(stack.port(), "/metrics");
    if (status == 200 &&
        sum_samples(body, "dynamo_frontend_requests_total", "status=\"success\"") >= n) {
      return true;
    }
  }
  return false;
}

// Every request the run sent is one line of records.jsonl, a success or an error, once.
void check_honest_counts(const fs::path& out, const rapidjson::Document& summary) {
  const auto records = read_jsonl(out / "records.jsonl");
  const int64_t ok = static_cast<int64_t>(summary["request_count"]["avg"].GetDouble());
  const int64_t errors = static_cast<int64_t>(summary["error_request_count"]["avg"].GetDouble());
  CHECK(static_cast<int64_t>(records.size()) == ok + errors);
  CHECK(ok + errors <= 16 * 8);
  std::map<std::string, int> ids;
  for (const auto& r : records) ++ids[r["x_request_id"].GetString()];
  for (const auto& [id, n] : ids) CHECK_MESSAGE(n == 1, id);
}

}  // namespace

TEST_CASE(
    "real Dynamo 1.6.1: the frontend killed mid-run ends the run with every request counted") {
  DynamoOptions options;
  options.workers = 2;
  options.affinity_ttl_s = 60;
  DynamoStack stack(options, "dynamo-fault-frontend");
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path out = fresh_path("dynamo-fault-frontend-out");
  Subprocess run = start_run(stack.url(), out);
  REQUIRE(wait_for_successes(stack, 32));
  stack.kill_frontend();
  const auto rc = run.wait(120);  // ends on its own: every conversation fails its next turn
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));

  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["request_count"]["avg"].GetDouble() >= 32);
  CHECK(summary["error_request_count"]["avg"].GetDouble() > 0);
  check_honest_counts(out, summary);
  // Nothing moved before the frontend went: the errors are not counted as moves.
  CHECK(summary["affinity"]["moves"].GetInt64() == 0);
}

TEST_CASE("real Dynamo 1.6.1: a worker killed mid-run: its sessions move, blamed on the worker") {
  DynamoOptions options;
  options.affinity_ttl_s = 60;
  options.frontend_args = {"--router-session-affinity-mode", "soft"};
  DynamoStack stack(options, "dynamo-fault-worker");
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path out = fresh_path("dynamo-fault-worker-out");
  Subprocess run = start_run(stack.url(), out);
  REQUIRE(wait_for_successes(stack, 32));
  // The worker that has served the most so far: it holds sessions that have turns left.
  size_t victim = 0;
  double most = -1;
  for (size_t i = 0; i < stack.workers().size(); ++i) {
    const auto [status, body] = http_get(port_of(stack.workers()[i].metrics_url), "/metrics");
    const double served =
        sum_samples(body, "dynamo_component_requests_total", "dynamo_endpoint=\"generate\"");
    if (status == 200 && served > most) {
      most = served;
      victim = i;
    }
  }
  stack.kill_worker(victim);
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));

  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  check_honest_counts(out, summary);
  const auto& a = summary["affinity"];
  INFO("moves " << a["moves"].GetInt64() << ", moved " << a["conversations_moved"].GetInt64());
  REQUIRE(a["moves"].GetInt64() > 0);
  // Every move left the killed worker, once.
  CHECK(a["moves"].GetInt64() == a["conversations_moved"].GetInt64());
  const std::string gone = stack.workers()[victim].worker_id;
  std::map<std::string, std::string> last;  // correlation id -> served_by of its last turn
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    if (!r.HasMember("served_by") || !r["served_by"].IsString()) continue;  // errors: null
    const std::string session = r["x_correlation_id"].GetString();
    const std::string by = r["served_by"].GetString();
    if (last.count(session) && last[session] != by) CHECK(last[session] == gone);
    last[session] = by;
  }
  REQUIRE(summary.HasMember("insights"));
  const rapidjson::Value* moves = nullptr;
  for (const auto& i : summary["insights"].GetArray()) {
    if (std::string(i["id"].GetString()) == "affinity_moves") moves = &i;
  }
  REQUIRE(moves != nullptr);
  const std::string first = (*moves)["likely_causes"][0].GetString();
  INFO("first cause: " << first);
  CHECK(first.find("A worker went away") == 0);
}
