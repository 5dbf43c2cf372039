#include "controller/run/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "common/duration.hpp"

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
  return seconds_to_ns(gap_s);
}

StageArrivals::StageArrivals(const StageConfig& stage, uint64_t seed, int64_t start_ns)
    : rate_(stage.rate),
      duration_s_(stage.rate.ramp && stage.duration_s ? *stage.duration_s : 0),
      arrival_(stage.arrival),
      shape_(stage.burstiness > 0 ? stage.burstiness : 1.0),
      rng_(seed ^ 0xa5a5a5a55a5a5a5aULL),
      start_ns_(start_ns) {}

double StageArrivals::unit_gap() {
  if (first_) {
    first_ = false;
    return 0;  // the first arrival is at the stage's start, as in ArrivalProcess
  }
  switch (arrival_) {
    case Arrival::kConstant:
      return 1;
    case Arrival::kPoisson:
      return std::exponential_distribution<double>(1.0)(rng_);
    case Arrival::kGamma:
      return std::gamma_distribution<double>(shape_, 1.0 / shape_)(rng_);
  }
  return 1;
}

std::optional<double> StageArrivals::inverse_s(double u) const {
  const double a = rate_.from;
  const double b = rate_.ramp ? rate_.to : rate_.from;
  const double d = duration_s_;
  if (!rate_.ramp || d <= 0) {
    if (a <= 0) return std::nullopt;
    return u / a;
  }
  const bool geometric = rate_.shape == RampShape::kExponential && a > 0 && b > 0 && a != b;
  const double log_ratio = geometric ? std::log(b / a) : 0;
  // Lambda(d): the arrivals the ramp itself holds.
  const double ramp_units = geometric ? a * d * (b / a - 1) / log_ratio : (a + b) / 2 * d;
  if (u <= ramp_units) {
    if (u <= 0) return 0.0;
    if (geometric) return d / log_ratio * std::log1p(u * log_ratio / (a * d));
    // Linear: a t + k t^2 / 2 = u, in the form that stays exact as k -> 0.
    const double k = (b - a) / d;
    const double root = std::sqrt(std::max(0.0, a * a + 2 * k * u));
    if (a + root <= 0) return std::nullopt;
    return 2 * u / (a + root);
  }
  if (b <= 0) return std::nullopt;  // ramped down to 0: no more arrivals
  return d + (u - ramp_units) / b;  // past the ramp the rate stays at `to`
}

std::optional<int64_t> StageArrivals::next_ns() {
  unit_clock_ += unit_gap();
  auto t = inverse_s(unit_clock_);
  if (!t) return std::nullopt;
  return start_ns_ + seconds_to_ns(*t);
}

namespace {

__extension__ using Wide = __int128;  // step arithmetic: ns x levels overflows 64 bits

struct SlotSteps {
  int64_t levels = 1;  // whole levels the ramp steps through
  int64_t duration_ns = 0;
};

std::optional<SlotSteps> slot_steps(const LoadLevel& level, std::optional<double> duration_s) {
  if (!level.ramp || !duration_s || *duration_s <= 0) return std::nullopt;
  const int64_t from = std::llround(level.from);
  const int64_t to = std::llround(level.to);
  if (from == to) return std::nullopt;
  return SlotSteps{std::abs(to - from) + 1, seconds_to_ns(*duration_s)};
}

// Which of the steps `elapsed_ns` falls in: floor(elapsed * levels / duration), exact.
int64_t step_index(const SlotSteps& s, int64_t elapsed_ns) {
  if (elapsed_ns <= 0) return 0;
  if (elapsed_ns >= s.duration_ns) return s.levels - 1;
  const auto k = static_cast<Wide>(elapsed_ns) * s.levels / s.duration_ns;
  return std::min<int64_t>(static_cast<int64_t>(k), s.levels - 1);
}

}  // namespace

int64_t stage_slots_at(const LoadLevel& level, std::optional<double> duration_s,
                       int64_t elapsed_ns) {
  auto steps = slot_steps(level, duration_s);
  if (!steps) return std::max<int64_t>(0, std::llround(level.ramp ? level.to : level.from));
  const int64_t k = step_index(*steps, elapsed_ns);
  const double fraction = static_cast<double>(k) / static_cast<double>(steps->levels - 1);
  return std::max<int64_t>(0, std::llround(level.at(fraction)));
}

