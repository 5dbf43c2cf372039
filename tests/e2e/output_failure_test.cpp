// End to end: an output file that cannot be written is a result (exit 3, the file, the OS error
// and what was lost named), never a log line under "Verdict: pass".
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"
#include "tmpfs_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

std::vector<std::string> output_run_args(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      bin("controller/convoy"), "run", src("configs/quickstart.yaml"), "-o", out.string(), "--set",
      "mock.speedup=20"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::vector<std::string> tmp_files_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".tmp") found.push_back(entry.path().filename().string());
  }
  return found;
}

bool has_text(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The names in summary.json's output_errors.
std::vector<std::string> output_error_files(const rapidjson::Document& summary) {
  std::vector<std::string> files;
  if (!summary.IsObject() || !summary.HasMember("output_errors")) return files;
  for (const auto& e : summary["output_errors"].GetArray()) files.push_back(e["file"].GetString());
  return files;
}

}  // namespace

TEST_CASE("a full output disk exits 3 naming each file, the OS error and the records lost") {
  Tmpfs disk("e2e-fulldisk", "256k");
  if (!disk.skipped().empty()) {
    MESSAGE("skipped: " << disk.skipped());
    return;
  }
  const fs::path out = disk.path() / "out";
  Subprocess run(output_run_args(out, {"--quiet", "--set", "dataset.conversations=400"}));
  const auto rc = run.wait(180);
  const std::string& console = run.output();
  INFO(console);
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(has_text(console, "cannot write records.jsonl (" + (out / "records.jsonl").string() +
                              "): write: No space left on device"));
  // "N of M records lost (W written)": the written ones are exactly the lines in the file,
  // every one of them whole.
  std::smatch m;
  const std::regex lost(R"((\d+) of (\d+) records lost \((\d+) written\))");
  REQUIRE(std::regex_search(console, m, lost));
  const long lost_count = std::stol(m[1]), total = std::stol(m[2]), written = std::stol(m[3]);
  CHECK(lost_count > 0);
  CHECK(lost_count + written == total);
  CHECK(static_cast<long>(read_jsonl(out / "records.jsonl").size()) == written);
  CHECK(has_text(console, "Verdict: fail"));
  CHECK_FALSE(has_text(console, "Verdict: pass"));
  CHECK(tmp_files_in(out).empty());
  if (fs::exists(out / "summary.json")) {
    const auto summary = read_json(out / "summary.json");
    REQUIRE_FALSE(summary.HasParseError());
    CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
    CHECK(output_error_files(summary).front() == "records.jsonl");
  } else {
    CHECK(has_text(console, "cannot write summary.json"));
    CHECK(has_text(console, "summary.json could not be written"));
  }
}

TEST_CASE("report.html that alone does not fit exits 3 and summary.json names it") {
  // Without records and with the mock's telemetry replaced by a dead endpoint (its series
  // would make summary.json as large as the page), summary.csv and server_metrics.jsonl take
  // a 4 KiB tmpfs page each, report.html about 44 KiB and summary.json (written last) 12:
  // 32 KiB left free by a filler hold all but the page, which finds 24 free.
  Tmpfs disk("e2e-htmlfull", "128k");
  if (!disk.skipped().empty()) {
    MESSAGE("skipped: " << disk.skipped());
    return;
  }
  const fs::path out = disk.path() / "out";
  fs::create_directories(out);
  {
    std::ofstream filler(disk.path() / "filler", std::ios::binary);
    filler << std::string(96 * 1024, 'x');
  }
  Subprocess run(output_run_args(out, {"--quiet", "--set", "output.records=false", "--set",
                                       "telemetry.endpoints=[{name: mock, url: "
                                       "'http://127.0.0.1:1/metrics'}]"}));
  const auto rc = run.wait(120);
  const std::string& console = run.output();
  INFO(console);
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(has_text(console, "cannot write report.html"));
  CHECK(has_text(console, "No space left on device"));
  CHECK(has_text(console, "Verdict: fail"));
  CHECK(has_text(console, "Outputs: " + out.string() + "/summary.json"));
  CHECK_FALSE(fs::exists(out / "report.html"));
  CHECK(tmp_files_in(out).empty());
  CHECK(fs::exists(out / "summary.csv"));
  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  REQUIRE(output_error_files(summary) == std::vector<std::string>{"report.html"});
  CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
  CHECK(has_text(summary["output_errors"][0]["error"].GetString(), "No space left on device"));
}

TEST_CASE("an output folder removed during the run exits 3 naming what was lost") {
  const fs::path out = fresh_path("e2e-outremoved");
  // Real-time streams (no speedup override below it) so the run is mid-flight when it goes.
  Subprocess run(quickstart_run_argv(out, {"dataset.conversations=16", "mock.itl_ms=10"}));
  // records.jsonl and then server_metrics.jsonl (the quickstart scrapes the mock) open before
  // workers start; removing the folder between the two is a failure at start, not mid-run.
  REQUIRE(wait_for_change(
      out,
      [&] { return fs::exists(out / "records.jsonl") && fs::exists(out / "server_metrics.jsonl"); },
      20));
  fs::remove_all(out);
  const auto rc = run.wait(120);
  const std::string& console = run.output();
  INFO(console);
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(has_text(console, "cannot write records.jsonl"));
  CHECK(has_text(console, "removed during the run"));
  CHECK(std::regex_search(console, std::regex(R"(all \d+ records lost)")));
  CHECK(has_text(console, "cannot write summary.json"));
  CHECK(has_text(console, "No such file or directory"));
  CHECK(has_text(console, "Verdict: fail"));
  CHECK_FALSE(fs::exists(out / "summary.json"));
  fs::remove_all(out);
}

TEST_CASE("an output folder holding a previous run's files is a warning, not a failure") {
  const fs::path out = fresh_path("e2e-outreused");
  const std::vector<std::string> small = {"--set", "dataset.conversations=4"};
  {
    Subprocess first(output_run_args(out, small));
    const auto rc = first.wait(120);
    INFO(first.output());
    REQUIRE(rc == 0);
    CHECK_FALSE(has_text(first.output(), "previous run"));
  }
  Subprocess second(output_run_args(out, small));
  const auto rc = second.wait(120);
  INFO(second.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(has_text(second.output(),
                 "already holds a previous run's files (summary.json, "
                 "summary.csv, records.jsonl, report.html, server_metrics.jsonl)"));
  fs::remove_all(out);
}
