// The outputs of a load profile: summary.json stages[] and search, the stage
// column of summary.csv, records.jsonl's stage, and the console's stage line and table. Stages
// are made by hand here; the run room fills them in a real run.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/report/summary_writer.hpp"
#include "controller/report/verdict.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace {

using convoy::Config;
using convoy::LoadLevel;
using convoy::LoadMode;
using convoy::ProfileKind;
using convoy::RampShape;
using convoy::StageConfig;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::SearchFacts;
using convoy::controller::SearchStep;
using convoy::controller::StageFacts;
using convoy::controller::SummaryExtras;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

constexpr int64_t kMeasureStart = 100 * kS;

// A streamed request intended at `at`: TTFT `ttft_ms`, `osl` tokens 10 ms apart.
Record stage_ok_record(int64_t at, int64_t ttft_ms, int64_t osl = 11) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(at);
  r.x_correlation_id = "cid-" + std::to_string(at);
  r.intended_ns = at;
  r.sent_ns = at;
  r.first_token_ns = at + ttft_ms * kMs;
  r.second_token_ns = r.first_token_ns + 10 * kMs;
  r.last_token_ns = r.first_token_ns + (osl - 1) * 10 * kMs;
  r.end_ns = r.last_token_ns + kMs;
  r.input_tokens = 100;
  r.output_tokens = osl;
  r.http_status = 200;
  return r;
}

Record stage_error_record(int64_t at) {
  Record r;
  r.x_request_id = "rid-err-" + std::to_string(at);
  r.x_correlation_id = "cid-err";
  r.intended_ns = at;
  r.sent_ns = at;
  r.end_ns = at + 2 * kMs;
  r.http_status = 503;
  r.error.kind = ErrorKind::kHttpStatus;
  r.error.code = 503;
  r.error.message = "overloaded";
  return r;
}

LoadLevel fixed_level(double v) { return LoadLevel{v, v, RampShape::kLinear, false}; }

// A stage of `ok` requests (TTFT `ttft_ms`) and `errors` failures over [start_s, end_s) from
// the measure start.
StageFacts make_stage(const std::string& name, int index, LoadMode mode, double value,
                      double start_s, double end_s, int ok, int64_t ttft_ms, int errors = 0) {
  StageFacts st;
  st.config.name = name;
  st.config.index = index;
  st.config.mode = mode;
  st.config.value = value;
  if (mode == LoadMode::kConcurrency) {
    st.config.concurrency = fixed_level(value);
  } else {
    st.config.concurrency = fixed_level(64);
    st.config.rate = fixed_level(value);
  }
  st.config.duration_s = end_s - start_s;
  st.start_ns = kMeasureStart + static_cast<int64_t>(start_s * 1e9);
  st.end_ns = kMeasureStart + static_cast<int64_t>(end_s * 1e9);
  st.settle_end_ns = st.end_ns;
  st.reached_value = value;
  MetricsAggregator agg{Config{}};
  const int64_t span = st.end_ns - st.start_ns;
  for (int i = 0; i < ok; ++i) agg.add(stage_ok_record(st.start_ns + span * i / (ok + 1), ttft_ms));
  for (int i = 0; i < errors; ++i)
    agg.add(stage_error_record(st.start_ns + span * i / (errors + 1)));
  st.metrics = agg.snapshot();
  return st;
}

std::vector<StageFacts> three_stages() {
  std::vector<StageFacts> stages;
  stages.push_back(make_stage("base", 0, LoadMode::kConcurrency, 8, 0, 10, 40, 50));
  StageFacts ramp = make_stage("ramp", 1, LoadMode::kRate, 200, 10, 30, 80, 120, 4);
  ramp.config.rate = LoadLevel{10, 200, RampShape::kLinear, true};
  ramp.config.settle_s = 5;
  ramp.settle_end_ns = ramp.end_ns + 5 * kS;
  stages.push_back(ramp);
  stages.push_back(make_stage("spike", 2, LoadMode::kRate, 500, 35, 40, 0, 0, 6));
  return stages;
}

