// report.html's Server section and the console's server table, fed
// server_metrics JSON by hand; the page is also rendered in headless Chromium.
#include "controller/report/server_section.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "controller/html_test_util.hpp"
#include "controller/report/report_html.hpp"
#include "server_metrics_fixture.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

using namespace convoy::controller;
using namespace convoy::test;
namespace fs = std::filesystem;

namespace {

// The section's text: from id="server" to its </section>.
std::string server_part(const std::string& html) {
  const size_t begin = html.find("<section id=\"server\"");
  if (begin == std::string::npos) return {};
  return html.substr(begin, html.find("</section>", begin) - begin);
}

// 12 s of requests, one every 100 ms, each 300 ms long with a 40 ms TTFT.
MetricsSnapshot client_snapshot() {
  MetricsAggregator agg{convoy::Config{}};
  agg.set_origin_ns(kS);
  for (int i = 0; i < 120; ++i) {
    convoy::proto::Record r;
    r.sent_ns = kS + i * 100 * kMs;
    r.first_byte_ns = r.first_token_ns = r.sent_ns + 40 * kMs;
    r.second_token_ns = r.first_token_ns + 10 * kMs;
    r.last_token_ns = r.sent_ns + 290 * kMs;
    r.end_ns = r.sent_ns + 300 * kMs;
    r.output_tokens = 20;
    r.http_status = 200;
    agg.add(r);
  }
  return agg.snapshot();
}

// Three endpoints: vLLM (queue, KV, TTFT, preemptions), DCGM (two GPUs), one that never
// answered. 20 scrapes, one a second: the server's axis runs past the client's 12 s.
std::string three_endpoints() {
  GaugeSpec waiting = gauge("vllm", "vllm:num_requests_waiting", "requests_waiting",
                            "requests waiting (vLLM)", "requests");
  waiting.avg = 2;
  waiting.p99 = 6;
  waiting.max = 6;
  waiting.timeline = gauge_timeline(20, [](int i) { return i % 7; });
  GaugeSpec running = gauge("vllm", "vllm:num_requests_running", "requests_running",
                            "requests running (vLLM)", "requests");
  running.timeline = gauge_timeline(20, [](int) { return 3.0; });
  GaugeSpec kv =
      gauge("vllm", "vllm:kv_cache_usage_perc", "kv_usage", "KV cache usage (vLLM)", "fraction");
  kv.avg = 0.5;
  kv.max = 0.7;
  kv.timeline = gauge_timeline(20, [](int i) { return 0.3 + 0.02 * i; });
  std::vector<std::string> metrics = {
      gauge_entry(waiting),
      gauge_entry(running),
      gauge_entry(kv),
      counter_entry("vllm", "vllm:num_preemptions_total", "preemptions", "preemptions (vLLM)", 4,
                    0.2),
      ttft_histogram_entry(
          "vllm", "vllm:time_to_first_token_seconds",
          {{0.01, 0}, {0.025, 10}, {0.05, 100}, {1e300, 100}},
          histogram_timeline(
              20, [](int) { return 0.03; }, [](int i) { return i == 4 ? std::nan("") : 0.045; })),
      R"({"endpoint":"vllm","name":"process_cpu_seconds_total","type":"counter","labels":{},)"
      R"("samples":20,"delta":3,"rate_per_s":0.15,"resets":0,"last":9})"};
  for (const char* gpu : {"0", "1"}) {
    GaugeSpec util = gauge("dcgm", "DCGM_FI_DEV_GPU_UTIL", "gpu_util", "GPU utilisation", "%");
    util.labels = std::string(R"({"gpu":")") + gpu + "\"}";
    util.avg = 80;
    util.max = 100;
    util.timeline = gauge_timeline(20, [](int i) { return 50.0 + 2 * i; });
    metrics.push_back(gauge_entry(util));
  }
  return server_metrics(
      {endpoint_entry("vllm", 20, 0), endpoint_entry("dcgm", 20, 0),
       endpoint_entry("down", 20, 20, "connect: refused <script>alert(1)</script>")},
      metrics);
}

SummaryExtras extras_with(std::string json) {
  SummaryExtras e;
  e.server = telemetry_of_json(std::move(json));
  return e;
}

}  // namespace

