#include "controller/report/summary_writer.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/build_info.hpp"
#include "common/utf8.hpp"
#include "controller/report/class_stats.hpp"
#include "controller/report/error_summary_json.hpp"
#include "controller/report/server_metrics_json.hpp"
#include "controller/report/server_timing.hpp"
#include "controller/report/session_routing_json.hpp"
#include "controller/report/summary_keys.hpp"
#include "controller/report/verdict.hpp"

namespace convoy::controller {

namespace {

namespace key = summary_key;
using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// Names of the percentile keys, in kReportedPercentiles order.
void write_number(JsonWriter& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

// An aggregate metric (a throughput, count, total or duration): `tag: {unit, avg}` only, as
// AIPerf writes its AGGREGATE and DERIVED metric types, so that a run-level scalar is not misread
// as a distribution (a `count: 1`, percentiles equal to the value). AIPerf's rule:
// ai-dynamo/aiperf src/aiperf/common/models/record_models.py MetricResult.to_json_result
// (count omitted for MetricType.AGGREGATE / DERIVED) and docs/reference/json-export-schema.md
// ("request_throughput (derived) and request_count (aggregate) carry only unit + avg").
void put_aggregate(JsonWriter& w, std::string_view tag, std::string_view unit, double value) {
  w.Key(tag.data(), static_cast<rapidjson::SizeType>(tag.size()));
  w.StartObject();
  w.Key(key::kUnit);
  w.String(unit.data(), static_cast<rapidjson::SizeType>(unit.size()));
  w.Key(key::kAvg);
  write_number(w, value);
  w.EndObject();
}

void write_metric(JsonWriter& w, const MetricStats& m) {
  if (m.aggregate) {
    put_aggregate(w, m.tag, m.unit, m.avg);
    return;
  }
  w.Key(m.tag.c_str());
  w.StartObject();
  w.Key(key::kUnit);
  w.String(m.unit.c_str());
  w.Key(key::kAvg);
  write_number(w, m.avg);
  w.Key(key::kMin);
  write_number(w, m.min);
  w.Key(key::kMax);
  write_number(w, m.max);
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    w.Key(kPercentileKeys[i]);
    write_number(w, m.percentiles[i]);
  }
  w.Key(key::kStd);
  write_number(w, m.std);
  w.Key(key::kCount);
  w.Int64(m.count);
  w.Key(key::kSum);
  write_number(w, m.sum);
  w.EndObject();
}

// Copies a section given as JSON text into the document. The text streams through a SAX reader
// straight into the writer (no DOM: the server section of a long profile is megabytes of text,
// and a DOM of it cost about five times its size at the peak of writing summary.json).
void write_extra(JsonWriter& w, const char* key, const std::string& json, bool want_object) {
  const size_t first = json.find_first_not_of(" \t\r\n");
  const char opening = first == std::string::npos ? '\0' : json[first];
  if (opening != '{' && opening != '[') {
    throw std::invalid_argument(std::string("summary section '") + key + "' is not valid JSON");
  }
  if (want_object != (opening == '{')) {
    throw std::invalid_argument(std::string("summary section '") + key + "' must be a JSON " +
                                (want_object ? "object" : "array"));
  }
  w.Key(key);
  rapidjson::Reader reader;
  rapidjson::StringStream in(json.c_str());
  if (reader.Parse(in, w).IsError()) {
    throw std::invalid_argument(std::string("summary section '") + key + "' is not valid JSON: " +
                                rapidjson::GetParseError_En(reader.GetParseErrorCode()));
  }
}

// ---- load profiles: stages, sweeps and the capacity search -----------------------------------

void put_number(JsonWriter& w, const char* key, double v) {
  w.Key(key);
  write_number(w, v);
}

void put_string(JsonWriter& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void put_strings(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  w.Key(key);
  w.StartArray();
  for (const auto& s : v) w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndArray();
}

// A level: a number, or {from, to, shape} for a ramp.
void put_level(JsonWriter& w, const char* key, const LoadLevel& level) {
  w.Key(key);
  if (!level.ramp) {
    write_number(w, level.from);
    return;
  }
  w.StartObject();
  put_number(w, "from", level.from);
  put_number(w, "to", level.to);
  put_string(w, "shape", to_string(level.shape));
  w.EndObject();
}

void write_stage_config(JsonWriter& w, const StageConfig& c) {
  w.Key(key::kConfig);
  w.StartObject();
  put_string(w, "mode", to_string(c.mode));
  put_level(w, "concurrency", c.concurrency);  // mode rate: the cap on conversations in flight
  if (c.mode == LoadMode::kRate) {
    put_level(w, "rate", c.rate);
    put_string(w, "arrival", to_string(c.arrival));
    put_number(w, "burstiness", c.burstiness);
  }
  if (c.duration_s) put_number(w, "duration_s", *c.duration_s);
  if (c.sessions) {
    w.Key("sessions");
    w.Int64(*c.sessions);
  }
  if (c.requests) {
    w.Key("requests");
    w.Int64(*c.requests);
  }
  put_number(w, "settle_s", c.settle_s);
  w.EndObject();
}

void write_stage_verdict(JsonWriter& w, const Verdict& v) {
  w.Key(key::kVerdict);
  w.StartObject();
  put_string(w, "status", to_string(v.status));
  put_strings(w, "reasons", v.reasons);
  if (v.slo_met) {
    w.Key("slo_met");
    w.Bool(*v.slo_met);
    put_strings(w, "slo_failures", v.slo_failures);
  }
  w.EndObject();
}

double seconds_since(int64_t t_ns, int64_t origin_ns) {
  return static_cast<double>(t_ns - origin_ns) / 1e9;
}

void write_stages(JsonWriter& w, std::span<const StageFacts> stages, int64_t origin_ns) {
  w.Key(key::kStages);
  w.StartArray();
  for (const StageFacts& st : stages) {
    w.StartObject();
    put_string(w, key::kName, st.config.name);
    w.Key(key::kIndex);
    w.Int(st.config.index);
    put_number(w, key::kValue, st.config.value);
    put_number(w, key::kReachedValue, st.reached_value);
    put_number(w, key::kStartS, seconds_since(st.start_ns, origin_ns));
    put_number(w, key::kEndS, seconds_since(st.end_ns, origin_ns));
    put_number(w, key::kSettleEndS,
               seconds_since(std::max(st.settle_end_ns, st.end_ns), origin_ns));
    write_stage_config(w, st.config);
    for (const MetricStats& m : st.metrics.metrics) write_metric(w, m);
    write_error_summary_json(w, st.metrics.errors, true);
    write_stage_verdict(w, judge_stage(st));
    w.EndObject();
  }
  w.EndArray();
}

void put_optional(JsonWriter& w, const char* key, const std::optional<double>& v) {
  w.Key(key);
  if (v && std::isfinite(*v)) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void write_slo(JsonWriter& w, const SloSpec& slo) {
  w.Key("slo");
  w.StartObject();
  for (const auto& [tag, limits] : slo.limits) {
    w.Key(tag.c_str(), static_cast<rapidjson::SizeType>(tag.size()));
    w.StartObject();
    for (const auto& [statistic, limit] : limits) put_number(w, statistic.c_str(), limit);
    w.EndObject();
  }
  if (slo.error_rate) put_number(w, "error_rate", *slo.error_rate);
  w.EndObject();
}

// Each bound's runs and how many met the SLO: {runs, met_runs}, or null without the bound.
void write_search_confidence(JsonWriter& w, const SearchFacts& search) {
  w.Key("confidence");
  w.StartObject();
  const std::pair<const char*, const std::optional<SearchVerdict>*> bounds[] = {
      {"max_meeting_slo", &search.max_meeting_verdict},
      {"min_failing", &search.min_failing_verdict}};
  for (const auto& [name, verdict] : bounds) {
    w.Key(name);
    if (!*verdict) {
      w.Null();
      continue;
    }
    w.StartObject();
    w.Key("runs");
    w.Int((*verdict)->runs);
    w.Key("met_runs");
    w.Int((*verdict)->met_runs);
    w.EndObject();
  }
  w.EndObject();
}

void write_search(JsonWriter& w, const SearchFacts& search, std::span<const StageFacts> stages) {
  const SearchConfig& c = search.config;
  w.Key(key::kSearch);
  w.StartObject();
  put_string(w, "vary", to_string(c.vary));
  put_number(w, "low", c.low);
  put_number(w, "high", c.high);
  put_number(w, "precision", c.precision);
  if (c.step_duration_s) put_number(w, "step_duration_s", *c.step_duration_s);
  if (c.step_requests) {
    w.Key("step_requests");
    w.Int64(*c.step_requests);
  }
  put_number(w, "settle_s", c.settle_s);
  w.Key("repeats");
  w.Int64(c.repeats);
  write_slo(w, c.slo);
  w.Key("steps");
  w.StartArray();
  for (const SearchStep& step : search.steps) {
    const auto at = static_cast<size_t>(step.stage_index);
    const StageFacts* stage = step.stage_index >= 0 && at < stages.size() ? &stages[at] : nullptr;
    w.StartObject();
    put_string(w, "stage", stage ? std::string_view(stage->config.name) : std::string_view());
    w.Key("index");
    w.Int(step.stage_index);
    put_number(w, "value", step.value);
    w.Key("met");
    w.Bool(step.met);
    w.Key("within_noise");
    w.Bool(step.within_noise);
    w.Key("run");
    w.Int(step.run);
    put_strings(w, "failures", stage ? stage->slo_failures : std::vector<std::string>{});
    w.EndObject();
  }
  w.EndArray();
  w.Key("result");
  w.StartObject();
  put_optional(w, "max_meeting_slo", search.max_meeting_slo);
  put_optional(w, "min_failing", search.min_failing);
  write_search_confidence(w, search);
  w.Key("complete");  // false: interrupted; a missing bound was never judged
  w.Bool(search.complete);
  w.EndObject();
  w.EndObject();
}

// ---- AIPerf's provenance fields and time slices ----------------------------------------------

void put_time_or_null(JsonWriter& w, const char* key, const std::string& iso) {
  w.Key(key);
  if (iso.empty()) {
    w.Null();
  } else {
    w.String(iso.c_str(), static_cast<rapidjson::SizeType>(iso.size()));
  }
}

// AIPerf's top-level provenance (ai-dynamo/aiperf src/aiperf/common/models/export_models.py
// JsonExportData: schema_version, aiperf_version, benchmark_id, was_cancelled, start_time,
// end_time), with convoy_version for aiperf_version.
void write_provenance(JsonWriter& w, const SummaryExtras& e) {
  put_string(w, key::kSchemaVersion, kSummarySchemaVersion);
  put_string(w, key::kConvoyVersion, build_info::version());
  put_string(w, key::kBenchmarkId, e.benchmark_id);
  put_time_or_null(w, key::kStartTime, e.start_time);
  put_time_or_null(w, key::kEndTime, e.end_time);
  w.Key(key::kWasCancelled);
  w.Bool(e.was_cancelled);
}

void write_timeslices(JsonWriter& w, const std::vector<TimeSliceStats>& slices) {
  w.Key(key::kTimeslices);
  w.StartArray();
  for (const TimeSliceStats& t : slices) {
    w.StartObject();
    w.Key(key::kIndex);
    w.Int64(t.index);
    put_number(w, key::kStartS, t.start_s);
    put_number(w, key::kEndS, t.end_s);
    for (const MetricStats& m : t.metrics) write_metric(w, m);
    w.EndObject();
  }
  w.EndArray();
}

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string format_csv_number(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

}  // namespace

std::string summary_json(const MetricsSnapshot& snapshot, const SummaryExtras& extras) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  write_provenance(w, extras);
  for (const MetricStats& m : snapshot.metrics) write_metric(w, m);
  write_error_summary_json(w, snapshot.errors, true);
  write_extra(w, key::kInsights, extras.insights_json, false);
  write_extra(w, key::kRun,
              run_json_with_close_requests(extras.run_json, snapshot.close_request_count), true);
  // Several frontends (target.urls) and session_routing.verify: per-frontend results and the
  // session affinity verified from the client.
  if (!snapshot.targets.empty()) write_extra(w, key::kTargets, targets_json(snapshot), false);
  // Several models (target.models): per-model headline results beside the per-frontend ones.
  if (!snapshot.models.empty()) write_extra(w, key::kModels, models_json(snapshot), false);
  if (snapshot.affinity) write_extra(w, key::kAffinity, affinity_json(*snapshot.affinity), true);
  if (snapshot.server_timing) {
    write_extra(w, key::kServerTiming, server_timing_json(*snapshot.server_timing), true);
  }
  if (!snapshot.tenants.empty()) {
    write_extra(w, key::kTenants, classes_json(snapshot.tenants, "tenant", false), false);
  }
  if (!snapshot.priorities.empty()) {
    write_extra(w, key::kPriorities, classes_json(snapshot.priorities, "priority", true), false);
  }
  write_extra(w, key::kWorkers, extras.workers_json, false);
  write_extra(w, key::kVerdict, extras.verdict_json, true);
  write_extra(w, key::kOutputErrors, extras.output_errors_json, false);
  if (!extras.stages.empty()) write_stages(w, extras.stages, extras.measure_start_ns);
  if (extras.search) write_search(w, *extras.search, extras.stages);
  if (extras.server) {
    w.Key(key::kServerMetrics);
    write_server_metrics(w, extras.server->metrics);
  }
  if (!snapshot.timeslices.empty()) write_timeslices(w, snapshot.timeslices);
  w.EndObject();
  std::string out;
  out.reserve(buffer.GetSize() + 1);  // one allocation: the document can be tens of megabytes
  out.append(buffer.GetString(), buffer.GetSize());
  out += '\n';
  sanitize_utf8_in_place(out);  // only string contents can hold non-ASCII bytes
  return out;
}

std::string summary_csv(const MetricsSnapshot& snapshot, std::span<const StageFacts> stages) {
  std::ostringstream out;
  out << "metric,unit,avg,min,max";
  for (const char* key : kPercentileKeys) out << ',' << key;
  // The stage column is last so that the columns of a single-level run keep their places.
  out << ",std,count,sum,stage\n";
  auto rows = [&](const MetricsSnapshot& s, const std::string& stage) {
    for (const MetricStats& m : s.metrics) {
      out << m.tag << ',' << m.unit << ',' << format_csv_number(m.avg) << ','
          << format_csv_number(m.min) << ',' << format_csv_number(m.max);
      for (double p : m.percentiles) out << ',' << format_csv_number(p);
      out << ',' << format_csv_number(m.std) << ',' << m.count << ',' << format_csv_number(m.sum)
          << ',' << stage << '\n';
    }
  };
  rows(snapshot, "");
  for (const StageFacts& st : stages) rows(st.metrics, csv_field(st.config.name));
  std::string text = out.str();
  sanitize_utf8_in_place(text);
  return text;
}

std::string make_benchmark_id() {
  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) ^ device());
  std::array<uint8_t, 16> bytes{};
  for (size_t i = 0; i < bytes.size(); i += 8) {
    const uint64_t v = random();
    for (size_t k = 0; k < 8; ++k) bytes[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3F) | 0x80);  // variant 10xx (RFC 4122)
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0x0F];
  }
  return out;
}

std::string iso_time_ms(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  const auto millis = static_cast<int>(ms.count() % 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", date, millis < 0 ? millis + 1000 : millis);
  return out;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  if (auto e = write_file_atomically_or_error(path, content)) {
    throw std::runtime_error(describe(*e));
  }
}

void write_summary_json(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                        const SummaryExtras& extras) {
  write_file_atomically(path, summary_json(snapshot, extras));
}

void write_summary_csv(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                       std::span<const StageFacts> stages) {
  write_file_atomically(path, summary_csv(snapshot, stages));
}

}  // namespace convoy::controller
