#include "controller/report/report_html.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "controller/html_test_util.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::Config;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::report_html;
using convoy::controller::SummaryExtras;
using convoy::controller::write_report_html;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

constexpr const char* kScriptMessage = "bad gateway <script>alert('x')</script> & more";

// A streamed request of conversation `conv`, turn `turn`, sent at `at`.
Record html_ok_record(int64_t at, uint32_t conv, uint32_t turn, int64_t ttft_ms, int64_t osl) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(at);
  r.x_correlation_id = "cid-" + std::to_string(conv);
  r.conversation_id = "conv-" + std::to_string(conv);
  r.conversation_index = conv;
  r.turn_index = turn;
  r.intended_ns = at;
  r.sent_ns = at + kMs / 2;
  r.first_byte_ns = r.sent_ns + (ttft_ms - 1) * kMs;
  r.first_token_ns = r.sent_ns + ttft_ms * kMs;
  r.second_token_ns = r.first_token_ns + 8 * kMs;
  r.last_token_ns = r.first_token_ns + (osl - 1) * 8 * kMs;
  r.end_ns = r.last_token_ns + kMs;
  for (int64_t i = 1; i < osl; ++i) r.chunk_gaps_ns.push_back(8 * kMs);
  r.input_tokens = 200 + 150 * turn;
  r.output_tokens = osl;
  r.cached_tokens = 150 * turn;
  r.usage_from_server = true;
  r.http_status = 200;
  return r;
}

Record error_record(int64_t at, int64_t status, const std::string& message, uint32_t conv) {
  Record r;
  r.x_request_id = "rid-err-" + std::to_string(at);
  r.x_correlation_id = "cid-" + std::to_string(conv);
  r.intended_ns = at;
  r.sent_ns = at;
  r.end_ns = at + 3 * kMs;
  r.http_status = status;
  r.error.kind = ErrorKind::kHttpStatus;
  r.error.code = status;
  r.error.message = message;
  return r;
}

// Twelve seconds of a multi-turn run: TTFT grows with the turn index, a few errors, one of
// them carrying markup in its message.
MetricsSnapshot realistic_snapshot() {
  Config config;
  config.slo["time_to_first_token"] = 120;
  MetricsAggregator agg(config);
  agg.set_origin_ns(kS);
  uint32_t conv = 0;
  for (int64_t t = kS; t < 13 * kS; t += 50 * kMs, ++conv) {
    for (uint32_t turn = 0; turn < 4; ++turn) {
      const int64_t ttft_ms = 40 + 15 * turn + (conv * 7919 % 60);
      agg.add(html_ok_record(t + turn * 200 * kMs, conv, turn, ttft_ms, 20 + conv % 30));
    }
  }
  for (uint32_t i = 0; i < 4; ++i) {
    agg.add(error_record(3 * kS + i * kS, 502, kScriptMessage, 9000 + i));
  }
  agg.add(error_record(5 * kS, 429, "rate limited", 9100));
  return agg.snapshot();
}

SummaryExtras realistic_extras() {
  SummaryExtras e;
  e.run_json = R"({"name":"multi-turn \"demo\"","target_url":"http://127.0.0.1:8000",)"
               R"("start":"2024-05-01T10:00:00Z","end":"2024-05-01T10:00:13Z",)"
               R"("convoy_version":"0.1.0","interrupted":false,"incomplete":false})";
  e.workers_json =
      R"([{"worker_id":"w-0","host":"node-a","state":"done","records":900,)"
      R"("clock_offset_ns":-125000,"max_cpu_percent":91.5,"max_rss_bytes":52428800,)"
      R"("legacy_open_sessions":0},{"worker_id":"w-1","host":"node-b","state":"lost",)"
      R"("records":58,"clock_offset_ns":2000000,"max_cpu_percent":40,"max_rss_bytes":41943040,)"
      R"("legacy_open_sessions":3}])";
  e.insights_json =
      R"([{"id":"prefix_cache_miss","severity":"warning","title":"Later turns miss the cache",)"
      R"("problem":"Later turns reported 0 cached tokens.","likely_causes":["routing off"],)"
      R"("investigate":["check the router <logs>"],"fixes":["set session_routing.mode: bind"],)"
      R"("affected_requests":720,"example_correlation_ids":["cid-1","cid-2"]}])";
  e.verdict_json =
      R"({"status":"warn","reasons":["worker w-0 peaked at 91% CPU","worker w-1 was lost"],)"
      R"("intended_rate_per_s":20,"achieved_rate_per_s":19.6,"ks_statistic":0.04,)"
      R"("ks_p_value":0.31})";
  return e;
}