MetricsSnapshot whole_run() {
  MetricsAggregator agg{Config{}};
  agg.set_origin_ns(kMeasureStart);
  for (int i = 0; i < 20; ++i) agg.add(stage_ok_record(kMeasureStart + i * kS, 60));
  return agg.snapshot();
}

SummaryExtras extras_for(const std::vector<StageFacts>& stages, ProfileKind profile) {
  SummaryExtras e;
  e.profile = profile;
  e.stages = stages;
  e.measure_start_ns = kMeasureStart;
  return e;
}

std::vector<std::string> stage_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string str(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

}  // namespace

TEST_CASE("summary.json stages carry their metric tags, times, config and verdict") {
  const std::vector<StageFacts> stages = three_stages();
  const MetricsSnapshot run = whole_run();
  const auto doc =
      parse_json(convoy::controller::summary_json(run, extras_for(stages, ProfileKind::kStages)));
  REQUIRE(doc.IsObject());
  // The whole run stays at the top.
  CHECK(doc["time_to_first_token"]["avg"].GetDouble() == doctest::Approx(60));
  REQUIRE(doc.HasMember("stages"));
  const auto& arr = doc["stages"];
  REQUIRE(arr.IsArray());
  REQUIRE(arr.Size() == 3);

  SUBCASE("name, index, value and times relative to the measure start") {
    CHECK(str(arr[0]["name"]) == "base");
    CHECK(arr[1]["index"].GetInt() == 1);
    CHECK(arr[1]["value"].GetDouble() == 200);
    CHECK(arr[1]["start_s"].GetDouble() == doctest::Approx(10));
    CHECK(arr[1]["end_s"].GetDouble() == doctest::Approx(30));
    CHECK(arr[1]["settle_end_s"].GetDouble() == doctest::Approx(35));
    CHECK(arr[2]["start_s"].GetDouble() == doctest::Approx(35));
  }
  SUBCASE("config: the level as a number or a ramp, the end and the settle") {
    const auto& base = arr[0]["config"];
    CHECK(str(base["mode"]) == "concurrency");
    CHECK(base["concurrency"].GetDouble() == 8);
    CHECK_FALSE(base.HasMember("rate"));
    CHECK(base["duration_s"].GetDouble() == doctest::Approx(10));
    const auto& ramp = arr[1]["config"];
    CHECK(str(ramp["mode"]) == "rate");
    REQUIRE(ramp["rate"].IsObject());
    CHECK(ramp["rate"]["from"].GetDouble() == 10);
    CHECK(ramp["rate"]["to"].GetDouble() == 200);
    CHECK(str(ramp["rate"]["shape"]) == "linear");
    CHECK(ramp["concurrency"].GetDouble() == 64);  // the cap
    CHECK(str(ramp["arrival"]) == "poisson");
    CHECK(ramp["settle_s"].GetDouble() == 5);
  }
  SUBCASE("every metric tag of the stage, with the same 16 keys as at the top level") {
    for (rapidjson::SizeType i = 0; i < arr.Size(); ++i) {
      const MetricsSnapshot& m = stages[i].metrics;
      for (const auto& stats : m.metrics) {
        CAPTURE(stats.tag);
        REQUIRE(arr[i].HasMember(stats.tag.c_str()));
        CHECK(arr[i][stats.tag.c_str()].MemberCount() == doc[stats.tag.c_str()].MemberCount());
        CHECK(arr[i][stats.tag.c_str()]["avg"].GetDouble() == doctest::Approx(stats.avg));
      }
    }
    CHECK(arr[0]["time_to_first_token"]["p50"].GetDouble() == doctest::Approx(50).epsilon(0.01));
    CHECK(arr[1]["time_to_first_token"]["p99"].GetDouble() == doctest::Approx(120).epsilon(0.01));
    CHECK(arr[0]["request_count"]["avg"].GetDouble() == 40);
    CHECK(arr[1]["error_request_count"]["avg"].GetDouble() == 4);
    CHECK_FALSE(arr[2].HasMember("time_to_first_token"));  // nothing succeeded
    REQUIRE(arr[1]["error_summary"].Size() == 1);
    CHECK(arr[1]["error_summary"][0]["count"].GetInt() == 4);
  }
  SUBCASE("each stage has its own verdict") {
    CHECK(str(arr[0]["verdict"]["status"]) == "pass");
    CHECK(str(arr[1]["verdict"]["status"]) == "warn");
    CHECK(str(arr[1]["verdict"]["reasons"][0]) == "4 request(s) failed (4.76%)");
    CHECK(str(arr[2]["verdict"]["status"]) == "fail");
    CHECK_FALSE(arr[0]["verdict"].HasMember("slo_met"));  // not a search step
  }
  CHECK_FALSE(doc.HasMember("search"));
}

