// Answer first: the console's headline and report.html's answer box (what was tested, what came
// out, a failed run's cause at the top), the console tables within the terminal's width, and
// the charts' readability fixes (ticks, stage labels, curve labels, the search's SLO chart).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "controller/html_test_util.hpp"
#include "controller/report/headline.hpp"
#include "controller/report/insights.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/report_html.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/svg_chart.hpp"
#include "controller/report/verdict.hpp"
#include "report_records.hpp"
#include "test_time.hpp"

namespace {

using convoy::Config;
using convoy::controller::Headline;
using convoy::controller::Insight;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::StageFacts;
using convoy::controller::SummaryExtras;
using convoy::controller::Verdict;
using convoy::controller::VerdictStatus;
using namespace convoy::test;
namespace chart = convoy::controller::chart;

MetricsSnapshot answer_ok_snapshot(int requests) {
  MetricsAggregator agg{Config{}};
  agg.set_origin_ns(kS);
  for (int i = 0; i < requests; ++i) {
    convoy::proto::Record r = streamed_ok_record(kS + i * 50 * kMs);
    r.x_correlation_id = "cid-" + std::to_string(i);
    agg.add(r);
  }
  return agg.snapshot();
}

MetricsSnapshot answer_failed_snapshot() {
  MetricsAggregator agg{Config{}};
  for (int i = 0; i < 6; ++i) {
    convoy::proto::Record r;
    r.x_request_id = "rid-" + std::to_string(i);
    r.x_correlation_id = "cid-" + std::to_string(i);
    r.intended_ns = r.sent_ns = kS + i * kMs;
    r.end_ns = r.sent_ns + 2 * kMs;
    r.http_status = 404;
    r.error.kind = convoy::proto::ErrorKind::kHttpStatus;
    r.error.code = 404;
    r.error.message = "The model `gpt-4o` does not exist.";
    agg.add(r);
  }
  return agg.snapshot();
}

Insight answer_model_not_found() {
  Insight i;
  i.id = "model_not_found";
  i.severity = "error";
  i.title = "Model not found";
  i.problem = "6 requests failed with HTTP 404: the model gpt-4o does not exist.";
  i.fixes = {"Set target.model to one of the ids GET /v1/models returns."};
  return i;
}

// Stages at the given concurrencies, each [2i, 2i + 2) s from kS, TTFT growing with the level.
std::vector<StageFacts> answer_stages(const std::vector<int>& levels) {
  std::vector<StageFacts> stages;
  int index = 0;
  for (int level : levels) {
    StageFacts st;
    st.config.name = "concurrency=" + std::to_string(level);
    st.config.index = index + 1;
    st.config.value = level;
    st.config.concurrency = convoy::LoadLevel{
        static_cast<double>(level), static_cast<double>(level), convoy::RampShape::kLinear, false};
    st.start_ns = kS + index * 2 * kS;
    st.end_ns = st.start_ns + 2 * kS;
    st.settle_end_ns = st.end_ns;
    MetricsAggregator agg{Config{}};
    for (int i = 0; i < 5 * level; ++i) {
      convoy::proto::Record r = streamed_ok_record(st.start_ns + i * (2 * kS / (5 * level)));
      r.first_token_ns = r.sent_ns + (10 + 20 * level) * kMs;  // TTFT grows with the level
      r.x_correlation_id = "cid-" + std::to_string(i);
      agg.add(r);
    }
    st.metrics = agg.snapshot();
    stages.push_back(std::move(st));
    ++index;
  }
  return stages;
}

}  // namespace

