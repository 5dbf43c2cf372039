// End to end: the real convoy, convoy-worker and convoy-mock binaries, on loopback.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

std::vector<std::string> quickstart_args(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> argv = quickstart_run_argv(out, {});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

TEST_CASE("convoy run against the bundled mock writes a complete summary") {
  fs::path out = fresh_path("e2e-quickstart");
  Subprocess run(quickstart_args(out, {"--set", "dataset.conversations=12", "--set",
                                       "mock.speedup=20", "--set", "workers.local=2"}));
  auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(run.output().find("Time to First Token") != std::string::npos);

  auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  REQUIRE(summary.HasMember("time_to_first_token"));
  const auto& ttft = summary["time_to_first_token"];
  for (const char* key : {"unit", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75",
                          "p90", "p95", "p99", "std", "count", "sum"}) {
    CHECK_MESSAGE(ttft.HasMember(key), key);
  }
  CHECK(ttft["count"].GetInt64() > 0);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == 0);
  REQUIRE(summary.HasMember("workers"));
  REQUIRE(summary["workers"].Size() == 2);
  for (const auto& w : summary["workers"].GetArray()) {
    CHECK(w["legacy_open_sessions"].GetInt64() == 0);
    CHECK(w["records"].GetInt64() > 0);
  }
  CHECK(std::string(summary["verdict"]["status"].GetString()) != "fail");

  // Every conversation stays on one worker from its first turn to its last.
  auto records = read_jsonl(out / "records.jsonl");
  CHECK(static_cast<int64_t>(records.size()) == ttft["count"].GetInt64());
  std::map<std::string, std::set<std::string>> workers_of;
  std::set<std::string> request_ids;
  for (const auto& r : records) {
    workers_of[r["x_correlation_id"].GetString()].insert(r["worker_id"].GetString());
    request_ids.insert(r["x_request_id"].GetString());
  }
  CHECK(workers_of.size() == 12);
  for (const auto& [id, ws] : workers_of) CHECK_MESSAGE(ws.size() == 1, id);
  CHECK(request_ids.size() == records.size());
  // X-Request-ID is a uuid4 (version nibble 4, variant bits 10).
  const std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  for (const auto& id : request_ids) CHECK_MESSAGE(std::regex_match(id, uuid4), id);
  fs::remove_all(out);
}

TEST_CASE("bad configuration exits 2 naming the file, line and key, and sends nothing") {
  fs::path dir = fresh_dir("e2e-badconfig");
  fs::path cfg = dir / "bad.yaml";
  std::ofstream(cfg) << "name: bad\nload:\n  mode: concurrency\n  concurency: 4\n";
  fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string()});
  auto rc = run.wait(30);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find("bad.yaml:4") != std::string::npos);
  CHECK(run.output().find("concurency") != std::string::npos);
  CHECK(run.output().find("did you mean") != std::string::npos);
  CHECK_FALSE(fs::exists(out));

  SUBCASE("validate prints the resolved config of a good file") {
    Subprocess v({bin("controller/convoy"), "validate", src("configs/quickstart.yaml")});
    auto vrc = v.wait(30);
    REQUIRE(vrc.has_value());
    CHECK(*vrc == 0);
    CHECK(v.output().find("session_routing:") != std::string::npos);
    CHECK(v.output().find("\n# expected duration: until the dataset's 24 conversations have run") !=
          std::string::npos);
  }
  SUBCASE("the legacy alias alone forces legacy, whatever the target answers") {
    Subprocess v({bin("controller/convoy"), "validate", src("configs/quickstart.yaml"),
                  "--use-legacy-dynamo-session-control"});
    auto vrc = v.wait(30);
    REQUIRE(vrc.has_value());
    CHECK(*vrc == 0);
    CHECK(v.output().find("  mode: legacy\n") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("an unreachable target fails fast with exit 3") {
  fs::path out = fresh_path("e2e-unreachable");
  const RefusingPort refusing;
  std::string url = "target.url=" + refusing.url();
  Subprocess run(quickstart_args(out, {"--set", url}));
  auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(run.output().find("unreachable") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("Ctrl-C stops the run, writes partial results and leaves no process behind") {
  fs::path out = fresh_path("e2e-sigint");
  // Slow streams so the run is certainly mid-flight when interrupted.
  Subprocess run(
      quickstart_args(out, {"--set", "dataset.conversations=400", "--set", "mock.itl_ms=20",
                            "--set", "load.grace_s=2", "--set", "workers.local=2", "--verbose"}));
  REQUIRE(run.wait_for_output("measuring", 60));
  // Wait until records are flowing.
  const bool flowing = wait_for_change(
      out,
      [&] {
        std::error_code ec;
        const auto bytes = fs::file_size(out / "records.jsonl", ec);
        return !ec && bytes > 0;
      },
      20);
  CHECK(flowing);
  run.signal(SIGINT);
  auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 130);
  auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["run"]["interrupted"].GetBool());
  REQUIRE(summary.HasMember("workers"));
  for (const auto& w : summary["workers"].GetArray()) {
    CHECK_FALSE(process_alive(w["pid"].GetInt64()));
  }
  fs::remove_all(out);
}

TEST_CASE("warmup conversations run first and are excluded from the metrics") {
  fs::path out = fresh_path("e2e-warmup");
  Subprocess run(quickstart_args(out, {"--set", "dataset.conversations=10", "--set",
                                       "mock.speedup=20", "--set", "load.warmup_sessions=3"}));
  auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  auto records = read_jsonl(out / "records.jsonl");
  int64_t warmup = 0, measured = 0, last_warmup_end = 0, first_measured_send = INT64_MAX;
  for (const auto& r : records) {
    if (std::string(r["phase"].GetString()) == "warmup") {
      ++warmup;
      last_warmup_end = std::max(last_warmup_end, r["end_ns"].GetInt64());
    } else {
      ++measured;
      first_measured_send = std::min(first_measured_send, r["sent_ns"].GetInt64());
    }
  }
  CHECK(warmup > 0);
  CHECK(measured > 0);
  CHECK(last_warmup_end <= first_measured_send);  // measure starts after warmup ends
  auto summary = read_json(out / "summary.json");
  CHECK(summary["request_count"]["avg"].GetDouble() == static_cast<double>(measured));
  CHECK(run.output().find("warmup, excluded") != std::string::npos);
  fs::remove_all(out);
}