TEST_CASE("summary.json has no stages or search for a single-level run") {
  const auto doc = parse_json(convoy::controller::summary_json(whole_run(), SummaryExtras{}));
  CHECK_FALSE(doc.HasMember("stages"));
  CHECK_FALSE(doc.HasMember("search"));
  CHECK(doc.HasMember("verdict"));
}

TEST_CASE("summary.json search: every step with its SLO judgement and the answer") {
  std::vector<StageFacts> stages;
  stages.push_back(make_stage("concurrency=1", 0, LoadMode::kConcurrency, 1, 0, 10, 20, 40));
  stages.push_back(make_stage("concurrency=512", 1, LoadMode::kConcurrency, 512, 10, 20, 20, 900));
  stages.push_back(make_stage("concurrency=256", 2, LoadMode::kConcurrency, 256, 20, 30, 20, 400));
  stages[0].slo_met = true;
  stages[1].slo_met = false;
  stages[1].slo_failures = {"time_to_first_token p99 900 ms > 500 ms"};
  stages[2].slo_met = true;
  SearchFacts search;
  search.config.vary = LoadMode::kConcurrency;
  search.config.low = 1;
  search.config.high = 512;
  search.config.step_duration_s = 10;
  search.config.slo.limits["time_to_first_token"]["p99"] = 500;
  search.config.slo.error_rate = 0.01;
  search.steps = {SearchStep{0, 1, true}, SearchStep{1, 512, false}, SearchStep{2, 256, true}};
  search.max_meeting_slo = 256;
  SummaryExtras extras = extras_for(stages, ProfileKind::kSearch);
  extras.search = &search;
  const auto doc = parse_json(convoy::controller::summary_json(whole_run(), extras));
  REQUIRE(doc.HasMember("search"));
  const auto& s = doc["search"];
  CHECK(str(s["vary"]) == "concurrency");
  CHECK(s["low"].GetDouble() == 1);
  CHECK(s["high"].GetDouble() == 512);
  CHECK(s["step_duration_s"].GetDouble() == 10);
  CHECK(s["slo"]["time_to_first_token"]["p99"].GetDouble() == 500);
  CHECK(s["slo"]["error_rate"].GetDouble() == doctest::Approx(0.01));
  REQUIRE(s["steps"].Size() == 3);
  CHECK(str(s["steps"][1]["stage"]) == "concurrency=512");
  CHECK(s["steps"][1]["value"].GetDouble() == 512);
  CHECK_FALSE(s["steps"][1]["met"].GetBool());
  REQUIRE(s["steps"][1]["failures"].Size() == 1);
  CHECK(str(s["steps"][1]["failures"][0]) == "time_to_first_token p99 900 ms > 500 ms");
  CHECK(s["steps"][2]["met"].GetBool());
  CHECK(s["steps"][2]["failures"].Size() == 0);
  CHECK(s["result"]["max_meeting_slo"].GetDouble() == 256);
  CHECK(s["result"]["min_failing"].IsNull());
  // Each step is also a stage, with the judgement in its verdict.
  CHECK(doc["stages"][1]["verdict"]["slo_met"].IsFalse());
  CHECK(str(doc["stages"][1]["verdict"]["slo_failures"][0]).find("900 ms") != std::string::npos);
}

