// `convoy compare` end to end: real short runs against the bundled mock, then
// the real binary compares them; compare.json's values are checked against each run's
// summary.json, and the refusals exit 2 naming the folder.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// A short quickstart run (single worker, fast mock) into `out`, with extra --set flags.
void short_run(const fs::path& out, const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"dataset.conversations=8", "mock.speedup=20", "workers.local=1",
                                  "output.html=false"};
  all.insert(all.end(), sets.begin(), sets.end());
  Subprocess run(quickstart_run_argv(out, all));
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
}

struct Result {
  int rc = -1;
  std::string output;
};

Result compare(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bin("controller/convoy"), "compare"};
  argv.insert(argv.end(), args.begin(), args.end());
  Subprocess cmp(argv);
  const auto rc = cmp.wait(60);
  REQUIRE(rc.has_value());
  return {*rc, cmp.output()};
}

const rapidjson::Value* metric_row(const rapidjson::Document& doc, const char* tag,
                                   const char* stat) {
  for (const auto& m : doc["metrics"].GetArray()) {
    if (std::string(m["tag"].GetString()) == tag && std::string(m["stat"].GetString()) == stat) {
      return &m;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("convoy compare of two real runs writes the table, compare.json and compare.html") {
  const fs::path dir = fresh_dir("e2e-compare");
  const fs::path a = dir / "c2";
  const fs::path b = dir / "c4";
  short_run(a, {"load.concurrency=2"});
  short_run(b, {"load.concurrency=4"});
  const fs::path out = dir / "cmp";
  const Result r = compare({a.string(), b.string(), "-o", out.string()});
  INFO(r.output);
  REQUIRE(r.rc == 0);
  CHECK(r.output.find("baseline: c2") != std::string::npos);
  CHECK(r.output.find("Time to First Token p50") != std::string::npos);  // report.html's name
  // Every console line fits 120 columns.
  for (size_t at = 0, end = 0; at < r.output.size(); at = end + 1) {
    end = r.output.find('\n', at);
    if (end == std::string::npos) end = r.output.size();
    CHECK(end - at <= 120);
  }
  const auto doc = read_json(out / "compare.json");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["mode"].GetString()) == "runs");
  REQUIRE(doc["columns"].Size() == 2);
  // Each column's values are its own summary.json's.
  const fs::path runs[] = {a, b};
  for (const char* tag : {"request_count", "request_throughput", "output_token_throughput"}) {
    CAPTURE(tag);
    const rapidjson::Value* row = metric_row(doc, tag, "avg");
    REQUIRE(row);
    for (rapidjson::SizeType i = 0; i < 2; ++i) {
      const auto summary = read_json(runs[i] / "summary.json");
      CHECK((*row)["values"][i].GetDouble() == summary[tag]["avg"].GetDouble());
    }
    const double base = (*row)["values"][0].GetDouble();
    const double other = (*row)["values"][1].GetDouble();
    CHECK((*row)["diff_pct"][1].GetDouble() == doctest::Approx((other - base) / base * 100));
  }
  const rapidjson::Value* ttft = metric_row(doc, "time_to_first_token", "p99");
  REQUIRE(ttft);
  // Both runs kept records.jsonl: a percentile is judged on its rank interval, with the count.
  CHECK(std::string((*ttft)["noise"][1]["method"].GetString()) == "rank_interval");
  CHECK((*ttft)["counts"][1].GetInt64() ==
        read_json(b / "summary.json")["time_to_first_token"]["count"].GetInt64());
  CHECK((*ttft)["intervals"][0][0].GetDouble() <= (*ttft)["values"][0].GetDouble());
  const auto summary_b = read_json(b / "summary.json");
  CHECK((*ttft)["values"][1].GetDouble() == summary_b["time_to_first_token"]["p99"].GetDouble());
  bool concurrency_differs = false;
  for (const auto& d : doc["config_differences"].GetArray()) {
    if (std::string(d["key"].GetString()) != "load.concurrency") continue;
    concurrency_differs = true;
    CHECK(std::string(d["values"][0].GetString()) == "2");
    CHECK(std::string(d["values"][1].GetString()) == "4");
  }
  CHECK(concurrency_differs);
  // records.jsonl is there: TTFT per turn index (quickstart has up to 6 turns).
  CHECK(std::string(doc["ttft_by_turn"][0]["source"].GetString()) == "records.jsonl");
  CHECK(doc["ttft_by_turn"][0]["turns"].Size() >= 2);
  const std::string html = read_file(out / "compare.html");
  CHECK(html.find("id=\"curve-chart\"") != std::string::npos);
  // The run folders were left as they were.
  CHECK_FALSE(fs::exists(a / "compare.json"));
}

TEST_CASE("convoy compare exits 2 naming a folder that is not a convoy run") {
  const fs::path dir = fresh_dir("e2e-compare-bad");
  const fs::path run = dir / "run";
  fs::create_directories(run);
  std::ofstream(run / "summary.json")
      << "{\"request_count\": {\"unit\": \"requests\", \"avg\": 3}, "
         "\"run\": {\"convoy_version\": \"0.1.0\"}}";
  const fs::path photos = dir / "holiday-photos";
  fs::create_directories(photos);
  const fs::path other = dir / "other-tool";
  fs::create_directories(other);
  std::ofstream(other / "summary.json") << "{\"records\": []}";
  for (const fs::path& bad : {photos, other}) {
    const Result r = compare({run.string(), bad.string(), "-o", (dir / "out").string()});
    INFO(r.output);
    CHECK(r.rc == 2);
    CHECK(r.output.find(bad.string() + " is not a convoy run") != std::string::npos);
  }
  const Result one = compare({run.string(), "-o", (dir / "out").string()});
  INFO(one.output);
  CHECK(one.rc == 2);
  CHECK(one.output.find("needs two or more run folders") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "compare.json"));
  const Result help = compare({"--help"});
  CHECK(help.rc == 0);
  CHECK(help.output.find("baseline") != std::string::npos);
}

TEST_CASE("convoy compare of one real sweep puts its steps side by side") {
  const fs::path dir = fresh_dir("e2e-compare-sweep");
  const fs::path run = dir / "sweep";
  short_run(run, {"load.sweep={concurrency: [1, 3], sessions: 4, settle_s: 0}"});
  const fs::path out = dir / "cmp";
  const Result r = compare({run.string(), "-o", out.string()});
  INFO(r.output);
  REQUIRE(r.rc == 0);
  const auto doc = read_json(out / "compare.json");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["mode"].GetString()) == "stages");
  REQUIRE(doc["columns"].Size() == 2);
  CHECK(doc["columns"][1]["stage_value"].GetDouble() == 3.0);
  const auto summary = read_json(run / "summary.json");
  const rapidjson::Value* count = metric_row(doc, "request_count", "avg");
  REQUIRE(count);
  for (rapidjson::SizeType i = 0; i < 2; ++i) {
    CHECK((*count)["values"][i].GetDouble() ==
          summary["stages"][i]["request_count"]["avg"].GetDouble());
  }
  REQUIRE(doc["curve"]["series"].Size() == 1);
  CHECK(doc["curve"]["series"][0]["points"].Size() == 2);
}