TEST_CASE("report.html's Server section draws each endpoint's headline series over time") {
  const MetricsSnapshot snapshot = client_snapshot();
  const std::string html = report_html(snapshot, extras_with(three_endpoints()));
  const std::string server = server_part(html);
  REQUIRE_FALSE(server.empty());
  CHECK(html.find("<a href=\"#server\">Server</a>") != std::string::npos);
  // Client: TTFT p50 + p99, in flight. vllm: queue (client in flight, waiting, running), TTFT
  // (client p50/p99, server p50/p99), KV usage. dcgm: GPU utilisation (SM active absent).
  CHECK(count_of(server, "<polyline ") == 3 + 3 + 4 + 1 + 1);
  CHECK(count_of(server, "<figure>") == 2 + 3 + 1);
  CHECK(count_of(server, "class=\"server-endpoint\"") == 3);
  // Every headline row: 3 gauges, a counter, a histogram on vllm; two GPUs on dcgm.
  CHECK(count_of(server, "class=\"server-row\"") == 7);
  CHECK(server.find("process_cpu_seconds_total") == std::string::npos);  // not a headline
  CHECK(server.find("Every scrape failed (20)") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(server.find("&lt;script&gt;") != std::string::npos);
  // The KV fraction shows in percent, the histogram's seconds in ms.
  CHECK(server.find("<td>50</td><td>0</td><td>0</td><td>70</td><td>-</td><td>-</td>"
                    "<td class=\"text\">%</td>") != std::string::npos);
  CHECK(server.find("<td>100</td><td class=\"text\">ms</td>") != std::string::npos);
}

TEST_CASE("report.html's over-time and Server charts share one time axis") {
  const MetricsSnapshot snapshot = client_snapshot();
  const SummaryExtras extras = extras_with(three_endpoints());
  CHECK(server_axis_end_s(snapshot, extras) == doctest::Approx(19.5));  // the last scrape
  const std::string html = report_html(snapshot, extras);
  // Requests/s over time and the client's requests in flight: both 1 s buckets from the
  // measure start, so the same seconds must land on the same pixels.
  const std::vector<double> over_time =
      convoy::test::polyline_xs(html, html.find("id=\"over-time\""));
  const std::vector<double> in_flight = convoy::test::polyline_xs(
      html, html.find("<figcaption>Client requests in flight</figcaption>"));
  REQUIRE(over_time.size() >= 2);
  REQUIRE(in_flight.size() >= 2);
  CHECK(over_time[0] == doctest::Approx(in_flight[0]));
  CHECK(over_time[1] == doctest::Approx(in_flight[1]));
  SUBCASE("without telemetry the over-time charts fit their own data, as before") {
    CHECK(server_axis_end_s(snapshot, SummaryExtras{}) == 0);
    const std::string plain = report_html(snapshot, SummaryExtras{});
    CHECK(plain.find("id=\"server\"") == std::string::npos);
    CHECK(plain.find("href=\"#server\"") == std::string::npos);
    CHECK(convoy::test::polyline_xs(plain, plain.find("id=\"over-time\""))[0] > over_time[0]);
  }
}

TEST_CASE("report.html's Server section for an endpoint without headline series") {
  const std::string json = server_metrics(
      {endpoint_entry("node", 5, 0)},
      {R"({"endpoint":"node","name":"node_load1","type":"gauge","labels":{},"samples":5,)"
       R"("min":0,"avg":1,"p50":1,"p99":1,"max":1,"last":1})"});
  const std::string server = server_part(report_html(client_snapshot(), extras_with(json)));
  CHECK(server.find("No headline series over time (1 other series recorded") != std::string::npos);
  CHECK(count_of(server, "class=\"server-row\"") == 0);
  CHECK(count_of(server, "<polyline ") == 3);  // the client's lines only
  CHECK(server_section_html(client_snapshot(), SummaryExtras{}).empty());  // no telemetry
}

TEST_CASE("the console's server table lists each endpoint's headline figures") {
  std::ostringstream out;
  print_server_table(out, view_of_json(three_endpoints()));
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.rfind("convoy | server metrics\n", 0) == 0);
  CHECK(text.find("vllm (http://127.0.0.1:9/vllm/metrics): 20 scrapes, 0 errors\n") !=
        std::string::npos);
  CHECK(text.find("every scrape failed: connect: refused") != std::string::npos);
  // Waiting first; the KV fraction in percent; the counter's rate and total; the histogram
  // in ms with its observation count.
  CHECK(text.find("requests waiting (vLLM)") < text.find("KV cache usage (vLLM)"));
  CHECK(text.find("preemptions (vLLM)") != std::string::npos);
  CHECK(text.find("0.20       4.00") != std::string::npos);
  CHECK(text.find("GPU utilisation {gpu=1}") != std::string::npos);
  CHECK(text.find("process_cpu_seconds_total") == std::string::npos);
  std::ostringstream none;
  print_server_table(none, ServerMetricsView{});
  CHECK(none.str().empty());
}

