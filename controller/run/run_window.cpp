// Concurrency refill (issue 19): each worker holds a small window of the next conversations
// sharded to it and starts one the moment a conversation of its own ends, in the slot that end
// freed, instead of waiting for the end to reach the controller and an Assign to come back (a
// round trip per request that capped one connection at a quarter of wrk's rate). Global
// concurrency stays exact: a slot in use belongs to the worker running it, a window
// conversation holds none until it starts, and a slot that comes back here (an end with an
// empty window) goes to the oldest window conversation of any worker, so none waits behind a
// worker with no slots.
#include <algorithm>

#include "controller/run/run_impl.hpp"

namespace convoy::controller {

namespace {

constexpr size_t kMinWindow = 8;
constexpr size_t kMaxWindow = 64;  // bounds what a worker holds unstarted (and a loss re-sends)

}  // namespace

size_t refill_window(const LoadConfig& load, size_t workers, proto::Phase phase) {
  if (phase == proto::Phase::kWarmup) {
    // Warmup by count runs at the configured concurrency and ends when every warmup
    // conversation has ended, those in windows included: none is left to start in the measure.
    // Warmup by time (load.warmup_s) stops starting at a moment the workers do not know; a
    // window would run on past it, so there the controller starts each conversation.
    if (load.warmup_s) return 0;
  } else if (load.mode != LoadMode::kConcurrency || load.profile != ProfileKind::kSingle) {
    // Stages (ramps, settles, sessions per stage) keep the controller's one-at-a-time control:
    // a level that drops would have to revoke what the workers hold. Rate and trace have no
    // slots. load.requests is windowed: a window conversation commits its turns on entry.
    return 0;
  }
  // About two ends' worth per slot the worker holds: the controller tops the window up as the
  // ends come in, so it only runs dry when the controller falls behind by that much.
  const auto slots = static_cast<size_t>(std::max<int64_t>(1, load.concurrency));
  return std::clamp<size_t>(2 * slots / std::max<size_t>(1, workers), kMinWindow, kMaxWindow);
}

void Run::start_windows(int64_t now) {
  if (!scheduler_ || in_flight_.windows() == 0) return;
  while (in_flight_.windows() > 0) {
    auto freed_at = scheduler_->take_free_slot(now);
    if (!freed_at) break;
    in_flight_.start_oldest_window(*freed_at, [this](const std::string& worker) {
      const WorkerInfo* w = registry_.find(worker);
      return w ? w->offset_ns() : 0;
    });
  }
}

void Run::top_up_windows(proto::Phase phase) {
  if (window_per_worker_ == 0 || !scheduler_) return;
  const RunPhase running = phase == proto::Phase::kWarmup ? RunPhase::kWarmup : RunPhase::kMeasure;
  // load.requests: a conversation commits its turns as it enters a window (assign()), so the
  // windows hold only committed work and none enters once every request is committed.
  const bool budgeted = phase == proto::Phase::kMeasure && budget_.limited();
  const size_t cap = window_per_worker_ * sharder_.size();
  while (in_flight_.windows() < cap && machine_->phase() == running &&
         (!budgeted || budget_.remaining() > 0)) {
    auto seq = scheduler_->take_ahead();
    if (!seq) break;
    const size_t before = in_flight_.windows();
    assign(seq_base_ + *seq, 0, phase, /*window=*/true);
    if (in_flight_.windows() == before) break;  // no worker took it (all lost)
  }
}

}  // namespace convoy::controller
