// load.trace: a trace's recorded conversation starts made into the run's intended starts
// (docs/datasets.md "Replay controls"). Pure: integers in, integers out.
//
// Trace time is nanoseconds from the trace's first timestamp. Replay keeps the conversations
// whose start lies in [start_offset, end_offset) of trace time, shifts them so the first kept
// one starts at 0, divides by speedup, then shortens every gap between consecutive starts longer
// than max_idle_gap (replay time, after speedup: AIPerf's --max-idle-gap-cap-seconds) to it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

struct TraceReplay {
  int64_t start_offset_ns = 0;             // trace time; >= 0
  std::optional<int64_t> end_offset_ns;    // trace time; > start_offset_ns; unset: the trace's end
  double speedup = 1;                      // > 0
  std::optional<int64_t> max_idle_gap_ns;  // replay time; >= 0; unset: gaps as recorded

  // load.trace as nanoseconds; the identity (keep all, speedup 1, no cap) when unset.
  static TraceReplay from(const std::optional<TraceConfig>& trace);
  bool identity() const {
    return start_offset_ns == 0 && !end_offset_ns && speedup == 1 && !max_idle_gap_ns;
  }
  // Whether a conversation starting at `trace_ns` is replayed: start <= trace_ns < end.
  bool keeps(int64_t trace_ns) const {
    return trace_ns >= start_offset_ns && (!end_offset_ns || trace_ns < *end_offset_ns);
  }
  // Replay time of a within-conversation delay (a turn's recorded delay): divided by speedup.
  double delay_ms(double recorded_ms) const { return recorded_ms / speedup; }
};

// The intended starts (replay ns from the run's start) of the kept conversations, whose trace
// times `kept_ns` are non-decreasing and all kept by `replay`: element i is conversation i's.
std::vector<int64_t> replay_starts_ns(const std::vector<int64_t>& kept_ns,
                                      const TraceReplay& replay);

}  // namespace convoy::controller
