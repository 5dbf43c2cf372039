// Datasets end to end: a Mooncake trace replayed on its timestamps, and request bodies that do
// not depend on the number of workers.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return sb.GetString();
}

}  // namespace

namespace {

// Five single-turn rows `step_ms` apart, two sharing a prefix.
void write_five_row_trace(const fs::path& path, int step_ms) {
  std::ofstream out(path);
  const int hash_ids[] = {1, 2, 1, 3, 4};
  for (int i = 0; i < 5; ++i) {
    out << R"({"timestamp": )" << i * step_ms
        << R"(, "input_length": 600, "output_length": 4, "hash_ids": [)" << hash_ids[i] << "]}\n";
  }
}

// The intended and actual send times of a trace run's records, sorted, in ms from the first.
struct TraceTimes {
  std::vector<double> intended_ms;
  std::vector<double> sent_ms;
};

TraceTimes run_trace(const fs::path& dir, const std::string& name,
                     const std::vector<std::string>& extra) {
  const fs::path out = dir / name;
  std::vector<std::string> sets = {
      "dataset.type=mooncake", "dataset.path=" + (dir / "trace.jsonl").string(), "load.mode=trace",
      "mock.speedup=20", "session_routing.mode=off"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  Subprocess run(quickstart_run_argv(out, sets));
  auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  auto records = read_jsonl(out / "records.jsonl");
  REQUIRE(records.size() == 5);
  std::vector<int64_t> intended, sent;
  for (const auto& r : records) {
    intended.push_back(r["intended_ns"].GetInt64());
    sent.push_back(r["sent_ns"].GetInt64());
  }
  std::sort(intended.begin(), intended.end());
  std::sort(sent.begin(), sent.end());
  TraceTimes times;
  for (size_t i = 0; i < intended.size(); ++i) {
    times.intended_ms.push_back(static_cast<double>(intended[i] - intended[0]) / 1e6);
    times.sent_ms.push_back(static_cast<double>(sent[i] - sent[0]) / 1e6);
  }
  return times;
}

}  // namespace

TEST_CASE("a Mooncake trace replays on its timestamps") {
  fs::path dir = fresh_dir("e2e-trace");
  write_five_row_trace(dir / "trace.jsonl", 150);
  const TraceTimes times = run_trace(dir, "out", {});
  for (size_t i = 0; i < 5; ++i) {
    const double planned_ms = 150.0 * static_cast<double>(i);
    INFO("row " << i << " intended " << times.intended_ms[i] << " ms, sent " << times.sent_ms[i]
                << " ms");
    CHECK(times.intended_ms[i] == doctest::Approx(planned_ms).epsilon(0.0001));
    // Sends follow the trace; a loaded 2-core CI machine gets a generous bound.
    CHECK(std::abs(times.sent_ms[i] - planned_ms) < 100.0);
  }
  fs::remove_all(dir);
}

TEST_CASE("load.trace speedup 2 halves a trace run's span") {
  fs::path dir = fresh_dir("e2e-trace-speedup");
  write_five_row_trace(dir / "trace.jsonl", 400);  // 1.6 s as recorded
  const TraceTimes recorded = run_trace(dir, "real-time", {});
  const TraceTimes faster = run_trace(dir, "twice", {"load.trace.speedup=2"});
  CHECK(recorded.intended_ms.back() == doctest::Approx(1600).epsilon(0.0001));
  // records.jsonl's intended_ns is the transformed schedule: every start exactly halved.
  for (size_t i = 0; i < 5; ++i) {
    INFO("row " << i);
    CHECK(faster.intended_ms[i] == doctest::Approx(recorded.intended_ms[i] / 2).epsilon(0.0001));
    CHECK(std::abs(faster.sent_ms[i] - 200.0 * static_cast<double>(i)) < 100.0);
  }
  CHECK(faster.sent_ms.back() < 0.5 * recorded.sent_ms.back() + 100.0);
  CHECK(faster.sent_ms.back() > 0.5 * recorded.sent_ms.back() - 100.0);
  fs::remove_all(dir);
}

TEST_CASE("the same seed sends the same request bodies whatever the number of workers") {
  fs::path dir = fresh_dir("e2e-determinism");
  std::map<int, std::map<std::string, std::string>> bodies;  // workers -> (id#turn -> body)
  for (int workers : {1, 3}) {
    fs::path log = dir / ("requests-" + std::to_string(workers) + ".jsonl");
    Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "50", "--log-requests",
                     log.string()});
    std::string url = mock_url(mock);
    Subprocess run(
        quickstart_run_argv(dir / ("out-" + std::to_string(workers)),
                            {"target.url=" + url, "workers.local=" + std::to_string(workers),
                             "dataset.conversations=10", "dataset.history=recorded"}));
    auto rc = run.wait(90);
    INFO(run.output());
    REQUIRE(rc.has_value());
    REQUIRE(*rc == 0);
    mock.signal(SIGTERM);
    REQUIRE(mock.wait(30).has_value());
    std::map<std::string, int> turns_seen;
    for (const auto& line : read_jsonl(log)) {
      if (!line.HasMember("headers") || !line["body"].IsObject()) continue;
      const auto& headers = line["headers"];
      std::string id;
      for (auto it = headers.MemberBegin(); it != headers.MemberEnd(); ++it) {
        std::string name = it->name.GetString();
        std::transform(name.begin(), name.end(), name.begin(), ::tolower);
        if (name == "x-correlation-id") id = it->value.GetString();
      }
      REQUIRE_FALSE(id.empty());
      // Turns of one conversation arrive in order: number them by arrival.
      int turn = turns_seen[id]++;
      bodies[workers][id + "#" + std::to_string(turn)] = to_text(line["body"]);
    }
  }
  REQUIRE(bodies[1].size() > 10);
  CHECK(bodies[1].size() == bodies[3].size());
  for (const auto& [key, body] : bodies[1]) {
    INFO(key);
    REQUIRE(bodies[3].count(key) == 1);
    CHECK(bodies[3][key] == body);
  }
  fs::remove_all(dir);
}

