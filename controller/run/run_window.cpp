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

size_t refill_window(const LoadConfig& load, size_t workers) {
  // Stages (ramps, settles, sessions per stage) and load.requests (turns committed at
  // assignment) keep the controller's one-at-a-time control; rate and trace have no slots.
  if (load.mode != LoadMode::kConcurrency || load.profile != ProfileKind::kSingle ||
      load.requests) {
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
  if (window_per_worker_ == 0 || phase != proto::Phase::kMeasure || !scheduler_) return;
  const size_t cap = window_per_worker_ * sharder_.size();
  while (in_flight_.windows() < cap && machine_->phase() == RunPhase::kMeasure) {
    auto seq = scheduler_->take_ahead();
    if (!seq) break;
    const size_t before = in_flight_.windows();
    assign(seq_base_ + *seq, 0, phase, /*window=*/true);
    if (in_flight_.windows() == before) break;  // no worker took it (all lost)
  }
}

}  // namespace convoy::controller
