// One series' statistics over a window of the run (the measured window, or one stage's), in
// fixed memory whatever the window's length: the window's counters and extremes, a gauge's
// thinned sample for its percentiles, a headline series' timeline of bounded points. Pure: it is
// given values and their times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "common/bounded_series.hpp"

namespace convoy::telemetry {

// A gauge's values, for its percentiles: every value while there are at most kCapacity, then
// every 2nd, 4th, ... value (evenly spread over time), so memory stays fixed. Its percentiles
// are exact over the kept values (common/histogram.hpp's sample_percentile), not bucketed: a
// gauge is a double of any scale (a fraction of the KV cache, a queue length, bytes), where
// Histogram keeps int64 buckets and would need a scale per series; 256 doubles are 2 KiB and a
// sort at the end.
class ValueSample {
 public:
  static constexpr size_t kCapacity = 256;
  void add(double v);
  // Nearest-rank percentile (q in [0, 1]) of the kept values; NaN when empty.
  double percentile(double q) const;
  size_t size() const { return kept_.size(); }

 private:
  // One point per `width` values seen; when full, the earlier of each pair stays.
  BoundedSeries<double, MergeKeepFirst> kept_{kCapacity, 1};
  int64_t seen_ = 0;
};

// A headline series' values over time in fixed memory: at most kCapacity points. When full,
// neighbouring points are averaged in pairs (the resolution halves) and each later point is the
// average of twice as many scrapes, so the points stay evenly spread over the whole run.
class Timeline {
 public:
  static constexpr size_t kCapacity = 600;
  struct Point {
    double t_s = 0;  // seconds since the window's start
    double a = 0;    // the value (a gauge's, a counter's rate); a histogram's p50
    double b = 0;    // a histogram's p99 (unused otherwise); NaN: no observation
    // The merge of two neighbours when the timeline coarsens: each field's mean (a NaN side,
    // no observation, gives way to the other).
    void merge(const Point& later);
  };
  void add(double t_s, double a, double b = 0);
  // The points, the partly filled last one included (at most kCapacity).
  std::vector<Point> points() const;
  int64_t stride() const { return points_.width(); }

 private:
  Point pending() const;  // the average of the point being filled (n_ > 0)

  // Complete points, each the average of `width` scrapes (the stride).
  BoundedSeries<Point, MergeMember> points_{kCapacity, 1};
  // The point being filled: sums and how many finite values each holds.
  double sum_t_ = 0, sum_a_ = 0, sum_b_ = 0;
  int64_t n_ = 0, n_a_ = 0, n_b_ = 0;
};

// What summary.json says of a window: a gauge's or a counter's statistics (NaN: none). A
// closed stage keeps only this (fixed size), not its WindowStats.
struct WindowSummary {
  int64_t samples = 0;
  double min = 0, avg = 0, p50 = 0, p99 = 0, max = 0, last = 0;  // gauges
  double delta = 0, rate_per_s = 0;                              // counters (and buckets)
  int64_t resets = 0;
};

// One series' statistics over one window (the measured window, or one stage's).
struct WindowStats {
  std::optional<double> base;  // the value before the window's first sample (nullopt: none)
  int64_t base_ns = 0;
  std::optional<double> last;  // the previous value a counter's increase is measured from
  int64_t last_ns = 0;
  int64_t samples = 0;  // in the window
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;              // of the window's values (for the gauge average)
  int64_t finite_samples = 0;  // values that were not NaN
  int64_t first_ns = 0;        // first sample in the window
  double increase = 0;         // counters: growth over the window, resets included
  int64_t resets = 0;          // counters: times the value went down
  ValueSample values;          // gauges only

  // One sample at t_ns (NaN: a value that was not a number). `cumulative`: a counter-like
  // series, whose increase is measured (a drop is a reset); otherwise a gauge, whose values are
  // sampled for percentiles.
  void add(double v, int64_t t_ns, bool cumulative);
  WindowSummary summary(bool cumulative) const;
};

// The growth of a cumulative value from `before` to `v` (from 0 after a reset).
inline double counter_growth(double before, double v) { return v >= before ? v - before : v; }

}  // namespace convoy::telemetry
