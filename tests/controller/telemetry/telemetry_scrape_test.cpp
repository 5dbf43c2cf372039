// The scraper (controller/telemetry/telemetry.hpp) against real HTTP on loopback: a tiny server,
// endpoints that refuse or never answer, a reply over the size cap, and Debian's
// prometheus-node-exporter.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "controller/report/server_metrics_json.hpp"
#include "controller/telemetry/telemetry.hpp"
#include "e2e/subprocess.hpp"
#include "e2e/tiny_http_server.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy;
using namespace convoy::telemetry;
using convoy::test::TinyHttpServer;

namespace {

// summary.json's "server_metrics" as the report writes it from the scraper's results.
std::string summary_text(Telemetry& t) {
  return controller::server_metrics_json(t.server_metrics());
}

// The run's clock in these tests: steady time moved far from the process's, so a stamp taken
// from any other clock would show.
constexpr int64_t kClockOffsetNs = int64_t{5'000'000} * 1'000'000'000;
int64_t run_clock() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
             .count() +
         kClockOffsetNs;
}

TelemetryEndpoint endpoint(std::string name, std::string url, bool required = false) {
  TelemetryEndpoint e;
  e.name = std::move(name);
  e.url = std::move(url);
  e.required = required;
  return e;
}

TelemetryConfig fast_config(double timeout_s = 2) {
  TelemetryConfig c;
  c.interval_s = 0.02;
  c.timeout_s = timeout_s;
  return c;
}