TEST_CASE("the console's server table stops at kMaxServerTableRows rows per endpoint") {
  std::vector<std::string> metrics;
  for (int i = 0; i < 14; ++i) {
    GaugeSpec g = gauge("dcgm", "DCGM_FI_DEV_GPU_UTIL", "gpu_util", "GPU utilisation", "%");
    g.labels = R"({"gpu":")" + std::to_string(i) + "\"}";
    g.avg = g.max = 50;  // a series that stayed 0 gets no row (the next test)
    metrics.push_back(gauge_entry(g));
  }
  std::ostringstream out;
  print_server_table(out, view_of_json(server_metrics({endpoint_entry("dcgm", 3, 0)}, metrics)));
  CHECK(count_of(out.str(), "GPU utilisation {gpu=") == kMaxServerTableRows);
  CHECK(out.str().find("(4 more headline series in summary.json server_metrics)") !=
        std::string::npos);
}

// A mock run exports each quantity in three vocabularies (vLLM's, Dynamo's, its own), per
// worker, mostly 0: the page shows one vocabulary, folds the per-worker rows, counts the zeros in
// one line, and the running count is not added up across vocabularies.
TEST_CASE("the Server section collapses zero series and takes one vocabulary per quantity") {
  std::vector<std::string> metrics;
  for (const char* w : {"0", "1"}) {
    GaugeSpec running = gauge("mock", "vllm:num_requests_running", "requests_running",
                              "requests running (vLLM)", "requests");
    running.labels = std::string(R"({"engine":")") + w + "\"}";
    running.avg = running.max = 4;
    running.timeline = gauge_timeline(4, [](int) { return 4.0; });
    metrics.push_back(gauge_entry(running));
    GaugeSpec own = gauge("mock", "convoy_mock_worker_active_sequences", "requests_running",
                          "sequences running (convoy-mock)", "requests");
    own.labels = std::string(R"({"worker":")") + w + "\"}";
    own.avg = own.max = 4;
    own.timeline = gauge_timeline(4, [](int) { return 4.0; });
    metrics.push_back(gauge_entry(own));
    GaugeSpec queued = gauge("mock", "convoy_mock_worker_queued_requests", "requests_waiting",
                             "requests queued (convoy-mock)", "requests");
    queued.labels = std::string(R"({"worker":")") + w + "\"}";
    queued.timeline = gauge_timeline(4, [](int) { return 0.0; });
    metrics.push_back(gauge_entry(queued));
  }
  const std::string html = report_html(
      client_snapshot(), extras_with(server_metrics({endpoint_entry("mock", 4, 0)}, metrics)));
  const std::string server = server_part(html);
  // Two engines at 4 each: 8 running, not 16 (the mock's own names repeat the same requests).
  const size_t chart = server.find("aria-label=\"Queue depth and requests in flight\"");
  REQUIRE(chart != std::string::npos);
  CHECK(server.find(", vllm:num_requests_running</span>") != std::string::npos);
  CHECK(server.find("convoy_mock_worker_active_sequences", chart) > server.find("</svg>", chart));
  const size_t running = server.find("<polyline class=\"line s3\"", chart);
  REQUIRE(running != std::string::npos);
  const std::vector<double> ys = [&] {
    std::vector<double> out;
    const size_t begin = server.find("points=\"", running) + 8;
    std::istringstream in(server.substr(begin, server.find('"', begin) - begin));
    for (std::string p; in >> p;) out.push_back(std::stod(p.substr(p.find(',') + 1)));
    return out;
  }();
  REQUIRE_FALSE(ys.empty());
  // The y axis tops at 8 (a nice step over 8 requests): the line sits at the top, y = 28.
  CHECK(ys.front() == doctest::Approx(28.0));
  CHECK(server.find(
            "2 series were 0 the whole run: <code>convoy_mock_worker_queued_requests</code>") !=
        std::string::npos);
  CHECK(server.find("<details class=\"per-labels\">") != std::string::npos);
  CHECK(server.find("<details class=\"other-vocabularies\">") != std::string::npos);
  std::ostringstream console;
  print_server_table(console,
                     view_of_json(server_metrics({endpoint_entry("mock", 4, 0)}, metrics)));
  CHECK(
      console.str().find("(2 series stayed 0; 2 repeat them under other names: in summary.json)") !=
      std::string::npos);
  CHECK(console.str().find("sequences running (convoy-mock)") == std::string::npos);
}

