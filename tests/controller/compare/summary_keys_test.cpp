// summary.json's keys are defined once (controller/report/summary_keys.hpp): the table of metric
// tags agrees with the aggregator's definitions, and what summary_writer writes reads back
// through `convoy compare`'s loader value for value, whole run and stages. records.jsonl's keys
// (record_keys.hpp) likewise: what records_writer writes, compare's per-turn reader reads.
#include "controller/report/summary_keys.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/compare/run_loader.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/summary_writer.hpp"
#include "test_time.hpp"

namespace {

using convoy::Config;
using convoy::controller::metric_def;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::MetricStats;
using convoy::controller::StageFacts;
using convoy::controller::SummaryExtras;
using convoy::controller::compare::Column;
using convoy::controller::summary_tag::find_summary_metric;
using convoy::controller::summary_tag::kSummaryMetrics;
using convoy::proto::Record;
using namespace convoy::test;
namespace key = convoy::controller::summary_key;

Record ok_record(int64_t at, int64_t ttft_ms, uint32_t turn) {
  Record r;
  r.x_request_id = "rid-" + std::to_string(at);
  r.intended_ns = at;
  r.sent_ns = at;
  r.first_byte_ns = r.first_token_ns = at + ttft_ms * kMs;
  r.second_token_ns = r.first_token_ns + 10 * kMs;
  r.last_token_ns = r.first_token_ns + 90 * kMs;
  r.end_ns = r.last_token_ns + kMs;
  r.turn_index = turn;
  r.input_tokens = 100;
  r.output_tokens = 10;
  r.http_status = 200;
  return r;
}

Record failed_record(int64_t at) {
  Record r;
  r.intended_ns = r.sent_ns = at;
  r.end_ns = at + 2 * kMs;
  r.http_status = 503;
  r.error.kind = convoy::proto::ErrorKind::kHttpStatus;
  r.error.code = 503;
  return r;
}

MetricsSnapshot snapshot_of(int64_t from, int n, int64_t ttft_ms) {
  MetricsAggregator agg{Config{}};
  agg.set_origin_ns(from);
  for (int i = 0; i < n; ++i) {
    agg.add(ok_record(from + i * 100 * kMs, ttft_ms + i % 5, static_cast<uint32_t>(i % 3)));
  }
  agg.add(failed_record(from + kS));
  return agg.snapshot();
}

// Every statistic of `m` as summary.json carries it reads back the same through run_loader.
void check_read_back(const MetricStats& m, const Column& c) {
  CAPTURE(m.tag);
  const auto it = c.metrics.find(m.tag);
  REQUIRE(it != c.metrics.end());
  CHECK(it->second.unit == m.unit);
  if (std::isfinite(m.avg)) CHECK(c.value(m.tag, key::kAvg) == m.avg);
  if (m.aggregate) {
    CHECK_FALSE(c.value(m.tag, key::kCount));  // {unit, avg} only
    return;
  }
  CHECK(c.value(m.tag, key::kCount) == static_cast<double>(m.count));
  for (size_t i = 0; i < convoy::controller::kPercentileKeys.size(); ++i) {
    if (std::isfinite(m.percentiles[i])) {
      CHECK(c.value(m.tag, convoy::controller::kPercentileKeys[i]) == m.percentiles[i]);
    }
  }
}

}  // namespace

TEST_CASE("summary.json's metric tag table agrees with the aggregator's definitions") {
  std::set<std::string_view> tags;
  for (const auto& m : kSummaryMetrics) {
    CAPTURE(m.tag);
    CHECK(tags.insert(m.tag).second);  // each once
    const auto* def = metric_def(m.tag);
    REQUIRE(def != nullptr);
    CHECK(def->unit == m.unit);
    if (m.aggregate) CHECK(convoy::controller::single_value(m.tag, 1).aggregate);
  }
  // Every tag a run writes is in the table, with its unit and kind.
  const MetricsSnapshot s = snapshot_of(kS, 40, 30);
  for (const MetricStats& m : s.metrics) {
    CAPTURE(m.tag);
    const auto* entry = find_summary_metric(m.tag);
    REQUIRE(entry != nullptr);
    CHECK(entry->unit == m.unit);
    CHECK(entry->aggregate == m.aggregate);
  }
  CHECK(find_summary_metric("no_such_metric") == nullptr);
}

