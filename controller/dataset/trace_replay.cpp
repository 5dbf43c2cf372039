#include "controller/dataset/trace_replay.hpp"

#include <algorithm>
#include <cmath>

#include "common/duration.hpp"

namespace convoy::controller {

TraceReplay TraceReplay::from(const std::optional<TraceConfig>& trace) {
  TraceReplay r;
  if (!trace) return r;
  r.start_offset_ns = seconds_to_ns(trace->start_offset_s);
  if (trace->end_offset_s) r.end_offset_ns = seconds_to_ns(*trace->end_offset_s);
  r.speedup = trace->speedup;
  if (trace->max_idle_gap_s) r.max_idle_gap_ns = seconds_to_ns(*trace->max_idle_gap_s);
  return r;
}

std::vector<int64_t> replay_starts_ns(const std::vector<int64_t>& kept_ns,
                                      const TraceReplay& replay) {
  std::vector<int64_t> out;
  out.reserve(kept_ns.size());
  if (kept_ns.empty()) return out;
  const int64_t origin = kept_ns.front();
  // Each start is scaled from the origin (not gap by gap), so rounding never accumulates: with
  // no cap a start is exactly round((t - first) / speedup).
  auto scaled = [&](int64_t t) {
    return static_cast<int64_t>(std::llround(static_cast<double>(t - origin) / replay.speedup));
  };
  int64_t previous_scaled = 0;
  int64_t previous_out = 0;
  for (const int64_t t : kept_ns) {
    const int64_t now = scaled(t);
    int64_t gap = std::max<int64_t>(now - previous_scaled, 0);
    if (replay.max_idle_gap_ns) gap = std::min(gap, *replay.max_idle_gap_ns);
    previous_out += gap;
    previous_scaled = now;
    out.push_back(previous_out);
  }
  return out;
}

}  // namespace convoy::controller