TEST_CASE("summary.csv has a stage column and one block of rows per stage") {
  std::vector<StageFacts> stages = three_stages();
  stages[1].config.name = "ramp, \"fast\"";
  const MetricsSnapshot run = whole_run();
  const auto lines = stage_lines(convoy::controller::summary_csv(run, stages));
  REQUIRE_FALSE(lines.empty());
  CHECK(lines[0] ==
        "metric,unit,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,count,sum,stage");
  size_t expected = 1 + run.metrics.size();
  for (const auto& st : stages) expected += st.metrics.metrics.size();
  REQUIRE(lines.size() == expected);
  // The whole run first, stage "" (the row ends in the empty field).
  for (size_t i = 1; i <= run.metrics.size(); ++i) {
    CAPTURE(lines[i]);
    CHECK(lines[i].back() == ',');
    CHECK(std::count(lines[i].begin(), lines[i].end(), ',') == 17);
  }
  std::set<std::string> seen;  // the last field of every stage row (the quoted one aside)
  for (size_t i = 1 + run.metrics.size(); i < lines.size(); ++i) {
    if (lines[i].back() != '"') seen.insert(lines[i].substr(lines[i].rfind(',') + 1));
  }
  CHECK(seen == std::set<std::string>{"base", "spike"});
  const std::string first_base = lines[1 + run.metrics.size()];
  CHECK(first_base.rfind("time_to_first_token,ms,50,", 0) == 0);
  CHECK(first_base.substr(first_base.size() - 5) == ",base");
  // A name with a comma and quotes is one quoted field.
  const std::string text = convoy::controller::summary_csv(run, stages);
  CHECK(text.find(",\"ramp, \"\"fast\"\"\"\n") != std::string::npos);
}

TEST_CASE("records.jsonl names the stage, or the settle window, of each request") {
  const Record r = stage_ok_record(kMeasureStart, 50);
  const auto in_stage = parse_json(convoy::controller::record_json_line(r, "w-0", "h", "ramp"));
  CHECK(str(in_stage["stage"]) == "ramp");
  CHECK_FALSE(in_stage.HasMember("settle"));
  const auto settling =
      parse_json(convoy::controller::record_json_line(r, "w-0", "h", "ramp", true));
  CHECK(str(settling["settle"]) == "ramp");
  CHECK_FALSE(settling.HasMember("stage"));
  const auto single = parse_json(convoy::controller::record_json_line(r, "w-0", "h"));
  CHECK_FALSE(single.HasMember("stage"));
  CHECK_FALSE(single.HasMember("settle"));

  SUBCASE("the writer streams the same lines") {
    TempDir dir("convoy-stage-records-");
    {
      convoy::controller::RecordsWriter writer(dir.path() / "records.jsonl");
      writer.write(r, "w-0", "h", "base");
      writer.write(r, "w-0", "h", "base", true);
      writer.write(r, "w-0", "h");
    }
    const auto docs = read_jsonl(dir.path() / "records.jsonl");
    REQUIRE(docs.size() == 3);
    CHECK(str(docs[0]["stage"]) == "base");
    CHECK(str(docs[1]["settle"]) == "base");
    CHECK_FALSE(docs[2].HasMember("stage"));
  }
}

TEST_CASE("the console prints one line per stage as it ends") {
  const std::vector<StageFacts> stages = three_stages();
  SUBCASE("a concurrency stage") {
    const std::string line = convoy::controller::stage_line(stages[0]);
    CAPTURE(line);
    CHECK(line.rfind("stage base (concurrency 8): 40 requests, ", 0) == 0);
    CHECK(line.find(" req/s, ") != std::string::npos);
    CHECK(line.find(" output tok/s, TTFT p50 50.") != std::string::npos);
    CHECK(line.find("ITL p99 10.") != std::string::npos);
    CHECK(line.find("0 errors (0.00%)") != std::string::npos);
    CHECK(line.find('\n') == std::string::npos);
  }
  SUBCASE("a rate ramp with errors") {
    const std::string line = convoy::controller::stage_line(stages[1]);
    CAPTURE(line);
    CHECK(line.rfind("stage ramp (rate 10->200/s): 80 requests", 0) == 0);
    CHECK(line.find("TTFT p50 120.") != std::string::npos);
    CHECK(line.find("4 errors (4.76%)") != std::string::npos);
  }
  SUBCASE("a stage where nothing succeeded") {
    const std::string line = convoy::controller::stage_line(stages[2]);
    CHECK(line.find("TTFT p50 n/a ms") != std::string::npos);
    CHECK(line.find("6 errors (100.00%)") != std::string::npos);
  }
  SUBCASE("a search step says whether it met the SLO, and why not") {
    StageFacts step = stages[0];
    step.slo_met = false;
    step.slo_failures = {"time_to_first_token p99 812 ms > 500 ms", "error_rate 0.02 > 0.01"};
    const std::string line = convoy::controller::stage_line(step);
    CHECK(line.find(", SLO missed: time_to_first_token p99 812 ms > 500 ms; error_rate") !=
          std::string::npos);
    step.slo_met = true;
    step.slo_failures.clear();
    CHECK(convoy::controller::stage_line(step).substr(convoy::controller::stage_line(step).size() -
                                                      9) == ", SLO met");
  }
}

