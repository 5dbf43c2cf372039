#include "controller/report/server_metrics_json.hpp"

#include <rapidjson/reader.h>
#include <rapidjson/writer.h>

#include <cmath>

#include "common/utf8.hpp"

namespace convoy::controller {

// Named, so that its helpers (number, string, ...) meet no other file's in a unity build.
namespace server_metrics_writer {

namespace {

// The number summary.json has always written for `v`: the section once crossed from the
// telemetry room as text and was copied in through rapidjson's reader, whose default (fast)
// number parsing lands within an ulp or two of what was written. Read back the same way here,
// so that the file's bytes stay what they were.
struct NumberReader : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, NumberReader> {
  double value = 0;
  bool Double(double d) {
    value = d;
    return true;
  }
  bool Default() { return true; }
};

double as_summary_reads(double v) {
  char text[40];
  text[0] = '[';
  char* end = rapidjson::internal::dtoa(v, text + 1);
  *end++ = ']';
  *end = '\0';
  NumberReader handler;
  handler.value = v;
  rapidjson::Reader reader;
  rapidjson::StringStream in(text);
  reader.Parse(in, handler);
  return handler.value;
}

template <typename Writer>
void number(Writer& w, double v) {
  if (std::isfinite(v)) {
    w.Double(as_summary_reads(v));
  } else {
    w.Null();
  }
}

template <typename Writer>
void string(Writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

template <typename Writer>
void text_or_null(Writer& w, const std::string& s) {
  if (s.empty()) {
    w.Null();
  } else {
    string(w, s);
  }
}

template <typename Writer>
void int_or_null(Writer& w, const std::optional<int64_t>& v) {
  if (v) {
    w.Int64(*v);
  } else {
    w.Null();
  }
}

template <typename Writer>
void identity(Writer& w, const ServerMetricEntry& e) {
  w.Key("endpoint");
  string(w, e.endpoint);
  w.Key("name");
  string(w, e.name);
  w.Key("type");
  string(w, e.type);
  w.Key("labels");
  w.StartObject();
  for (const auto& [name, value] : e.labels) {
    w.Key(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    string(w, value);
  }
  w.EndObject();
  if (e.headline) {
    w.Key("headline");
    w.Bool(true);
    w.Key("title");
    string(w, e.title);
    w.Key("unit");
    string(w, e.unit);
    w.Key("role");
    string(w, e.role);
  }
}

template <typename Writer>
void gauge_stats(Writer& w, const ServerMetricStats& s) {
  w.Key("samples");
  w.Int64(s.samples);
  const std::pair<const char*, double> values[] = {{"min", s.min}, {"avg", s.avg},
                                                   {"p50", s.p50}, {"p99", s.p99},
                                                   {"max", s.max}, {"last", s.last}};
  for (const auto& [key, v] : values) {
    w.Key(key);
    number(w, v);
  }
}

template <typename Writer>
void counter_stats(Writer& w, const ServerMetricStats& s) {
  w.Key("samples");
  w.Int64(s.samples);
  w.Key("delta");
  number(w, s.delta);
  w.Key("rate_per_s");
  number(w, s.rate_per_s);
  w.Key("resets");
  w.Int64(s.resets);
  w.Key("last");
  number(w, s.last);
}

template <typename Writer>
void histogram_stats(Writer& w, const ServerMetricStats& s) {
  const std::pair<const char*, double> values[] = {
      {"count", s.count}, {"sum", s.sum}, {"avg", s.avg}, {"p50", s.p50},
      {"p90", s.p90},     {"p95", s.p95}, {"p99", s.p99}};
  for (const auto& [key, v] : values) {
    w.Key(key);
    number(w, v);
  }
  w.Key("buckets");
  w.StartArray();
  for (const auto& [le, n] : s.buckets) {
    w.StartObject();
    w.Key("le");
    if (std::isinf(le) && le > 0) {
      w.String("+Inf");
    } else {
      number(w, le);
    }
    w.Key("count");
    number(w, n);
    w.EndObject();
  }
  w.EndArray();
}

template <typename Writer>
void stats(Writer& w, ServerMetricEntry::Kind kind, const ServerMetricStats& s) {
  switch (kind) {
    case ServerMetricEntry::Kind::kGauge:
      gauge_stats(w, s);
      break;
    case ServerMetricEntry::Kind::kCounter:
      counter_stats(w, s);
      break;
    case ServerMetricEntry::Kind::kHistogram:
      histogram_stats(w, s);
      break;
  }
}

// "timeline": [[t_s, v], ...], or [[t_s, p50, p99], ...] for a histogram.
template <typename Writer>
void timeline(Writer& w, const ServerMetricEntry& e) {
  const bool histogram = e.kind == ServerMetricEntry::Kind::kHistogram;
  w.Key("timeline");
  w.StartArray();
  for (const ServerMetricPoint& p : e.timeline) {
    w.StartArray();
    number(w, p.t_s);
    number(w, p.a);
    if (histogram) number(w, p.b);
    w.EndArray();
  }
  w.EndArray();
}

template <typename Writer>
void entry(Writer& w, const ServerMetrics& m, const ServerMetricEntry& e) {
  w.StartObject();
  identity(w, e);
  stats(w, e.kind, e.window);
  if (e.headline) timeline(w, e);
  if (!m.stages.empty()) {
    // "stages": [{name, <the entry's statistics over that stage's window>}].
    w.Key("stages");
    w.StartArray();
    for (size_t i = 0; i < m.stages.size() && i < e.stages.size(); ++i) {
      w.StartObject();
      w.Key("name");
      string(w, m.stages[i].name);
      stats(w, e.kind, e.stages[i]);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

template <typename Writer>
void endpoints(Writer& w, const std::vector<ServerMetricEndpoint>& endpoints) {
  w.Key("endpoints");
  w.StartArray();
  for (const ServerMetricEndpoint& e : endpoints) {
    w.StartObject();
    w.Key("name");
    string(w, e.name);
    w.Key("url");
    string(w, e.url);
    const std::pair<const char*, int64_t> counts[] = {{"scrapes", e.scrapes},
                                                      {"errors", e.errors},
                                                      {"dropped_series", e.dropped_series},
                                                      {"malformed_lines", e.malformed_lines}};
    for (const auto& [key, n] : counts) {
      w.Key(key);
      w.Int64(n);
    }
    w.Key("first_malformed");
    text_or_null(w, e.first_malformed);
    w.Key("last_error");
    text_or_null(w, e.last_error);
    w.EndObject();
  }
  w.EndArray();
}

template <typename Writer>
void write_object(Writer& w, const ServerMetrics& m) {
  w.StartObject();
  w.Key("interval_s");
  number(w, m.interval_s);
  w.Key("window");
  w.StartObject();
  w.Key("start_ns");
  int_or_null(w, m.window_start_ns);
  w.Key("end_ns");
  w.Int64(m.window_end_ns);
  w.EndObject();
  w.Key("stages");
  w.StartArray();
  for (const ServerMetricStage& s : m.stages) {
    w.StartObject();
    w.Key("name");
    string(w, s.name);
    w.Key("start_ns");
    w.Int64(s.start_ns);
    w.Key("end_ns");
    int_or_null(w, s.end_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("series");
  w.Int64(m.series);
  w.Key("max_series");
  w.Int64(m.max_series);
  endpoints(w, m.endpoints);
  w.Key("metrics");
  w.StartArray();
  for (const ServerMetricEntry& e : m.metrics) entry(w, m, e);
  w.EndArray();
  w.EndObject();
}

}  // namespace

}  // namespace server_metrics_writer

using server_metrics_writer::write_object;

void write_server_metrics(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w,
                          const ServerMetrics& m) {
  write_object(w, m);
}

std::string server_metrics_json(const ServerMetrics& m) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  write_object(w, m);
  std::string out(buffer.GetString(), buffer.GetSize());
  sanitize_utf8_in_place(out);
  return out;
}

}  // namespace convoy::controller