TEST_CASE("a dataset that cannot cross the wire stops the run before anything starts") {
  fs::path dir = fresh_dir("e2e-wire-limits");
  fs::path data = dir / "data.jsonl";
  std::string type = "jsonl";
  std::string expected;
  SUBCASE("a JSONL turn over the 16 MiB string limit") {
    std::ofstream(data) << R"({"text": "fine"})"
                        << "\n"
                        << R"({"text": ")" << std::string((16u << 20) + 1, 'a') << "\"}\n";
    expected = data.string() + ":2: text: 16777217 bytes";
  }
  SUBCASE("invalid UTF-8 in a JSONL text") {
    std::ofstream(data) << "{\"text\": \"caf\xC3\"}\n";
    expected = data.string() + ":1: text: invalid UTF-8";
  }
  SUBCASE("a Mooncake input_length of 1e12 tokens") {
    type = "mooncake";
    std::ofstream(data) << R"({"input_length": 1e12})"
                        << "\n";
    expected = data.string() + ":1: input_length: must be <= 4194304";
  }
  SUBCASE("a Mooncake timestamp of 1e300") {
    type = "mooncake";
    std::ofstream(data) << R"({"timestamp": 1e300, "input_length": 8})"
                        << "\n";
    expected = data.string() + ":1: timestamp: must be <= 1e+15";
  }
  fs::path out = dir / "out";
  Subprocess run(
      quickstart_run_argv(out, {"dataset.type=" + type, "dataset.path=" + data.string()}));
  auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find(expected) != std::string::npos);
  CHECK(run.output().find("started convoy-mock") == std::string::npos);  // nothing started
  CHECK_FALSE(fs::exists(out / "records.jsonl"));
  fs::remove_all(dir);
}

TEST_CASE("ten million synthetic conversations start at once and cost no memory up front") {
  // Built up front this took about 15 GB and minutes before the first request; generated on
  // demand the run is over in about its 1 s.
  fs::path dir = fresh_dir("e2e-ten-million");
  fs::path out = dir / "out";
  Subprocess run(quickstart_run_argv(
      out, {"dataset.conversations=10000000", "load.duration_s=1", "mock.speedup=20"}));
  auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  auto records = read_jsonl(out / "records.jsonl");
  CHECK_FALSE(records.empty());
  fs::remove_all(dir);
}
