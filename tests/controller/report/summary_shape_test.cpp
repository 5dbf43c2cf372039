// summary.json's AIPerf shape (aggregates {unit, avg}), its top-level provenance, and
// output.slice_s time slices.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/histogram.hpp"
#include "controller/report/summary_writer.hpp"
#include "controller/report/timeslice.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace {

using convoy::Config;
using convoy::Histogram;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::MetricStats;
using convoy::controller::SparseHistogram;
using convoy::controller::StageFacts;
using convoy::controller::SummaryExtras;
using convoy::controller::TimeSliceAggregator;
using convoy::proto::ErrorKind;
using convoy::proto::Record;
using namespace convoy::test;

constexpr int64_t kShapeOrigin = 100 * kS;

// A request sent at `sent`, its first token `ttft_ms` later, ending 50 ms after it was sent.
Record record_at(int64_t sent, int64_t ttft_ms, bool ok = true) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(sent);
  r.x_correlation_id = "cid";
  r.intended_ns = sent;
  r.sent_ns = sent;
  r.end_ns = sent + 50 * kMs;
  if (ok) {
    r.first_token_ns = sent + ttft_ms * kMs;
    r.second_token_ns = r.first_token_ns + 5 * kMs;
    r.last_token_ns = sent + 45 * kMs;
    r.input_tokens = 10;
    r.output_tokens = 4;
    r.http_status = 200;
  } else {
    r.http_status = 500;
    r.error.kind = ErrorKind::kHttpStatus;
    r.error.code = 500;
    r.error.message = "boom";
  }
  return r;
}

Config config_with_slices(double slice_s) {
  Config c;
  c.output.slice_s = slice_s;
  return c;
}

const MetricStats* find(const std::vector<MetricStats>& metrics, const std::string& tag) {
  for (const auto& m : metrics) {
    if (m.tag == tag) return &m;
  }
  return nullptr;
}

const std::set<std::string> kAggregateKeys = {"unit", "avg"};
const std::set<std::string> kDistributionKeys = {"unit", "avg", "min",   "max", "p1",  "p5",
                                                 "p10",  "p25", "p50",   "p75", "p90", "p95",
                                                 "p99",  "std", "count", "sum"};

}  // namespace

TEST_CASE("summary.json aggregates carry only unit and avg, distributions every statistic") {
  Config config;
  config.slo["time_to_first_token"] = 100;
  MetricsAggregator agg(config);
  for (int i = 0; i < 5; ++i) agg.add(record_at(kShapeOrigin + i * 100 * kMs, 20));
  agg.add(record_at(kShapeOrigin + kS, 0, false));
  const MetricsSnapshot s = agg.snapshot();
  const rapidjson::Document doc = parse_json(convoy::controller::summary_json(s));
  REQUIRE_FALSE(doc.HasParseError());
  // AIPerf's AGGREGATE / DERIVED metric types (record_models.py MetricResult.to_json_result).
  for (const char* tag : {"request_count", "error_request_count", "request_throughput",
                          "output_token_throughput", "benchmark_duration", "goodput"}) {
    CAPTURE(tag);
    REQUIRE(doc.HasMember(tag));
    CHECK(convoy::test::keys_of(doc[tag]) == kAggregateKeys);
  }
  CHECK(doc["request_count"]["avg"].GetDouble() == 5);
  CHECK(doc["error_request_count"]["avg"].GetDouble() == 1);
  for (const MetricStats& m : s.metrics) {
    CAPTURE(m.tag);
    REQUIRE(doc.HasMember(m.tag.c_str()));
    CHECK(convoy::test::keys_of(doc[m.tag.c_str()]) ==
          (m.aggregate ? kAggregateKeys : kDistributionKeys));
  }
  CHECK(convoy::test::keys_of(doc["time_to_first_token"]) == kDistributionKeys);
  SUBCASE("and the same in each stage") {
    std::vector<StageFacts> stages(1);
    stages[0].config.name = "base";
    stages[0].metrics = s;
    SummaryExtras extras;
    extras.stages = stages;
    const rapidjson::Document staged = parse_json(convoy::controller::summary_json(s, extras));
    REQUIRE_FALSE(staged.HasParseError());
    CHECK(convoy::test::keys_of(staged["stages"][0]["request_count"]) == kAggregateKeys);
    CHECK(convoy::test::keys_of(staged["stages"][0]["time_to_first_token"]) == kDistributionKeys);
  }
}

