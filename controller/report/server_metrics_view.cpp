#include "controller/report/server_metrics_view.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

namespace convoy::controller {

namespace {

using Value = rapidjson::Value;

const Value* member(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string text(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

std::optional<double> number(const Value* v) {
  if (v == nullptr || !v->IsNumber()) return std::nullopt;
  const double d = v->GetDouble();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::optional<double> number(const Value& obj, const char* key) { return number(member(obj, key)); }

int64_t integer(const Value& obj, const char* key) {
  return static_cast<int64_t>(number(obj, key).value_or(0));
}

// "+Inf" (how the telemetry room writes the last bound) or a number.
std::optional<double> bound(const Value* v) {
  if (v && v->IsString()) {
    const std::string_view s(v->GetString(), v->GetStringLength());
    if (s == "+Inf" || s == "Inf" || s == "inf") return std::numeric_limits<double>::infinity();
    return std::nullopt;
  }
  return number(v);
}

std::string labels_text(const Value& entry) {
  const Value* labels = member(entry, "labels");
  std::string out;
  if (labels == nullptr || !labels->IsObject()) return out;
  for (const auto& m : labels->GetObject()) {
    if (!m.value.IsString()) continue;
    if (!out.empty()) out += ", ";
    out.append(m.name.GetString(), m.name.GetStringLength());
    out += '=';
    out.append(m.value.GetString(), m.value.GetStringLength());
  }
  return out;
}

void read_timeline(const Value& entry, ServerSeries& s) {
  const Value* timeline = member(entry, "timeline");
  if (timeline == nullptr || !timeline->IsArray()) return;
  for (const auto& point : timeline->GetArray()) {
    if (!point.IsArray() || point.Size() < 2) continue;
    const std::optional<double> t = number(&point[0]);
    if (!t) continue;
    ServerTimePoint p;
    p.t_s = *t;
    p.v = number(&point[1]);
    if (point.Size() >= 3) p.v99 = number(&point[2]);
    s.timeline.push_back(p);
  }
}

bool flag(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsBool() && v->GetBool();
}

// What each key of a metrics[] entry fills (the telemetry room's names, docs/telemetry.md).
template <typename T>
struct Field {
  const char* key;
  T ServerSeries::*field;
};
constexpr Field<std::string> kSeriesTexts[] = {
    {"endpoint", &ServerSeries::endpoint}, {"name", &ServerSeries::name},
    {"type", &ServerSeries::type},         {"role", &ServerSeries::role},
    {"title", &ServerSeries::title},       {"unit", &ServerSeries::unit},
};
constexpr Field<std::optional<double>> kSeriesNumbers[] = {
    {"min", &ServerSeries::min},     {"avg", &ServerSeries::avg},
    {"p50", &ServerSeries::p50},     {"p99", &ServerSeries::p99},
    {"max", &ServerSeries::max},     {"last", &ServerSeries::last},
    {"delta", &ServerSeries::delta}, {"rate_per_s", &ServerSeries::rate_per_s},
    {"count", &ServerSeries::count}, {"sum", &ServerSeries::sum},
};

// A histogram's cumulative buckets, le ascending.
void read_buckets(const Value& entry, ServerSeries& s) {
  const Value* buckets = member(entry, "buckets");
  if (buckets == nullptr || !buckets->IsArray()) return;
  for (const auto& b : buckets->GetArray()) {
    const std::optional<double> le = bound(member(b, "le"));
    const std::optional<double> n = number(b, "count");
    if (le && n) s.buckets.emplace_back(*le, *n);
  }
  std::sort(s.buckets.begin(), s.buckets.end());
}

ServerSeries read_series(const Value& entry) {
  ServerSeries s;
  for (const auto& [key, field] : kSeriesTexts) s.*field = text(entry, key);
  for (const auto& [key, field] : kSeriesNumbers) s.*field = number(entry, key);
  s.headline = flag(entry, "headline");
  s.labels = labels_text(entry);
  read_buckets(entry, s);
  read_timeline(entry, s);
  return s;
}

ServerEndpointView read_endpoint(const Value& e) {
  ServerEndpointView ep;
  ep.name = text(e, "name");
  ep.url = text(e, "url");
  ep.scrapes = integer(e, "scrapes");
  ep.errors = integer(e, "errors");
  ep.dropped_series = integer(e, "dropped_series");
  ep.last_error = text(e, "last_error");
  return ep;
}

}  // namespace

ServerMetricsView parse_server_metrics(const std::string& json) {
  ServerMetricsView view;
  if (json.empty()) return view;
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return view;
  view.present = true;
  view.interval_s = number(doc, "interval_s").value_or(0);
  if (const Value* endpoints = member(doc, "endpoints"); endpoints && endpoints->IsArray()) {
    for (const auto& e : endpoints->GetArray()) view.endpoints.push_back(read_endpoint(e));
  }
  const Value* metrics = member(doc, "metrics");
  if (metrics == nullptr || !metrics->IsArray()) return view;
  for (const auto& entry : metrics->GetArray()) {
    if (!text(entry, "role").empty() || flag(entry, "headline")) {
      view.metrics.push_back(read_series(entry));
      continue;
    }
    const std::string endpoint = text(entry, "endpoint");
    for (ServerEndpointView& ep : view.endpoints) {
      if (ep.name == endpoint) ++ep.other_series;
    }
  }
  return view;
}

std::vector<const ServerSeries*> ServerMetricsView::with_role(
    std::string_view endpoint, std::initializer_list<std::string_view> roles) const {
  std::vector<const ServerSeries*> out;
  for (const ServerSeries& s : metrics) {
    if (s.endpoint != endpoint) continue;
    if (std::find(roles.begin(), roles.end(), s.role) != roles.end()) out.push_back(&s);
  }
  return out;
}

double ServerMetricsView::timeline_end_s() const {
  double end = 0;
  for (const ServerSeries& s : metrics) {
    for (const ServerTimePoint& p : s.timeline) end = std::max(end, p.t_s);
  }
  return end;
}

std::vector<std::pair<double, double>> merge_buckets(const std::vector<const ServerSeries*>& hs) {
  std::map<double, double> merged;
  for (const ServerSeries* h : hs) {
    for (const auto& [le, n] : h->buckets) merged.emplace(le, 0.0);
  }
  for (const ServerSeries* h : hs) {
    // Cumulative: at a bound it lacks, a histogram has what it has at the bound below.
    size_t i = 0;
    double below = 0;
    for (auto& [le, total] : merged) {
      while (i < h->buckets.size() && h->buckets[i].first <= le) below = h->buckets[i++].second;
      total += below;
    }
  }
  return {merged.begin(), merged.end()};
}

DisplayUnit display_unit(const std::string& unit) {
  if (unit == "s" || unit == "seconds") return {1000, "ms"};
  if (unit == "fraction" || unit == "ratio") return {100, "%"};
  return {1, unit};
}

std::shared_ptr<const ServerTelemetry> make_server_telemetry(std::string summary_json) {
  if (summary_json.empty()) return nullptr;
  auto results = std::make_shared<ServerTelemetry>();
  results->view = parse_server_metrics(summary_json);
  results->summary_json = std::move(summary_json);
  return results;
}

std::string vocabulary_of(const std::string& name) {
  if (const size_t colon = name.find(':'); colon != std::string::npos) return name.substr(0, colon);
  if (name.rfind("convoy_mock_", 0) == 0) return "convoy-mock";
  return name.substr(0, name.find('_'));
}

size_t vocabulary_rank(const std::string& vocabulary) {
  constexpr std::string_view kOrder[] = {"vllm", "sglang", "trtllm",
                                         "DCGM", "dynamo", "convoy-mock"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), vocabulary);
  return static_cast<size_t>(it - std::begin(kOrder));
}

std::vector<const ServerSeries*> one_family(const std::vector<const ServerSeries*>& series) {
  const ServerSeries* best = nullptr;
  for (const ServerSeries* s : series) {
    if (best == nullptr ||
        vocabulary_rank(vocabulary_of(s->name)) < vocabulary_rank(vocabulary_of(best->name))) {
      best = s;
    }
  }
  std::vector<const ServerSeries*> out;
  for (const ServerSeries* s : series) {
    if (best != nullptr && s->name == best->name) out.push_back(s);
  }
  return out;
}

}  // namespace convoy::controller
