// summary.json "server_metrics" text written by hand, in the shape the telemetry room writes
// (docs/telemetry.md, controller/telemetry/series_store.cpp), for the report's tests.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "server_metrics_text.hpp"

namespace convoy::test {

// A number as JSON (%.17g is exact; NaN is null).
inline std::string json_number(double v) {
  if (v != v) return "null";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// [[t, v], ...] for t = 0.5, 1.5, ... (n points, one a second).
inline std::string gauge_timeline(int n, const std::function<double(int)>& v) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    out += (i ? ",[" : "[") + json_number(i + 0.5) + "," + json_number(v(i)) + "]";
  }
  return out + "]";
}

// [[t, p50, p99], ...] in seconds.
inline std::string histogram_timeline(int n, const std::function<double(int)>& p50_s,
                                      const std::function<double(int)>& p99_s) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    out += (i ? ",[" : "[") + json_number(i + 0.5) + "," + json_number(p50_s(i)) + "," +
           json_number(p99_s(i)) + "]";
  }
  return out + "]";
}

struct GaugeSpec {
  std::string endpoint, name, role, title, unit, labels = "{}";
  double min = 0, avg = 0, p50 = 0, p99 = 0, max = 0, last = 0;
  std::string timeline;  // "" = none
};

inline GaugeSpec gauge(std::string endpoint, std::string name, std::string role, std::string title,
                       std::string unit) {
  GaugeSpec g;
  g.endpoint = std::move(endpoint);
  g.name = std::move(name);
  g.role = std::move(role);
  g.title = std::move(title);
  g.unit = std::move(unit);
  return g;
}

inline std::string gauge_entry(const GaugeSpec& g) {
  std::string out = R"({"endpoint":")" + g.endpoint + R"(","name":")" + g.name +
                    R"(","type":"gauge","labels":)" + g.labels;
  if (!g.role.empty()) {
    out += R"(,"headline":true,"title":")" + g.title + R"(","unit":")" + g.unit + R"(","role":")" +
           g.role + "\"";
  }
  out += R"(,"samples":20,"min":)" + json_number(g.min) + ",\"avg\":" + json_number(g.avg) +
         ",\"p50\":" + json_number(g.p50) + ",\"p99\":" + json_number(g.p99) +
         ",\"max\":" + json_number(g.max) + ",\"last\":" + json_number(g.last);
  if (!g.timeline.empty()) out += ",\"timeline\":" + g.timeline;
  return out + "}";
}

inline std::string counter_entry(const std::string& endpoint, const std::string& name,
                                 const std::string& role, const std::string& title, double delta,
                                 double rate, const std::string& timeline = "") {
  std::string out = R"({"endpoint":")" + endpoint + R"(","name":")" + name +
                    R"(","type":"counter","labels":{},"headline":true,"title":")" + title +
                    R"(","unit":"requests","role":")" + role + R"(","samples":20,"delta":)" +
                    json_number(delta) + ",\"rate_per_s\":" + json_number(rate) +
                    ",\"resets\":0,\"last\":" + json_number(delta);
  if (!timeline.empty()) out += ",\"timeline\":" + timeline;
  return out + "}";
}

// A TTFT histogram (seconds) with cumulative buckets {le, count}; "+Inf" last.
inline std::string ttft_histogram_entry(const std::string& endpoint, const std::string& name,
                                        const std::vector<std::pair<double, double>>& buckets,
                                        const std::string& timeline = "") {
  const double count = buckets.empty() ? 0 : buckets.back().second;
  std::string out = R"({"endpoint":")" + endpoint + R"(","name":")" + name +
                    R"x(","type":"histogram","labels":{},"headline":true,"title":"TTFT (vLLM)",)x"
                    R"("unit":"s","role":"ttft","count":)" +
                    json_number(count) +
                    R"(,"sum":1,"avg":0.1,"p50":0.06,"p90":0.09,)"
                    R"("p95":0.095,"p99":0.099,"buckets":[)";
  for (size_t i = 0; i < buckets.size(); ++i) {
    const bool inf = i + 1 == buckets.size();
    out += std::string(i ? "," : "") +
           "{\"le\":" + (inf ? std::string("\"+Inf\"") : json_number(buckets[i].first)) +
           ",\"count\":" + json_number(buckets[i].second) + "}";
  }
  out += "]";
  if (!timeline.empty()) out += ",\"timeline\":" + timeline;
  return out + "}";
}

inline std::string endpoint_entry(const std::string& name, int64_t scrapes, int64_t errors,
                                  const std::string& last_error = "") {
  return R"({"name":")" + name + R"(","url":"http://127.0.0.1:9/)" + name +
         R"(/metrics","scrapes":)" + std::to_string(scrapes) +
         ",\"errors\":" + std::to_string(errors) +
         R"(,"dropped_series":0,"malformed_lines":0,"first_malformed":null,"last_error":)" +
         (last_error.empty() ? std::string("null") : "\"" + last_error + "\"") + "}";
}

inline std::string server_metrics(const std::vector<std::string>& endpoints,
                                  const std::vector<std::string>& metrics) {
  std::string out = R"({"interval_s":1,"window":{"start_ns":0,"end_ns":20000000000},)"
                    R"("series":10,"max_series":10000,"endpoints":[)";
  for (size_t i = 0; i < endpoints.size(); ++i) out += (i ? "," : "") + endpoints[i];
  out += "],\"metrics\":[";
  for (size_t i = 0; i < metrics.size(); ++i) out += (i ? "," : "") + metrics[i];
  return out + "]}";
}

}  // namespace convoy::test
