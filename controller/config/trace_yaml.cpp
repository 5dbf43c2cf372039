#include "controller/config/trace_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

#include "controller/config/config_keys.hpp"

namespace convoy::config_detail {

namespace {

using yaml_util::format_number;
using yaml_util::Section;

// A trace may span at most 1e12 ms (controller/dataset/mooncake.hpp): offsets and gaps beyond
// that would never matter, and bounding them keeps their nanoseconds in int64.
constexpr double kMaxTraceSeconds = 1e9;
constexpr double kMaxSpeedup = 1e6;

void check_trace_seconds(const Section& s, const char* key, double v) {
  s.check(v >= 0 && v <= kMaxTraceSeconds, key,
          "must be between 0 and " + format_number(kMaxTraceSeconds) + " seconds, got " +
              format_number(v));
}

}  // namespace

void read_trace(const Section& s, LoadConfig& l) {
  const YAML::Node n = s.node("trace");
  if (!n.IsDefined() || n.IsNull()) {
    if (n.IsDefined()) l.trace.reset();
    return;
  }
  const Section t = s.section("trace", config_keys::kTraceKeys);
  TraceConfig trace = l.trace.value_or(TraceConfig{});
  t.read("speedup", trace.speedup);
  t.check(trace.speedup > 0 && trace.speedup <= kMaxSpeedup, "speedup",
          "must be greater than 0 and at most " + format_number(kMaxSpeedup) +
              " (2 replays the trace twice as fast), got " + format_number(trace.speedup));
  t.read("start_offset_s", trace.start_offset_s);
  check_trace_seconds(t, "start_offset_s", trace.start_offset_s);
  t.read("end_offset_s", trace.end_offset_s);
  if (trace.end_offset_s) {
    check_trace_seconds(t, "end_offset_s", *trace.end_offset_s);
    t.check(*trace.end_offset_s > trace.start_offset_s, "end_offset_s",
            "must be greater than start_offset_s (" + format_number(trace.start_offset_s) +
                "), got " + format_number(*trace.end_offset_s) +
                ": the window [start_offset_s, end_offset_s) would keep nothing");
  }
  t.read("max_idle_gap_s", trace.max_idle_gap_s);
  if (trace.max_idle_gap_s) check_trace_seconds(t, "max_idle_gap_s", *trace.max_idle_gap_s);
  s.check(l.mode == LoadMode::kTrace, "trace",
          "transforms a trace's timestamps: set load.mode to trace (with dataset.type mooncake), "
          "or remove load.trace (load.mode is " +
              std::string(to_string(l.mode)) + ")");
  l.trace = trace;
}

void trace_yaml(std::ostream& y, const LoadConfig& l) {
  if (!l.trace) {
    y << "  trace: null\n";
    return;
  }
  const TraceConfig& t = *l.trace;
  y << "  trace: {speedup: " << format_number(t.speedup)
    << ", start_offset_s: " << format_number(t.start_offset_s)
    << ", end_offset_s: " << (t.end_offset_s ? format_number(*t.end_offset_s) : "null")
    << ", max_idle_gap_s: " << (t.max_idle_gap_s ? format_number(*t.max_idle_gap_s) : "null")
    << "}\n";
}

}  // namespace convoy::config_detail
