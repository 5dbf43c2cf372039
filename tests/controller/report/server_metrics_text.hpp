// summary.json "server_metrics" text read back into the typed value (ServerMetrics) for the
// report's tests, which write the section by hand (server_metrics_fixture.hpp). A run never
// reads it: the telemetry room hands the report the typed value itself.
#pragma once

#include <rapidjson/document.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "controller/report/server_metrics.hpp"
#include "controller/report/server_metrics_view.hpp"

namespace convoy::test {

namespace server_text {

using Value = rapidjson::Value;

inline const Value* member(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

inline std::string text(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

// A number, NaN when absent or null (the typed value's "none").
inline double number(const Value* v) {
  if (v == nullptr || !v->IsNumber()) return std::nan("");
  return v->GetDouble();
}

inline double number(const Value& obj, const char* key) { return number(member(obj, key)); }

inline int64_t integer(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsNumber() ? static_cast<int64_t>(v->GetDouble()) : 0;
}

inline controller::ServerMetricStats stats(const Value& e) {
  controller::ServerMetricStats s;
  s.samples = integer(e, "samples");
  s.resets = integer(e, "resets");
  double controller::ServerMetricStats::*fields[] = {
      &controller::ServerMetricStats::min,   &controller::ServerMetricStats::avg,
      &controller::ServerMetricStats::p50,   &controller::ServerMetricStats::p99,
      &controller::ServerMetricStats::max,   &controller::ServerMetricStats::last,
      &controller::ServerMetricStats::delta, &controller::ServerMetricStats::rate_per_s,
      &controller::ServerMetricStats::count, &controller::ServerMetricStats::sum,
      &controller::ServerMetricStats::p90,   &controller::ServerMetricStats::p95};
  const char* keys[] = {"min",   "avg",        "p50",   "p99", "max", "last",
                        "delta", "rate_per_s", "count", "sum", "p90", "p95"};
  for (size_t i = 0; i < std::size(keys); ++i) s.*fields[i] = number(e, keys[i]);
  if (const Value* buckets = member(e, "buckets"); buckets && buckets->IsArray()) {
    for (const auto& b : buckets->GetArray()) {
      const Value* le = member(b, "le");
      const bool inf = le && le->IsString() && std::string_view(le->GetString()) == "+Inf";
      s.buckets.emplace_back(inf ? std::numeric_limits<double>::infinity() : number(le),
                             number(b, "count"));
    }
  }
  return s;
}

inline controller::ServerMetricEntry entry(const Value& e) {
  controller::ServerMetricEntry m;
  m.endpoint = text(e, "endpoint");
  m.name = text(e, "name");
  m.type = text(e, "type");
  using Kind = controller::ServerMetricEntry::Kind;
  m.kind = m.type == "histogram"                             ? Kind::kHistogram
           : m.type == "counter" || m.type == "counter_like" ? Kind::kCounter
                                                             : Kind::kGauge;
  if (const Value* labels = member(e, "labels"); labels && labels->IsObject()) {
    for (const auto& l : labels->GetObject()) {
      if (l.value.IsString()) m.labels.emplace_back(l.name.GetString(), l.value.GetString());
    }
  }
  const Value* headline = member(e, "headline");
  m.headline = headline && headline->IsBool() && headline->GetBool();
  m.title = text(e, "title");
  m.unit = text(e, "unit");
  m.role = text(e, "role");
  m.window = stats(e);
  if (const Value* timeline = member(e, "timeline"); timeline && timeline->IsArray()) {
    for (const auto& p : timeline->GetArray()) {
      if (!p.IsArray() || p.Size() < 2) continue;
      m.timeline.push_back({number(&p[0]), number(&p[1]), p.Size() > 2 ? number(&p[2]) : 0});
    }
  }
  return m;
}

}  // namespace server_text

// The section's text as the typed value (what is absent is NaN, 0 or ""; stages are not read).
inline controller::ServerMetrics server_metrics_of_json(const std::string& json) {
  using namespace server_text;
  controller::ServerMetrics m;
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return m;
  m.interval_s = number(doc, "interval_s");
  if (const Value* endpoints = member(doc, "endpoints"); endpoints && endpoints->IsArray()) {
    for (const auto& e : endpoints->GetArray()) {
      m.endpoints.push_back({text(e, "name"), text(e, "url"), integer(e, "scrapes"),
                             integer(e, "errors"), integer(e, "dropped_series"),
                             integer(e, "malformed_lines"), text(e, "first_malformed"),
                             text(e, "last_error")});
    }
  }
  if (const Value* metrics = member(doc, "metrics"); metrics && metrics->IsArray()) {
    for (const auto& e : metrics->GetArray()) m.metrics.push_back(entry(e));
  }
  return m;
}

// What the run hands the report for the section's text (its typed value and view).
inline std::shared_ptr<const controller::ServerTelemetry> telemetry_of_json(
    const std::string& json) {
  return controller::make_server_telemetry(server_metrics_of_json(json));
}

// The view the report reads for the section's text.
inline controller::ServerMetricsView view_of_json(const std::string& json) {
  return controller::view_of(server_metrics_of_json(json));
}

}  // namespace convoy::test