TEST_CASE("summary.json top level has schema_version, convoy_version and the run's identity") {
  MetricsAggregator agg{Config{}};
  agg.add(record_at(kShapeOrigin, 20));
  SummaryExtras extras;
  extras.benchmark_id = convoy::controller::make_benchmark_id();
  extras.start_time = "2026-12-02T00:01:28.123Z";
  extras.end_time = "2026-12-02T00:02:00.000Z";
  extras.was_cancelled = true;
  const rapidjson::Document doc =
      parse_json(convoy::controller::summary_json(agg.snapshot(), extras));
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["schema_version"].GetString()) == "1.0");
  CHECK(std::string(doc["convoy_version"].GetString()).size() > 0);
  CHECK(std::string(doc["benchmark_id"].GetString()) == extras.benchmark_id);
  CHECK(std::string(doc["start_time"].GetString()) == extras.start_time);
  CHECK(std::string(doc["end_time"].GetString()) == extras.end_time);
  CHECK(doc["was_cancelled"].GetBool());
  CHECK(std::string(doc.MemberBegin()->name.GetString()) == "schema_version");  // first
  SUBCASE("benchmark_id is a fresh uuid4") {
    const std::regex uuid4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    const std::string a = convoy::controller::make_benchmark_id();
    CHECK(std::regex_match(a, uuid4));
    CHECK(a != convoy::controller::make_benchmark_id());
  }
  SUBCASE("times are ISO 8601 UTC with milliseconds") {
    const auto t =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(1'764'633'688'123));
    CHECK(convoy::controller::iso_time_ms(t) == "2025-12-02T00:01:28.123Z");
  }
  SUBCASE("unknown times are null, not an empty string") {
    const rapidjson::Document bare = parse_json(convoy::controller::summary_json(agg.snapshot()));
    CHECK(bare["start_time"].IsNull());
    CHECK_FALSE(bare["was_cancelled"].GetBool());
  }
}