// Three stages at concurrency 8, 1 and 4, in that (search-like) order. Stage i spans
// [2i, 2i + 2) s from the measure start (kS); TTFT and throughput grow with the level.
std::vector<convoy::controller::StageFacts> sweep_stages() {
  using convoy::LoadLevel;
  using convoy::RampShape;
  std::vector<convoy::controller::StageFacts> stages;
  int index = 0;
  for (int level : {8, 1, 4}) {
    convoy::controller::StageFacts st;
    st.config.name = "concurrency=" + std::to_string(level);
    st.config.index = index;
    st.config.value = level;
    st.config.concurrency = LoadLevel{static_cast<double>(level), static_cast<double>(level),
                                      RampShape::kLinear, false};
    st.config.duration_s = 2;
    st.start_ns = kS + index * 2 * kS;
    st.end_ns = st.start_ns + 2 * kS;
    st.settle_end_ns = st.end_ns;
    MetricsAggregator agg{Config{}};
    for (int i = 0; i < 10 * level; ++i) {
      agg.add(html_ok_record(st.start_ns + i * (2 * kS / (10 * level)), static_cast<uint32_t>(i), 0,
                             20 + 10 * level, 10));
    }
    st.metrics = agg.snapshot();
    stages.push_back(std::move(st));
    ++index;
  }
  return stages;
}

SummaryExtras staged_extras(const std::vector<convoy::controller::StageFacts>& stages,
                            convoy::ProfileKind profile) {
  SummaryExtras e = realistic_extras();
  e.profile = profile;
  e.stages = stages;
  e.measure_start_ns = kS;
  e.verdict_json = R"({"status":"fail","reasons":["aborted by load.abort_on: error rate 0.9"],)"
                   R"("settle_requests":7,"aborted_reason":"error rate 0.9"})";
  return e;
}

// The x coordinates of the first polyline after `from` in `html`.

// Structural sanity: every element the page opens is closed.
void check_balanced(const std::string& html) {
  for (const char* tag : {"section", "svg", "table", "figure", "ul", "div", "header", "main"}) {
    CAPTURE(tag);
    CHECK(count_of(html, std::string("<") + tag + " ") +
              count_of(html, std::string("<") + tag + ">") ==
          count_of(html, std::string("</") + tag + ">"));
  }
}

}  // namespace

