// When is a difference between two runs a difference? Two runs of the same server at the same
// load never give the same p99: 4.97 ms against 4.99 ms is sampling noise, not a regression.
// `convoy compare` marks a difference better or worse only when it is larger than the noise:
//   - a percentile row of two columns that both have records.jsonl: each value's 95% confidence
//     interval from the order statistics (the binomial interval on the rank, distribution-free:
//     no assumption about the latency's shape), and the difference counts only when the two
//     intervals do not overlap;
//   - a row of two columns that both ran load.trials (a combined summary.json): each value's
//     interval over its trials (Student t, controller/report/trial_intervals.hpp), and the
//     difference counts only when the two intervals do not overlap;
//   - every other row (averages, throughputs, counts, a run without records.jsonl): the relative
//     difference must reach kMinRelativeDiffPct.
// Pure: no I/O, no randomness.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "common/histogram.hpp"

namespace convoy::controller::compare {

// Without records a difference under 5% is called noise: repeated runs against a quiet server
// move a p50 by a few percent, and a p99 of a few hundred requests moves by more (its interval
// on the rank spans several of the top values). Documented in docs/compare.md.
inline constexpr double kMinRelativeDiffPct = 5.0;
// Two-sided 95% of the standard normal: the rank interval's width in standard deviations.
inline constexpr double kNoiseZ = 1.959964;
inline constexpr double kNoiseConfidence = 0.95;
// A difference under 1% is never marked, however narrow the intervals: a near-constant latency
// (a mock's fixed inter-token gap) gives intervals a few tenths of a percent wide, and no
// benchmark reproduces a server to better than that. Also well above the histograms' 0.1%.
inline constexpr double kMinMarkedPct = 1.0;
// records.jsonl's latencies (ms) and output_token_throughput_per_user (tokens/sec/user) are kept
// in histograms as value x kSampleScale (microseconds; milli-tokens per second).
inline constexpr double kSampleScale = 1000.0;

// The 1-based ranks [low, high] of the order statistics that bracket percentile `p` (0..100) of
// `n` values with 95% coverage: n*q -/+ z*sqrt(n*q*(1-q)), the normal approximation of the
// binomial count of values below the quantile, widened to whole ranks and clamped to [1, n].
// {0, 0} when n is 0.
std::pair<int64_t, int64_t> percentile_rank_interval(double p, int64_t n);

// A value's 95% confidence interval, in the row's display unit.
struct ValueInterval {
  double low = 0;
  double high = 0;
};
// Percentile `p` of the values in `h` (kept as value x kSampleScale): the values at the ranks of
// percentile_rank_interval. nullopt when `h` is empty.
std::optional<ValueInterval> percentile_interval(const Histogram& h, double p);

// "p50" -> 50, "p99" -> 99; nullopt for any other statistic key ("avg", "min", ...).
std::optional<double> percentile_of_stat(std::string_view stat);

enum class NoiseMethod { kRankInterval, kMinRelative, kTrialInterval };
const char* to_string(NoiseMethod m);  // "rank_interval", "min_relative", "trial_interval"

// How one column's difference from the baseline was judged.
struct NoiseCheck {
  NoiseMethod method = NoiseMethod::kMinRelative;
  bool significant = false;  // larger than the noise: worth "better" or "worse"
};
// `diff_pct`: (value - base) / base * 100. With both intervals: significant when they do not
// overlap and |diff_pct| reaches kMinMarkedPct, judged as `interval_method` (the rank interval
// of records.jsonl, or the trials' interval); otherwise when |diff_pct| reaches
// kMinRelativeDiffPct.
NoiseCheck judge_noise(double diff_pct, std::optional<ValueInterval> base,
                       std::optional<ValueInterval> value,
                       NoiseMethod interval_method = NoiseMethod::kRankInterval);

}  // namespace convoy::controller::compare
