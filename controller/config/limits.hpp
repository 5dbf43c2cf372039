// The range of every number a configuration may hold (docs/config.md's table lists the same).
// A value outside its range is refused at load with FILE:LINE: key and exit 2, before any traffic:
// a number that parses but cannot be run (concurrency 10^9, a rate of 10^-300, a duration that
// overflows int64 nanoseconds) must never reach the run. The bounds are wide:
// each is far beyond any benchmark seen, and small enough that its cost (a slot, a buffer, a
// sum of nanoseconds) stays defined and affordable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "controller/config/config.hpp"

namespace convoy::limits {

// Conversations in flight (load.concurrency, a concurrency stage, sweep or search value). Each
// is a scheduler slot and a conversation's state at a worker.
inline constexpr int64_t kMaxConcurrency = 100'000;
// New conversations per second (load.rate, rate stages, sweeps, searches). A positive rate below
// kMinRatePerS (one conversation in about 17 minutes) is refused: its gaps overflow no clock, but
// it is always a typo. A ramp may start or end at exactly 0.
inline constexpr double kMaxRatePerS = 1'000'000;
inline constexpr double kMinRatePerS = 0.001;
// Every duration in seconds (duration_s, warmup_s, grace_s, settle_s, step_duration_s, window_s,
// ready_timeout_s, timeouts, intervals): 11.6 days. kMaxStages such durations summed stay far
// inside int64 nanoseconds (1,000 x 10^6 s = 10^18 ns < 9.2 x 10^18).
inline constexpr double kMaxDurationS = 1'000'000;
// Every delay in milliseconds (think_time_ms, cancel.after_ms): the same 11.6 days.
inline constexpr double kMaxDelayMs = kMaxDurationS * 1000;
// Request, connect and telemetry timeouts: libcurl counts whole milliseconds, and 0 means none.
inline constexpr double kMinTimeoutS = 0.001;
// telemetry.interval_s: a scrape at most every 10 ms.
inline constexpr double kMinScrapeIntervalS = 0.01;
// output.slice_s: a time slice at least 1 ms wide.
inline constexpr double kMinSliceS = 0.001;
// output.metrics_linger_s: an hour covers any scrape interval; a longer wait is a run that
// never ends.
inline constexpr double kMaxMetricsLingerS = 3600;
// Counts of conversations or requests (sessions, requests, warmup_sessions, step_requests,
// dataset.conversations, abort_on.min_requests).
inline constexpr int64_t kMaxCount = 1'000'000'000;
// load.trials: each trial is a whole run with its own folder; a thousand is already days of
// benchmarking, and a typo like 100000 would fill the disk with folders.
inline constexpr int64_t kMaxTrials = 1'000;
// Stages in a profile: load.stages listed, or load.sweep values (each becomes a stage).
inline constexpr std::size_t kMaxStages = 1'000;
// Tokens in one turn (input_tokens, output_tokens, shared_prefix_tokens).
inline constexpr double kMaxTokens = 10'000'000;
// Turns in one conversation (dataset.turns, subagents.turns, subagents.spawn_after_turn).
inline constexpr double kMaxTurns = 10'000;
// Sub-agents one conversation spawns (dataset.subagents.count).
inline constexpr double kMaxSubagents = 10'000;
// Remote workers a controller waits for (workers.expect).
inline constexpr int kMaxExpectedWorkers = 10'000;
// target.max_response_bytes: 16 GiB.
inline constexpr int64_t kMaxResponseBytes = int64_t{1} << 34;
// telemetry.max_series.
inline constexpr int64_t kMaxSeries = 10'000'000;
// Goodput and search SLO limits in milliseconds.
inline constexpr double kMaxSloMs = kMaxDelayMs;
// The burstiness (gamma shape) of arrivals.
inline constexpr double kMinBurstiness = 0.01;
inline constexpr double kMaxBurstiness = 100;
// convoy-mock: --speedup divides every simulated time; --workers and --itl-ms as it checks them.
inline constexpr double kMinMockSpeedup = 0.001;
inline constexpr double kMaxMockSpeedup = 1'000'000;
inline constexpr int kMaxMockWorkers = 4096;
inline constexpr double kMaxMockItlMs = 10'000'000;
// session_routing.timeout_s: whole seconds, at most kMaxDurationS.
inline constexpr double kMaxSessionTimeoutS = kMaxDurationS;

// The YAML document after aliases are expanded (controller/config/yaml_guard.hpp): nodes
// (scalars, lists, mappings, each counted once per place it appears), bytes of scalar text, and
// nesting depth. A real configuration is a few hundred nodes and a few KB.
inline constexpr std::size_t kMaxYamlNodes = 100'000;
inline constexpr std::size_t kMaxYamlBytes = std::size_t{8} << 20;
inline constexpr std::size_t kMaxYamlDepth = 64;

}  // namespace convoy::limits

namespace convoy::yaml_util {
class Source;
}

namespace convoy::config_detail {

// Checks every number of `c` (read from `src`) against its range above; throws ConfigError
// "FILE:LINE: key: ..." at the first outside it.
void check_limits(const yaml_util::Source& src, const Config& c);

}  // namespace convoy::config_detail
