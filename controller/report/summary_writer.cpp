#include "controller/report/summary_writer.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/utf8.hpp"

namespace convoy::controller {

namespace {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// Names of the percentile keys, in kReportedPercentiles order.
constexpr const char* kPercentileKeys[] = {"p1",  "p5",  "p10", "p25", "p50",
                                           "p75", "p90", "p95", "p99"};
static_assert(std::size(kPercentileKeys) == kReportedPercentiles.size());

void write_number(JsonWriter& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

void write_metric(JsonWriter& w, const MetricStats& m) {
  w.Key(m.tag.c_str());
  w.StartObject();
  w.Key("unit");
  w.String(m.unit.c_str());
  w.Key("avg");
  write_number(w, m.avg);
  w.Key("min");
  write_number(w, m.min);
  w.Key("max");
  write_number(w, m.max);
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    w.Key(kPercentileKeys[i]);
    write_number(w, m.percentiles[i]);
  }
  w.Key("std");
  write_number(w, m.std);
  w.Key("count");
  w.Int64(m.count);
  w.Key("sum");
  write_number(w, m.sum);
  w.EndObject();
}

void write_error_summary(JsonWriter& w, const MetricsSnapshot& s) {
  w.Key("error_summary");
  w.StartArray();
  for (const ErrorGroup& e : s.errors) {
    w.StartObject();
    w.Key("error_details");
    w.StartObject();
    w.Key("code");
    w.Int64(e.code);
    w.Key("type");
    w.String(e.type.c_str(), static_cast<rapidjson::SizeType>(e.type.size()));
    w.Key("message");
    w.String(e.message.c_str(), static_cast<rapidjson::SizeType>(e.message.size()));
    w.EndObject();
    w.Key("count");
    w.Int64(e.count);
    w.Key("example");  // one raw message of the group; `message` is the normalised text
    w.String(e.example.c_str(), static_cast<rapidjson::SizeType>(e.example.size()));
    w.Key("example_correlation_ids");
    w.StartArray();
    for (const auto& id : e.example_correlation_ids) {
      w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_extra(JsonWriter& w, const char* key, const std::string& json, bool want_object) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError()) {
    throw std::invalid_argument(std::string("summary section '") + key + "' is not valid JSON: " +
                                rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (want_object ? !doc.IsObject() : !doc.IsArray()) {
    throw std::invalid_argument(std::string("summary section '") + key + "' must be a JSON " +
                                (want_object ? "object" : "array"));
  }
  w.Key(key);
  doc.Accept(w);
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
  for (const MetricStats& m : snapshot.metrics) write_metric(w, m);
  write_error_summary(w, snapshot);
  write_extra(w, "insights", extras.insights_json, false);
  write_extra(w, "run", extras.run_json, true);
  write_extra(w, "workers", extras.workers_json, false);
  write_extra(w, "verdict", extras.verdict_json, true);
  write_extra(w, "output_errors", extras.output_errors_json, false);
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  out += '\n';
  sanitize_utf8_in_place(out);  // only string contents can hold non-ASCII bytes
  return out;
}

std::string summary_csv(const MetricsSnapshot& snapshot) {
  std::ostringstream out;
  out << "metric,unit,avg,min,max";
  for (const char* key : kPercentileKeys) out << ',' << key;
  out << ",std,count,sum\n";
  for (const MetricStats& m : snapshot.metrics) {
    out << m.tag << ',' << m.unit << ',' << format_csv_number(m.avg) << ','
        << format_csv_number(m.min) << ',' << format_csv_number(m.max);
    for (double p : m.percentiles) out << ',' << format_csv_number(p);
    out << ',' << format_csv_number(m.std) << ',' << m.count << ',' << format_csv_number(m.sum)
        << '\n';
  }
  std::string text = out.str();
  sanitize_utf8_in_place(text);
  return text;
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

void write_summary_csv(const std::filesystem::path& path, const MetricsSnapshot& snapshot) {
  write_file_atomically(path, summary_csv(snapshot));
}

}  // namespace convoy::controller
