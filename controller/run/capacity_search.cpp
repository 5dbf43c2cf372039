#include "controller/run/capacity_search.hpp"

#include <algorithm>
#include <cmath>

namespace convoy::controller {

CapacitySearch::CapacitySearch(const SearchConfig& config) : config_(config) {}

double CapacitySearch::whole(double v) const {
  if (config_.vary != LoadMode::kConcurrency) return v;
  return std::max(1.0, std::round(v));
}

std::optional<double> CapacitySearch::next() const {
  if (over_) return std::nullopt;
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

void CapacitySearch::record(double value, bool met) {
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
