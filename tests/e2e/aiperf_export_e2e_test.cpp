// End to end: a run against the bundled mock with output.slice_s and
// output.aiperf_export writes summary.json's provenance and time slices, timeslices.csv and
// AIPerf's three export files and its inputs.json, and they agree with each other.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("aiperf_export and slice_s against the mock write AIPerf's files and time slices") {
  const fs::path out = fresh_path("e2e-aiperf-export");
  Subprocess run(
      quickstart_run_argv(out, {"dataset.conversations=12", "mock.speedup=20", "workers.local=2",
                                "output.slice_s=0.25", "output.aiperf_export=true"}));
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);

  const rapidjson::Document summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  const std::regex uuid4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  const std::regex iso_ms(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$)");
  CHECK(std::string(summary["schema_version"].GetString()) == "1.0");
  const std::string id = summary["benchmark_id"].GetString();
  CHECK(std::regex_match(id, uuid4));
  const std::string start = summary["start_time"].GetString();
  const std::string end = summary["end_time"].GetString();
  CHECK(std::regex_match(start, iso_ms));
  CHECK(std::regex_match(end, iso_ms));
  CHECK(start <= end);
  CHECK_FALSE(summary["was_cancelled"].GetBool());
  CHECK(summary["request_count"].MemberCount() == 2);
  const double requests = summary["request_count"]["avg"].GetDouble();
  CHECK(requests > 0);

  // Time slices: every measured request in exactly one slice.
  REQUIRE(summary["timeslices"].IsArray());
  REQUIRE(summary["timeslices"].Size() > 0);
  double sliced = 0;
  for (const auto& t : summary["timeslices"].GetArray()) {
    sliced += t["request_count"]["avg"].GetDouble();
    CHECK(t["end_s"].GetDouble() - t["start_s"].GetDouble() == doctest::Approx(0.25));
  }
  CHECK(sliced == requests);
  const std::string csv = read_file(out / "timeslices.csv");
  CHECK(csv.rfind("timeslice,start_s,end_s,metric,unit,stat,value\n", 0) == 0);
  CHECK(csv.find(",time_to_first_token,ms,p99,") != std::string::npos);

  // AIPerf's files: the same run, the same numbers.
  const rapidjson::Document aiperf = read_json(out / "profile_export_aiperf.json");
  REQUIRE_FALSE(aiperf.HasParseError());
  CHECK(std::string(aiperf["schema_version"].GetString()) == "1.5");
  CHECK(std::string(aiperf["benchmark_id"].GetString()) == id);
  CHECK(aiperf["request_count"]["avg"].GetDouble() == requests);
  CHECK(aiperf["time_to_first_token"]["count"].GetInt64() ==
        summary["time_to_first_token"]["count"].GetInt64());
  CHECK(aiperf["input_config"]["endpoint"]["url"].GetString() != std::string("mock"));
  CHECK(read_file(out / "profile_export_aiperf.csv").rfind("Metric,avg,min,max,sum,", 0) == 0);

  const auto records = read_jsonl(out / "records.jsonl");
  const auto lines = read_jsonl(out / "profile_export.jsonl");
  CHECK(lines.size() == records.size());
  for (size_t i = 0; i < lines.size() && i < records.size(); ++i) {
    CAPTURE(i);
    const auto& meta = lines[i]["metadata"];
    CHECK(std::string(meta["x_request_id"].GetString()) == records[i]["x_request_id"].GetString());
    CHECK(meta["request_start_ns"].GetInt64() > 1'600'000'000'000'000'000);  // epoch, not steady
    CHECK(meta["request_end_ns"].GetInt64() >= meta["request_start_ns"].GetInt64());
    CHECK(std::string(meta["benchmark_phase"].GetString()) == "profiling");
  }

  // inputs.json: one session per conversation sent, named by its correlation id, one payload
  // per turn of it (every turn of the quickstart's conversations is sent).
  const rapidjson::Document inputs = read_json(out / "inputs.json");
  REQUIRE_FALSE(inputs.HasParseError());
  REQUIRE(inputs["data"].IsArray());
  std::map<std::string, size_t> turns_sent;
  for (const auto& r : records) ++turns_sent[r["x_correlation_id"].GetString()];
  CHECK(inputs["data"].Size() == turns_sent.size());
  for (const auto& session : inputs["data"].GetArray()) {
    const std::string sid = session["session_id"].GetString();
    CAPTURE(sid);
    REQUIRE(turns_sent.count(sid) == 1);
    CHECK(session["payloads"].Size() == turns_sent[sid]);
    const auto& first = session["payloads"][0];
    CHECK(std::string(first["model"].GetString()) == "mock-model");
    CHECK(first["stream"].GetBool());
    const auto& messages = first["messages"];
    CHECK(std::string(messages[messages.Size() - 1]["role"].GetString()) == "user");
  }
  fs::remove_all(out);
}