TEST_CASE("report.html shows every section of a realistic run") {
  const MetricsSnapshot snapshot = realistic_snapshot();
  const std::string html = report_html(snapshot, realistic_extras());

  SUBCASE("a complete document with every section") {
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("</html>") != std::string::npos);
    for (const char* id : {"verdict", "summary", "distributions", "over-time", "ttft-by-turn",
                           "errors", "insights", "workers"}) {
      CAPTURE(id);
      CHECK(html.find(std::string("id=\"") + id + "\"") != std::string::npos);
    }
    check_balanced(html);
  }
  SUBCASE("the header names the run, target, times and verdict with its reasons") {
    CHECK(html.find("multi-turn &quot;demo&quot;") != std::string::npos);
    CHECK(html.find("http://127.0.0.1:8000") != std::string::npos);
    CHECK(html.find("2024-05-01T10:00:00Z") != std::string::npos);
    CHECK(html.find("2024-05-01T10:00:13Z") != std::string::npos);
    CHECK(html.find("class=\"badge warn\">warn<") != std::string::npos);
    CHECK(html.find("worker w-0 peaked at 91% CPU") != std::string::npos);
    CHECK(html.find("worker w-1 was lost") != std::string::npos);
    CHECK(html.find("achieved 19.6/s") != std::string::npos);
  }
  SUBCASE("the summary table lists every metric") {
    REQUIRE(snapshot.metrics.size() > 10);
    for (const auto& m : snapshot.metrics) {
      CAPTURE(m.tag);
      CHECK(html.find("title=\"" + m.tag + "\">" + m.header + "<") != std::string::npos);
    }
    for (const char* column : {"avg", "min", "max", "p50", "p90", "p99", "unit"}) {
      CAPTURE(column);
      CHECK(html.find(std::string(">") + column + "</th>") != std::string::npos);
    }
  }
  SUBCASE("charts: three distributions, three over-time lines, TTFT by turn") {
    REQUIRE(snapshot.distributions.size() == 3);
    CHECK(count_of(html, "<svg ") == 7);
    CHECK(html.find("aria-label=\"Time to first token distribution\"") != std::string::npos);
    CHECK(html.find("aria-label=\"Inter-token latency distribution\"") != std::string::npos);
    CHECK(html.find("aria-label=\"Request latency distribution\"") != std::string::npos);
    CHECK(count_of(html, "<polyline ") == 4);  // requests, errors, tokens, TTFT
    CHECK(html.find("aria-label=\"TTFT by turn index\"") != std::string::npos);
    CHECK(count_of(html, "class=\"bar s2\"") == 4);  // p90 bars, one per turn
  }
  SUBCASE("errors, insights and workers tables") {
    CHECK(html.find("rate limited") != std::string::npos);
    CHECK(html.find("cid-9000") != std::string::npos);
    CHECK(html.find("Later turns miss the cache") != std::string::npos);
    CHECK(html.find("set session_routing.mode: bind") != std::string::npos);
    CHECK(html.find("check the router &lt;logs&gt;") != std::string::npos);
    CHECK(html.find("node-b") != std::string::npos);
    CHECK(html.find(">91.5<") != std::string::npos);    // max CPU %
    CHECK(html.find(">-0.125<") != std::string::npos);  // clock offset in ms
  }
}

TEST_CASE("report.html of a sweep: stage table, stage marks and the throughput-latency curve") {
  const auto stages = sweep_stages();
  const std::string html =
      report_html(realistic_snapshot(), staged_extras(stages, convoy::ProfileKind::kSweep));
  check_balanced(html);
  SUBCASE("one row per stage, in the order they ran") {
    REQUIRE(html.find("id=\"stages\"") != std::string::npos);
    CHECK(count_of(html, "<tr class=\"stage-row\">") == 3);
    const size_t a = html.find(">concurrency=8<");
    const size_t b = html.find(">concurrency=1<");
    const size_t c = html.find(">concurrency=4<");
    REQUIRE(a != std::string::npos);
    CHECK(a < b);
    CHECK(b < c);
    // The name says the level: no level column (hand-written stages have one, below).
    CHECK(html.find(">concurrency 8<") == std::string::npos);
    CHECK(html.find("href=\"#stages\"") != std::string::npos);
  }
  SUBCASE("every over-time chart marks where each stage starts") {
    CHECK(count_of(html, "<g class=\"stage-mark\">") == 3 * 3);
    CHECK(html.find("<title>concurrency=1</title>") != std::string::npos);
  }
  SUBCASE("the curve: TTFT and ITL p50/p99 against output tokens/s, in the order of the load") {
    REQUIRE(html.find("id=\"curve\"") != std::string::npos);
    CHECK(html.find("aria-label=\"TTFT against output token throughput\"") != std::string::npos);
    CHECK(html.find("aria-label=\"ITL against output token throughput\"") != std::string::npos);
    CHECK(count_of(html, "<polyline ") == 4 + 4);              // over time + the curves
    CHECK(html.find("Goodput against") == std::string::npos);  // no slo in these stages
    // Joined by level (1, 4, 8), whose throughput grows: x increases along the line.
    const std::vector<double> xs = convoy::test::polyline_xs(html, html.find("id=\"curve\""));
    REQUIRE(xs.size() == 3);
    CHECK(xs[0] < xs[1]);
    CHECK(xs[1] < xs[2]);
  }
  SUBCASE("the verdict shows why the breaker stopped the run and the settle count") {
    CHECK(html.find("<dt>Aborted</dt><dd>error rate 0.9</dd>") != std::string::npos);
    CHECK(html.find("7 request(s) intended in settle windows are in no metric") !=
          std::string::npos);
  }
}

