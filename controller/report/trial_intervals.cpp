#include "controller/report/trial_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace convoy::controller {

namespace {

// The continued fraction of the regularized incomplete beta function (modified Lentz), valid
// for x < (a + 1) / (a + b + 2); the caller uses the symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 500;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    for (int step = 0; step < 2; ++step) {
      d = 1.0 + aa * d;
      if (std::fabs(d) < kTiny) d = kTiny;
      c = 1.0 + aa / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      d = 1.0 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    }
    if (std::fabs(d * c - 1.0) < kEpsilon) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function, for x in [0, 1].
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

}  // namespace

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (p == 0.5) return 0;
  // Bisection: the CDF is monotone, and the bracket holds every quantile a 99.99% interval at
  // df = 1 needs (t = 6366 at p = 0.99995).
  double lo = -1e7;
  double hi = 1e7;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    if (student_t_cdf(mid, df) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

std::optional<TrialInterval> t_interval(std::span<const double> values, double confidence) {
  std::vector<double> finite;
  for (double v : values) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  if (finite.empty()) return std::nullopt;
  TrialInterval r;
  r.n = static_cast<int64_t>(finite.size());
  double sum = 0;
  for (double v : finite) sum += v;
  r.mean = sum / static_cast<double>(r.n);
  r.low = r.high = r.mean;
  if (r.n < 2) return r;
  double squares = 0;
  for (double v : finite) squares += (v - r.mean) * (v - r.mean);
  const auto df = static_cast<double>(r.n - 1);
  r.stddev = std::sqrt(squares / df);
  const double t = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, df);
  const double half = t * r.stddev / std::sqrt(static_cast<double>(r.n));
  r.low = r.mean - half;
  r.high = r.mean + half;
  return r;
}

}  // namespace convoy::controller
