#include "controller/telemetry/window_stats.hpp"

#include <algorithm>
#include <cmath>

#include "common/histogram.hpp"

namespace convoy::telemetry {

namespace {

// The mean of two timeline values; a NaN side (no observation) gives way to the other.
double average(double x, double y) {
  if (std::isnan(x)) return y;
  if (std::isnan(y)) return x;
  return (x + y) / 2;
}

}  // namespace

void ValueSample::add(double v) {
  if (seen_++ % kept_.width() != 0) return;
  if (kept_.full()) {
    // Keep every other value: the kept ones stay evenly spread over the whole run.
    kept_.coarsen();
    if ((seen_ - 1) % kept_.width() != 0) return;
  }
  kept_.push_back(v);
}

double ValueSample::percentile(double q) const {
  return sample_percentile({kept_.points().begin(), kept_.points().end()}, q * 100);
}

void Timeline::add(double t_s, double a, double b) {
  sum_t_ += t_s;
  ++n_;
  if (!std::isnan(a)) {
    sum_a_ += a;
    ++n_a_;
  }
  if (!std::isnan(b)) {
    sum_b_ += b;
    ++n_b_;
  }
  if (n_ < points_.width()) return;
  points_.push_back(pending());
  sum_t_ = sum_a_ = sum_b_ = 0;
  n_ = n_a_ = n_b_ = 0;
  // Full: every two neighbours become one, and each later point averages twice the scrapes.
  if (points_.full()) points_.coarsen();
}

void Timeline::Point::merge(const Point& later) {
  t_s = (t_s + later.t_s) / 2;
  a = average(a, later.a);
  b = average(b, later.b);
}

Timeline::Point Timeline::pending() const {
  const double nan = std::nan("");
  const auto n = static_cast<double>(n_);
  return {sum_t_ / n, n_a_ > 0 ? sum_a_ / static_cast<double>(n_a_) : nan,
          n_b_ > 0 ? sum_b_ / static_cast<double>(n_b_) : nan};
}

std::vector<Timeline::Point> Timeline::points() const {
  std::vector<Timeline::Point> out(points_.points().begin(), points_.points().end());
  if (n_ > 0) out.push_back(pending());
  return out;
}

void WindowStats::add(double v, int64_t t_ns, bool cumulative) {
  if (samples++ == 0) first_ns = t_ns;
  if (!std::isnan(v)) {
    ++finite_samples;
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
  }
  if (cumulative) {
    // A counter that went down was reset (the server restarted): it counted from 0 since.
    if (last && !std::isnan(*last) && !std::isnan(v)) {
      if (v >= *last) {
        increase += v - *last;
      } else {
        increase += v;
        ++resets;
      }
    }
  } else {
    values.add(v);
  }
  last = v;
  last_ns = t_ns;
}

WindowSummary WindowStats::summary(bool cumulative) const {
  const double nan = std::nan("");
  WindowSummary out;
  out.samples = samples;
  const bool any = finite_samples > 0;
  out.min = any ? min : nan;
  out.avg = any ? sum / static_cast<double>(finite_samples) : nan;
  out.max = any ? max : nan;
  out.p50 = values.percentile(0.50);
  out.p99 = values.percentile(0.99);
  out.last = samples > 0 && last ? *last : nan;
  out.delta = nan;
  out.rate_per_s = nan;
  out.resets = resets;
  if (cumulative && samples > 0) {
    out.delta = increase;
    const int64_t from = base ? base_ns : first_ns;
    const double span_s = static_cast<double>(last_ns - from) / 1e9;
    out.rate_per_s = span_s > 0 ? increase / span_s : nan;
  }
  return out;
}

}  // namespace convoy::telemetry