TEST_CASE("the headline says what was tested and what came out") {
  Config config;
  config.name = "quickstart";
  config.target.model = "mock-model";
  config.load.concurrency = 8;
  config.load.sessions = 24;
  const MetricsSnapshot s = answer_ok_snapshot(20);
  const Headline h = convoy::controller::make_headline(config, "http://u:secret@127.0.0.1:8000", s,
                                                       Verdict{}, {}, {}, nullptr);
  CHECK(h.model == "mock-model");
  CHECK(h.target.find("secret") == std::string::npos);  // the password is redacted
  CHECK(h.endpoint == "chat, streaming");
  CHECK(h.load == "concurrency 8, until 24 conversations");
  CHECK(h.dataset.find("turns mean 4") != std::string::npos);
  CHECK(h.dataset.find("ISL mean 256 tokens (measured 64)") != std::string::npos);
  CHECK(h.results.find("20 requests ok, 0 failed") != std::string::npos);
  CHECK(h.results.find("TTFT p50 20") != std::string::npos);
  CHECK(h.answer.empty());
  CHECK(h.cause.empty());
  std::ostringstream out;
  convoy::controller::print_headline(out, config.name, h, Verdict{});
  const std::string text = out.str();
  CHECK(text.rfind("convoy | quickstart: mock-model at http://", 0) == 0);
  CHECK(text.find("verdict: pass: the run delivered the intended load") != std::string::npos);
  // Wrapped to the width, under the value.
  std::ostringstream narrow;
  convoy::controller::print_headline(narrow, config.name, h, Verdict{}, 80);
  std::istringstream lines(narrow.str());
  std::string first;
  std::getline(lines, first);  // the first line names the target, not wrapped
  int continued = 0;
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(line.size() <= 80);
    if (line.rfind(std::string(11, ' '), 0) == 0) ++continued;
  }
  CHECK(continued > 0);
}

TEST_CASE("a failed run names its cause and fix in the headline and at the top of the page") {
  Config config;
  config.target.model = "gpt-4o";
  const MetricsSnapshot s = answer_failed_snapshot();
  Verdict v;
  v.status = VerdictStatus::kFail;
  v.reasons = {"no measured request succeeded: all 6 failed (see error_summary)"};
  const std::vector<Insight> insights = {answer_model_not_found()};
  const Headline h =
      convoy::controller::make_headline(config, "http://127.0.0.1:1", s, v, insights, {}, nullptr);
  CHECK(h.results == "no request succeeded: 6 failed");
  CHECK(h.cause.rfind("Model not found: 6 requests failed", 0) == 0);
  CHECK(h.fix.find("Set target.model") != std::string::npos);

  SummaryExtras extras;
  extras.insights_json = convoy::controller::insights_to_json(insights);
  extras.verdict_json =
      R"({"status":"fail","reasons":["no measured request succeeded: all 6 failed"]})";
  extras.headline = std::make_shared<const Headline>(h);
  const std::string html = convoy::controller::report_html(s, extras);
  const size_t cause = html.find("id=\"cause\"");
  REQUIRE(cause != std::string::npos);
  // In the header, before any table; and no empty chart is drawn anywhere.
  CHECK(cause < html.find("</header>"));
  CHECK(cause < html.find("<table"));
  CHECK(html.find("Set target.model to one of the ids") < html.find("</header>"));
  CHECK(html.find("<svg") == std::string::npos);
  CHECK(html.find("id=\"distributions\"") == std::string::npos);
  // The insights and errors come before the (empty) summary.
  CHECK(html.find("id=\"insights\"") < html.find("id=\"summary\""));
  CHECK(html.find("id=\"errors\"") < html.find("id=\"summary\""));
}

