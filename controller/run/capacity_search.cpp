#include "controller/run/capacity_search.hpp"

#include <algorithm>
#include <cmath>

#include "controller/report/slo_check.hpp"

namespace convoy::controller {

CapacitySearch::CapacitySearch(const SearchConfig& config) : config_(config) {}

double CapacitySearch::whole(double v) const {
  if (config_.vary != LoadMode::kConcurrency) return v;
  return std::max(1.0, std::round(v));
}

std::optional<double> CapacitySearch::next() const {
  if (over_) return std::nullopt;
  if (pending_runs_ > 0) return pending_value_;  // a noisy step runs again
  if (steps_ == 0) return whole(config_.low);
  if (steps_ == 1) return whole(config_.high);
  const double lo = *met_;
  const double hi = *failed_;
  if (hi <= 0 || (hi - lo) / hi <= config_.precision) return std::nullopt;
  double mid = (lo + hi) / 2;
  if (config_.vary == LoadMode::kConcurrency) {
    mid = std::floor(mid);  // the bracket's lower half: a step that meets is worth more
    if (mid <= lo) mid = lo + 1;
    if (mid >= hi) return std::nullopt;  // no whole number left in between
  }
  return mid;
}

void CapacitySearch::record(double value, bool met, bool within_noise) {
  if (pending_runs_ == 0) {
    pending_value_ = value;
    pending_noisy_ = within_noise;
  }
  ++pending_runs_;
  if (met) ++pending_met_;
  const int max_runs = 1 + static_cast<int>(std::max<int64_t>(0, config_.repeats));
  const int missed = pending_runs_ - pending_met_;
  const bool met_wins = pending_met_ * 2 > max_runs;
  const bool missed_wins = missed * 2 >= max_runs;  // a tie misses
  if (pending_noisy_ && !met_wins && !missed_wins && pending_runs_ < max_runs) return;
  const bool verdict = pending_noisy_ ? pending_met_ * 2 > pending_runs_ : met;
  verdicts_.push_back({pending_value_, pending_runs_, pending_met_, verdict});
  pending_runs_ = 0;
  pending_met_ = 0;
  pending_noisy_ = false;
  decide(verdicts_.back().value, verdict);
}

std::optional<StepVerdict> CapacitySearch::verdict_of(std::optional<double> value) const {
  if (!value) return std::nullopt;
  for (auto it = verdicts_.rbegin(); it != verdicts_.rend(); ++it) {
    if (it->value == *value) return *it;
  }
  return std::nullopt;
}

bool within_slo_noise(const SloSpec& slo, const MetricsSnapshot& m) {
  if (m.request_count == 0) return false;
  const double share = kSloNoisePct / 100.0;
  for (const auto& [tag, limits] : slo.limits) {
    const MetricStats* s = m.find(tag);
    if (!s || s->count == 0) continue;
    for (const auto& [statistic, limit] : limits) {
      const auto value = slo_statistic(*s, statistic);
      if (value && std::fabs(*value - limit) <= share * limit) return true;
    }
  }
  // An error-rate limit of 0 has no band: errors are counted, not sampled around a limit.
  return slo.error_rate && *slo.error_rate > 0 &&
         std::fabs(m.error_rate() - *slo.error_rate) <= share * *slo.error_rate;
}

void CapacitySearch::decide(double value, bool met) {
  ++steps_;
  if (met) {
    met_ = value;
  } else {
    failed_ = value;
  }
  // low missed: nothing lower is tried. high met: nothing higher is.
  if (steps_ == 1 && !met) over_ = true;
  if (steps_ == 2 && met) over_ = true;
}

}  // namespace convoy::controller
