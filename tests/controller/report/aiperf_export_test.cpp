// output.aiperf_export: convoy's copies of AIPerf's export files have the keys, value types and
// nesting of the fixtures written from AIPerf's sources (tests/fixtures/aiperf/README.md).
#include "controller/report/aiperf_export.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "report_records.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::Config;
using convoy::controller::AiperfProvenance;
using convoy::controller::AiperfRecordsWriter;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

std::string fixture_path(const std::string& name) {
  return std::string(CONVOY_SOURCE_DIR) + "/tests/fixtures/aiperf/" + name;
}

Record export_ok_record(int64_t at, uint64_t conversation) {
  Record r = streamed_ok_record(at);
  r.x_correlation_id = "cid-" + std::to_string(conversation);
  r.conversation_id = "conv-" + std::to_string(conversation);
  r.conversation_index = conversation;
  return r;
}

Record cancelled_record(int64_t at) {
  Record r;
  r.x_request_id = "rid-cancel";
  r.x_correlation_id = "cid-9";
  r.conversation_id = "conv-9";
  r.conversation_index = 9;
  r.intended_ns = at;
  r.sent_ns = at;
  r.end_ns = at + 3 * kMs;
  r.input_tokens = 64;
  r.error.kind = ErrorKind::kCancelled;
  r.error.message = "cancelled by load.cancel";
  return r;
}