TEST_CASE("what summary_writer writes, convoy compare reads back value for value") {
  const MetricsSnapshot run = snapshot_of(kS, 60, 30);
  std::vector<StageFacts> stages(2);
  for (size_t i = 0; i < stages.size(); ++i) {
    StageFacts& st = stages[i];
    st.config.name = "level-" + std::to_string(i);
    st.config.index = static_cast<int>(i);
    st.config.value = 8.0 * static_cast<double>(i + 1);
    st.start_ns = kS + static_cast<int64_t>(i) * 3 * kS;
    st.end_ns = st.settle_end_ns = st.start_ns + 3 * kS;
    st.metrics = snapshot_of(st.start_ns, 30, 20 + 40 * static_cast<int64_t>(i));
  }
  SummaryExtras extras;
  extras.run_json = R"({"name":"keys","convoy_version":"0.1.0",)"
                    R"("config_yaml":"name: keys\nload:\n  concurrency: 8\n"})";
  extras.profile = convoy::ProfileKind::kSweep;
  extras.stages = stages;
  extras.measure_start_ns = kS;
  const std::string text = convoy::controller::summary_json(run, extras);

  const Column c = convoy::controller::compare::column_from_summary("runs/keys", text);
  CHECK(c.name == "keys");
  CHECK(c.config.at("load.concurrency") == "8");
  for (const MetricStats& m : run.metrics) check_read_back(m, c);
  // Derived by compare from the two request counts.
  CHECK(c.value("error_rate", key::kAvg).has_value());
  // TTFT by turn: the summary's first/later-turn split.
  REQUIRE(c.ttft_by_turn.size() == 2);
  CHECK(c.ttft_by_turn[0].p50_ms == run.find("time_to_first_token_first_turn")->p(50));

  REQUIRE(c.stages.size() == stages.size());
  for (size_t i = 0; i < stages.size(); ++i) {
    CHECK(c.stages[i].stage == stages[i].config.name);
    CHECK(c.stages[i].stage_value == stages[i].config.value);
    CHECK(c.stages[i].config.at("mode") == "concurrency");
    for (const MetricStats& m : stages[i].metrics.metrics) check_read_back(m, c.stages[i]);
  }
}

TEST_CASE("what records_writer writes, convoy compare's records reader reads back") {
  std::string lines;
  for (int i = 0; i < 6; ++i) {  // turns 0, 1, 2 twice, TTFT 30..35 ms
    Record r = ok_record(kS + i * 100 * kMs, 30 + i, static_cast<uint32_t>(i % 3));
    lines += convoy::controller::record_json_line(r, "w-0", "host") + "\n";
  }
  Record settle = ok_record(2 * kS, 500, 0);  // in a settle window: in no metric
  lines += convoy::controller::record_json_line(settle, "w-0", "host", "s1", true) + "\n";
  Record failed = failed_record(3 * kS);  // counted by the loader as not ok
  failed.turn_index = 1;
  lines += convoy::controller::record_json_line(failed, "w-0", "host") + "\n";
  Record close = ok_record(4 * kS, 700, 1);  // a close request: in no metric
  close.close_request = true;
  lines += convoy::controller::record_json_line(close, "w-0", "host") + "\n";

  Column c;
  std::istringstream in(lines);
  CHECK(convoy::controller::compare::add_turns_from_records(in, c) == 6);
  CHECK(c.ttft_by_turn_source == "records.jsonl");
  REQUIRE(c.ttft_by_turn.size() >= 3);
  for (size_t t = 0; t < 3; ++t) {
    CAPTURE(t);
    CHECK(c.ttft_by_turn[t].count == 2);
  }
  CHECK(c.ttft_by_turn[0].p50_ms == doctest::Approx(30.0).epsilon(0.05));
  CHECK(c.samples.count("time_to_first_token") == 1);
}
