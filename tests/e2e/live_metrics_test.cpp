// End to end: output.metrics_listen. A running `convoy run` serves /metrics
// that promtool accepts; a real Prometheus server scrapes it and its HTTP API returns convoy's
// series; a busy port stops the run before anything starts (exit 3).
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "e2e/http_get.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

const fs::path kPromtool = "/usr/bin/promtool";
const fs::path kPrometheus = "/usr/bin/prometheus";

// A rate-mode run against the bundled mock, long enough for a few 1 s scrapes.
std::string config_yaml(const std::string& listen, double duration_s) {
  return "name: live-e2e\n"
         "seed: 11\n"
         "target: {url: mock}\n"
         "mock: {workers: 2, contract: bind, speedup: 20}\n"
         "dataset:\n"
         "  type: synthetic\n"
         "  conversations: 400\n"
         "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
         "  input_tokens: {mean: 64, stddev: 0}\n"
         "  output_tokens: {mean: 8, stddev: 0}\n"
         "load: {mode: rate, rate: 20, duration_s: " +
         std::to_string(duration_s) +
         ", grace_s: 5}\n"
         "workers: {local: 1}\n"
         "output: {html: false, metrics_listen: \"" +
         listen + "\"}\n";
}

fs::path write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path;
}

std::string url_encode(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// The port in convoy's "serving live metrics on http://HOST:PORT/metrics" line (0: not seen).
int served_port(Subprocess& run) {
  const std::string prefix = "serving live metrics on http://";
  if (!run.wait_for_output(prefix, 60)) return 0;
  const std::string& out = run.output();
  const size_t at = out.find(prefix) + prefix.size();
  const size_t end = out.find("/metrics", at);
  if (end == std::string::npos) return 0;
  const std::string address = out.substr(at, end - at);
  return std::stoi(address.substr(address.rfind(':') + 1));
}

// Prometheus' instant query `promql`: the result array (empty on any failure).
rapidjson::Document prometheus_query(int port, const std::string& promql) {
  const auto [status, body] = http_get(port, "/api/v1/query?query=" + url_encode(promql));
  rapidjson::Document d;
  d.Parse(body.c_str());
  if (status != 200 || d.HasParseError() || !d.IsObject() || !d.HasMember("data")) {
    d.SetArray();
    return d;
  }
  rapidjson::Document result;
  result.CopyFrom(d["data"]["result"], result.GetAllocator());
  return result;
}

double sum_values(const rapidjson::Value& result) {
  double sum = 0;
  for (const auto& series : result.GetArray()) sum += std::stod(series["value"][1].GetString());
  return sum;
}

size_t measured_records(const fs::path& records) {
  size_t n = 0;
  for (const auto& r : read_jsonl(records)) {
    if (std::string(r["phase"].GetString()) == "measure") ++n;
  }
  return n;
}

}  // namespace

TEST_CASE(
    "live metrics e2e: a running convoy on a wildcard address warns and promtool accepts "
    "its /metrics") {
  const fs::path dir = fresh_path("e2e-live-promtool");
  const fs::path config = write_file(dir / "convoy.yaml", config_yaml("*:0", 3));
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", (dir / "out").string()});
  const int port = served_port(run);
  REQUIRE_MESSAGE(port > 0, run.output());
  CHECK(run.output().find("output.metrics_listen *:0 is not a loopback address: any host that "
                          "reaches it can read the run's live metrics") != std::string::npos);
  // Scrape until the first requests have ended (bounded by the run itself and a deadline).
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto [status, body] = http_get(port, "/metrics");
    if (status == 200) text = body;
    if (text.find("convoy_requests_total{") != std::string::npos) break;
    if (run.wait(0.2)) break;  // ended: the last text is what there is
  }
  REQUIRE_MESSAGE(text.find("convoy_requests_total{") != std::string::npos, text);
  CHECK(text.find("convoy_stage_info{mode=\"rate\",stage=\"measure\"} 1") != std::string::npos);
  CHECK(text.find("convoy_time_to_first_token_seconds_bucket{") != std::string::npos);
  if (!fs::exists(kPromtool)) {
    MESSAGE("promtool is not installed (Debian package prometheus): the check is skipped");
  } else {
    const fs::path file = write_file(dir / "scrape.prom", text);
    Subprocess check({"/bin/sh", "-c", kPromtool.string() + " check metrics < " + file.string()});
    const auto rc = check.wait(60);
    INFO(check.output());
    INFO(text);
    CHECK(rc == 0);
  }
  const auto rc = run.wait(120);
  INFO(run.output());
  CHECK(rc == 0);
}

