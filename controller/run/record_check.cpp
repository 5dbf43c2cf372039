#include "controller/run/record_check.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace convoy::controller {

namespace {

std::optional<std::string> count_problem(const proto::Record& r) {
  for (const auto& [name, value] :
       std::array<std::pair<const char*, int64_t>, 3>{{{"input_tokens", r.input_tokens},
                                                       {"output_tokens", r.output_tokens},
                                                       {"reasoning_tokens", r.reasoning_tokens}}}) {
    if (value < 0) return std::string(name) + " " + std::to_string(value) + " < 0";
  }
  if (r.cached_tokens < -1) {
    return "cached_tokens " + std::to_string(r.cached_tokens) + " < -1 (-1: not reported)";
  }
  if (r.http_status < 0 || r.http_status > 999) {
    return "http_status " + std::to_string(r.http_status) + " outside 0..999";
  }
  for (int64_t gap : r.chunk_gaps_ns) {
    if (gap < 0) return "a negative chunk gap (" + std::to_string(gap) + " ns)";
  }
  return std::nullopt;
}

std::optional<std::string> time_problem(const proto::Record& r, const RecordBounds& b) {
  const int64_t low = b.run_start_ns - kRecordTimeSlackNs;
  const int64_t high = b.now_ns + kRecordTimeSlackNs;
  for (const auto& [name, field] : proto::kRecordTimestamps) {
    const int64_t t = r.*field;
    if (t == 0) continue;  // not reached (never sent, no token)
    if (t < low || t > high) {
      // In doubles: a hostile time may be near INT64_MIN, where t - start overflows.
      const double from_start_s =
          (static_cast<double>(t) - static_cast<double>(b.run_start_ns)) / 1e9;
      return std::string(name) + " is " + std::to_string(static_cast<int64_t>(from_start_s)) +
             " s from the run's start, outside the run";
    }
  }
  if (r.sent_ns != 0 && r.end_ns != 0 && r.end_ns < r.sent_ns) return "end_ns before sent_ns";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> record_problem(const proto::Record& r, const RecordBounds& bounds) {
  if (auto why = count_problem(r)) return why;
  if (auto why = time_problem(r, bounds)) return why;
  if (r.url_index >= std::max<size_t>(bounds.url_count, 1)) {
    return "url_index " + std::to_string(r.url_index) + " past the " +
           std::to_string(std::max<size_t>(bounds.url_count, 1)) + " target URL(s)";
  }
  return std::nullopt;
}

}  // namespace convoy::controller
