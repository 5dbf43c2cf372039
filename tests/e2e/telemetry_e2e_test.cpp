// End to end: `convoy run` scrapes server telemetry: the bundled mock's own /metrics
// without being listed, a real prometheus-node-exporter on loopback, and an endpoint that
// never answers, which must not hold the run up.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

const fs::path kNodeExporter = "/usr/bin/prometheus-node-exporter";

std::string config_yaml(const std::string& endpoints) {
  return "name: telemetry-e2e\n"
         "seed: 7\n"
         "target: {url: mock}\n"
         "mock: {workers: 2, contract: bind, speedup: 20}\n"
         "dataset:\n"
         "  type: synthetic\n"
         "  conversations: 8\n"
         "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
         "  input_tokens: {mean: 64, stddev: 0}\n"
         "  output_tokens: {mean: 8, stddev: 0}\n"
         "load: {mode: concurrency, concurrency: 4}\n"
         "workers: {local: 1}\n"
         "output: {html: false}\n"
         "telemetry:\n"
         "  interval_s: 0.1\n"
         "  timeout_s: 0.5\n"
         "  endpoints:\n" +
         endpoints;
}

fs::path write_config(const fs::path& dir, const std::string& text) {
  fs::create_directories(dir);
  const fs::path path = dir / "convoy.yaml";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("convoy run scrapes the mock, a node exporter and a dead endpoint into server_metrics") {
  const bool have_node = fs::exists(kNodeExporter);
  if (!have_node) MESSAGE("prometheus-node-exporter is not installed: scraping the mock only");
  LoopbackListener silent;  // never answers
  int port = 0;
  {
    LoopbackSocket probe(LoopbackSocket::Mode::kBoundOnly);
    port = probe.port();
  }
  const std::string node_address = "127.0.0.1:" + std::to_string(port);
  std::optional<Subprocess> node;
  if (have_node) {
    node.emplace(std::vector<std::string>{
        kNodeExporter.string(), "--web.listen-address=" + node_address,
        "--collector.disable-defaults", "--collector.cpu", "--collector.loadavg"});
    REQUIRE_MESSAGE(node->wait_for_output("Listening on", 10), node->output());
  }
  const fs::path dir = fresh_path("e2e-telemetry");
  std::string endpoints =
      "    - {name: dead, url: \"" + silent.url() + "/metrics\", required: false}\n";
  if (have_node) endpoints += "    - {name: node, url: \"http://" + node_address + "/metrics\"}\n";
  const fs::path config = write_config(dir, config_yaml(endpoints));
  const fs::path out = dir / "out";
  const auto start = std::chrono::steady_clock::now();
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string(), "--quiet"});
  const auto rc = run.wait(120);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(wall_s < 60);
  CHECK(run.output().find("dead (" + silent.url()) != std::string::npos);  // warned at start

  const auto summary = read_json(out / "summary.json");
  REQUIRE(summary.HasMember("server_metrics"));
  const auto& sm = summary["server_metrics"];
  CHECK(sm["interval_s"].GetDouble() == doctest::Approx(0.1));
  std::map<std::string, const rapidjson::Value*> by_name;
  for (const auto& e : sm["endpoints"].GetArray()) by_name[e["name"].GetString()] = &e;
  REQUIRE(by_name.count("mock") == 1);  // scraped without being listed
  REQUIRE(by_name.count("dead") == 1);
  CHECK((*by_name["dead"])["errors"].GetInt64() >= 1);
  CHECK((*by_name["dead"])["errors"].GetInt64() == (*by_name["dead"])["scrapes"].GetInt64());
  CHECK((*by_name["mock"])["errors"].GetInt64() == 0);

  // The mock's response counter grew by exactly the requests convoy sent.
  const auto records = read_jsonl(out / "records.jsonl");
  double mock_responses = 0;
  std::set<std::string> node_series;
  for (const auto& m : sm["metrics"].GetArray()) {
    const std::string endpoint = m["endpoint"].GetString();
    const std::string name = m["name"].GetString();
    if (endpoint == "mock" && name == "convoy_mock_requests_total") {
      mock_responses += m["delta"].GetDouble();
      CHECK(m["headline"].GetBool());
    }
    if (endpoint == "node") node_series.insert(name);
  }
  CHECK(mock_responses == static_cast<double>(records.size()));
  CHECK(records.size() == 16);
  if (have_node) {
    CHECK(node_series.count("node_cpu_seconds_total") == 1);
    CHECK(node_series.count("node_load1") == 1);
  }

  // server_metrics.jsonl: a line per scrape and endpoint, on the run's clock.
  std::map<std::string, int> lines_of;
  for (const auto& line : read_jsonl(out / "server_metrics.jsonl")) {
    lines_of[line["endpoint"].GetString()]++;
    CHECK(line["t_ns"].IsInt64());
  }
  CHECK(lines_of["mock"] >= 2);
  CHECK(lines_of["dead"] >= 1);
  if (have_node) CHECK(lines_of["node"] >= 2);
  fs::remove_all(dir);
}

TEST_CASE("a required telemetry endpoint that is down at start exits 3 and sends nothing") {
  RefusingPort refusing;
  const fs::path dir = fresh_path("e2e-telemetry-required");
  const fs::path config = write_config(
      dir,
      config_yaml("    - {name: gpus, url: \"" + refusing.url() + "/metrics\", required: true}\n"));
  Subprocess run(
      {bin("controller/convoy"), "run", config.string(), "-o", (dir / "out").string(), "--quiet"});
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(run.output().find("telemetry endpoint unreachable at start: gpus") != std::string::npos);
  const fs::path records = dir / "out" / "records.jsonl";
  const bool sent = fs::exists(records) && !read_jsonl(records).empty();
  CHECK_FALSE(sent);
  fs::remove_all(dir);
}
