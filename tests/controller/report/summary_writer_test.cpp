#include "controller/report/summary_writer.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "controller/report/report_html.hpp"
#include "report_records.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using convoy::Config;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::RecordsWriter;
using convoy::controller::SummaryExtras;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

std::vector<std::string> file_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Record writer_ok_record(int64_t at, uint32_t turn) {
  Record r = streamed_ok_record(at);
  r.x_correlation_id = "cid-1";
  r.conversation_id = "conv-1";
  r.turn_index = turn;
  r.cached_tokens = 32;
  r.session_control = {
      "cid-1", convoy::proto::SessionAction::kBind, 300, {{"ttl_note", R"({"a":[1]})"}}};
  return r;
}

Record writer_error_record(int64_t at) {
  Record r;
  r.x_request_id = "rid-err";
  r.x_correlation_id = "cid-2";
  r.intended_ns = at;
  r.sent_ns = at;
  r.end_ns = at + 3 * kMs;
  r.http_status = 503;
  r.error.kind = ErrorKind::kHttpStatus;
  r.error.code = 503;
  r.error.message = "overloaded";
  return r;
}

MetricsSnapshot writer_snapshot() {
  Config config;
  config.slo["time_to_first_token"] = 100;
  MetricsAggregator agg(config);
  for (int i = 0; i < 10; ++i)
    agg.add(writer_ok_record(1'000'000'000 + i * 100 * kMs, static_cast<uint32_t>(i % 3)));
  agg.add(writer_error_record(2'000'000'000));
  return agg.snapshot();
}

constexpr const char* kStatKeys[] = {"unit", "avg", "min", "max", "p1",  "p5",  "p10",   "p25",
                                     "p50",  "p75", "p90", "p95", "p99", "std", "count", "sum"};

}  // namespace

TEST_CASE("summary.json has AIPerf's layout") {
  TempDir dir("convoy-summary-");
  const MetricsSnapshot snapshot = writer_snapshot();
  SummaryExtras extras;
  extras.run_json = R"({"name":"t","seed":42})";
  extras.verdict_json = R"({"status":"pass","reasons":[]})";
  const fs::path path = dir.path() / "summary.json";
  convoy::controller::write_summary_json(path, snapshot, extras);
  CHECK_FALSE(fs::exists(dir.path() / "summary.json.tmp"));

  auto doc = read_json(path);
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.IsObject());

  SUBCASE("every distribution tag has all 16 keys") {
    for (const char* tag :
         {"time_to_first_token", "time_to_first_token_first_turn",
          "time_to_first_token_later_turns", "time_to_second_token", "inter_token_latency",
          "inter_chunk_latency", "request_latency", "corrected_request_latency", "schedule_lag",
          "input_sequence_length", "output_sequence_length", "output_token_throughput_per_user",
          "cached_tokens", "prefix_cache_hit_rate"}) {
      INFO(tag);
      REQUIRE(doc.HasMember(tag));
      const auto& m = doc[tag];
      REQUIRE(m.IsObject());
      CHECK(m.MemberCount() == 16);
      for (const char* key : kStatKeys) CHECK(m.HasMember(key));
    }
    // Aggregates: {unit, avg} only (AIPerf's shape; summary_shape_test.cpp tests this fully).
    for (const char* tag : {"output_token_throughput", "request_throughput", "goodput",
                            "request_count", "error_request_count", "benchmark_duration"}) {
      INFO(tag);
      REQUIRE(doc.HasMember(tag));
      CHECK(doc[tag].MemberCount() == 2);
    }
    CHECK(std::string(doc["time_to_first_token"]["unit"].GetString()) == "ms");
    CHECK(doc["time_to_first_token"]["avg"].GetDouble() == doctest::Approx(20.0));
    CHECK(doc["request_count"]["avg"].GetDouble() == doctest::Approx(10.0));
    CHECK(doc["error_request_count"]["avg"].GetDouble() == doctest::Approx(1.0));
    CHECK(std::string(doc["request_throughput"]["unit"].GetString()) == "requests/sec");
  }
  SUBCASE("error_summary and the caller's sections") {
    REQUIRE(doc["error_summary"].IsArray());
    REQUIRE(doc["error_summary"].Size() == 1);
    const auto& e = doc["error_summary"][0];
    CHECK(e["error_details"]["code"].GetInt() == 503);
    CHECK(std::string(e["error_details"]["type"].GetString()) == "http_status");
    CHECK(std::string(e["error_details"]["message"].GetString()) == "overloaded");
    CHECK(e["count"].GetInt() == 1);
    CHECK(std::string(e["example_correlation_ids"][0].GetString()) == "cid-2");
    CHECK(std::string(doc["run"]["name"].GetString()) == "t");
    CHECK(std::string(doc["verdict"]["status"].GetString()) == "pass");
    CHECK(doc["workers"].IsArray());
    CHECK(doc["insights"].IsArray());
  }
  SUBCASE("invalid sections are refused") {
    SummaryExtras bad;
    bad.workers_json = "[1,";
    CHECK_THROWS_AS(convoy::controller::summary_json(snapshot, bad), std::invalid_argument);
    bad.workers_json = "{}";  // must be an array
    CHECK_THROWS_AS(convoy::controller::summary_json(snapshot, bad), std::invalid_argument);
  }
}

TEST_CASE("summary.json of a run where every request failed") {
  MetricsAggregator agg{Config{}};
  agg.add(writer_error_record(1'000'000'000));
  rapidjson::Document doc;
  doc.Parse(convoy::controller::summary_json(agg.snapshot()).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["request_count"]["avg"].GetDouble() == 0);
  CHECK(doc["error_request_count"]["avg"].GetDouble() == 1);
  CHECK_FALSE(doc.HasMember("time_to_first_token"));
  CHECK(doc["error_summary"].Size() == 1);
}

TEST_CASE("summary.csv has one row per metric") {
  TempDir dir("convoy-summary-");
  const MetricsSnapshot snapshot = writer_snapshot();
  const fs::path path = dir.path() / "summary.csv";
  convoy::controller::write_summary_csv(path, snapshot);
  const auto lines = file_lines(read_file(path));
  REQUIRE(lines.size() == snapshot.metrics.size() + 1);
  CHECK(lines[0] ==
        "metric,unit,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,count,sum,stage");
  for (size_t i = 1; i < lines.size(); ++i) {
    CHECK(std::count(lines[i].begin(), lines[i].end(), ',') == 17);  // stage "": a single level
  }
  bool found = false;
  for (const auto& line : lines) {
    if (line.rfind("time_to_first_token,ms,20,20,20,", 0) == 0) found = true;
  }
  CHECK(found);
}

TEST_CASE("records.jsonl streams one parseable line per request") {
  TempDir dir("convoy-summary-");
  const fs::path path = dir.path() / "records.jsonl";
  {
    RecordsWriter writer(path);
    writer.write(writer_ok_record(1'000'000'000, 0), "w1", "hostA");
    Record no_session = writer_ok_record(2'000'000'000, 1);
    no_session.session_control = {};
    no_session.cached_tokens = -1;
    writer.write(no_session, "w1", "hostA");
    writer.write(writer_error_record(3'000'000'000), "w2");
    CHECK(writer.lines() == 3);
    writer.flush();
    CHECK(file_lines(read_file(path)).size() == 3);  // flushed before close
    CHECK_FALSE(writer.failed());
  }
  const auto lines = file_lines(read_file(path));
  REQUIRE(lines.size() == 3);
  std::vector<rapidjson::Document> docs(3);
  for (size_t i = 0; i < 3; ++i) {
    docs[i].Parse(lines[i].c_str());
    REQUIRE_FALSE(docs[i].HasParseError());
    for (const char* key : {"x_request_id", "x_correlation_id", "conversation_id", "turn_index",
                            "final_turn", "worker_id", "host", "phase", "intended_ns", "sent_ns",
                            "first_byte_ns", "first_token_ns", "second_token_ns", "last_token_ns",
                            "end_ns", "metrics", "http_status", "error", "session_control"}) {
      INFO(key);
      CHECK(docs[i].HasMember(key));
    }
  }
  const auto& ok = docs[0];
  CHECK(std::string(ok["worker_id"].GetString()) == "w1");
  CHECK(std::string(ok["host"].GetString()) == "hostA");
  CHECK(std::string(ok["phase"].GetString()) == "measure");
  CHECK(ok["sent_ns"].GetInt64() == 1'001'000'000);
  CHECK(ok["error"].IsNull());
  CHECK(ok["metrics"]["ttft_ms"].GetDouble() == doctest::Approx(20.0));
  CHECK(ok["metrics"]["request_latency_ms"].GetDouble() == doctest::Approx(40.0));
  CHECK(ok["metrics"]["itl_ms"].GetDouble() == doctest::Approx(5.0));
  CHECK(ok["metrics"]["isl"].GetInt() == 64);
  CHECK(ok["metrics"]["osl"].GetInt() == 5);
  CHECK(ok["metrics"]["cached_tokens"].GetInt() == 32);
  REQUIRE(ok["session_control"].IsObject());
  CHECK(std::string(ok["session_control"]["action"].GetString()) == "bind");
  // convoy's keys in their order, then the body's own key as its JSON value (not a string)
  CHECK(lines[0].find(R"("session_control":{"session_id":"cid-1","action":"bind","timeout":300,)"
                      R"("ttl_note":{"a":[1]}})") != std::string::npos);
  CHECK(docs[1]["session_control"].IsNull());
  CHECK(docs[1]["metrics"]["cached_tokens"].IsNull());
  const auto& err = docs[2];
  REQUIRE(err["error"].IsObject());
  CHECK(std::string(err["error"]["kind"].GetString()) == "http_status");
  CHECK(err["error"]["code"].GetInt() == 503);
  CHECK(std::string(err["error"]["message"].GetString()) == "overloaded");
  CHECK(err["first_token_ns"].IsNull());
  CHECK(err["metrics"]["ttft_ms"].IsNull());

  SUBCASE("an unwritable path is refused at open") {
    CHECK_THROWS_AS(RecordsWriter(dir.path() / "missing" / "records.jsonl"), std::runtime_error);
  }
}

TEST_CASE("console tables") {
  const MetricsSnapshot snapshot = writer_snapshot();
  std::ostringstream out;
  convoy::controller::print_results_table(out, snapshot);
  const std::string table = out.str();
  CHECK(table.find("Time to First Token (ms)") != std::string::npos);
  CHECK(table.find("Time to First Token (later turns) (ms)") != std::string::npos);
  CHECK(table.find("Inter Token Latency (ms)") != std::string::npos);
  CHECK(table.find("Request Count:                        10") != std::string::npos);
  CHECK(table.find("Goodput") != std::string::npos);
  std::ostringstream errors;
  convoy::controller::print_error_table(errors, snapshot);
  CHECK(errors.str().find("overloaded") != std::string::npos);
  CHECK(errors.str().find("503") != std::string::npos);

  SUBCASE("numbers are grouped") {
    CHECK(convoy::controller::format_grouped(1234567.891) == "1,234,567.89");
    CHECK(convoy::controller::format_grouped(-0.001) == "0.00");
    CHECK(convoy::controller::format_grouped(-1500, 0) == "-1,500");
  }
}

TEST_CASE("every output is valid UTF-8 whatever bytes a server sent") {
  const std::string fffd = "\xEF\xBF\xBD";
  Record bad = writer_error_record(1'000'000'000);
  bad.error.message = "bad \xFF\xFE body \xE2\x82";  // lone bytes, a truncated sequence
  bad.error.type = "type\xC3";
  bad.session_control.session_id = "id\xED\xA0\x80";  // a surrogate
  auto strict = [](const std::string& text) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str(), text.size());
    return !doc.HasParseError();
  };
  // Any text, checked by rapidjson: written raw as a JSON string, parsed back strictly.
  auto strict_text = [&](const std::string& text) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    return strict(std::string(buffer.GetString(), buffer.GetSize()));
  };
  REQUIRE_FALSE(strict_text(bad.error.message));  // the check can fail

  const std::string line = convoy::controller::record_json_line(bad, "w-0", "host");
  CHECK(strict(line));
  const auto doc = parse_json(line);
  CHECK(std::string(doc["error"]["message"].GetString()) == "bad " + fffd + fffd + " body " + fffd);
  CHECK(std::string(doc["error"]["type"].GetString()) == "type" + fffd);
  CHECK(std::string(doc["session_control"]["session_id"].GetString()) == "id" + fffd + fffd + fffd);

  MetricsAggregator agg{Config{}};
  agg.add(bad);
  const MetricsSnapshot snapshot = agg.snapshot();
  SummaryExtras extras;
  extras.run_json = "{\"name\":\"n\xFF\"}";  // the caller's sections too
  const std::string summary = convoy::controller::summary_json(snapshot, extras);
  CHECK(strict(summary));
  CHECK(summary.find("bad " + fffd + fffd + " body " + fffd) != std::string::npos);
  CHECK(strict_text(convoy::controller::summary_csv(snapshot)));
  const std::string page = convoy::controller::report_html(snapshot, extras);
  CHECK(strict_text(page));
  CHECK(page.find("bad " + fffd + fffd + " body " + fffd) != std::string::npos);
}

TEST_CASE("records.jsonl carries reasoning_tokens and first_output_token_ns") {
  // A reasoning model: 3 of the 5 output tokens reasoned, the answer's first chunk at 36 ms.
  Record thinking = writer_ok_record(1'000'000'000, 0);
  thinking.reasoning_tokens = 3;
  thinking.first_output_token_ns = thinking.intended_ns + 36 * kMs;
  const auto doc = parse_json(convoy::controller::record_json_line(thinking, "w-0", "host"));
  REQUIRE(doc.HasMember("first_output_token_ns"));
  CHECK(doc["first_output_token_ns"].GetInt64() == 1'036'000'000);
  CHECK(doc["first_token_ns"].GetInt64() == 1'021'000'000);  // the first token of any kind
  CHECK(doc["metrics"]["reasoning_tokens"].GetInt64() == 3);
  CHECK(doc["metrics"]["osl"].GetInt64() == 5);  // reasoning included

  // No reasoning, no answer content (a request that failed before it): 0 and null.
  Record plain = writer_error_record(2'000'000'000);
  const auto none = parse_json(convoy::controller::record_json_line(plain, "w-0", "host"));
  REQUIRE(none.HasMember("first_output_token_ns"));
  CHECK(none["first_output_token_ns"].IsNull());
  CHECK(none["metrics"]["reasoning_tokens"].GetInt64() == 0);

  // More reasoning than the server's completion_tokens: at most osl, as summary.json counts it.
  thinking.reasoning_tokens = 9;
  const auto capped = parse_json(convoy::controller::record_json_line(thinking, "w-0", "host"));
  CHECK(capped["metrics"]["reasoning_tokens"].GetInt64() == 5);
}