// The section renders in a real browser: the DOM Chromium built holds the charts drawn.
TEST_CASE("report.html's Server section renders in headless Chromium") {
  if (chromium_missing()) return;
  const fs::path work = fs::path(CONVOY_BINARY_DIR) / "test-artifacts" / "server_section";
  fs::create_directories(work);
  const fs::path page = work / "report.html";
  write_report_html(page, client_snapshot(), extras_with(three_endpoints()));
  const ChromiumRun run =
      run_chromium(work, page, "--enable-logging=stderr --v=0 --window-size=1280,3000 --dump-dom",
                   work / "dom.html", work / "chromium.log");
  const std::string& dom = run.out;
  const std::string& log = run.log;
  CAPTURE(log);
  CHECK(run.rc == 0);
  const std::string server = server_part(dom);
  REQUIRE_FALSE(server.empty());
  CHECK(count_of(server, "<polyline") == 12);
  CHECK(count_of(server, "class=\"server-endpoint\"") == 3);
  CHECK(server.find("<script") == std::string::npos);
  CHECK(log.find("Content Security Policy") == std::string::npos);
  CHECK(log.find("Uncaught") == std::string::npos);
}

TEST_CASE("make_server_telemetry keeps every entry typed and derives the report's view") {
  const auto results = telemetry_of_json(three_endpoints());
  REQUIRE(results);
  CHECK(results->view.present);
  CHECK(results->view.endpoints.size() == 3);
  // Every entry stays in the typed value (summary.json writes them all); the view keeps those
  // with a role or headline and counts the others per endpoint.
  REQUIRE(results->metrics.metrics.size() == results->view.metrics.size() + 1);
  const ServerMetricEntry& cpu = results->metrics.metrics[5];
  REQUIRE(cpu.name == "process_cpu_seconds_total");
  CHECK(cpu.kind == ServerMetricEntry::Kind::kCounter);
  CHECK(cpu.window.delta == 3);
  CHECK(results->view.endpoints[0].other_series == 1);
  for (const ServerSeries& s : results->view.metrics) CHECK(s.name != cpu.name);
}
