// `convoy compare` on hand-written summary.json fixtures: the relative
// differences and their direction, both shapes of aggregate metrics, the config differences,
// stages as columns, per-turn TTFT from records.jsonl, the curve, the refusals (exit 2 naming
// the folder), compare.json and compare.html (also rendered in headless Chromium).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/compare/compare.hpp"
#include "controller/compare/compare_output.hpp"
#include "controller/compare/comparison.hpp"
#include "controller/compare/run_loader.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::controller::compare;
using convoy::test::read_file;
using convoy::test::TempDir;

namespace {

// A distribution in summary.json's layout, every percentile at `p50`, p99 at `p99`.
std::string dist(const char* tag, double p50, double p99) {
  std::ostringstream out;
  out << "\"" << tag << "\": {\"unit\": \"ms\", \"avg\": " << p50 << ", \"min\": " << p50 / 2
      << ", \"max\": " << p99 * 1.5 << ", \"p1\": " << p50 / 2 << ", \"p5\": " << p50 / 2
      << ", \"p10\": " << p50 * 0.6 << ", \"p25\": " << p50 * 0.8 << ", \"p50\": " << p50
      << ", \"p75\": " << p50 * 1.2 << ", \"p90\": " << p99 * 0.8 << ", \"p95\": " << p99 * 0.9
      << ", \"p99\": " << p99 << ", \"std\": 1, \"count\": 100, \"sum\": " << p50 * 100 << "}";
  return out.str();
}

// An aggregate: {unit, avg} (AIPerf's shape), or with every statistic key (before it).
std::string aggregate(const char* tag, const char* unit, double v, bool full = false) {
  std::ostringstream out;
  out << "\"" << tag << "\": {\"unit\": \"" << unit << "\", \"avg\": " << v;
  if (full) {
    out << ", \"min\": " << v << ", \"max\": " << v << ", \"p50\": " << v << ", \"p99\": " << v
        << ", \"std\": 0, \"count\": 1, \"sum\": " << v;
  }
  return out.str() + "}";
}

struct Fixture {
  double request_throughput = 10;
  double output_token_throughput = 320;
  double ttft_p50 = 20;
  double ttft_p99 = 40;
  double requests = 100;
  double errors = 0;
  std::string config_yaml = "name: a\\nload:\\n  mode: concurrency\\n  concurrency: 8\\n";
  bool full_aggregates = false;
  std::string extra;  // more top-level members, each followed by a comma
};

std::string summary_text(const Fixture& f) {
  const bool full = f.full_aggregates;
  return "{" + f.extra + dist("time_to_first_token", f.ttft_p50, f.ttft_p99) + ", " +
         dist("time_to_first_token_first_turn", f.ttft_p50 / 2, f.ttft_p99 / 2) + ", " +
         dist("time_to_first_token_later_turns", f.ttft_p50 * 2, f.ttft_p99 * 2) + ", " +
         dist("inter_token_latency", 5, 9) + ", " + dist("request_latency", 200, 400) + ", " +
         aggregate("request_throughput", "requests/sec", f.request_throughput, full) + ", " +
         aggregate("output_token_throughput", "tokens/sec", f.output_token_throughput, full) +
         ", " + aggregate("request_count", "requests", f.requests, full) + ", " +
         aggregate("error_request_count", "requests", f.errors, full) +
         ", \"error_summary\": [], \"run\": {\"name\": \"a\", \"convoy_version\": \"0.1.0\", "
         "\"config_yaml\": \"" +
         f.config_yaml + "\"}}";
}

// A run folder holding `summary`.
fs::path write_run(const fs::path& parent, const std::string& name, const std::string& summary) {
  const fs::path dir = parent / name;
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << summary;
  return dir;
}

// One stage of a sweep, in summary.json's stages[] layout.
std::string stage_text(const std::string& name, double value, double tput, double ttft_p99) {
  std::ostringstream out;
  out << "{\"name\": \"" << name << "\", \"index\": 0, \"value\": " << value
      << ", \"config\": {\"mode\": \"concurrency\", \"concurrency\": " << value
      << ", \"duration_s\": 5}, " << dist("time_to_first_token", ttft_p99 / 2, ttft_p99) << ", "
      << aggregate("output_token_throughput", "tokens/sec", tput) << ", "
      << aggregate("request_count", "requests", 50) << "}";
  return out.str();
}

std::string sweep_extra(const std::vector<std::string>& stages) {
  std::string text = "\"stages\": [";
  for (size_t i = 0; i < stages.size(); ++i) text += (i ? ", " : "") + stages[i];
  return text + "], ";
}

const Row* find_row(const std::vector<Row>& rows, const std::string& tag, const std::string& stat) {
  for (const Row& r : rows) {
    if (r.tag == tag && r.stat == stat) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("compare: a difference is relative to the baseline and judged by the metric's way") {
  Fixture base;
  Fixture other;
  other.request_throughput = 11;  // +10%: higher is better
  other.ttft_p50 = 30;            // +50%: lower is better
  other.requests = 110;           // neither
  const std::vector<Column> columns = {column_from_summary("a", summary_text(base)),
                                       column_from_summary("b", summary_text(other))};
  const std::vector<Row> rows = headline_rows(columns);
  const Row* tput = find_row(rows, "request_throughput", "avg");
  REQUIRE(tput);
  CHECK_FALSE(tput->diff_pct[0]);
  REQUIRE(tput->diff_pct[1]);
  CHECK(*tput->diff_pct[1] == doctest::Approx(10.0));
  CHECK(judgement(tput->better, tput->diff_pct[1]) == "better");
  const Row* ttft = find_row(rows, "time_to_first_token", "p50");
  REQUIRE(ttft);
  CHECK(*ttft->diff_pct[1] == doctest::Approx(50.0));
  CHECK(diff_text(ttft->diff_pct[1]) == "+50.0%");
  CHECK(judgement(ttft->better, ttft->diff_pct[1]) == "worse");
  CHECK(judgement(Better::kLower, -3.0) == "better");
  CHECK(judgement(Better::kLower, 0.01) == "same");
  const Row* count = find_row(rows, "request_count", "avg");
  REQUIRE(count);
  CHECK(judgement(count->better, count->diff_pct[1]).empty());
  CHECK_FALSE(find_row(rows, "goodput", "avg"));  // no column has it: no row
  CHECK_FALSE(relative_diff_pct(0.0, 5.0));       // no percentage of nothing
  CHECK(diff_text(-3.04) == "-3.0%");
}

TEST_CASE("compare: aggregates are read through avg in both summary.json shapes") {
  Fixture old_shape;
  old_shape.full_aggregates = true;
  old_shape.requests = 90;
  old_shape.errors = 10;
  Fixture new_shape;
  new_shape.request_throughput = 12;
  const Column a = column_from_summary("a", summary_text(old_shape));
  const Column b = column_from_summary("b", summary_text(new_shape));
  CHECK(a.value("request_throughput", "avg") == 10.0);
  CHECK(b.value("request_throughput", "avg") == 12.0);
  CHECK(a.value("request_count", "avg") == 90.0);
  CHECK(a.value("error_rate", "avg") == doctest::Approx(10.0));  // derived, in %
  CHECK(b.value("error_rate", "avg") == 0.0);
  CHECK_FALSE(b.value("request_throughput", "p50"));
}

TEST_CASE("compare: values are read from summary.json exactly, to the last bit") {
  // 192.14062285714287 is a number rapidjson's default parsing reads one unit in the last place
  // off (as 192.14062285714289); compare.json would then show another value than the run's.
  const std::string exact_text = "192.14062285714287";
  std::string text = summary_text(Fixture{});
  const std::string from = R"("request_throughput": {"unit": "requests/sec", "avg": 10})";
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(),
               R"("request_throughput": {"unit": "requests/sec", "avg": )" + exact_text + "}");
  const Column c = column_from_summary("a", text);
  REQUIRE(c.value("request_throughput", "avg"));
  CHECK(*c.value("request_throughput", "avg") == std::strtod(exact_text.c_str(), nullptr));
}

TEST_CASE("compare: a folder that is not a convoy run is refused by name with exit 2") {
  TempDir dir("convoy-compare-");
  const fs::path good = write_run(dir.path(), "good", summary_text(Fixture{}));
  const fs::path empty = dir.path() / "empty-folder";
  fs::create_directories(empty);
  const fs::path aiperf = write_run(dir.path(), "aiperf-run", "{\"request_throughput\": {}}");
  const fs::path broken = write_run(dir.path(), "broken-run", "{\"run\": ");
  for (const fs::path& bad : {empty, aiperf, broken, dir.path() / "no-such-folder"}) {
    CAPTURE(bad.string());
    std::ostringstream out, err;
    const int rc =
        compare_main({good.string(), bad.string()}, (dir.path() / "out").string(), out, err);
    CHECK(rc == 2);
    CHECK(err.str().find(bad.string()) != std::string::npos);
    CHECK(err.str().find("is not a convoy run") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path() / "out" / "compare.json"));
  }
}

TEST_CASE("compare: fewer than two runs and no stages is a usage error") {
  TempDir dir("convoy-compare-");
  const fs::path one = write_run(dir.path(), "one", summary_text(Fixture{}));
  std::ostringstream out, err;
  CHECK(compare_main({one.string()}, (dir.path() / "out").string(), out, err) == 2);
  CHECK(err.str().find("needs two or more run folders") != std::string::npos);
  CHECK(err.str().find("0 stage(s)") != std::string::npos);
  std::ostringstream out2, err2;
  CHECK(compare_main({}, (dir.path() / "out").string(), out2, err2) == 2);
  CHECK(err2.str().find("RUN_DIR RUN_DIR...") != std::string::npos);
}

TEST_CASE("compare: one run with stages compares its stages") {
  TempDir dir("convoy-compare-");
  Fixture f;
  // Listed out of load order: the curve follows the load, the columns the order they ran.
  f.extra = sweep_extra(
      {stage_text("c4", 4, 400, 60), stage_text("c1", 1, 100, 20), stage_text("c2", 2, 200, 30)});
  const fs::path run = write_run(dir.path(), "sweep", summary_text(f));
  const Comparison cmp = load_comparison({run.string()});
  CHECK(cmp.stages_mode);
  REQUIRE(cmp.columns.size() == 3);
  CHECK(cmp.columns[0].name == "c4");
  CHECK(cmp.columns[1].value("output_token_throughput", "avg") == 100.0);
  const Curve curve = throughput_latency_curve(cmp.columns, true);
  REQUIRE(curve.series.size() == 1);
  REQUIRE(curve.series[0].points.size() == 3);
  CHECK(curve.series[0].points[0].name == "c1");
  CHECK(curve.series[0].points[2].x == 400.0);
  CHECK(curve.series[0].points[2].ttft_p99_ms == 60.0);
  // The stages' own config differs by concurrency only.
  const auto diffs = config_differences(cmp.columns);
  REQUIRE(diffs.size() == 1);
  CHECK(diffs[0].key == "concurrency");
  CHECK(diffs[0].values[1] == "1");
}

TEST_CASE("compare: config keys whose value differs from the baseline are listed") {
  Fixture a;
  Fixture b;
  b.config_yaml =
      "name: a\\nload:\\n  mode: concurrency\\n  concurrency: 16\\n  sweep:\\n    concurrency: "
      "[1, 2]\\n";
  const std::vector<Column> columns = {column_from_summary("a", summary_text(a)),
                                       column_from_summary("b", summary_text(b))};
  CHECK(columns[0].config.at("load.mode") == "concurrency");
  const std::vector<ConfigDiff> diffs = config_differences(columns);
  REQUIRE(diffs.size() == 2);
  CHECK(diffs[0].key == "load.concurrency");
  CHECK(diffs[0].values[0] == "8");
  CHECK(diffs[0].values[1] == "16");
  CHECK(diffs[1].key == "load.sweep.concurrency");
  CHECK_FALSE(diffs[1].values[0]);  // the baseline has no such key
  CHECK(diffs[1].values[1] == "[1, 2]");
}

TEST_CASE("compare: per-turn TTFT comes from records.jsonl when the run kept it") {
  Column run = column_from_summary("a", summary_text(Fixture{}));
  REQUIRE(run.ttft_by_turn.size() == 2);  // from the summary: first and later turns
  CHECK(run.ttft_by_turn_source == "summary.json");
  CHECK(run.ttft_by_turn[1].label == "1+");
  auto line = [](int turn, double ttft, const std::string& more = ", \"error\": null") {
    return "{\"phase\": \"measure\", \"turn_index\": " + std::to_string(turn) +
           ", \"metrics\": {\"ttft_ms\": " + std::to_string(ttft) + "}" + more + "}\n";
  };
  std::istringstream records(
      line(0, 10) + line(0, 12) + line(0, 14) + line(1, 30) + line(2, 50) +
      line(2, 999, ", \"error\": null, \"settle\": \"s1\"") +  // settle: in no metric
      line(1, 999, ", \"error\": {\"kind\": \"http\"}") +      // failed
      line(1, 999, ", \"error\": null, \"close_request\": true") +
      "{\"phase\": \"warmup\", \"turn_index\": 0, \"metrics\": {\"ttft_ms\": 999}}\n"
      "not json\n" +
      line(40, 70));  // turn 31 and later share a group
  CHECK(add_turns_from_records(records, run) == 6);
  CHECK(run.ttft_by_turn_source == "records.jsonl");
  REQUIRE(run.ttft_by_turn.size() == 32);
  CHECK(run.ttft_by_turn[0].count == 3);
  CHECK(run.ttft_by_turn[0].p50_ms == doctest::Approx(12.0).epsilon(0.002));
  CHECK(run.ttft_by_turn[2].p90_ms == doctest::Approx(50.0).epsilon(0.002));
  CHECK(run.ttft_by_turn[5].count == 0);
  CHECK(run.ttft_by_turn[31].label == "31+");
  CHECK(run.ttft_by_turn[31].count == 1);
}

TEST_CASE("compare: two sweeps get one curve each, plain runs one curve by throughput") {
  Fixture s1;
  s1.extra = sweep_extra({stage_text("c1", 1, 100, 20), stage_text("c2", 2, 200, 30)});
  Fixture s2;
  s2.extra = sweep_extra({stage_text("c1", 1, 150, 15), stage_text("c2", 2, 300, 25)});
  const std::vector<Column> sweeps = {column_from_summary("a", summary_text(s1)),
                                      column_from_summary("b", summary_text(s2))};
  const Curve per_run = throughput_latency_curve(sweeps, false);
  REQUIRE(per_run.series.size() == 2);
  CHECK(per_run.series[1].name == "b");
  CHECK(per_run.series[1].points[1].x == 300.0);
  Fixture fast;
  fast.output_token_throughput = 500;
  Fixture slow;
  slow.output_token_throughput = 100;
  const Curve plain = throughput_latency_curve({column_from_summary("fast", summary_text(fast)),
                                                column_from_summary("slow", summary_text(slow))},
                                               false);
  REQUIRE(plain.series.size() == 1);
  REQUIRE(plain.series[0].points.size() == 2);
  CHECK(plain.series[0].points[0].name == "slow");  // by x
  CHECK(plain.x_tag == "output_token_throughput");
}

TEST_CASE("compare: the console table and compare.json carry values and differences") {
  TempDir dir("convoy-compare-");
  Fixture other;
  other.ttft_p50 = 30;
  const fs::path a = write_run(dir.path(), "run-a", summary_text(Fixture{}));
  const fs::path b = write_run(dir.path(), "run-b", summary_text(other));
  const fs::path out_dir = dir.path() / "cmp";
  std::ostringstream out, err;
  REQUIRE(compare_main({a.string(), b.string()}, out_dir.string(), out, err) == 0);
  CAPTURE(out.str());
  CHECK(out.str().find("baseline: run-a") != std::string::npos);
  CHECK(out.str().find("30 (+50.0% worse)") != std::string::npos);
  CHECK(out.str().find("load.concurrency") == std::string::npos);  // same config
  CHECK(err.str().empty());
  const auto doc = convoy::test::read_json(out_dir / "compare.json");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["mode"].GetString()) == "runs");
  CHECK(std::string(doc["baseline"].GetString()) == "run-a");
  bool found = false;
  for (const auto& m : doc["metrics"].GetArray()) {
    if (std::string(m["tag"].GetString()) != "time_to_first_token" ||
        std::string(m["stat"].GetString()) != "p50") {
      continue;
    }
    found = true;
    CHECK(m["values"][1].GetDouble() == 30.0);
    CHECK(m["diff_pct"][0].IsNull());
    CHECK(m["diff_pct"][1].GetDouble() == doctest::Approx(50.0));
    CHECK(std::string(m["judgement"][1].GetString()) == "worse");
    CHECK(std::string(m["better"].GetString()) == "lower");
  }
  CHECK(found);
  CHECK(doc["distributions"]["time_to_first_token"][1]["p50"].GetDouble() == 30.0);
  CHECK(doc["ttft_by_turn"][0]["turns"].Size() == 2);
  CHECK(fs::exists(out_dir / "compare.html"));
  // A second compare into the same folder says what it replaces.
  std::ostringstream out2, err2;
  CHECK(compare_main({a.string(), b.string()}, out_dir.string(), out2, err2) == 0);
  CHECK(err2.str().find("replacing") != std::string::npos);
}

TEST_CASE("compare: compare.html escapes run names and loads nothing from outside") {
  TempDir dir("convoy-compare-");
  const fs::path a = write_run(dir.path(), "<img src=x onerror=alert(1)>", summary_text(Fixture{}));
  const fs::path b = write_run(dir.path(), "b", summary_text(Fixture{}));
  const std::string page = compare_html(load_comparison({a.string(), b.string()}));
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(page.find("default-src 'none'") != std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
}