std::optional<int64_t> stage_slots_next_change_ns(const LoadLevel& level,
                                                  std::optional<double> duration_s,
                                                  int64_t elapsed_ns) {
  auto steps = slot_steps(level, duration_s);
  if (!steps) return std::nullopt;
  const int64_t k = step_index(*steps, elapsed_ns);
  if (k + 1 >= steps->levels) return std::nullopt;
  // The first ns of step k + 1: ceil((k + 1) * duration / levels).
  const auto num = static_cast<Wide>(k + 1) * steps->duration_ns + steps->levels - 1;
  return static_cast<int64_t>(num / steps->levels);
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
  if (mode_ == LoadMode::kUsers) {
    // Users: a slot holds the time its user's next conversation is due. The first ones are
    // staggered 1/rate apart, as AIPerf's user-centric mode spreads its users, so the users'
    // turns are spread over the gap from the start instead of arriving in one burst.
    gap_ns_ = user_gap_ns(load);
    const int64_t stagger_ns = load.rate > 0 ? seconds_to_ns(1.0 / load.rate) : 0;
    for (int64_t i = 0; i < limit_; ++i) push_free(start_ns + i * stagger_ns);
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

bool Scheduler::exhausted() const {
  return stopped_ || (total_ && next_seq_ >= *total_ && returned_.empty());
}

int64_t Scheduler::intended_for_next(int64_t now_ns) {
  (void)now_ns;
  if (!next_intended_) {
    if (stage_arrivals_) {
      auto next = stage_arrivals_->next_ns();
      if (!next) {
        rate_done_ = true;
        return std::numeric_limits<int64_t>::max();
      }
      next_intended_ = *next;
    } else if (mode_ == LoadMode::kTrace) {
      next_intended_ = start_ns_ + (trace_offset_ns_ ? trace_offset_ns_(seq_at(next_seq_)) : 0);
    } else {
      rate_clock_ns_ += arrivals_.next_gap_ns();
      next_intended_ = rate_clock_ns_;
    }
  }
  return *next_intended_;
}

std::optional<int64_t> Scheduler::next_intended_ns() const {
  if (exhausted() || paused_) return std::nullopt;
  std::optional<int64_t> next = next_level_change_ns_;  // a ramp's slot step
  // An arrival at or past the stage's end is the next stage's business: no wake-up for it.
  const bool past_end = next_intended_ && stage_end_ns_ && *next_intended_ >= *stage_end_ns_;
  if (mode_ == LoadMode::kUsers) {
    if (in_flight_ >= limit_ || freed_at_ns_.empty()) return next;
    return freed_at_ns_.front();  // the next user's start (the min-heap's top)
  }
  if (mode_ != LoadMode::kConcurrency && next_intended_ && !rate_done_ && !past_end) {
    next = next ? std::min(*next, *next_intended_) : *next_intended_;
  }
  return next;
}

std::vector<Dispatch> Scheduler::due(int64_t now_ns, int64_t lookahead_ns, size_t max) {
  std::vector<Dispatch> out;
  if (paused_) return out;
  apply_stage_level(now_ns);
  while (!exhausted() && in_flight_ < limit_ && out.size() < max) {
    if (stage_ && stage_->sessions &&
        stage_dispatched_ >= static_cast<uint64_t>(*stage_->sessions)) {
      break;
    }
    int64_t intended = 0;
    if (mode_ == LoadMode::kConcurrency) {
      // The next starts when one ends: its intended time is when the slot freed (or opened).
      if (freed_at_ns_.empty() || (stage_end_ns_ && now_ns >= *stage_end_ns_)) break;
      intended = pop_earliest_free();
    } else if (mode_ == LoadMode::kUsers) {
      // A user's next conversation, intended its gap after the user's last one ended.
      if (freed_at_ns_.empty() || freed_at_ns_.front() > now_ns + lookahead_ns) break;
      intended = pop_earliest_free();
    } else {
      intended = intended_for_next(now_ns);
      if (rate_done_ || intended > now_ns + lookahead_ns) break;
      // The next stage has arrivals of its own: this one's end is a hard edge.
      if (stage_end_ns_ && intended >= *stage_end_ns_) break;
      next_intended_.reset();
    }
    out.push_back({next_seq(), intended});
    ++in_flight_;
    ++stage_dispatched_;
  }
  return out;
}

uint64_t Scheduler::next_seq() {
  if (returned_.empty()) return seq_at(next_seq_++);
  const uint64_t seq = returned_.front();
  returned_.pop_front();
  return seq;
}

std::optional<uint64_t> Scheduler::take_ahead() {
  if (paused_ || exhausted() || !has_slots()) return std::nullopt;
  if (stage_ && stage_->sessions && stage_dispatched_ >= static_cast<uint64_t>(*stage_->sessions)) {
    return std::nullopt;
  }
  ++stage_dispatched_;
  return next_seq();
}

std::optional<int64_t> Scheduler::take_free_slot(int64_t now_ns) {
  if (paused_ || !has_slots()) return std::nullopt;
  apply_stage_level(now_ns);
  if (in_flight_ >= limit_ || freed_at_ns_.empty()) return std::nullopt;
  // A user's slot comes back its gap after the end: the window conversation starts then (it goes
  // out ahead, like every start, by the lookahead the controller sends with).
  if (mode_ == LoadMode::kUsers && freed_at_ns_.front() > now_ns + kUserLookaheadNs) {
    return std::nullopt;
  }
  if (stage_end_ns_ && now_ns >= *stage_end_ns_) return std::nullopt;
  const int64_t freed = pop_earliest_free();
  ++in_flight_;
  return freed;
}

void Scheduler::on_end(int64_t now_ns) {
  if (in_flight_ > 0) --in_flight_;
  // A slot frees only while fewer than the level are in flight: after the level dropped, the
  // surplus conversations end without being replaced.
  if (has_slots() && static_cast<int64_t>(freed_at_ns_.size()) < limit_ - in_flight_) {
    push_free(now_ns + gap_ns_);
  }
}

// freed_at_ns_ is a min-heap: a slot costs O(log n), so 100,000 slots start without the O(n^2)
// a linear search per start cost.
void Scheduler::push_free(int64_t at_ns) {
  freed_at_ns_.push_back(at_ns);
  std::push_heap(freed_at_ns_.begin(), freed_at_ns_.end(), std::greater<>());
}

int64_t Scheduler::pop_earliest_free() {
  std::pop_heap(freed_at_ns_.begin(), freed_at_ns_.end(), std::greater<>());
  const int64_t at = freed_at_ns_.back();
  freed_at_ns_.pop_back();
  return at;
}

void Scheduler::set_limit(int64_t limit, int64_t at_ns) {
  limit_ = std::max<int64_t>(0, limit);
  if (mode_ != LoadMode::kConcurrency) return;
  const auto target = static_cast<size_t>(std::max<int64_t>(0, limit_ - in_flight_));
  while (freed_at_ns_.size() < target) push_free(at_ns);
  if (freed_at_ns_.size() > target) {  // the latest go; sorted ascending is still a min-heap
    std::sort(freed_at_ns_.begin(), freed_at_ns_.end());
    freed_at_ns_.resize(target);
  }
}

void Scheduler::apply_stage_level(int64_t now_ns) {
  if (!stage_) return;
  while (next_level_change_ns_ && *next_level_change_ns_ <= now_ns) {
    const int64_t at = *next_level_change_ns_;
    const int64_t elapsed = at - stage_start_ns_;
    set_limit(stage_slots_at(stage_->concurrency, stage_->duration_s, elapsed), at);
    auto next = stage_slots_next_change_ns(stage_->concurrency, stage_->duration_s, elapsed);
    next_level_change_ns_.reset();
    if (next) next_level_change_ns_ = stage_start_ns_ + *next;
  }
}

void Scheduler::set_stage(const StageConfig& stage, uint64_t seed, int64_t start_ns) {
  stage_ = stage;
  paused_ = false;
  mode_ = stage.mode == LoadMode::kRate ? LoadMode::kRate : LoadMode::kConcurrency;
  stage_start_ns_ = start_ns;
  stage_dispatched_ = 0;
  rate_done_ = false;
  next_intended_.reset();
  stage_end_ns_.reset();
  if (stage.duration_s) stage_end_ns_ = start_ns + seconds_to_ns(*stage.duration_s);
  stage_arrivals_.reset();
  if (mode_ == LoadMode::kRate) {
    // Each stage its own stream: its arrivals depend on the seed and the stage, nothing else.
    const uint64_t stage_seed =
        seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(stage.index) + 1));
    stage_arrivals_.emplace(stage, stage_seed, start_ns);
  }
  freed_at_ns_.clear();  // free slots open at the stage's start
  set_limit(stage_slots_at(stage.concurrency, stage.duration_s, 0), start_ns);
  next_level_change_ns_.reset();
  if (auto next = stage_slots_next_change_ns(stage.concurrency, stage.duration_s, 0)) {
    next_level_change_ns_ = start_ns + *next;
  }
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
