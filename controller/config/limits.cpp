#include "controller/config/limits.hpp"

#include <cmath>
#include <string>

#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

namespace {

using yaml_util::Source;

// Whole numbers in full (100000, not 1e+05); others as the shortest text that reads back.
std::string range_text(double v) {
  constexpr double kWholeUpTo = 1e15;
  if (v == std::floor(v) && std::fabs(v) < kWholeUpTo) {
    return std::to_string(static_cast<int64_t>(v));
  }
  return yaml_util::format_number(v);
}

// A closed range [lo, hi] (or (lo, hi] when lo_open) with its unit, for the message.
struct Range {
  double lo;
  double hi;
  const char* unit;
  bool lo_open = false;
};

std::string describe(const Range& r) {
  return std::string(r.lo_open ? "(" : "[") + range_text(r.lo) + ", " + range_text(r.hi) + "]" +
         (*r.unit ? " " : "") + r.unit;
}

void in_range(const Source& src, const std::string& path, double v, const Range& r) {
  const bool low_ok = r.lo_open ? v > r.lo : v >= r.lo;
  if (low_ok && v <= r.hi) return;
  src.fail(path, "out of range: got " + range_text(v) + ", the range is " + describe(r) +
                     " (docs/config.md lists every number's range)");
}

void opt_in_range(const Source& src, const std::string& path, const std::optional<double>& v,
                  const Range& r) {
  if (v) in_range(src, path, *v, r);
}
void opt_in_range(const Source& src, const std::string& path, const std::optional<int64_t>& v,
                  const Range& r) {
  if (v) in_range(src, path, static_cast<double>(*v), r);
}

const Range kDuration{0, limits::kMaxDurationS, "seconds", true};
const Range kWait{0, limits::kMaxDurationS, "seconds"};  // may be 0: grace_s, settle_s
const Range kTimeout{limits::kMinTimeoutS, limits::kMaxDurationS, "seconds"};
const Range kCount{1, static_cast<double>(limits::kMaxCount), ""};
const Range kConcurrency{1, static_cast<double>(limits::kMaxConcurrency), "conversations"};
const Range kRate{limits::kMinRatePerS, limits::kMaxRatePerS, "conversations per second"};
const Range kBurstiness{limits::kMinBurstiness, limits::kMaxBurstiness, ""};

// A distribution's mean, stddev, min and max all within [0, hi] (its floor is checked on read).
void check_distribution(const Source& src, const std::string& path, const Distribution& d,
                        double hi, const char* unit) {
  const Range r{0, hi, unit};
  for (std::size_t i = 0; i < d.mix.size(); ++i) {
    const MixComponent& c = d.mix[i];
    const std::string item = path + ".mix[" + std::to_string(i) + "]";
    in_range(src, item + ".weight", c.weight, Range{0, 1e9, ""});
    in_range(src, item + ".mean", c.mean, r);
    in_range(src, item + ".stddev", c.stddev, r);
    opt_in_range(src, item + ".min", c.min, r);
    opt_in_range(src, item + ".max", c.max, r);
  }
  if (!d.mix.empty()) return;  // the mixture's own mean and stddev follow from its components
  in_range(src, path + ".mean", d.mean, r);
  in_range(src, path + ".stddev", d.stddev, r);
  opt_in_range(src, path + ".min", d.min, r);
  opt_in_range(src, path + ".max", d.max, r);
}

// A rate that may be 0 (a ramp's end, or load.rate outside rate mode).
void rate_or_zero(const Source& src, const std::string& path, double v) {
  if (v != 0) in_range(src, path, v, kRate);
}

void check_level(const Source& src, const std::string& path, const LoadLevel& level, bool rate) {
  auto one = [&](const std::string& p, double v) {
    if (rate) {
      rate_or_zero(src, p, v);
    } else {
      in_range(src, p, v, kConcurrency);
    }
  };
  if (!level.ramp) return one(path, level.from);
  one(path + ".from", level.from);
  one(path + ".to", level.to);
}

void check_ends(const Source& src, const std::string& at, const std::optional<double>& duration_s,
                const std::optional<int64_t>& sessions, const std::optional<int64_t>& requests) {
  opt_in_range(src, at + "duration_s", duration_s, kDuration);
  opt_in_range(src, at + "sessions", sessions, kCount);
  opt_in_range(src, at + "requests", requests, kCount);
}

void check_stages(const Source& src, const LoadConfig& l) {
  if (l.profile == ProfileKind::kStages) {
    for (const auto& st : l.stages) {
      const std::string at = "load.stages[" + std::to_string(st.index) + "].";
      check_level(src, at + "concurrency", st.concurrency, false);
      if (st.mode == LoadMode::kRate) check_level(src, at + "rate", st.rate, true);
      in_range(src, at + "burstiness", st.burstiness, kBurstiness);
      check_ends(src, at, st.duration_s, st.sessions, st.requests);
      in_range(src, at + "settle_s", st.settle_s, kWait);
    }
  }
  if (l.profile == ProfileKind::kSweep && l.sweep) {
    const SweepConfig& sw = *l.sweep;
    const bool rate = sw.vary == LoadMode::kRate;
    const std::string list = rate ? "load.sweep.rate" : "load.sweep.concurrency";
    for (std::size_t i = 0; i < sw.values.size(); ++i) {
      in_range(src, list + "[" + std::to_string(i) + "]", sw.values[i],
               rate ? kRate : kConcurrency);
    }
    check_ends(src, "load.sweep.", sw.duration_s, sw.sessions, sw.requests);
    in_range(src, "load.sweep.settle_s", sw.settle_s, kWait);
  }
  if (l.search) {
    const SearchConfig& sc = *l.search;
    const Range& r = sc.vary == LoadMode::kRate ? kRate : kConcurrency;
    in_range(src, "load.search.low", sc.low, r);
    in_range(src, "load.search.high", sc.high, r);
    opt_in_range(src, "load.search.step_duration_s", sc.step_duration_s, kDuration);
    opt_in_range(src, "load.search.step_requests", sc.step_requests, kCount);
    in_range(src, "load.search.settle_s", sc.settle_s, kWait);
    for (const auto& [metric, stats] : sc.slo.limits) {
      for (const auto& [stat, ms] : stats) {
        in_range(src, "load.search.slo." + metric + "." + stat, ms,
                 Range{0, limits::kMaxSloMs, "ms", true});
      }
    }
  }
  if (l.abort_on) {
    in_range(src, "load.abort_on.window_s", l.abort_on->window_s, kDuration);
    in_range(src, "load.abort_on.min_requests", static_cast<double>(l.abort_on->min_requests),
             kCount);
  }
}

void check_load(const Source& src, const LoadConfig& l) {
  in_range(src, "load.concurrency", static_cast<double>(l.concurrency), kConcurrency);
  rate_or_zero(src, "load.rate", l.rate);
  in_range(src, "load.burstiness", l.burstiness, kBurstiness);
  check_ends(src, "load.", l.duration_s, l.sessions, l.requests);
  in_range(src, "load.grace_s", l.grace_s, kWait);
  in_range(src, "load.warmup_sessions", static_cast<double>(l.warmup_sessions),
           Range{0, static_cast<double>(limits::kMaxCount), ""});
  opt_in_range(src, "load.warmup_s", l.warmup_s, kDuration);
  in_range(src, "load.cancel.after_ms", l.cancel.after_ms, Range{0, limits::kMaxDelayMs, "ms"});
  in_range(src, "load.trials", static_cast<double>(l.trials),
           Range{1, static_cast<double>(limits::kMaxTrials), "trials"});
  check_stages(src, l);
}

void check_dataset(const Source& src, const DatasetConfig& d) {
  in_range(src, "dataset.conversations", static_cast<double>(d.conversations), kCount);
  check_distribution(src, "dataset.turns", d.turns, limits::kMaxTurns, "turns");
  check_distribution(src, "dataset.input_tokens", d.input_tokens, limits::kMaxTokens, "tokens");
  check_distribution(src, "dataset.output_tokens", d.output_tokens, limits::kMaxTokens, "tokens");
  in_range(src, "dataset.shared_prefix_tokens", static_cast<double>(d.shared_prefix_tokens),
           Range{0, limits::kMaxTokens, "tokens"});
  check_distribution(src, "dataset.think_time_ms", d.think_time_ms, limits::kMaxDelayMs, "ms");
  if (const auto& p = d.prefixes) {
    in_range(src, "dataset.prefixes.pool", static_cast<double>(p->pool), Range{1, 1e6, "prefixes"});
    in_range(src, "dataset.prefixes.tokens", static_cast<double>(p->tokens),
             Range{1, limits::kMaxTokens, "tokens"});
    in_range(src, "dataset.prefixes.per_conversation", static_cast<double>(p->per_conversation),
             Range{1, 64, "prefixes"});
  }
  if (const auto& a = d.subagents) {
    check_distribution(src, "dataset.subagents.count", a->count, limits::kMaxSubagents,
                       "sub-agents");
    check_distribution(src, "dataset.subagents.turns", a->turns, limits::kMaxTurns, "turns");
    check_distribution(src, "dataset.subagents.spawn_after_turn", a->spawn_after_turn,
                       limits::kMaxTurns, "turns");
  }
}

void check_rest(const Source& src, const Config& c) {
  in_range(src, "target.request_timeout_s", c.target.request_timeout_s, kTimeout);
  in_range(src, "target.connect_timeout_s", c.target.connect_timeout_s, kTimeout);
  in_range(src, "target.max_response_bytes", static_cast<double>(c.target.max_response_bytes),
           Range{1, static_cast<double>(limits::kMaxResponseBytes), "bytes"});
  in_range(src, "mock.workers", c.mock.workers, Range{1, limits::kMaxMockWorkers, ""});
  in_range(src, "mock.itl_ms", c.mock.itl_ms, Range{0, limits::kMaxMockItlMs, "ms"});
  in_range(src, "mock.speedup", c.mock.speedup,
           Range{limits::kMinMockSpeedup, limits::kMaxMockSpeedup, ""});
  in_range(src, "session_routing.timeout_s", static_cast<double>(c.session_routing.timeout_s),
           Range{1, limits::kMaxSessionTimeoutS, "seconds"});
  if (c.workers.expect) {
    in_range(src, "workers.expect", *c.workers.expect,
             Range{1, limits::kMaxExpectedWorkers, "workers"});
  }
  in_range(src, "workers.ready_timeout_s", c.workers.ready_timeout_s, kDuration);
  opt_in_range(src, "output.slice_s", c.output.slice_s,
               Range{limits::kMinSliceS, limits::kMaxDurationS, "seconds"});
  in_range(src, "output.metrics_linger_s", c.output.metrics_linger_s,
           Range{0, limits::kMaxMetricsLingerS, "seconds"});
  in_range(src, "telemetry.interval_s", c.telemetry.interval_s,
           Range{limits::kMinScrapeIntervalS, limits::kMaxDurationS, "seconds"});
  in_range(src, "telemetry.timeout_s", c.telemetry.timeout_s, kTimeout);
  in_range(src, "telemetry.max_series", static_cast<double>(c.telemetry.max_series),
           Range{1, static_cast<double>(limits::kMaxSeries), "series"});
  for (const auto& [metric, ms] : c.slo) {
    in_range(src, "slo." + metric, ms, Range{0, limits::kMaxSloMs, "ms", true});
  }
}

}  // namespace

void check_limits(const Source& src, const Config& c) {
  check_rest(src, c);
  check_dataset(src, c.dataset);
  check_load(src, c.load);
}

}  // namespace convoy::config_detail
