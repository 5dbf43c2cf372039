// `convoy compare` tells a difference from noise: the order-statistic interval of a percentile
// over records.jsonl, the stated minimum relative difference without it, the sample counts, the
// report's metric names, and console tables within 120 columns.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/histogram.hpp"
#include "controller/compare/compare.hpp"
#include "controller/compare/compare_output.hpp"
#include "controller/compare/comparison.hpp"
#include "controller/compare/noise.hpp"
#include "controller/compare/run_loader.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::controller::compare;
using convoy::test::TempDir;

namespace {

// One run's measured TTFTs (ms) and what its summary.json says of them.
struct NoiseRun {
  std::vector<double> ttft_ms;
  bool records = true;  // write records.jsonl
};

// `n` TTFTs drawn from a log-normal around `median_ms` (seeded: the same draw every time).
std::vector<double> draw_ttfts(uint64_t seed, size_t n, double median_ms) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(median_ms), 0.25);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(dist(rng));
  return v;
}

// A percentile of `values` as the run's summary computes it (nearest rank, the histogram's).
double noise_percentile(const std::vector<double>& values, double p) {
  convoy::Histogram h;
  for (double v : values) h.record(std::llround(v * 1000.0));
  return static_cast<double>(h.percentile(p)) / 1000.0;
}

std::string noise_dist(const char* tag, const std::vector<double>& v) {
  std::ostringstream out;
  out.precision(10);
  out << "\"" << tag << "\": {\"unit\": \"ms\", \"avg\": " << noise_percentile(v, 50);
  for (double p : {1, 5, 10, 25, 50, 75, 90, 95, 99}) {
    out << ", \"p" << p << "\": " << noise_percentile(v, p);
  }
  out << ", \"min\": " << noise_percentile(v, 0) << ", \"max\": " << noise_percentile(v, 100)
      << ", \"std\": 1, \"count\": " << v.size() << ", \"sum\": 1}";
  return out.str();
}

fs::path write_noise_run(const fs::path& parent, const std::string& name, const NoiseRun& run) {
  const fs::path dir = parent / name;
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json")
      << "{\"convoy_version\": \"0.1.0\", " << noise_dist("time_to_first_token", run.ttft_ms)
      << ", \"request_throughput\": {\"unit\": \"requests/sec\", \"avg\": 10}, "
      << "\"request_count\": {\"unit\": \"requests\", \"avg\": " << run.ttft_ms.size()
      << "}, \"error_request_count\": {\"unit\": \"requests\", \"avg\": 0}, \"run\": "
         "{\"config_yaml\": \"name: a\\n\"}}";
  if (run.records) {
    std::ofstream records(dir / "records.jsonl");
    records.precision(10);
    for (double t : run.ttft_ms) {
      records << "{\"phase\": \"measure\", \"turn_index\": 0, \"error\": null, \"metrics\": "
                 "{\"ttft_ms\": "
              << t << "}}\n";
    }
  }
  return dir;
}

const Row* noise_row(const std::vector<Row>& rows, const std::string& tag, const std::string& s) {
  for (const Row& r : rows) {
    if (r.tag == tag && r.stat == s) return &r;
  }
  return nullptr;
}