TEST_CASE(
    "live metrics e2e: a real Prometheus scrapes a running convoy and its API returns "
    "convoy's series") {
  if (!fs::exists(kPrometheus)) {
    MESSAGE("prometheus is not installed (Debian package prometheus): skipped");
    return;
  }
  const fs::path dir = fresh_path("e2e-live-prometheus");
  int convoy_port = 0;
  int prom_port = 0;
  {
    LoopbackSocket a(LoopbackSocket::Mode::kBoundOnly);
    LoopbackSocket b(LoopbackSocket::Mode::kBoundOnly);
    convoy_port = a.port();
    prom_port = b.port();
  }
  const std::string target = "127.0.0.1:" + std::to_string(convoy_port);
  const fs::path prom_config = write_file(dir / "prometheus.yml",
                                          "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                                          "scrape_configs:\n"
                                          "  - job_name: convoy\n"
                                          "    static_configs: [{targets: [\"" +
                                              target + "\"]}]\n");
  Subprocess prometheus({kPrometheus.string(), "--config.file=" + prom_config.string(),
                         "--storage.tsdb.path=" + (dir / "tsdb").string(),
                         "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)});
  REQUIRE_MESSAGE(prometheus.wait_for_output("Server is ready to receive web requests", 60),
                  prometheus.output());
  // Prometheus' scrape manager takes up discovered targets every 5 s: convoy starts once its
  // target is active, so the run's few seconds are scraped.
  bool target_active = false;
  const auto discovery_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!target_active && std::chrono::steady_clock::now() < discovery_deadline) {
    target_active = http_get(prom_port, "/api/v1/targets").second.find(target) != std::string::npos;
    if (!target_active && prometheus.wait(0.25)) break;  // it exited
  }
  REQUIRE_MESSAGE(target_active, prometheus.output());

  const fs::path config = write_file(dir / "convoy.yaml", config_yaml(target, 4));
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  REQUIRE_MESSAGE(served_port(run) == convoy_port, run.output());
  // While the run goes on, Prometheus' API returns convoy's request counters.
  bool seen_live = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!seen_live && std::chrono::steady_clock::now() < deadline) {
    seen_live = prometheus_query(prom_port, "convoy_requests_total").Size() > 0;
    if (!seen_live && run.wait(0.25)) break;
  }
  CHECK(seen_live);
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc == 0);
  // Afterwards (the target is gone, its series stale): what Prometheus stored over the run.
  const auto requests = prometheus_query(
      prom_port, "max_over_time(convoy_requests_total{job=\"convoy\",outcome=\"ok\"}[10m])");
  REQUIRE(requests.Size() > 0);
  CHECK(std::string(requests[rapidjson::SizeType{0}]["metric"]["stage"].GetString()) == "measure");
  CHECK(requests[rapidjson::SizeType{0}]["metric"].HasMember("worker"));
  const double scraped = sum_values(requests);
  const size_t recorded = measured_records(out / "records.jsonl");
  CHECK(scraped > 0);
  CHECK(scraped <= static_cast<double>(recorded));  // a scrape may precede the last records
  const auto ttft = prometheus_query(
      prom_port, "max_over_time(convoy_time_to_first_token_seconds_count{job=\"convoy\"}[10m])");
  CHECK(sum_values(ttft) > 0);
  const auto workers =
      prometheus_query(prom_port, "max_over_time(convoy_workers{state=\"running\"}[10m])");
  CHECK(sum_values(workers) == 1);
  prometheus.signal(SIGTERM);
  CHECK(prometheus.wait(30).has_value());
}

TEST_CASE("live metrics e2e: a load profile's requests and current stage carry the stage name") {
  const fs::path dir = fresh_path("e2e-live-stages");
  std::string yaml = config_yaml("127.0.0.1:0", 1);
  yaml.replace(yaml.find("load: {"), yaml.find('\n', yaml.find("load: {")) - yaml.find("load: {"),
               "load:\n"
               "  grace_s: 5\n"
               "  stages:\n"
               "    - {name: base, mode: concurrency, concurrency: 2, duration_s: 1.5}\n"
               "    - {name: spike, mode: rate, rate: 30, duration_s: 2}");
  const fs::path config = write_file(dir / "convoy.yaml", yaml);
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", (dir / "out").string()});
  const int port = served_port(run);
  REQUIRE_MESSAGE(port > 0, run.output());
  const std::string spike_info = R"(convoy_stage_info{mode="rate",stage="spike"} 1)";
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto [status, body] = http_get(port, "/metrics");
    if (status == 200) text = body;
    if (text.find(spike_info) != std::string::npos &&
        text.find(R"(outcome="ok",stage="spike")") != std::string::npos) {
      break;
    }
    if (run.wait(0.2)) break;
  }
  INFO(text);
  CHECK(text.find(spike_info) != std::string::npos);
  CHECK(text.find(R"(convoy_stage_target{mode="rate",stage="spike"} 30)") != std::string::npos);
  CHECK(text.find(R"(convoy_stage_info{mode="concurrency",stage="base"})") == std::string::npos);
  CHECK(text.find(R"(convoy_requests_total{outcome="ok",stage="base",worker="local-0"})") !=
        std::string::npos);
  CHECK(text.find(R"(convoy_time_to_first_token_seconds_count{stage="spike"})") !=
        std::string::npos);
  const auto rc = run.wait(120);
  INFO(run.output());
  CHECK(rc == 0);
}

TEST_CASE("live metrics e2e: a busy output.metrics_listen exits 3 before anything starts") {
  LoopbackListener busy;
  const std::string listen = "127.0.0.1:" + std::to_string(busy.port());
  const fs::path dir = fresh_path("e2e-live-busy");
  const fs::path config = write_file(dir / "convoy.yaml", config_yaml(listen, 1));
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  const auto rc = run.wait(60);
  INFO(run.output());
  CHECK(rc == 3);
  CHECK(run.output().find("output.metrics_listen " + listen + ": cannot listen") !=
        std::string::npos);
  CHECK(run.output().find("another process listens there") != std::string::npos);
  CHECK(run.output().find("started convoy-mock") == std::string::npos);  // nothing started
  CHECK_FALSE(fs::exists(out));  // nothing ran, nothing written
}
