#include "controller/report/run_facts.hpp"

#include <algorithm>

namespace convoy::controller {

TimeSample::TimeSample(size_t capacity) : heap_(capacity, 0) {}

void TimeSample::add(int64_t t_ns) {
  if (count == 0 || t_ns < first_ns) first_ns = t_ns;
  if (count == 0 || t_ns > last_ns) last_ns = t_ns;
  ++count;
  if (heap_.empty()) return;
  const auto begin = heap_.begin();
  if (size_ < heap_.size()) {
    heap_[size_++] = t_ns;
    std::push_heap(begin, begin + static_cast<std::ptrdiff_t>(size_));
  } else if (t_ns < heap_.front()) {
    const auto end = begin + static_cast<std::ptrdiff_t>(size_);
    std::pop_heap(begin, end);  // the latest kept time moves to the back, where t_ns replaces it
    heap_[size_ - 1] = t_ns;
    std::push_heap(begin, end);
  }
}

std::vector<int64_t> TimeSample::samples() const {
  std::vector<int64_t> out(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(size_));
  std::sort(out.begin(), out.end());
  return out;
}

void RunFacts::add(const proto::Record& r) {
  sessions.add_record(r);
  // final_marker close_request's extra request is in no count (MetricsSnapshot counts it).
  if (r.phase != proto::Phase::kMeasure || proto::session_release_only(r)) return;
  if (r.http_status > 0) any_response = true;
  if (r.error.kind == proto::ErrorKind::kConnect) ++connect_errors;
  if (r.turn_index == 0 && r.sent_ns > 0) actual_starts_ns.add(r.sent_ns);
  if (r.error.kind == proto::ErrorKind::kNone && r.turn_index > 0) {
    ++later_turn_requests;
    if (r.usage_from_server) later_turn_prompt_tokens += r.input_tokens;
    if (r.cached_tokens >= 0) {
      later_turn_cached_tokens += r.cached_tokens;
      ++later_turn_requests_reporting_cached;
    }
  }
}

}  // namespace convoy::controller