TEST_CASE("report.html of hand-written stages has the table and marks but no curve") {
  const auto stages = sweep_stages();
  const std::string html =
      report_html(realistic_snapshot(), staged_extras(stages, convoy::ProfileKind::kStages));
  CHECK(count_of(html, "<tr class=\"stage-row\">") == 3);
  CHECK(html.find(">concurrency 8<") != std::string::npos);  // the level column
  CHECK(count_of(html, "<g class=\"stage-mark\">") == 9);
  CHECK(html.find("id=\"curve\"") == std::string::npos);
  CHECK(count_of(html, "<polyline ") == 4);
  SUBCASE("a single-level run has neither") {
    const std::string plain = report_html(realistic_snapshot(), realistic_extras());
    CHECK(plain.find("id=\"stages\"") == std::string::npos);
    CHECK(plain.find("<g class=\"stage-mark\">") == std::string::npos);
    CHECK(plain.find("settle windows") == std::string::npos);
  }
}

TEST_CASE("report.html escapes every piece of data") {
  const std::string html = report_html(realistic_snapshot(), realistic_extras());
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("bad gateway &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more") !=
        std::string::npos);
  CHECK(html.find("<logs>") == std::string::npos);
}

TEST_CASE("report.html loads nothing from the network") {
  const std::string html = report_html(realistic_snapshot(), realistic_extras());
  SUBCASE("no resource attribute, link, import or url()") {
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(html.find("url(") == std::string::npos);
    CHECK(html.find("<iframe") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
  }
  SUBCASE("every href is a fragment of the page itself") {
    const std::regex href(R"re(href\s*=\s*["']?([^"'\s>]*))re", std::regex::icase);
    size_t hrefs = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), href);
         it != std::sregex_iterator(); ++it, ++hrefs) {
      CAPTURE((*it)[1].str());
      CHECK((*it)[1].str().rfind('#', 0) == 0);
    }
    CHECK(hrefs > 0);
  }
  SUBCASE("the only http URL is the target's, shown as text") {
    CHECK(count_of(html, "http://") == 1);
    CHECK(count_of(html, "https://") == 0);
    CHECK(html.find("<dd>http://127.0.0.1:8000</dd>") != std::string::npos);
  }
  SUBCASE("a content security policy forbids any fetch") {
    CHECK(html.find("Content-Security-Policy") != std::string::npos);
    CHECK(html.find("default-src 'none'") != std::string::npos);
  }
}

TEST_CASE("report.html without data") {
  Config config;
  SUBCASE("an empty snapshot and empty extras") {
    MetricsAggregator agg(config);
    const std::string html = report_html(agg.snapshot(), SummaryExtras{});
    CHECK(html.find("</html>") != std::string::npos);
    CHECK(html.find("No measured request completed.") != std::string::npos);
    CHECK(html.find("No failed requests.") != std::string::npos);
    CHECK(html.find("No worker information.") != std::string::npos);
    CHECK(html.find("class=\"badge unknown\"") != std::string::npos);
    CHECK(count_of(html, "<svg ") == 0);
    check_balanced(html);
  }
  SUBCASE("every request failed") {
    MetricsAggregator agg(config);
    for (uint32_t i = 0; i < 5; ++i) agg.add(error_record(kS + i * kMs, 500, "boom", i));
    SummaryExtras extras;
    extras.verdict_json = R"({"status":"fail","reasons":["error rate 100% exceeds 10%"]})";
    const std::string html = report_html(agg.snapshot(), extras);
    CHECK(html.find("No successful requests") != std::string::npos);
    CHECK(html.find("class=\"badge fail\">fail<") != std::string::npos);
    CHECK(html.find("error rate 100% exceeds 10%") != std::string::npos);
    CHECK(html.find(">boom<") != std::string::npos);
    // No chart: with nothing succeeded they would be empty above the errors that say why.
    CHECK(count_of(html, "<svg ") == 0);
    CHECK(html.find("id=\"errors\"") < html.find("id=\"summary\""));
    check_balanced(html);
  }
  SUBCASE("extras that are not JSON are shown as missing, not thrown") {
    MetricsAggregator agg(config);
    SummaryExtras extras;
    extras.run_json = "{not json";
    extras.workers_json = "nope";
    extras.insights_json = "{}";
    extras.verdict_json = "[]";
    std::string html;
    CHECK_NOTHROW(html = report_html(agg.snapshot(), extras));
    CHECK(html.find("No insight") != std::string::npos);
  }
}