TEST_CASE("a capacity search leads with its answer and a sweep names its unclean stages") {
  Config config;
  SUBCASE("search") {
    config.load.profile = convoy::ProfileKind::kSearch;
    convoy::SearchConfig sc;
    sc.low = 1;
    sc.high = 8;
    sc.step_duration_s = 30;
    sc.slo.limits["time_to_first_token"]["p99"] = 100;
    config.load.search = sc;
    std::vector<StageFacts> stages = answer_stages({8, 1, 4});
    stages[0].slo_met = false;
    stages[0].slo_failures = {"time_to_first_token p99 170 ms > 100 ms"};
    stages[1].slo_met = true;
    stages[2].slo_met = true;
    convoy::controller::SearchFacts search;
    search.config = sc;
    search.steps = {{0, 8, false}, {1, 1, true}, {2, 4, true}};
    search.max_meeting_slo = 4;
    search.min_failing = 8;
    search.complete = true;
    const Headline h = convoy::controller::make_headline(
        config, "http://127.0.0.1:1", answer_ok_snapshot(5), Verdict{}, {}, stages, &search);
    CHECK(h.load.rfind("capacity search of concurrency in [1, 8], 30 s a step", 0) == 0);
    CHECK(h.load.find("TTFT p99 <= 100 ms") != std::string::npos);
    CHECK(h.answer ==
          "highest concurrency meeting the SLO: 4; 8 missed it (time_to_first_token p99 170 ms > "
          "100 ms) (3 steps)");

    // The page: the answer in the header, and the step chart with the SLO line and markers.
    SummaryExtras extras;
    extras.profile = convoy::ProfileKind::kSearch;
    extras.stages = stages;
    extras.search = &search;
    extras.measure_start_ns = kS;
    extras.headline = std::make_shared<const Headline>(h);
    const std::string html = convoy::controller::report_html(answer_ok_snapshot(5), extras);
    CHECK(html.find("id=\"answer-text\">highest concurrency meeting the SLO: 4") <
          html.find("</header>"));
    const size_t chart_at = html.find("id=\"search-chart\"");
    REQUIRE(chart_at != std::string::npos);
    const std::string svg = html.substr(chart_at, html.find("</svg>", chart_at) - chart_at);
    CHECK(svg.find("class=\"slo-line\"") != std::string::npos);
    CHECK(svg.find("SLO: TTFT p99 &lt;= 100 ms") != std::string::npos);
    CHECK(count_of(svg, "class=\"dot met\"") == 2);
    CHECK(count_of(svg, "class=\"dot missed\"") == 1);
    // The per-stage table comes before the table pooling every stage.
    CHECK(html.find("id=\"stages\"") < html.find("id=\"summary\""));
  }
  SUBCASE("sweep") {
    config.load.profile = convoy::ProfileKind::kSweep;
    convoy::SweepConfig sw;
    sw.values = {1, 4, 8};
    sw.duration_s = 30;
    config.load.sweep = sw;
    std::vector<StageFacts> stages = answer_stages({1, 4, 8});
    // The last stage had failures: it must be named at the top.
    MetricsAggregator agg{Config{}};
    agg.add(streamed_ok_record(kS));
    convoy::proto::Record bad;
    bad.intended_ns = bad.sent_ns = kS;
    bad.end_ns = kS + kMs;
    bad.error.kind = convoy::proto::ErrorKind::kHttpStatus;
    bad.error.code = 500;
    bad.http_status = 500;
    agg.add(bad);
    stages[2].metrics = agg.snapshot();
    const Headline h = convoy::controller::make_headline(
        config, "http://127.0.0.1:1", answer_ok_snapshot(5), Verdict{}, {}, stages, nullptr);
    CHECK(h.load == "sweep of concurrency over 1, 4, 8 (30 s each)");
    CHECK(h.answer.find("peak ") == 0);
    CHECK(h.answer.find("not clean: concurrency=8 warn (1 request(s) failed (50.00%))") !=
          std::string::npos);
  }
}

TEST_CASE("console tables fit the terminal's width") {
  SUBCASE("the width: the terminal's, else COLUMNS, else 120; never below 80") {
    using convoy::controller::console_width_of;
    CHECK(console_width_of(std::nullopt, nullptr) == 120);
    CHECK(console_width_of(std::nullopt, "100") == 100);
    CHECK(console_width_of(std::nullopt, "abc") == 120);
    CHECK(console_width_of(std::nullopt, "40") == 80);
    CHECK(console_width_of(200, "90") == 200);
    CHECK(console_width_of(60, nullptr) == 80);
  }
  const MetricsSnapshot s = answer_ok_snapshot(20);
  auto widest = [](const std::string& text) {
    size_t w = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) w = std::max(w, line.size());
    return w;
  };
  SUBCASE("results: p90, min, max go first") {
    std::ostringstream wide;
    convoy::controller::print_results_table(wide, s, 120);
    CHECK(widest(wide.str()) <= 120);
    CHECK(wide.str().find("p90") != std::string::npos);
    std::ostringstream narrow;
    convoy::controller::print_results_table(narrow, s, 80);
    CAPTURE(narrow.str());
    CHECK(widest(narrow.str()) <= 80);
    CHECK(narrow.str().find("p90") == std::string::npos);
    CHECK(narrow.str().find("p99") != std::string::npos);
  }
  SUBCASE("stages: ITL p50 and TTFT p50 go first") {
    std::vector<StageFacts> stages = answer_stages({1, 4});
    stages[0].config.name = "a-very-long-stage-name-that-goes-on-and-on";
    std::ostringstream narrow;
    convoy::controller::print_stage_table(narrow, stages, 80);
    CAPTURE(narrow.str());
    CHECK(widest(narrow.str()) <= 80);
    CHECK(narrow.str().find("ITL p50") == std::string::npos);
    CHECK(narrow.str().find("TTFT p99") != std::string::npos);
  }
}