rapidjson::Document parse_doc(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("telemetry: scrapes on its own clock, writes server_metrics.jsonl and counts deltas") {
  std::mutex m;
  std::string first_request;
  TinyHttpServer server([&](const std::string& request, int index) {
    {
      std::lock_guard lock(m);
      if (first_request.empty()) first_request = request;
    }
    const std::string body = "# TYPE up gauge\nup 1\n# TYPE hits counter\nhits_total " +
                             std::to_string(index * 10) + "\nbad line here\n";
    return TinyHttpServer::reply("200 OK", "Content-Type: text/plain; version=0.0.4\r\n", body);
  });
  convoy::test::TempDir dir("convoy-telemetry-");
  auto e = endpoint("srv", server.url() + "/metrics");
  e.headers["Authorization"] = "Bearer t0ken";
  {
    // 150 ms apart: the window starts well before the second scrape.
    TelemetryConfig c = fast_config();
    c.interval_s = 0.15;
    Telemetry t(c, {e}, run_clock, dir.path() / "server_metrics.jsonl");
    CHECK(t.wait_first_round().empty());
    t.start_window(run_clock());
    // A few scrapes: wait on the file, which grows a line per scrape.
    CHECK(convoy::test::wait_for_change(
        dir.path(), [&] { return server.requests() >= 3; }, 10));
    t.stop();
    const auto summary = parse_doc(summary_text(t));
    const int scrapes = server.requests();
    const auto& ep = summary["endpoints"][0];
    CHECK(ep["scrapes"].GetInt64() == scrapes);
    // What the run hands the report: the same values typed, and their view.
    const auto results = t.results();
    REQUIRE(results);
    CHECK(controller::server_metrics_json(results->metrics) == summary_text(t));
    REQUIRE(results->view.endpoints.size() == 1);
    CHECK(results->view.endpoints[0].scrapes == scrapes);
    CHECK(ep["errors"].GetInt64() == 0);
    CHECK(ep["malformed_lines"].GetInt64() == scrapes);
    bool found = false;
    for (const auto& metric : summary["metrics"].GetArray()) {
      if (std::string(metric["name"].GetString()) != "hits_total") continue;
      found = true;
      // The first scrape (0) is the baseline before the window; each one after adds 10.
      CHECK(metric["delta"].GetDouble() == 10.0 * (scrapes - 1));
      CHECK(metric["rate_per_s"].GetDouble() > 0);
    }
    CHECK(found);
    CHECK(summary["window"]["start_ns"].GetInt64() > kClockOffsetNs);
    CHECK_FALSE(t.output_failure());
  }
  std::string lowered = first_request;
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CHECK(lowered.find("accept: text/plain;version=0.0.4") != std::string::npos);
  CHECK(first_request.find("Authorization: Bearer t0ken") != std::string::npos);

  const auto lines = convoy::test::read_jsonl(dir.path() / "server_metrics.jsonl");
  REQUIRE(lines.size() == static_cast<size_t>(server.requests()));
  int64_t previous = 0;
  for (const auto& line : lines) {
    CHECK(std::string(line["endpoint"].GetString()) == "srv");
    CHECK(line["error"].IsNull());
    CHECK(line["t_ns"].GetInt64() > kClockOffsetNs);
    CHECK(line["t_ns"].GetInt64() >= previous);
    previous = line["t_ns"].GetInt64();
    CHECK(line["samples"].Size() == 2);
    CHECK(line["malformed_lines"].GetInt64() == 1);
  }
  CHECK(std::string(lines[0]["samples"][1]["name"].GetString()) == "hits_total");
  CHECK(std::string(lines[0]["samples"][1]["type"].GetString()) == "counter");
}

TEST_CASE("telemetry: the run loop's window events are queued and applied in their order") {
  // start_window, mark_stage and mark_settle return at once (the scraper thread applies them
  // before it folds in its next scrape); the summary still has them in order, with their times.
  TinyHttpServer server([](const std::string&, int index) {
    return TinyHttpServer::reply("200 OK", "",
                                 "# TYPE hits counter\nhits_total " + std::to_string(index) + "\n");
  });
  convoy::test::TempDir dir("convoy-telemetry-events-");
  Telemetry t(fast_config(), {endpoint("srv", server.url() + "/metrics")}, run_clock,
              dir.path() / "server_metrics.jsonl");
  CHECK(t.wait_first_round().empty());
  const int64_t t0 = run_clock();
  t.start_window(t0);
  t.mark_stage("a", t0 + 1);
  t.mark_settle(t0 + 2);
  t.mark_stage("b", t0 + 3);
  CHECK(convoy::test::wait_for_change(
      dir.path(), [&] { return server.requests() >= 4; }, 10));
  t.stop();
  const auto summary = parse_doc(summary_text(t));
  CHECK(summary["window"]["start_ns"].GetInt64() == t0);
  const auto& stages = summary["stages"];
  REQUIRE(stages.Size() == 2);
  CHECK(std::string(stages[0]["name"].GetString()) == "a");
  CHECK(stages[0]["start_ns"].GetInt64() == t0 + 1);
  CHECK(stages[0]["end_ns"].GetInt64() == t0 + 2);
  CHECK(std::string(stages[1]["name"].GetString()) == "b");
  CHECK(stages[1]["start_ns"].GetInt64() == t0 + 3);
  CHECK(stages[1]["end_ns"].IsNull());
  SUBCASE("events queued after the last scrape are applied by server_metrics()") {
    t.mark_settle(t0 + 4);
    const auto later = parse_doc(summary_text(t));
    CHECK(later["stages"][1]["end_ns"].GetInt64() == t0 + 4);
  }
}

TEST_CASE("telemetry: every scrape's samples are written alike, kept, reused or dropped") {
  // Scrape 0 and 1 read the same series (the second is written from each series' cached
  // text), with NaN, +Inf, a timestamp and label escapes; max_series 2 drops the third series.
  TinyHttpServer server([&](const std::string&, int index) {
    const std::string body = "# TYPE a gauge\na{k=\"q\\\"uote\"} " + std::to_string(index) +
                             ".5 1700000000000\n# TYPE b gauge\nb NaN\n# TYPE c gauge\nc +Inf\n";
    return TinyHttpServer::reply("200 OK", "", body);
  });
  convoy::test::TempDir dir("convoy-telemetry-lines-");
  TelemetryConfig c = fast_config();
  c.max_series = 2;
  {
    Telemetry t(c, {endpoint("srv", server.url() + "/metrics")}, run_clock,
                dir.path() / "server_metrics.jsonl");
    CHECK(t.wait_first_round().empty());
    CHECK(convoy::test::wait_for_change(
        dir.path(), [&] { return server.requests() >= 2; }, 10));
    t.stop();
  }
  const auto lines = convoy::test::read_jsonl(dir.path() / "server_metrics.jsonl");
  REQUIRE(lines.size() >= 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& samples = lines[i]["samples"];
    REQUIRE(samples.Size() == 3);
    CHECK(lines[i]["dropped_series"].GetInt64() == 1);
    CHECK(std::string(samples[0]["name"].GetString()) == "a");
    CHECK(std::string(samples[0]["type"].GetString()) == "gauge");
    CHECK(std::string(samples[0]["labels"]["k"].GetString()) == "q\"uote");
    CHECK(samples[0]["value"].GetDouble() == static_cast<double>(i) + 0.5);
    CHECK(samples[0]["timestamp"].GetDouble() == 1700000000000.0);
    CHECK(std::string(samples[1]["value"].GetString()) == "NaN");
    CHECK_FALSE(samples[1].HasMember("timestamp"));
    CHECK(std::string(samples[2]["name"].GetString()) == "c");  // dropped: still written
    CHECK(std::string(samples[2]["value"].GetString()) == "+Inf");
  }
}

TEST_CASE("telemetry: an endpoint that refuses or never answers is counted, never waited on") {
  convoy::test::RefusingPort refusing;
  convoy::test::LoopbackListener silent;  // accepts into its backlog, never answers
  convoy::test::TempDir dir("convoy-telemetry-dead-");
  const auto start = std::chrono::steady_clock::now();
  Telemetry t(fast_config(0.3),
              {endpoint("refusing", refusing.url() + "/metrics", true),
               endpoint("silent", silent.url() + "/metrics")},
              run_clock, dir.path() / "server_metrics.jsonl");
  const auto failures = t.wait_first_round();
  CHECK(seconds_since(start) < 2.0);  // timeout_s + the margin, not the run's length
  REQUIRE(failures.size() == 2);
  CHECK(failures[0].required);
  CHECK(failures[0].what.find("refusing (http://127.0.0.1:") == 0);
  CHECK_FALSE(failures[1].required);
  CHECK(failures[1].what.find("within 0.3") != std::string::npos);
  const auto stop_start = std::chrono::steady_clock::now();
  t.stop();
  CHECK(seconds_since(stop_start) < 1.5);  // the last scrape is bounded by timeout_s
  const auto summary = parse_doc(summary_text(t));
  for (const auto& e : summary["endpoints"].GetArray()) {
    CHECK(e["errors"].GetInt64() >= 1);
    CHECK(e["errors"].GetInt64() == e["scrapes"].GetInt64());
    CHECK(e["last_error"].IsString());
  }
  CHECK(summary["metrics"].Size() == 0);
  for (const auto& line : convoy::test::read_jsonl(dir.path() / "server_metrics.jsonl")) {
    CHECK(line["error"].IsString());
    CHECK_FALSE(line.HasMember("samples"));
  }
}

TEST_CASE("telemetry: a reply larger than 16 MiB is a scrape error, never parsed") {
  const std::string huge(kMaxScrapeBytes + 1, '#');
  TinyHttpServer server(
      [&](const std::string&, int) { return TinyHttpServer::reply("200 OK", "", huge); });
  convoy::test::TempDir dir("convoy-telemetry-huge-");
  TelemetryConfig c = fast_config(20);
  c.interval_s = 60;  // one scrape, then the last one at stop
  Telemetry t(c, {endpoint("huge", server.url() + "/metrics")}, run_clock,
              dir.path() / "server_metrics.jsonl");
  const auto failures = t.wait_first_round();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].what.find("reply larger than 16 MiB") != std::string::npos);
  CHECK(kMaxScrapeBytes == size_t{16} << 20);
}

