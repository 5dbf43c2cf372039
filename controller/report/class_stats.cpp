#include "controller/report/class_stats.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>

#include "controller/report/session_routing_json.hpp"

namespace convoy::controller {

void ClassAggregator::add(const std::string& label, const RequestMetrics& m) {
  auto it = classes_.find(label);
  if (it == classes_.end()) {
    if (classes_.size() >= kMaxClasses) {
      ++other_;
      return;
    }
    it = classes_.emplace(label, Agg{}).first;
  }
  Agg& a = it->second;
  if (!m.ok) {
    ++a.errors;
    return;
  }
  ++a.requests;
  if (m.ttft_ns) a.ttft.record(*m.ttft_ns);
  if (m.request_latency_ns) a.latency.record(*m.request_latency_ns);
}

std::vector<ClassStats> ClassAggregator::snapshot() const {
  const MetricDef& ttft = *metric_def("time_to_first_token");
  const MetricDef& latency = *metric_def("request_latency");
  std::vector<ClassStats> out;
  for (const auto& [label, a] : classes_) {
    ClassStats c;
    c.label = label;
    c.requests = a.requests;
    c.errors = a.errors;
    if (!a.ttft.empty()) c.ttft = metric_stats(a.ttft, ttft);
    if (!a.latency.empty()) c.request_latency = metric_stats(a.latency, latency);
    out.push_back(std::move(c));
  }
  return out;
}

size_t ClassAggregator::memory_bytes() const {
  size_t n = sizeof(*this);
  for (const auto& [label, a] : classes_) {
    n += label.capacity() + sizeof(a) + a.ttft.memory_bytes() + a.latency.memory_bytes();
  }
  return n;
}

std::string classes_json(const std::vector<ClassStats>& classes, const char* label_key,
                         bool numeric_label) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartArray();
  for (const ClassStats& c : classes) {
    w.StartObject();
    w.Key(label_key);
    if (numeric_label) {
      w.Int64(std::strtoll(c.label.c_str(), nullptr, 10));
    } else {
      w.String(c.label.c_str(), static_cast<rapidjson::SizeType>(c.label.size()));
    }
    w.Key("requests");
    w.Int64(c.requests);
    w.Key("errors");
    w.Int64(c.errors);
    w.Key("error_rate");
    const int64_t total = c.requests + c.errors;
    w.Double(total > 0 ? static_cast<double>(c.errors) / static_cast<double>(total) : 0.0);
    write_metric_stats(w, "time_to_first_token", c.ttft);
    write_metric_stats(w, "request_latency", c.request_latency);
    w.EndObject();
  }
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

}  // namespace convoy::controller