TEST_CASE("chart ticks are never scientific") {
  CHECK(chart::tick_text(10000) == "10,000");
  CHECK(chart::tick_text(2500) == "2,500");
  CHECK(chart::tick_text(2500000) == "2.5M");
  CHECK(chart::tick_text(0.25) == "0.25");
  CHECK(chart::tick_text(750) == "750");
  chart::Line line{"tokens/s", "s1", {{0, 0}, {1, 12000}, {2, 40000}}};
  const std::string svg = chart::line_svg({line}, "t", "tokens per second", "seconds");
  CHECK(svg.find("e+") == std::string::npos);
  CHECK(svg.find(">40,000<") != std::string::npos);
}

TEST_CASE("stage labels on an over-time chart never overlap") {
  chart::LineOptions o;
  // Seven sweep steps a few pixels apart, as a sweep with long settles draws them.
  for (int i = 0; i < 7; ++i)
    o.markers.push_back({0.5 + 0.1 * i, "concurrency=" + std::to_string(1 << i)});
  chart::Line line{"requests/s", "s1", {{0, 1}, {10, 2}}};
  const std::string svg = chart::line_svg({line}, "t", "per second", "seconds", o);
  struct Box {
    double left, right, y;
  };
  std::vector<Box> boxes;
  for (size_t at = svg.find("<g class=\"stage-mark\">"); at != std::string::npos;
       at = svg.find("<g class=\"stage-mark\">", at + 1)) {
    const size_t end = svg.find("</g>", at);
    const size_t text = svg.find("<text x=\"", at);
    if (text == std::string::npos || text > end) continue;  // left out: no room
    const double x = std::stod(svg.substr(text + 9));
    const double y = std::stod(svg.substr(svg.find("y=\"", text) + 3));
    const size_t open = svg.find('>', text) + 1;
    const std::string label = svg.substr(open, svg.find("</text>", open) - open);
    const bool flip =
        svg.substr(text, open - text).find("text-anchor=\"end\"") != std::string::npos;
    const double w = chart::text_width_px(label, 10);
    boxes.push_back(flip ? Box{x - w, x, y} : Box{x, x + w, y});
  }
  CHECK(count_of(svg, "<g class=\"stage-mark\">") == 7);
  CHECK(boxes.size() >= 3);  // one per row at least
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const bool same_row = boxes[i].y == boxes[j].y;
      const bool apart = boxes[i].right <= boxes[j].left || boxes[j].right <= boxes[i].left;
      CHECK((!same_row || apart));
    }
  }
}

TEST_CASE("the throughput-latency curve labels each point with its level") {
  const std::vector<StageFacts> stages = answer_stages({1, 4, 8});
  SummaryExtras extras;
  extras.profile = convoy::ProfileKind::kSweep;
  extras.stages = stages;
  extras.measure_start_ns = kS;
  const std::string html = convoy::controller::report_html(answer_ok_snapshot(5), extras);
  const size_t curve = html.find("id=\"curve\"");
  REQUIRE(curve != std::string::npos);
  for (const char* label : {">c=1<", ">c=4<", ">c=8<"}) {
    CAPTURE(label);
    CHECK(html.find(label, curve) != std::string::npos);
  }
}

TEST_CASE("aggregates show one value, not a distribution") {
  const std::string html = convoy::controller::report_html(answer_ok_snapshot(5), SummaryExtras{});
  const size_t row = html.find("title=\"total_token_throughput\"");
  REQUIRE(row != std::string::npos);
  const std::string tr = html.substr(row, html.find("</tr>", row) - row);
  CHECK(tr.find("one value for the run") != std::string::npos);
  CHECK(count_of(tr, "<td>") == 1);
}

