#include "controller/report/affinity.hpp"

#include <algorithm>

namespace convoy::controller {

uint32_t AffinityTracker::worker_index(const proto::Record& r) {
  std::string key = r.served_by;
  if (r.dp_rank >= 0) key += "/dp" + std::to_string(r.dp_rank);
  const auto [it, inserted] =
      worker_ids_.try_emplace(std::move(key), static_cast<uint32_t>(worker_ids_.size()));
  if (inserted) worker_last_end_ns_.push_back(0);
  return it->second;
}

void AffinityTracker::add(const proto::Record& r) {
  if (proto::session_release_only(r)) return;
  if (r.served_by.empty()) {
    if (r.error.kind == proto::ErrorKind::kNone) ++counts_.requests_without_worker;
    return;
  }
  ++counts_.requests_with_worker;
  const uint32_t worker = worker_index(r);
  int64_t& worker_end = worker_last_end_ns_[worker];
  worker_end = std::max(worker_end, r.end_ns);

  auto [it, first] = sessions_.try_emplace(r.x_correlation_id);
  Session& s = it->second;
  if (first) {
    s.last_worker = worker;
    s.last_turn = r.turn_index;
    s.last_end_ns = r.end_ns;
    s.workers.push_back(worker);
    s.distinct_workers = 1;
    return;
  }
  // A session's turns arrive in order (one worker runs them one after another); anything else
  // (a re-homed conversation replaying a turn) is no transition.
  if (r.turn_index <= s.last_turn) return;
  ++counts_.transitions;
  const int64_t gap_ns = r.sent_ns > 0 && s.last_end_ns > 0 ? r.sent_ns - s.last_end_ns : -1;
  if (worker == s.last_worker) {
    if (gap_ns >= 0)
      counts_.max_gap_before_stay_ns = std::max(counts_.max_gap_before_stay_ns, gap_ns);
  } else {
    ++counts_.moves;
    if (gap_ns >= 0) {
      counts_.min_gap_before_move_ns = counts_.min_gap_before_move_ns < 0
                                           ? gap_ns
                                           : std::min(counts_.min_gap_before_move_ns, gap_ns);
      if (timeout_ns_ > 0 && gap_ns > timeout_ns_) ++counts_.moves_after_timeout;
    }
    const bool seen = std::find(s.workers.begin(), s.workers.end(), worker) != s.workers.end();
    if (seen) {
      ++counts_.moves_back;
    } else {
      ++s.distinct_workers;
      if (s.workers.size() < kMaxWorkersKept) s.workers.push_back(worker);
    }
    if (s.moves++ == 0) {
      s.first_move_from = s.last_worker;
      s.first_move_sent_ns = r.sent_ns;
      if (counts_.example_moved.size() < AffinitySummary::kMaxExamples) {
        counts_.example_moved.push_back(r.x_correlation_id);
      }
    }
  }
  s.last_worker = worker;
  s.last_turn = r.turn_index;
  s.last_end_ns = r.end_ns;
}

AffinitySummary AffinityTracker::summary() const {
  AffinitySummary out = counts_;
  out.verified = counts_.requests_with_worker > 0;
  out.conversations = static_cast<int64_t>(sessions_.size());
  out.workers = static_cast<int64_t>(worker_ids_.size());
  for (const auto& [id, s] : sessions_) {
    out.max_workers_per_conversation =
        std::max(out.max_workers_per_conversation, s.distinct_workers);
    if (s.moves == 0) continue;
    ++out.conversations_moved;
    if (s.moves != 1) continue;
    ++out.conversations_moved_once;
    // The worker it left never finished anything after the move: it went away.
    if (worker_last_end_ns_[s.first_move_from] <= s.first_move_sent_ns) {
      ++out.moves_from_gone_worker;
    }
  }
  return out;
}

size_t AffinityTracker::memory_bytes() const {
  size_t bytes = sizeof(*this);
  for (const auto& [id, s] : sessions_) {
    bytes += sizeof(std::string) + id.capacity() + sizeof(s) +
             s.workers.capacity() * sizeof(uint32_t) + 2 * sizeof(void*);
  }
  for (const auto& [key, index] : worker_ids_) {
    bytes += sizeof(std::string) + key.capacity() + sizeof(index) + 2 * sizeof(void*);
  }
  bytes += worker_last_end_ns_.capacity() * sizeof(int64_t);
  return bytes;
}

}  // namespace convoy::controller
