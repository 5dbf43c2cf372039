#include "controller/run/circuit_breaker.hpp"

#include <cmath>
#include <sstream>

#include "common/duration.hpp"

namespace convoy::controller {

CircuitBreaker::CircuitBreaker(const AbortOnConfig& config) : config_(config) {}

void CircuitBreaker::add(int64_t end_ns, bool failed) {
  if (tripped_) return;
  ended_.emplace_back(end_ns, failed);
  if (failed) ++failed_;
}

std::optional<std::string> CircuitBreaker::check(int64_t now_ns) {
  if (tripped_) return std::nullopt;
  const int64_t from_ns = now_ns - seconds_to_ns(config_.window_s);
  // Batches arrive roughly in end order; one that ended early behind a later one leaves a
  // little after its time, which only ever keeps the window a little fuller.
  while (!ended_.empty() && ended_.front().first < from_ns) {
    if (ended_.front().second) --failed_;
    ended_.pop_front();
  }
  const auto n = static_cast<int64_t>(ended_.size());
  if (n == 0 || n < config_.min_requests) return std::nullopt;
  const double rate = static_cast<double>(failed_) / static_cast<double>(n);
  if (rate < config_.error_rate) return std::nullopt;
  tripped_ = true;
  std::ostringstream why;
  why.precision(3);
  why << "load.abort_on: error rate " << rate << " over the last " << config_.window_s << " s ("
      << n << " requests) >= " << config_.error_rate;
  return why.str();
}

}  // namespace convoy::controller