TEST_CASE("timeslices split the measured requests by request start across three slices") {
  MetricsAggregator agg(config_with_slices(1.0));
  agg.set_origin_ns(kShapeOrigin);
  agg.add(record_at(kShapeOrigin + 200 * kMs, 10));
  // Sent in slice 0, ends in slice 1: AIPerf's rule puts it in slice 0.
  Record late = record_at(kShapeOrigin + 900 * kMs, 30);
  late.end_ns = kShapeOrigin + 1'400 * kMs;
  agg.add(late);
  agg.add(record_at(kShapeOrigin + 1'500 * kMs, 50));
  agg.add(record_at(kShapeOrigin + 2'100 * kMs, 70));
  agg.add(record_at(kShapeOrigin + 2'700 * kMs, 90));
  agg.add(record_at(kShapeOrigin + 2'800 * kMs, 0, false));
  Record warmup = record_at(kShapeOrigin + 1'000 * kMs, 5);
  warmup.phase = convoy::proto::Phase::kWarmup;
  agg.add(warmup);  // excluded, as from every metric
  const MetricsSnapshot s = agg.snapshot();
  REQUIRE(s.timeslices.size() == 3);
  CHECK(s.timeslice_s == 1.0);
  const std::vector<int64_t> requests = {2, 1, 2};
  const std::vector<int64_t> errors = {0, 0, 1};
  const std::vector<double> ttft_avg = {20, 50, 80};
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const auto& t = s.timeslices[i];
    CHECK(t.index == static_cast<int64_t>(i));
    CHECK(t.start_s == doctest::Approx(static_cast<double>(i)));
    CHECK(t.end_s == doctest::Approx(static_cast<double>(i + 1)));
    REQUIRE(find(t.metrics, "request_count") != nullptr);
    CHECK(find(t.metrics, "request_count")->avg == static_cast<double>(requests[i]));
    CHECK(find(t.metrics, "error_request_count")->avg == static_cast<double>(errors[i]));
    REQUIRE(find(t.metrics, "time_to_first_token") != nullptr);
    CHECK(find(t.metrics, "time_to_first_token")->avg == doctest::Approx(ttft_avg[i]));
    CHECK(find(t.metrics, "time_to_first_token")->count == requests[i]);
  }
  // Slice 0's derived metrics use its own records: first send 0.2 s, last end 1.4 s.
  CHECK(find(s.timeslices[0].metrics, "benchmark_duration")->avg == doctest::Approx(1.2));
  CHECK(find(s.timeslices[0].metrics, "request_throughput")->avg == doctest::Approx(2 / 1.2));

  SUBCASE("summary.json timeslices") {
    const rapidjson::Document doc = parse_json(convoy::controller::summary_json(s));
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc["timeslices"].IsArray());
    REQUIRE(doc["timeslices"].Size() == 3);
    const auto& t2 = doc["timeslices"][2];
    CHECK(t2["index"].GetInt() == 2);
    CHECK(t2["start_s"].GetDouble() == 2);
    CHECK(t2["end_s"].GetDouble() == 3);
    CHECK(convoy::test::keys_of(t2["request_count"]) == kAggregateKeys);
    CHECK(convoy::test::keys_of(t2["time_to_first_token"]) == kDistributionKeys);
    CHECK(t2["time_to_first_token"]["p50"].GetDouble() == doctest::Approx(70).epsilon(0.002));
  }
  SUBCASE("timeslices.csv") {
    const std::string csv = convoy::controller::timeslices_csv(s.timeslices);
    CHECK(csv.rfind("timeslice,start_s,end_s,metric,unit,stat,value\n", 0) == 0);
    CHECK(csv.find("\n1,1,2,request_count,requests,avg,1\n") != std::string::npos);
    CHECK(csv.find("\n2,2,3,time_to_first_token,ms,count,2\n") != std::string::npos);
    CHECK(csv.find("\n0,0,1,time_to_first_token,ms,avg,20\n") != std::string::npos);
    CHECK(csv.find("request_count,requests,p50") == std::string::npos);  // aggregates: avg
  }
  SUBCASE("no slice_s, no timeslices") {
    MetricsAggregator plain{Config{}};
    plain.add(record_at(kShapeOrigin, 10));
    const MetricsSnapshot p = plain.snapshot();
    CHECK(p.timeslices.empty());
    CHECK_FALSE(parse_json(convoy::controller::summary_json(p)).HasMember("timeslices"));
  }
}

TEST_CASE("timeslices stay within kMaxSlices by merging neighbours") {
  TimeSliceAggregator slices(1.0);
  const size_t n = TimeSliceAggregator::kMaxSlices * 2 + 10;
  for (size_t i = 0; i < n; ++i) {
    const Record r = record_at(static_cast<int64_t>(i) * kS + kS / 2, 10);
    slices.add(r.sent_ns, r, convoy::controller::compute_request_metrics(r), false);
  }
  CHECK(slices.size() <= TimeSliceAggregator::kMaxSlices);
  CHECK(slices.slice_s() == 4.0);  // doubled twice
  int64_t total = 0;
  for (const auto& t : slices.snapshot())
    total += static_cast<int64_t>(find(t.metrics, "request_count")->avg);
  CHECK(total == static_cast<int64_t>(n));
  CHECK(slices.snapshot()[0].end_s == 4.0);
  // Memory: sparse buckets, one value per metric here, so a few KiB a slice at most.
  CHECK(slices.memory_bytes() < TimeSliceAggregator::kMaxSlices * 8 * 1024);
}

TEST_CASE("sparse slice histograms give Histogram's statistics") {
  Histogram dense;
  SparseHistogram sparse;
  SparseHistogram left;
  SparseHistogram right;
  uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t v = static_cast<int64_t>(x >> 35) - (int64_t{1} << 26);  // negatives too
    dense.record(v);
    sparse.record(v);
    (i % 2 == 0 ? left : right).record(v);
  }
  left.merge(right);
  const MetricStats a = sparse.stats("t", "T", "ns", 1);
  const MetricStats b = left.stats("t", "T", "ns", 1);
  CHECK(a.count == dense.count());
  CHECK(a.min == static_cast<double>(dense.min()));
  CHECK(a.max == static_cast<double>(dense.max()));
  CHECK(a.avg == doctest::Approx(dense.mean()));
  CHECK(a.std == doctest::Approx(dense.stddev()));
  CHECK(b.std == doctest::Approx(dense.stddev()));
  CHECK(b.sum == a.sum);
  for (size_t i = 0; i < convoy::controller::kReportedPercentiles.size(); ++i) {
    const double p = convoy::controller::kReportedPercentiles[i];
    CAPTURE(p);
    CHECK(a.percentiles[i] == static_cast<double>(dense.percentile(p)));
    CHECK(b.percentiles[i] == a.percentiles[i]);
  }
}