TEST_CASE("write_report_html writes the page atomically") {
  TempDir dir("convoy-report-");
  const fs::path path = dir.path() / "report.html";
  const MetricsSnapshot snapshot = realistic_snapshot();
  const SummaryExtras extras = realistic_extras();
  write_report_html(path, snapshot, extras);
  CHECK(read_file(path) == report_html(snapshot, extras));
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CAPTURE(entry.path().string());
    ++files;
  }
  CHECK(files == 1);  // no temporary left beside it
  CHECK_THROWS(write_report_html(dir.path() / "missing" / "report.html", snapshot, extras));
}

// The page renders in a real browser without errors. Debian's chromium is installed by
// scripts/setup; without it these tests say so and check nothing else.
TEST_CASE("report.html renders in headless Chromium") {
  if (chromium_missing()) return;
  // Kept in the build tree so a developer can look at the screenshot.
  const fs::path work = fs::path(CONVOY_BINARY_DIR) / "test-artifacts" / "report_html";
  fs::create_directories(work);
  const fs::path page = work / "report.html";
  const fs::path shot = work / "shot.png";
  write_report_html(page, realistic_snapshot(), realistic_extras());

  // One launch: screenshot, the DOM on stdout, console messages in the log on stderr.
  const ChromiumRun run =
      render_page(work, page, "1280,2000", shot, work / "dom.html", work / "chromium.log");
  const std::string& dom = run.out;
  CAPTURE(run.log);
  CHECK(read_file(shot).rfind("\x89PNG", 0) == 0);
  CHECK(dom.find("class=\"badge warn\">warn</span>") != std::string::npos);
  CHECK(dom.find("worker w-1 was lost") != std::string::npos);
  CHECK(dom.find("id=\"workers\"") != std::string::npos);
  CHECK(dom.find("<polyline") != std::string::npos);
  CHECK(dom.find("<script") == std::string::npos);  // the error message stayed text
  CHECK(console_problems(run.log).empty());
}

// A sweep's page (stage table, stage marks, curves) renders too; the DOM holds what was drawn.
TEST_CASE("report.html of a sweep renders in headless Chromium") {
  if (chromium_missing()) return;
  const fs::path work = fs::path(CONVOY_BINARY_DIR) / "test-artifacts" / "report_html";
  fs::create_directories(work);
  const fs::path page = work / "sweep.html";
  const fs::path shot = work / "sweep.png";
  const auto stages = sweep_stages();
  write_report_html(page, realistic_snapshot(), staged_extras(stages, convoy::ProfileKind::kSweep));
  const ChromiumRun run = render_page(work, page, "1280,2400", shot, work / "sweep-dom.html",
                                      work / "sweep-chromium.log");
  const std::string& dom = run.out;
  CAPTURE(run.log);
  CHECK(count_of(dom, "class=\"stage-row\"") == 3);
  CHECK(count_of(dom, "class=\"stage-mark\"") == 9);
  CHECK(dom.find("id=\"curve\"") != std::string::npos);
  CHECK(count_of(dom, "<polyline") == 8);
  CHECK(console_problems(run.log).empty());
}

// The console check above could fail: a page with a script error trips it.
TEST_CASE("the Chromium console check sees a script error") {
  if (chromium_missing()) return;
  const fs::path work = fs::path(CONVOY_BINARY_DIR) / "test-artifacts" / "report_html";
  fs::create_directories(work);
  const fs::path bad = work / "bad.html";
  {
    std::ofstream out(bad);
    out << "<!DOCTYPE html><html><body><script>no_such_function();</script></body></html>";
  }
  const ChromiumRun run = run_chromium(work, bad, "--enable-logging=stderr --v=0 --dump-dom",
                                       work / "bad.out", work / "bad.log");
  const auto problems = console_problems(run.log);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("Uncaught ReferenceError") != std::string::npos);
}
