// Confidence intervals over repeated trials (load.trials): each trial is one independent run of
// the whole profile, and each headline figure (a throughput, an error rate, a latency percentile)
// is one value per trial. The interval is Student's t over those values:
//   mean +/- t(1 - (1 - confidence) / 2, n - 1) * s / sqrt(n)
// for throughputs and rates (means of many requests) and for the per-trial percentiles alike: a
// sample percentile of many requests is asymptotically normal, and the trial is the independent
// unit (a bootstrap of 3 to 10 trial values cannot reach 95%: resampling 3 values gives the
// interval [min, max] at best, which covers 75%; a bootstrap over the pooled requests would leave
// out the run-to-run variation that trials exist to measure). Pure: no I/O, no randomness.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace convoy::controller {

// The confidence of every trials interval: fixed (no key), as in docs/config.md.
inline constexpr double kTrialsConfidence = 0.95;
// The method's name as summary.json writes it.
inline constexpr char kTrialsIntervalMethod[] = "student_t";

// The quantile of Student's t distribution with `df` degrees of freedom (df >= 1) at probability
// `p` in (0, 1): t such that P(T <= t) = p. Exact to about 1e-9 (bisection on the CDF through the
// regularized incomplete beta function).
double student_t_quantile(double p, double df);
// P(T <= t) for Student's t with `df` degrees of freedom.
double student_t_cdf(double t, double df);

// A mean and its two-sided interval over trial values.
struct TrialInterval {
  int64_t n = 0;      // trial values used (the finite ones)
  double mean = 0;    // their mean, in the metric's unit
  double stddev = 0;  // their sample standard deviation (n - 1); 0 for one value
  double low = 0;     // mean - half width; equal to mean when n < 2 (no spread to measure)
  double high = 0;    // mean + half width
};

// The t interval at `confidence` over `values` (non-finite ones skipped); nullopt when none is
// finite. One value: low == high == mean (an interval needs two trials).
std::optional<TrialInterval> t_interval(std::span<const double> values,
                                        double confidence = kTrialsConfidence);

}  // namespace convoy::controller
