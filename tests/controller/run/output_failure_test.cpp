// Output files that cannot be written are results: counted, named, never half-written, and the
// verdict and exit code say so.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/run_report.hpp"
#include "controller/report/summary_writer.hpp"
#include "controller/run/registry.hpp"
#include "test_time.hpp"
#include "test_util.hpp"
#include "tmpfs_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::Config;
using convoy::controller::MetricsAggregator;
using convoy::controller::OutputError;
using convoy::controller::OutputFile;
using convoy::controller::RecordsWriter;
using convoy::controller::ReportInputs;
using convoy::controller::RunFacts;
using convoy::controller::worker_summaries;
using convoy::controller::WorkerRegistry;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

Record record(int64_t at, uint32_t conversation, bool ok) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(at);
  r.x_correlation_id = "cid-" + std::to_string(conversation);
  r.conversation_index = conversation;
  r.intended_ns = r.sent_ns = at;
  r.end_ns = at + 40 * kMs;
  r.input_tokens = 100;
  if (ok) {
    r.first_token_ns = at + 20 * kMs;
    r.last_token_ns = at + 39 * kMs;
    r.output_tokens = 5;
    r.http_status = 200;
  } else {
    r.http_status = 400;
    r.error.kind = ErrorKind::kHttpStatus;
    r.error.code = 400;
    r.error.message = "bad request";
  }
  return r;
}

std::vector<std::string> names(const std::vector<OutputError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.file);
  return out;
}

bool has_tmp_file(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tmp" && entry.is_regular_file()) return true;
  }
  return false;
}

// write_run_report's inputs for `ok` successes and `failed` errors, into `out_dir`.
struct Report {
  Config config;
  std::string url = "http://127.0.0.1:8000";
  fs::path out_dir;
  WorkerRegistry registry;
  RunFacts facts;
  MetricsAggregator metrics{config};
  std::vector<OutputError> known;

  Report(fs::path dir, int ok, int failed) : out_dir(std::move(dir)) {
    for (int i = 0; i < ok + failed; ++i) {
      const Record r = record(kS + i * 100 * kMs, static_cast<uint32_t>(i), i < ok);
      metrics.add(r);
      facts.add(r);
    }
  }
  int write() {
    const ReportInputs in{
        config, url, out_dir, worker_summaries(registry), metrics.snapshot(), facts, false,
        false,  "",  known};
    return convoy::controller::write_run_report(in);
  }
  rapidjson::Document summary() const { return read_json(out_dir / "summary.json"); }
};

}  // namespace

TEST_CASE("records.jsonl on a device that refuses writes counts every record as lost") {
  if (!fs::exists("/dev/full")) {
    MESSAGE("skipped: no /dev/full");
    return;
  }
  RecordsWriter writer("/dev/full");
  for (int i = 0; i < 3; ++i) writer.write(record(kS + i * kMs, 1, true), "w-0");
  writer.flush();
  REQUIRE(writer.failed());
  CHECK(writer.error() == "write: No space left on device");
  writer.write(record(2 * kS, 2, true), "w-0");  // dropped, counted
  writer.close();
  CHECK(writer.lines() == 4);
  CHECK(writer.written() == 0);
  CHECK(writer.lost() == 4);
  const auto failure = writer.failure();
  REQUIRE(failure.has_value());
  CHECK(failure->file == "full");
  CHECK(failure->missing == "4 of 4 records lost (0 written)");
  CHECK(convoy::controller::describe(*failure) ==
        "cannot write full (/dev/full): write: No space left on device; 4 of 4 records lost (0 "
        "written)");
}

TEST_CASE("records.jsonl on a full disk keeps only whole lines and counts the rest as lost") {
  Tmpfs disk("records-full", "16k");
  if (!disk.skipped().empty()) {
    MESSAGE("skipped: " << disk.skipped());
    return;
  }
  const fs::path path = disk.path() / "records.jsonl";
  RecordsWriter writer(path);
  for (int i = 0; i < 200; ++i) writer.write(record(kS + i * kMs, 1, true), "w-0");
  writer.close();
  REQUIRE(writer.failed());
  CHECK(writer.error() == "write: No space left on device");
  CHECK(writer.written() > 0);
  CHECK(writer.written() < 200);
  CHECK(writer.written() + writer.lost() == 200);
  const std::string text = read_file(path);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');  // no partial last line
  CHECK(static_cast<int64_t>(read_jsonl(path).size()) == writer.written());
}

