#include "controller/run/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace convoy::controller {

ArrivalProcess::ArrivalProcess(const LoadConfig& load, uint64_t seed)
    : arrival_(load.arrival),
      rate_per_s_(load.rate),
      shape_(load.burstiness > 0 ? load.burstiness : 1.0),
      rng_(seed ^ 0xa5a5a5a55a5a5a5aULL) {}

int64_t ArrivalProcess::next_gap_ns() {
  if (first_) {
    first_ = false;
    return 0;
  }
  double mean_s = 1.0 / rate_per_s_;
  double gap_s = mean_s;
  switch (arrival_) {
    case Arrival::kConstant:
      break;
    case Arrival::kPoisson:
      gap_s = std::exponential_distribution<double>(rate_per_s_)(rng_);
      break;
    case Arrival::kGamma:
      // shape k, scale mean/k: the mean stays 1/rate; k < 1 is burstier, k > 1 more regular.
      gap_s = std::gamma_distribution<double>(shape_, mean_s / shape_)(rng_);
      break;
  }
  return static_cast<int64_t>(std::llround(gap_s * 1e9));
}

Scheduler::Scheduler(const LoadConfig& load, LoadMode mode, uint64_t seed,
                     std::optional<uint64_t> total, int64_t start_ns,
                     std::function<int64_t(uint64_t)> trace_offset_ns)
    : mode_(mode),
      limit_(std::max<int64_t>(1, load.concurrency)),
      total_(total),
      start_ns_(start_ns),
      arrivals_(load, seed),
      trace_offset_ns_(std::move(trace_offset_ns)),
      rate_clock_ns_(start_ns) {
  if (mode_ == LoadMode::kConcurrency) {
    freed_at_ns_.assign(static_cast<size_t>(limit_), start_ns);
  }
  if (mode_ == LoadMode::kTrace && total_ && trace_offset_ns_) {
    // Released in seq order, a late row listed early would hold back every earlier one after it.
    std::vector<std::pair<int64_t, uint64_t>> by_offset;
    by_offset.reserve(static_cast<size_t>(*total_));
    for (uint64_t seq = 0; seq < *total_; ++seq) by_offset.emplace_back(trace_offset_ns_(seq), seq);
    std::sort(by_offset.begin(), by_offset.end());
    trace_order_.reserve(by_offset.size());
    for (const auto& entry : by_offset) trace_order_.push_back(entry.second);
  }
}

bool Scheduler::exhausted() const { return stopped_ || (total_ && next_seq_ >= *total_); }

int64_t Scheduler::intended_for_next(int64_t now_ns) {
  (void)now_ns;
  if (!next_intended_) {
    if (mode_ == LoadMode::kTrace) {
      next_intended_ = start_ns_ + (trace_offset_ns_ ? trace_offset_ns_(seq_at(next_seq_)) : 0);
    } else {
      rate_clock_ns_ += arrivals_.next_gap_ns();
      next_intended_ = rate_clock_ns_;
    }
  }
  return *next_intended_;
}

std::optional<int64_t> Scheduler::next_intended_ns() const {
  if (exhausted() || mode_ == LoadMode::kConcurrency) return std::nullopt;
  return next_intended_;
}

std::vector<Dispatch> Scheduler::due(int64_t now_ns, int64_t lookahead_ns, size_t max) {
  std::vector<Dispatch> out;
  while (!exhausted() && in_flight_ < limit_ && out.size() < max) {
    int64_t intended = 0;
    if (mode_ == LoadMode::kConcurrency) {
      // The next starts when one ends: its intended time is when the slot freed.
      auto it = std::min_element(freed_at_ns_.begin(), freed_at_ns_.end());
      intended = *it;
      freed_at_ns_.erase(it);
    } else {
      intended = intended_for_next(now_ns);
      if (intended > now_ns + lookahead_ns) break;
      next_intended_.reset();
    }
    out.push_back({seq_at(next_seq_++), intended});
    ++in_flight_;
  }
  return out;
}

void Scheduler::on_end(int64_t now_ns) {
  if (in_flight_ > 0) --in_flight_;
  if (mode_ == LoadMode::kConcurrency) freed_at_ns_.push_back(now_ns);
}

int64_t RequestBudget::commit(int64_t planned) {
  planned = std::max<int64_t>(0, planned);
  if (!limit_) return planned;
  const int64_t granted = std::min(planned, remaining());
  committed_ += granted;
  return granted;
}

void RequestBudget::release(int64_t granted, int64_t sent) {
  if (!limit_) return;
  const int64_t unused = std::clamp<int64_t>(granted - sent, 0, committed_);
  committed_ -= unused;
}

int64_t RequestBudget::remaining() const {
  if (!limit_) return std::numeric_limits<int64_t>::max();
  return std::max<int64_t>(0, *limit_ - committed_);
}

}  // namespace convoy::controller
