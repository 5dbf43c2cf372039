#include "controller/compare/noise.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace convoy::controller::compare {

std::pair<int64_t, int64_t> percentile_rank_interval(double p, int64_t n) {
  if (n <= 0) return {0, 0};
  const double q = std::clamp(p / 100.0, 0.0, 1.0);
  const double nq = static_cast<double>(n) * q;
  const double half = kNoiseZ * std::sqrt(static_cast<double>(n) * q * (1.0 - q));
  // The rank of the percentile itself is ceil(n*q) (nearest rank, as the summary's); the
  // interval keeps it inside even where the spread rounds to nothing (q near 0 or 1).
  const auto centre = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(nq)), 1, n);
  auto low = static_cast<int64_t>(std::floor(nq - half));
  auto high = static_cast<int64_t>(std::ceil(nq + half)) + 1;
  low = std::clamp<int64_t>(std::min(low, centre), 1, n);
  high = std::clamp<int64_t>(std::max(high, centre), 1, n);
  return {low, high};
}

std::optional<ValueInterval> percentile_interval(const Histogram& h, double p) {
  const int64_t n = h.count();
  if (n == 0) return std::nullopt;
  const auto [low, high] = percentile_rank_interval(p, n);
  // Rank r of n is the nearest-rank percentile 100 * r / n (Histogram::nearest_rank).
  auto at_rank = [&](int64_t rank) {
    const double pct = 100.0 * static_cast<double>(rank) / static_cast<double>(n);
    return static_cast<double>(h.percentile(pct)) / kSampleScale;
  };
  return ValueInterval{at_rank(low), at_rank(high)};
}

std::optional<double> percentile_of_stat(std::string_view stat) {
  if (stat.size() < 2 || stat.front() != 'p') return std::nullopt;
  int value = 0;
  const char* end = stat.data() + stat.size();
  const auto [ptr, ec] = std::from_chars(stat.data() + 1, end, value);
  if (ec != std::errc() || ptr != end || value <= 0 || value >= 100) return std::nullopt;
  return static_cast<double>(value);
}

const char* to_string(NoiseMethod m) {
  switch (m) {
    case NoiseMethod::kRankInterval:
      return "rank_interval";
    case NoiseMethod::kTrialInterval:
      return "trial_interval";
    case NoiseMethod::kMinRelative:
      break;
  }
  return "min_relative";
}

NoiseCheck judge_noise(double diff_pct, std::optional<ValueInterval> base,
                       std::optional<ValueInterval> value, NoiseMethod interval_method) {
  if (base && value) {
    const bool apart = value->low > base->high || value->high < base->low;
    return {interval_method, apart && std::fabs(diff_pct) >= kMinMarkedPct};
  }
  return {NoiseMethod::kMinRelative, std::fabs(diff_pct) >= kMinRelativeDiffPct};
}

}  // namespace convoy::controller::compare
