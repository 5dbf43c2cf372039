#include "controller/run/stage_plan.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/duration.hpp"

namespace convoy::controller {

StagePlan::StagePlan(std::vector<StageConfig> stages, NextStage next, int64_t wait_idle_ns)
    : pending_(std::move(stages)), next_(std::move(next)), wait_idle_ns_(wait_idle_ns) {
  std::reverse(pending_.begin(), pending_.end());  // taken from the back
}

std::vector<StageEvent> StagePlan::start(int64_t now_ns) {
  std::vector<StageEvent> events;
  if (state_ != State::kIdle) return events;
  std::optional<StageConfig> first;
  if (!pending_.empty()) {
    first = std::move(pending_.back());
    pending_.pop_back();
  } else if (next_) {
    first = next_(-1);
  }
  if (!first) {
    state_ = State::kDone;
    events.push_back({StageEventKind::kDone, -1, now_ns});
    return events;
  }
  begin(std::move(*first), now_ns, events);
  return events;
}

void StagePlan::begin(StageConfig stage, int64_t at_ns, std::vector<StageEvent>& events) {
  stage.index = static_cast<int>(windows_.size());
  windows_.push_back(StageWindow{std::move(stage), at_ns, std::nullopt, std::nullopt});
  state_ = State::kRunning;
  events.push_back({StageEventKind::kStarted, current(), at_ns});
}

std::optional<int64_t> StagePlan::end_by(int64_t now_ns, const StageCounters& c) const {
  const StageWindow& w = windows_.back();
  const StageConfig& s = w.config;
  if (s.duration_s) {
    const int64_t end = w.start_ns + seconds_to_ns(*s.duration_s);
    if (now_ns >= end) return end;  // the exact edge, however late the loop woke
    return std::nullopt;
  }
  // A count end closes once the last conversation it started is past its intended start, so
  // that conversation's first request is inside the window.
  const bool past_last = c.dispatched == 0 || now_ns > c.last_intended_ns;
  if (s.sessions && c.dispatched >= static_cast<uint64_t>(*s.sessions) && past_last) return now_ns;
  if (s.requests && c.planned_requests >= *s.requests && past_last) return now_ns;
  return std::nullopt;
}

std::vector<StageEvent> StagePlan::advance(int64_t now_ns, const StageCounters& current) {
  std::vector<StageEvent> events;
  if (state_ == State::kRunning) {
    auto end = end_by(now_ns, current);
    if (!end) return events;
    StageWindow& w = windows_.back();
    w.end_ns = *end;
    events.push_back({StageEventKind::kEnded, this->current(), *end});
    int64_t settle_ns = std::max(seconds_to_ns(w.config.settle_s), wait_idle_ns_);
    if (w.config.requests && pending_.empty() && !next_) {
      settle_ns = std::max(settle_ns, final_count_wait_ns_);
    }
    if (settle_ns <= 0) {
      finish(*end, events);
      return events;
    }
    state_ = State::kSettling;
    settle_deadline_ns_ = *end + settle_ns;
  }
  if (state_ == State::kSettling) {
    if (now_ns >= settle_deadline_ns_) {
      finish(settle_deadline_ns_, events);
    } else if (current.in_flight == 0) {
      finish(std::max(now_ns, *windows_.back().end_ns), events);  // idle: nothing to wait for
    }
  }
  return events;
}

void StagePlan::finish(int64_t at_ns, std::vector<StageEvent>& events) {
  const int finished = current();
  windows_.back().settle_end_ns = at_ns;
  events.push_back({StageEventKind::kSettled, finished, at_ns});
  std::optional<StageConfig> next;
  if (!pending_.empty()) {
    next = std::move(pending_.back());
    pending_.pop_back();
  } else if (next_) {
    next = next_(finished);
  }
  if (!next) {
    state_ = State::kDone;
    events.push_back({StageEventKind::kDone, finished, at_ns});
    return;
  }
  begin(std::move(*next), at_ns, events);
}

bool StagePlan::wants_more(const StageCounters& c) const {
  if (state_ != State::kRunning) return false;
  const StageConfig& s = windows_.back().config;
  if (s.requests && c.planned_requests >= *s.requests) return false;
  if (s.sessions && c.dispatched >= static_cast<uint64_t>(*s.sessions)) return false;
  return true;
}

std::optional<int64_t> StagePlan::next_deadline_ns() const {
  if (state_ == State::kSettling) return settle_deadline_ns_;
  if (state_ != State::kRunning) return std::nullopt;
  const StageWindow& w = windows_.back();
  if (w.config.duration_s) return w.start_ns + seconds_to_ns(*w.config.duration_s);
  return std::nullopt;
}

StageRoute StagePlan::route(int64_t intended_ns) const {
  for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
    if (intended_ns < it->start_ns) continue;
    if (!it->end_ns || intended_ns < *it->end_ns) {
      return {static_cast<int>(windows_.rend() - it) - 1, false};
    }
    if (!it->settle_end_ns || intended_ns < *it->settle_end_ns) {
      return {static_cast<int>(windows_.rend() - it) - 1, true};
    }
    return {-1, false};  // after the profile (its drain)
  }
  return {-1, false};
}

}  // namespace convoy::controller