TEST_CASE("records.jsonl removed during the run is a failure at close") {
  TempDir dir("convoy-records-");
  const fs::path path = dir.path() / "records.jsonl";
  RecordsWriter writer(path);
  for (int i = 0; i < 3; ++i) writer.write(record(kS + i * kMs, 1, true), "w-0");
  writer.flush();
  CHECK_FALSE(writer.failed());  // writing to the unlinked file still works
  fs::remove(path);
  writer.close();
  REQUIRE(writer.failed());
  CHECK(writer.error() == "the file was removed during the run: No such file or directory");
  REQUIRE(writer.failure().has_value());
  CHECK(writer.failure()->missing == "all 3 records lost (3 were written to a file that is gone)");

  SUBCASE("a file put in its place is no better") {
    RecordsWriter again(path);
    again.write(record(kS, 1, true), "w-0");
    again.flush();
    fs::remove(path);
    std::ofstream(path) << "someone else's\n";
    again.close();
    CHECK(again.error() == "the file was replaced by another during the run");
  }
}

TEST_CASE("records.jsonl that cannot be created names the file and the OS error") {
  TempDir dir("convoy-records-");
  const fs::path path = dir.path() / "missing" / "records.jsonl";
  CHECK(error_message<std::runtime_error>([&] { RecordsWriter writer(path); }) ==
        "cannot create records.jsonl (" + path.string() + "): No such file or directory");
}

TEST_CASE("an output file that cannot be written atomically leaves no temporary") {
  TempDir dir("convoy-atomic-");
  const fs::path path = dir.path() / "report.html";
  SUBCASE("rename onto a folder fails") {
    fs::create_directories(path / "inside");
    const auto e = convoy::controller::write_file_atomically_or_error(path, "<html>");
    REQUIRE(e.has_value());
    CHECK(e->file == "report.html");
    CHECK(e->error == "rename: Is a directory");
    CHECK(e->missing == "the whole file");
    CHECK_FALSE(fs::exists(dir.path() / "report.html.tmp"));
  }
  SUBCASE("a full disk") {
    Tmpfs disk("atomic-full", "16k");
    if (!disk.skipped().empty()) {
      MESSAGE("skipped: " << disk.skipped());
      return;
    }
    const auto e = convoy::controller::write_file_atomically_or_error(disk.path() / "summary.json",
                                                                      std::string(64 * 1024, 'x'));
    REQUIRE(e.has_value());
    CHECK(e->error == "write: No space left on device");
    CHECK_FALSE(fs::exists(disk.path() / "summary.json.tmp"));
    CHECK_FALSE(fs::exists(disk.path() / "summary.json"));
  }
  SUBCASE("the throwing form names the file") {
    fs::create_directories(path / "inside");
    CHECK(error_message<std::runtime_error>([&] {
            convoy::controller::write_file_atomically(path, "x");
          }) == "cannot write report.html (" + path.string() +
                    "): rename: Is a directory; the whole file");
  }
}

TEST_CASE("an output file that fails is known to the files written after and before it") {
  TempDir dir("convoy-outputs-");
  // Each file says how many failures it knew of when it was rendered.
  auto file = [](const std::string& name) {
    return OutputFile{name, [name](const std::vector<OutputError>& errors) {
                        return name + " knows " + std::to_string(errors.size());
                      }};
  };
  fs::create_directories(dir.path() / "b.txt.tmp");  // b cannot even be staged
  const auto errors = convoy::controller::write_output_files(
      dir.path(), {file("a.txt"), file("b.txt"), file("c.txt")}, {});
  REQUIRE(names(errors) == std::vector<std::string>{"b.txt"});
  CHECK(errors[0].error == "open b.txt.tmp: Is a directory");
  CHECK(read_file(dir.path() / "a.txt") == "a.txt knows 1");  // rendered again
  CHECK(read_file(dir.path() / "c.txt") == "c.txt knows 1");
  CHECK_FALSE(fs::exists(dir.path() / "b.txt"));
  CHECK_FALSE(has_tmp_file(dir.path()));

  SUBCASE("known failures come first and are kept") {
    const std::vector<OutputError> known = {{"records.jsonl", "p", "write: x", "all"}};
    const auto again = convoy::controller::write_output_files(dir.path(), {file("a.txt")}, known);
    CHECK(names(again) == std::vector<std::string>{"records.jsonl"});
    CHECK(read_file(dir.path() / "a.txt") == "a.txt knows 1");
  }
}