MetricsSnapshot export_snapshot() {
  Config config;
  MetricsAggregator agg(config);
  for (int i = 0; i < 10; ++i) agg.add(export_ok_record(1'000'000'000 + i * 100 * kMs, i));
  agg.add(cancelled_record(2'000'000'000));
  return agg.snapshot();
}

AiperfProvenance provenance() {
  return {"0e8f5c2a-1b2c-4d3e-8f4a-5b6c7d8e9f00", "2026-12-02T00:01:28.123Z",
          "2026-12-02T00:02:28.456Z", false};
}

const char* kind(const rapidjson::Value& v) {
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  return "null";
}

// Every key of `fixture` is in `ours` with a value of the same kind, recursively (arrays: their
// first elements). Metric blocks (objects with a "unit") have exactly the fixture's keys.
void check_same_shape(const rapidjson::Value& fixture, const rapidjson::Value& ours,
                      const std::string& path) {
  INFO(path);
  REQUIRE(std::string(kind(ours)) == kind(fixture));
  if (fixture.IsArray()) {
    if (!fixture.Empty() && !ours.Empty()) check_same_shape(fixture[0], ours[0], path + "[0]");
    return;
  }
  if (!fixture.IsObject()) return;
  for (const auto& m : fixture.GetObject()) {
    const std::string key = m.name.GetString();
    CHECK_MESSAGE(ours.HasMember(key.c_str()), (path + "." + key));
    if (ours.HasMember(key.c_str())) check_same_shape(m.value, ours[key.c_str()], path + "." + key);
  }
  if (fixture.HasMember("unit")) CHECK(ours.MemberCount() == fixture.MemberCount());
}

std::vector<std::string> crlf_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find("\r\n", at);
    REQUIRE(end != std::string::npos);  // every line ends in CRLF, as Python's csv writes them
    lines.push_back(text.substr(at, end - at));
    at = end + 2;
  }
  return lines;
}

}  // namespace

TEST_CASE("profile_export_aiperf.json has the keys, types and nesting of AIPerf schema 1.5") {
  Config config;
  config.target.model = "Qwen/Qwen3-0.6B";
  config.load.requests = 20;
  const std::string text = convoy::controller::aiperf_profile_json(
      export_snapshot(), config, provenance(), "http://127.0.0.1:8000");
  const rapidjson::Document ours = parse_json(text);
  REQUIRE_FALSE(ours.HasParseError());
  const rapidjson::Document fixture = read_json(fixture_path("profile_export_aiperf.json"));
  REQUIRE_FALSE(fixture.HasParseError());
  check_same_shape(fixture, ours, "$");
  CHECK(std::string(ours["schema_version"].GetString()) == "1.5");
  CHECK(std::string(ours["benchmark_id"].GetString()) == provenance().benchmark_id);
  CHECK(ours["request_count"]["avg"].GetDouble() == 10);
  CHECK(ours["error_request_count"]["avg"].GetDouble() == 1);
  CHECK(ours["total_isl"]["avg"].GetDouble() == 640);
  CHECK(ours["time_to_first_token"]["count"].GetInt64() == 10);
  // Only AIPerf's tags: convoy's own metrics stay in summary.json.
  CHECK_FALSE(ours.HasMember("schedule_lag"));
  CHECK_FALSE(ours.HasMember("corrected_request_latency"));
  CHECK_FALSE(ours.HasMember("total_input_tokens"));
  CHECK(std::string(ours["input_config"]["endpoint"]["url"].GetString()) ==
        "http://127.0.0.1:8000");
}

TEST_CASE("profile_export_aiperf.csv has AIPerf's two sections") {
  const std::vector<std::string> lines =
      crlf_lines(convoy::controller::aiperf_profile_csv(export_snapshot()));
  REQUIRE(lines.size() > 4);
  CHECK(lines[0] == "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std");
  const auto blank = std::find(lines.begin(), lines.end(), "");
  REQUIRE(blank != lines.end());
  REQUIRE(blank + 1 != lines.end());
  CHECK(*(blank + 1) == "Metric,Value");
  auto row_of = [&](const std::string& name) -> std::string {
    for (const auto& l : lines) {
      if (l.rfind(name + ",", 0) == 0) return l;
    }
    return "";
  };
  CHECK(row_of("Time to First Token (ms)").rfind("Time to First Token (ms),20.00,", 0) == 0);
  CHECK(row_of("Input Sequence Length (tokens)") ==
        "Input Sequence Length (tokens),64.00,64,64,640,64.00,64.00,64.00,64.00,64.00,64.00,"
        "64.00,64.00,64.00,0.00");
  CHECK(row_of("Request Count") == "Request Count,10");  // no unit for counts
  CHECK(row_of("Error Request Count") == "Error Request Count,1");
  CHECK(row_of("Total Input Sequence Length (tokens)") ==
        "Total Input Sequence Length (tokens),640");
  CHECK(row_of("Request Throughput (requests/sec)").size() > 0);
  // Record metrics above the blank line, aggregates below.
  CHECK(std::find(lines.begin(), blank, row_of("Request Count")) == blank);
}

TEST_CASE("profile_export.jsonl lines follow AIPerf's record layout") {
  const std::vector<rapidjson::Document> fixture = read_jsonl(fixture_path("profile_export.jsonl"));
  REQUIRE(fixture.size() == 2);
  const int64_t offset = 1'700'000'000'000'000'000;
  const rapidjson::Document ok = parse_json(
      convoy::controller::aiperf_record_line(export_ok_record(5 * kMs, 45), "w1", offset));
  const rapidjson::Document failed =
      parse_json(convoy::controller::aiperf_record_line(cancelled_record(7 * kMs), "w2", offset));
  REQUIRE_FALSE(ok.HasParseError());
  REQUIRE_FALSE(failed.HasParseError());
  check_same_shape(fixture[0], ok, "ok");
  check_same_shape(fixture[1], failed, "failed");
  CHECK(convoy::test::keys_of(ok["metadata"]) == convoy::test::keys_of(fixture[0]["metadata"]));
  CHECK(convoy::test::keys_of(ok["metrics"]) == convoy::test::keys_of(fixture[0]["metrics"]));
  CHECK(convoy::test::keys_of(failed["metrics"]) == convoy::test::keys_of(fixture[1]["metrics"]));
  SUBCASE("times are epoch ns, metrics in display units") {
    CHECK(ok["metadata"]["request_start_ns"].GetInt64() == offset + 6 * kMs);
    CHECK(ok["metadata"]["request_end_ns"].GetInt64() == offset + 47 * kMs);
    CHECK(ok["metadata"]["session_num"].GetInt64() == 45);
    CHECK(std::string(ok["metadata"]["benchmark_phase"].GetString()) == "profiling");
    CHECK(ok["metrics"]["time_to_first_token"]["value"].GetDouble() == doctest::Approx(20));
    CHECK(ok["metrics"]["inter_chunk_latency"]["value"].Size() == 4);
    CHECK(ok["error"].IsNull());
    CHECK(failed["metadata"]["was_cancelled"].GetBool());
    CHECK(failed["metadata"]["cancellation_time_ns"].GetInt64() == offset + 10 * kMs);
    CHECK(std::string(failed["error"]["type"].GetString()) == "cancelled");
  }
}

TEST_CASE("profile_export.jsonl is streamed and leaves out close requests") {
  TempDir dir("convoy-aiperf-");
  const fs::path path = dir.path() / "profile_export.jsonl";
  {
    const int64_t offset = 1'000'000'000'000'000'000;  // the epoch ns at the run clock's 0
    AiperfRecordsWriter writer(path, offset);
    writer.write(export_ok_record(kMs, 1), "w1");
    Record close = export_ok_record(2 * kMs, 1);
    close.close_request = true;
    writer.write(close, "w1");
    writer.write(cancelled_record(3 * kMs), "w1");
    writer.close();
    CHECK_FALSE(writer.failure());
    CHECK(writer.lines() == 2);
  }
  const auto lines = read_jsonl(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["error"].IsNull());
  CHECK(lines[1]["error"].IsObject());
  // The epoch times come from the offset given, not from a clock the writer read.
  CHECK(lines[0]["metadata"]["request_start_ns"].GetInt64() ==
        1'000'000'000'000'000'000 + 2 * kMs);  // sent 1 ms after intended
}

TEST_CASE("wall_minus_steady_ns maps the run clock onto the epoch") {
  const std::chrono::system_clock::time_point wall{std::chrono::seconds(1'700'000'000)};
  CHECK(convoy::controller::wall_minus_steady_ns(wall, 0) == 1'700'000'000'000'000'000);
  CHECK(convoy::controller::wall_minus_steady_ns(wall, 5'000) == 1'700'000'000'000'000'000 - 5'000);
}

TEST_CASE("profile_export_aiperf.json's input_config holds the levels a load profile ran at") {
  auto loadgen_of = [](const Config& config, const std::vector<convoy::StageConfig>* ran) {
    const std::string text = convoy::controller::aiperf_profile_json(
        export_snapshot(), config, provenance(), "http://127.0.0.1:8000", ran);
    rapidjson::Document doc = parse_json(text);
    REQUIRE_FALSE(doc.HasParseError());
    rapidjson::Document loadgen;
    loadgen.CopyFrom(doc["input_config"]["loadgen"], loadgen.GetAllocator());
    return loadgen;
  };
  SUBCASE("stages at 4 and 48: both levels, not the unused default 16") {
    const Config staged = convoy::parse_config(
        "load:\n  stages:\n    - {name: low, concurrency: 4, duration_s: 5}\n"
        "    - {name: high, concurrency: 48, duration_s: 5}\n",
        "c.yaml");
    const rapidjson::Document g = loadgen_of(staged, nullptr);
    REQUIRE(g["concurrency"].IsArray());
    REQUIRE(g["concurrency"].Size() == 2);
    CHECK(g["concurrency"][0].GetInt64() == 4);
    CHECK(g["concurrency"][1].GetInt64() == 48);
    CHECK(g["benchmark_duration"].GetDouble() == 5);
    CHECK_FALSE(g.HasMember("request_rate"));
  }
  SUBCASE("a rate sweep: its rates, the per-step end and the cooldown between steps") {
    const Config sweep = convoy::parse_config(
        "load:\n  sweep:\n    rate: [2, 4, 8]\n    requests: 30\n    settle_s: 1.5\n", "c.yaml");
    const rapidjson::Document g = loadgen_of(sweep, nullptr);
    REQUIRE(g["request_rate"].IsArray());
    CHECK(g["request_rate"].Size() == 3);
    CHECK(g["request_rate"][2].GetDouble() == 8);
    CHECK_FALSE(g.HasMember("concurrency"));
    CHECK(g["request_count"].GetInt64() == 30);
    CHECK(g["parameter_sweep_cooldown_seconds"].GetDouble() == 1.5);
  }
  SUBCASE("a search: the steps it ran, each level once") {
    const Config search = convoy::parse_config(
        "load:\n  search: {vary: concurrency, low: 1, high: 64, step_duration_s: 2, "
        "slo: {time_to_first_token: {p99: 500}}}\n",
        "c.yaml");
    std::vector<convoy::StageConfig> ran(4);
    const double values[] = {1, 64, 32, 32};
    for (size_t i = 0; i < ran.size(); ++i) {
      ran[i].value = values[i];
      ran[i].duration_s = 2;
    }
    const rapidjson::Document g = loadgen_of(search, &ran);
    REQUIRE(g["concurrency"].IsArray());
    CHECK(g["concurrency"].Size() == 3);
    CHECK(g["concurrency"][1].GetInt64() == 64);
  }
  SUBCASE("a single level keeps AIPerf's plain number") {
    Config single;
    single.load.concurrency = 8;
    const rapidjson::Document g = loadgen_of(single, nullptr);
    CHECK(g["concurrency"].GetInt64() == 8);
  }
}

TEST_CASE(
    "inputs.json holds AIPerf's InputsFile: one session per conversation, a payload per turn") {
  convoy::proto::TargetSettings target;
  target.model = "m";
  target.extra_body_json = R"({"ignore_eos": true, "stream": false})";
  convoy::proto::Conversation c;
  c.system_prompt = "be brief";
  c.turns.resize(2);
  c.turns[0].user_text = "hello \"there\"";
  c.turns[0].max_tokens = 16;
  c.turns[1].messages_json = R"([{"role": "user", "content": "again"}])";
  c.turns[1].extra_json = R"({"temperature": 0})";
  TempDir dir("convoy-aiperf-inputs-");
  const fs::path path = dir.path() / "inputs.json";
  {
    convoy::controller::AiperfInputsWriter writer(path, target);
    writer.write_session("cid-1", c);
    writer.write_session("cid-2", c);
    writer.close();
    CHECK(writer.sessions() == 2);
    CHECK_FALSE(writer.failure());
  }
  const rapidjson::Document doc = read_json(path);
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc["data"].Size() == 2);
  const auto& s = doc["data"][1];
  CHECK(std::string(s["session_id"].GetString()) == "cid-2");
  REQUIRE(s["payloads"].Size() == 2);
  const auto& p0 = s["payloads"][0];
  CHECK(std::string(p0["model"].GetString()) == "m");
  REQUIRE(p0["messages"].Size() == 2);  // the system prompt, then the turn alone
  CHECK(std::string(p0["messages"][0]["role"].GetString()) == "system");
  CHECK(std::string(p0["messages"][1]["content"].GetString()) == "hello \"there\"");
  CHECK(p0["max_tokens"].GetInt64() == 16);
  CHECK(p0["ignore_eos"].GetBool());
  CHECK_FALSE(p0["stream"].GetBool());  // target.extra_body wins, as in the worker's body
  const auto& p1 = s["payloads"][1];
  CHECK(std::string(p1["messages"][1]["content"].GetString()) == "again");
  CHECK(p1["temperature"].GetInt() == 0);
  CHECK_FALSE(p1.HasMember("max_tokens"));

  target.endpoint = convoy::proto::Endpoint::kCompletions;
  target.extra_body_json = "{}";
  const rapidjson::Document completion =
      parse_json(convoy::controller::aiperf_turn_payload(target, c.system_prompt, c.turns[0]));
  CHECK(std::string(completion["prompt"].GetString()) == "be brief\nhello \"there\"");
  CHECK(completion["stream_options"]["include_usage"].GetBool());
  target.endpoint = convoy::proto::Endpoint::kEmbeddings;
  const rapidjson::Document embedding =
      parse_json(convoy::controller::aiperf_turn_payload(target, c.system_prompt, c.turns[0]));
  CHECK(std::string(embedding["input"].GetString()) == "hello \"there\"");
  CHECK_FALSE(embedding.HasMember("stream"));
}