TEST_CASE("the console prints a per-stage table at the end") {
  std::vector<StageFacts> stages = three_stages();
  std::ostringstream out;
  convoy::controller::print_stage_table(out, stages);
  const auto lines = stage_lines(out.str());
  REQUIRE(lines.size() == 3 + stages.size() + 1);  // title, header, rule, rows, rule
  CHECK(lines[0].rfind("convoy | stages", 0) == 0);
  CHECK(lines[1].find("TTFT p99") != std::string::npos);
  CHECK(lines[1].find("SLO") == std::string::npos);  // no search step
  CHECK(lines[3].rfind("base  concurrency 8", 0) == 0);
  CHECK(lines[4].rfind("ramp  rate 10->200/s", 0) == 0);
  CHECK(lines[4].find("      80") != std::string::npos);
  CHECK(lines[5].find("n/a") != std::string::npos);
  for (size_t i = 3; i < 6; ++i) CHECK(lines[i].size() <= lines[2].size() + 1);

  SUBCASE("search steps get an SLO column") {
    stages[0].slo_met = true;
    stages[1].slo_met = false;
    std::ostringstream with_slo;
    convoy::controller::print_stage_table(with_slo, stages);
    const auto rows = stage_lines(with_slo.str());
    CHECK(rows[1].find("SLO") != std::string::npos);
    CHECK(rows[3].substr(rows[3].size() - 3) == "met");
    CHECK(rows[4].substr(rows[4].size() - 6) == "missed");
  }
  SUBCASE("no stage, no table") {
    std::ostringstream none;
    convoy::controller::print_stage_table(none, {});
    CHECK(none.str().empty());
  }
}

TEST_CASE("the console prints a capacity search's answer") {
  SearchFacts search;
  search.config.vary = LoadMode::kRate;
  search.config.low = 1;
  search.config.high = 64;
  search.steps = {SearchStep{0, 1, true}, SearchStep{1, 64, false}, SearchStep{2, 32.5, true}};
  search.max_meeting_slo = 32.5;
  search.min_failing = 64;
  std::ostringstream out;
  convoy::controller::print_search_result(out, search);
  CHECK(out.str() ==
        "Capacity search (rate, 3 steps): highest rate meeting the SLO: 32.5; lowest failing: "
        "64\n");
  SUBCASE("even low missed the SLO") {
    search.max_meeting_slo.reset();
    search.min_failing = 1;
    std::ostringstream low;
    convoy::controller::print_search_result(low, search);
    CHECK(low.str().find("none (even low 1 missed it)") != std::string::npos);
  }
  SUBCASE("even high met it") {
    search.max_meeting_slo = 64;
    search.min_failing.reset();
    search.complete = true;
    std::ostringstream high;
    convoy::controller::print_search_result(high, search);
    CHECK(high.str().find("lowest failing: none (even high 64 met it)") != std::string::npos);
  }
  SUBCASE("interrupted: a bound never judged is not claimed") {
    search.steps.resize(1);
    search.max_meeting_slo = 1;
    search.min_failing.reset();
    std::ostringstream cut;
    convoy::controller::print_search_result(cut, search);
    CHECK(cut.str().find("met it") == std::string::npos);
    CHECK(cut.str().find("lowest failing: none judged (the search was interrupted)") !=
          std::string::npos);
  }
}