TEST_CASE("a previous run's files in the output folder are listed") {
  TempDir dir("convoy-previous-");
  CHECK(convoy::controller::previous_run_files(dir.path()).empty());
  std::ofstream(dir.path() / "summary.json") << "{}";
  std::ofstream(dir.path() / "records.jsonl.tmp") << "";
  std::ofstream(dir.path() / "notes.txt") << "mine";
  CHECK(convoy::controller::previous_run_files(dir.path()) ==
        std::vector<std::string>{"summary.json", "records.jsonl.tmp"});
  CHECK(convoy::controller::previous_run_files(dir.path() / "absent").empty());
}

TEST_CASE("write_run_report exits 1 when no measured request succeeded") {
  TempDir dir("convoy-report-");
  Report report(dir.path(), 0, 5);
  CHECK(report.write() == convoy::kExitCriterionFailed);
  const auto summary = report.summary();
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
  CHECK(summary["output_errors"].Size() == 0);

  SUBCASE("one success makes it a warning and exit 0") {
    TempDir other("convoy-report-");
    Report mixed(other.path(), 1, 5);
    CHECK(mixed.write() == convoy::kExitOk);
    CHECK(std::string(mixed.summary()["verdict"]["status"].GetString()) == "warn");
  }
}

TEST_CASE("write_run_report exits 3 when an output cannot be written, and summary.json says so") {
  TempDir dir("convoy-report-");
  Report report(dir.path(), 5, 0);

  SUBCASE("report.html alone") {
    fs::create_directories(dir.path() / "report.html.tmp");
    CHECK(report.write() == convoy::kExitIncomplete);
    const auto summary = report.summary();
    REQUIRE_FALSE(summary.HasParseError());
    REQUIRE(summary["output_errors"].Size() == 1);
    CHECK(std::string(summary["output_errors"][0]["file"].GetString()) == "report.html");
    CHECK(std::string(summary["output_errors"][0]["error"].GetString()) ==
          "open report.html.tmp: Is a directory");
    CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
    CHECK(std::string(summary["verdict"]["reasons"][0].GetString())
              .find("cannot write report.html") != std::string::npos);
    CHECK(fs::exists(dir.path() / "summary.csv"));
    CHECK_FALSE(fs::exists(dir.path() / "report.html"));
  }
  SUBCASE("records.jsonl, failed earlier: the rest is still written and says so") {
    report.known.push_back({"records.jsonl", (dir.path() / "records.jsonl").string(),
                            "write: No space left on device", "230 of 600 records lost"});
    CHECK(report.write() == convoy::kExitIncomplete);
    const auto summary = report.summary();
    REQUIRE_FALSE(summary.HasParseError());
    REQUIRE(summary["output_errors"].Size() == 1);
    CHECK(std::string(summary["output_errors"][0]["missing"].GetString()) ==
          "230 of 600 records lost");
    CHECK(std::string(summary["verdict"]["status"].GetString()) == "fail");
    const std::string html = read_file(dir.path() / "report.html");
    CHECK(html.find("cannot write records.jsonl") != std::string::npos);
    CHECK(html.find(">fail<") != std::string::npos);
  }
  SUBCASE("summary.json itself: the page says it is missing") {
    fs::create_directories(dir.path() / "summary.json.tmp");
    CHECK(report.write() == convoy::kExitIncomplete);
    CHECK_FALSE(fs::exists(dir.path() / "summary.json"));
    const std::string html = read_file(dir.path() / "report.html");
    CHECK(html.find("cannot write summary.json") != std::string::npos);
  }
  CHECK_FALSE(has_tmp_file(dir.path()));
}