TEST_CASE("telemetry: a real prometheus-node-exporter on loopback is scraped") {
  const fs::path exporter = "/usr/bin/prometheus-node-exporter";
  if (!fs::exists(exporter)) {
    MESSAGE("prometheus-node-exporter is not installed (scripts/setup installs it): skipped");
    return;
  }
  int port = 0;
  {
    convoy::test::LoopbackSocket probe(convoy::test::LoopbackSocket::Mode::kBoundOnly);
    port = probe.port();
  }  // freed for the exporter to bind
  const std::string address = "127.0.0.1:" + std::to_string(port);
  convoy::test::Subprocess node({exporter.string(), "--web.listen-address=" + address,
                                 "--collector.disable-defaults", "--collector.cpu",
                                 "--collector.meminfo", "--collector.loadavg"});
  REQUIRE_MESSAGE(node.wait_for_output("Listening on", 10), node.output());
  convoy::test::TempDir dir("convoy-telemetry-node-");
  {
    Telemetry t(fast_config(), {endpoint("node", "http://" + address + "/metrics", true)},
                run_clock, dir.path() / "server_metrics.jsonl");
    const auto failures = t.wait_first_round();
    CHECK_MESSAGE(failures.empty(), (failures.empty() ? "" : failures[0].what));
    t.start_window(run_clock());
    t.stop();
    const auto summary = parse_doc(summary_text(t));
    CHECK(summary["endpoints"][0]["errors"].GetInt64() == 0);
    CHECK(summary["endpoints"][0]["malformed_lines"].GetInt64() == 0);
    std::set<std::string> types_of_interest;
    for (const auto& m : summary["metrics"].GetArray()) {
      const std::string name = m["name"].GetString();
      const std::string type = m["type"].GetString();
      if (name == "node_cpu_seconds_total" || name == "node_memory_MemTotal_bytes" ||
          name == "go_gc_duration_seconds") {
        types_of_interest.insert(name + ":" + type);
      }
    }
    CHECK(types_of_interest.count("node_cpu_seconds_total:counter") == 1);
    CHECK(types_of_interest.count("node_memory_MemTotal_bytes:gauge") == 1);
    CHECK(types_of_interest.count("go_gc_duration_seconds:summary_quantile") == 1);
  }
  const auto lines = convoy::test::read_jsonl(dir.path() / "server_metrics.jsonl");
  REQUIRE(lines.size() >= 2);  // the first scrape and the last one at stop
  CHECK(lines[0]["samples"].Size() > 20);
}
