// load.abort_on: a live circuit breaker over the measured requests that ended in the
// last window_s. It trips, once, when at least min_requests ended there and the fraction that
// failed reaches error_rate. Pure: fed the records' end times (controller clock) and `now`.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "controller/config/config.hpp"

namespace convoy::controller {

class CircuitBreaker {
 public:
  explicit CircuitBreaker(const AbortOnConfig& config);

  void add(int64_t end_ns, bool failed);
  // The reason, the first time the window trips by now_ns (e.g. "error rate 0.97 over the last
  // 10 s (412 requests) >= 0.5"); nullopt otherwise and ever after.
  std::optional<std::string> check(int64_t now_ns);
  bool tripped() const { return tripped_; }
  size_t window_requests() const { return ended_.size(); }

 private:
  AbortOnConfig config_;
  std::deque<std::pair<int64_t, bool>> ended_;  // (end_ns, failed), in arrival order
  int64_t failed_ = 0;
  bool tripped_ = false;
};

}  // namespace convoy::controller