namespace {

// `page` with a script that measures it in the browser: the page's own policy forbids scripts,
// so a copy allows inline ones. The script writes what it found as attributes of <body>:
// data-overlaps (pairs of stage labels in one chart whose boxes intersect) and data-broken
// (words in table cells that the layout split over two lines).
std::filesystem::path measured_copy(const std::filesystem::path& page) {
  std::string html = read_file(page);
  const std::string policy = "style-src 'unsafe-inline'";
  const size_t at = html.find(policy);
  REQUIRE(at != std::string::npos);
  html.replace(at, policy.size(), policy + "; script-src 'unsafe-inline'");
  html += R"js(<script>
let overlaps = 0, broken = 0, words = [];
for (const svg of document.querySelectorAll('svg')) {
  const boxes = [...svg.querySelectorAll('.stage-mark text')].map(t => t.getBoundingClientRect());
  for (let i = 0; i < boxes.length; ++i) for (let j = i + 1; j < boxes.length; ++j) {
    const a = boxes[i], b = boxes[j];
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 &&
        b.top < a.bottom - 0.5) ++overlaps;
  }
}
for (const cell of document.querySelectorAll('th, td')) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    const re = /\S+/g;
    for (let m; (m = re.exec(node.data));) {
      const r = document.createRange();
      r.setStart(node, m.index);
      r.setEnd(node, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (tops.size > 1) { ++broken; words.push(m[0]); }
    }
  }
}
document.body.setAttribute('data-overlaps', overlaps);
document.body.setAttribute('data-broken', broken);
document.body.setAttribute('data-words', words.slice(0, 5).join(' '));
</script>)js";
  const std::filesystem::path copy = page.parent_path() / ("measured-" + page.filename().string());
  std::ofstream(copy) << html;
  return copy;
}

int body_attribute(const std::string& dom, const std::string& name) {
  const size_t at = dom.find(name + "=\"");
  if (at == std::string::npos) return -1;
  return std::stoi(dom.substr(at + name.size() + 2));
}

}  // namespace

// Measured in a real browser: no two stage labels of a chart overlap, no word in a table cell is
// split over two lines (today's page drew "concurrency=1..." as one string and broke
// "concurr ency=1" in the stage table).
TEST_CASE("report.html of a sweep reads cleanly in headless Chromium") {
  if (chromium_missing()) return;
  const std::filesystem::path work =
      std::filesystem::path(CONVOY_BINARY_DIR) / "test-artifacts" / "report_answer";
  std::filesystem::create_directories(work);
  // Seven steps, the levels doubling: the stages' marks crowd at the left of every chart.
  std::vector<StageFacts> stages = answer_stages({1, 2, 4, 8, 16, 32, 64});
  for (size_t i = 0; i < stages.size(); ++i) {
    stages[i].start_ns = kS + static_cast<int64_t>(i) * kS / 5;  // 0.2 s apart
    stages[i].end_ns = stages[i].start_ns + kS / 5;
  }
  SummaryExtras extras;
  extras.profile = convoy::ProfileKind::kSweep;
  extras.stages = stages;
  extras.measure_start_ns = kS;
  extras.verdict_json = R"({"status":"pass","reasons":[]})";
  const std::filesystem::path page = work / "sweep.html";
  convoy::controller::write_report_html(page, answer_ok_snapshot(200), extras);
  const std::filesystem::path copy = measured_copy(page);
  const ChromiumRun run =
      run_chromium(work, copy, "--enable-logging=stderr --v=0 --window-size=1000,3000 --dump-dom",
                   work / "sweep-dom.html", work / "sweep-chromium.log");
  CAPTURE(run.log);
  REQUIRE(run.rc == 0);
  CHECK(count_of(run.out, "class=\"stage-mark\"") >= 14);
  CAPTURE(run.out.substr(run.out.find("data-words"), 120));
  CHECK(body_attribute(run.out, "data-overlaps") == 0);
  CHECK(body_attribute(run.out, "data-broken") == 0);
}

TEST_CASE("the run's verdict names the stages that did not pass") {
  Config config;
  config.load.profile = convoy::ProfileKind::kSweep;
  convoy::controller::RunFacts facts;
  facts.stages = answer_stages({1, 4});
  MetricsAggregator agg{Config{}};
  agg.add(streamed_ok_record(kS));
  convoy::proto::Record bad;
  bad.intended_ns = bad.sent_ns = kS;
  bad.end_ns = kS + kMs;
  bad.error.kind = convoy::proto::ErrorKind::kHttpStatus;
  bad.error.code = 500;
  bad.http_status = 500;
  agg.add(bad);
  facts.stages[1].metrics = agg.snapshot();
  const std::string url = "http://127.0.0.1:1";
  const std::filesystem::path out_dir = "/nonexistent";
  convoy::controller::ReportInputs in{config, url,   out_dir, {}, answer_ok_snapshot(10),
                                      facts,  false, false,   {}, {}};
  const Verdict v = convoy::controller::judge_run(in);
  CHECK(v.status == VerdictStatus::kWarn);
  REQUIRE_FALSE(v.reasons.empty());
  CHECK(v.reasons.back() == "stage(s) not clean: concurrency=4 warn: 1 request(s) failed (50.00%)");
}
