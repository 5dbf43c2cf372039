#include "controller/report/session_routing_json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>

namespace convoy::controller {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void number(Writer& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

void string(Writer& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

void write_metric_stats(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                        const std::optional<MetricStats>& m) {
  w.Key(key);
  if (!m) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("unit");
  string(w, m->unit);
  w.Key("avg");
  number(w, m->avg);
  w.Key("min");
  number(w, m->min);
  w.Key("max");
  number(w, m->max);
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    w.Key(kPercentileKeys[i]);
    number(w, m->percentiles[i]);
  }
  w.Key("std");
  number(w, m->std);
  w.Key("count");
  w.Int64(m->count);
  w.Key("sum");
  number(w, m->sum);
  w.EndObject();
}

std::string targets_json(const MetricsSnapshot& snapshot) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  for (const TargetStats& t : snapshot.targets) {
    w.StartObject();
    w.Key("index");
    w.Uint(t.index);
    w.Key("url");
    string(w, t.url);
    w.Key("requests");
    w.Int64(t.requests);
    w.Key("errors");
    w.Int64(t.errors);
    w.Key("error_rate");
    number(w, t.error_rate());
    write_metric_stats(w, "time_to_first_token", t.ttft);
    write_metric_stats(w, "request_latency", t.request_latency);
    w.EndObject();
  }
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

std::string models_json(const MetricsSnapshot& snapshot) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  for (const ModelStats& m : snapshot.models) {
    w.StartObject();
    w.Key("name");
    string(w, m.name);
    w.Key("weight");
    number(w, m.weight);
    w.Key("requests");
    w.Int64(m.requests);
    w.Key("errors");
    w.Int64(m.errors);
    w.Key("error_rate");
    number(w, m.error_rate());
    w.Key("output_tokens");
    w.Int64(m.output_tokens);
    w.Key("output_token_throughput");
    number(w, m.output_token_throughput);
    write_metric_stats(w, "time_to_first_token", m.ttft);
    write_metric_stats(w, "inter_token_latency", m.inter_token_latency);
    write_metric_stats(w, "request_latency", m.request_latency);
    w.EndObject();
  }
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

std::string affinity_json(const AffinitySummary& a) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  w.Key("verified");
  w.Bool(a.verified);
  w.Key("conversations");
  w.Int64(a.conversations);
  w.Key("conversations_moved");
  w.Int64(a.conversations_moved);
  w.Key("moves");
  w.Int64(a.moves);
  w.Key("transitions");
  w.Int64(a.transitions);
  w.Key("move_fraction");
  number(w, a.move_fraction());
  w.Key("workers");
  w.Int64(a.workers);
  w.Key("requests_with_worker");
  w.Int64(a.requests_with_worker);
  w.Key("requests_without_worker");
  w.Int64(a.requests_without_worker);
  w.Key("example_correlation_ids");
  w.StartArray();
  for (const auto& id : a.example_moved) string(w, id);
  w.EndArray();
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

std::string run_json_with_close_requests(const std::string& run_json, int64_t close_requests) {
  rapidjson::Document doc;
  doc.Parse(run_json.c_str(), run_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return run_json;
  doc.RemoveMember("close_requests");
  doc.AddMember("close_requests", rapidjson::Value(close_requests), doc.GetAllocator());
  rapidjson::StringBuffer sb;
  Writer w(sb);
  doc.Accept(w);
  return {sb.GetString(), sb.GetSize()};
}

}  // namespace convoy::controller