// compare.json's metric object for tag/stat.
const rapidjson::Value* json_row(const rapidjson::Document& doc, const char* tag,
                                 const char* stat) {
  for (const auto& m : doc["metrics"].GetArray()) {
    if (std::string(m["tag"].GetString()) == tag && std::string(m["stat"].GetString()) == stat)
      return &m;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("compare noise: the rank interval of a percentile brackets its nearest rank") {
  CHECK(percentile_rank_interval(50, 0) == std::pair<int64_t, int64_t>{0, 0});
  const auto [lo, hi] = percentile_rank_interval(50, 100);  // 50 -/+ 1.96 * 5
  CHECK(lo == 40);
  CHECK(hi == 61);
  // p99 of 20 values: the top of the interval is the largest value.
  CHECK(percentile_rank_interval(99, 20).second == 20);
  // Many values: the interval narrows relative to n.
  const auto wide = percentile_rank_interval(99, 1000);
  CHECK(wide.first < 990);
  CHECK(wide.second <= 1000);
  CHECK(percentile_of_stat("p99") == 99.0);
  CHECK_FALSE(percentile_of_stat("avg"));
  CHECK_FALSE(percentile_of_stat("p"));
}

TEST_CASE("compare noise: two runs of the same distribution are within noise, not worse") {
  TempDir dir("convoy-compare-noise-");
  const fs::path a = write_noise_run(dir.path(), "base", {draw_ttfts(1, 400, 5.0)});
  const fs::path b = write_noise_run(dir.path(), "again", {draw_ttfts(2, 400, 5.0)});
  const Comparison cmp = load_comparison({a.string(), b.string()});
  const std::vector<Row> rows = headline_rows(cmp.columns);
  for (const char* stat : {"p50", "p99"}) {
    CAPTURE(stat);
    const Row* r = noise_row(rows, "time_to_first_token", stat);
    REQUIRE(r != nullptr);
    REQUIRE(r->diff_pct[1]);
    CHECK(*r->diff_pct[1] != 0.0);  // the values differ ...
    REQUIRE(r->noise[1]);
    CHECK(r->noise[1]->method == NoiseMethod::kRankInterval);
    CHECK_FALSE(r->noise[1]->significant);  // ... by less than the noise
    CHECK(judgement(*r, 1) == "within noise");
    CHECK(r->counts[1] == 400);
    CHECK(r->name == std::string("Time to First Token ") + stat);  // report.html's name
  }
  const std::string table = console_table(cmp);
  CAPTURE(table);
  CHECK(table.find("Time to First Token p99") != std::string::npos);
  CHECK(table.find("within noise") != std::string::npos);
  CHECK(table.find(" worse)") == std::string::npos);  // no cell judged worse
  CHECK(table.find(" better)") == std::string::npos);
  CHECK(table.find("n=400") != std::string::npos);
  // The page shows it muted, never in the colour of worse.
  const std::string page = compare_html(cmp);
  CHECK(page.find("class=\"diff worse\"") == std::string::npos);
  CHECK(page.find("class=\"diff noise\"") != std::string::npos);
}

TEST_CASE("compare noise: a real shift is marked with its direction and written to compare.json") {
  TempDir dir("convoy-compare-noise-");
  const fs::path a = write_noise_run(dir.path(), "base", {draw_ttfts(1, 400, 5.0)});
  const fs::path b = write_noise_run(dir.path(), "slower", {draw_ttfts(2, 400, 6.5)});
  const fs::path out_dir = dir.path() / "cmp";
  std::ostringstream out, err;
  REQUIRE(compare_main({a.string(), b.string()}, out_dir.string(), out, err) == 0);
  CAPTURE(out.str());
  CHECK(out.str().find("% worse)") != std::string::npos);
  const auto doc = convoy::test::read_json(out_dir / "compare.json");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["noise"]["min_relative_pct"].GetDouble() == kMinRelativeDiffPct);
  const rapidjson::Value* p50 = json_row(doc, "time_to_first_token", "p50");
  REQUIRE(p50 != nullptr);
  CHECK(std::string((*p50)["name"].GetString()) == "Time to First Token p50");
  CHECK(std::string((*p50)["judgement"][1].GetString()) == "worse");
  CHECK((*p50)["counts"][0].GetInt64() == 400);
  CHECK((*p50)["noise"][0].IsNull());
  CHECK(std::string((*p50)["noise"][1]["method"].GetString()) == "rank_interval");
  CHECK((*p50)["noise"][1]["significant"].GetBool());
  // Each interval holds its own value.
  for (rapidjson::SizeType i = 0; i < 2; ++i) {
    const double v = (*p50)["values"][i].GetDouble();
    CHECK((*p50)["intervals"][i][0].GetDouble() <= v);
    CHECK((*p50)["intervals"][i][1].GetDouble() >= v);
  }
}

TEST_CASE("compare noise: without records.jsonl the stated minimum difference decides") {
  TempDir dir("convoy-compare-noise-");
  // 4.97 ms against 4.99 ms: +0.4%, under the minimum.
  NoiseRun base{{4.97}, false};
  NoiseRun close{{4.99}, false};
  NoiseRun far{{7.0}, false};
  const fs::path a = write_noise_run(dir.path(), "a", base);
  const fs::path b = write_noise_run(dir.path(), "b", close);
  const fs::path c = write_noise_run(dir.path(), "c", far);
  const Comparison cmp = load_comparison({a.string(), b.string(), c.string()});
  const std::vector<Row> rows = headline_rows(cmp.columns);
  const Row* r = noise_row(rows, "time_to_first_token", "p50");
  REQUIRE(r != nullptr);
  REQUIRE(r->noise[1]);
  CHECK(r->noise[1]->method == NoiseMethod::kMinRelative);
  CHECK(judgement(*r, 1) == "within noise");
  CHECK(judgement(*r, 2) == "worse");
  const std::string table = console_table(cmp);
  CAPTURE(table);
  CHECK(table.find("4.99 (+0.4% within noise)") != std::string::npos);
  CHECK(table.find("(+40.8% worse)") != std::string::npos);
}

TEST_CASE("compare noise: console tables stay within 120 columns, however many runs") {
  TempDir dir("convoy-compare-noise-");
  std::vector<std::string> folders;
  for (int i = 0; i < 7; ++i) {
    const std::string name = "a-rather-long-run-folder-name-20260101-10000" + std::to_string(i);
    NoiseRun run{draw_ttfts(10 + static_cast<uint64_t>(i), 50, 5.0 + i), i % 2 == 0};
    folders.push_back(write_noise_run(dir.path(), name, run).string());
  }
  const std::string table = console_table(load_comparison(folders));
  CAPTURE(table);
  std::istringstream lines(table);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    CAPTURE(line);
    CHECK(line.size() <= 120);
  }
  CHECK(count > 10);
  // Every run is still named in full (above the table) and has its column.
  for (const std::string& f : folders) {
    CHECK(table.find(fs::path(f).filename().string()) != std::string::npos);
  }
}
