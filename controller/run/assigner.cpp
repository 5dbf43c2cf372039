#include "controller/run/assigner.hpp"

#include <algorithm>

#include "controller/config/target_models.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/profile_driver.hpp"
#include "controller/run/worker_plane.hpp"

namespace convoy::controller {

namespace {

constexpr int64_t kLookaheadNs = 100'000'000;  // conversations go out this far ahead
constexpr size_t kMinWindow = 8;
constexpr size_t kMaxWindow = 64;  // bounds what a worker holds unstarted (and a loss re-sends)

}  // namespace

// Concurrency refill: each worker holds a small window of the next conversations sharded to it
// and starts one the moment a conversation of its own ends, in the slot that end freed, instead
// of waiting for the end to reach the controller and an Assign to come back (a round trip per
// request that capped one connection at a quarter of wrk's rate). Global concurrency stays
// exact: a slot in use belongs to the worker running it, a window conversation holds none until
// it starts, and a slot that comes back here (an end with an empty window) goes to the oldest
// window conversation of any worker, so none waits behind a worker with no slots.
LoadConfig warmup_level(const LoadConfig& load) {
  LoadConfig warm = load;
  warm.mode = LoadMode::kConcurrency;  // at the measure's concurrency, whatever its mode
  if (const auto& w = load.warmup) {
    if (w->concurrency) warm.concurrency = *w->concurrency;
    if (w->rate) {
      warm.mode = LoadMode::kRate;
      warm.rate = *w->rate;
    }
  }
  return warm;
}

int64_t prefill_share(int64_t total, int workers, uint64_t nth) {
  const auto n = static_cast<int64_t>(std::max(1, workers));
  const auto position = static_cast<int64_t>(nth % static_cast<uint64_t>(n));
  return std::max<int64_t>(1, total / n + (position < total % n ? 1 : 0));
}

size_t refill_window(const LoadConfig& load, size_t workers, proto::Phase phase) {
  const bool warmup = phase == proto::Phase::kWarmup;
  const LoadConfig level = warmup ? warmup_level(load) : load;
  if (warmup) {
    // Warmup by count runs at its concurrency and ends when every warmup conversation has
    // ended, those in windows included: none is left to start in the measure. Warmup by time
    // (load.warmup_s) stops starting at a moment the workers do not know; a window would run
    // on past it, so there the controller starts each conversation. A warmup by rate has no
    // slots.
    if (load.warmup_s || level.mode == LoadMode::kRate) return 0;
  } else if ((load.mode != LoadMode::kConcurrency && load.mode != LoadMode::kUsers) ||
             load.profile != ProfileKind::kSingle) {
    // Stages (ramps, settles, sessions per stage) keep the controller's one-at-a-time control:
    // a level that drops would have to revoke what the workers hold. Rate and trace have no
    // slots. load.requests is windowed: a window conversation commits its turns on entry.
    // Users are slots: a worker starts a user's next conversation the gap after its end.
    return 0;
  }
  // About two ends' worth per slot the worker holds: the controller tops the window up as the
  // ends come in, so it only runs dry when the controller falls behind by that much.
  const auto slots = static_cast<size_t>(std::max<int64_t>(1, level.concurrency));
  return std::clamp<size_t>(2 * slots / std::max<size_t>(1, workers), kMinWindow, kMaxWindow);
}

Assigner::Assigner(const Config& config, std::unique_ptr<Dataset> dataset, WorkerPlane& plane,
                   RunFacts& facts, DatasetError on_dataset_error)
    : config_(config),
      dataset_(std::move(dataset)),
      plane_(plane),
      facts_(facts),
      on_dataset_error_(std::move(on_dataset_error)) {}

void Assigner::start_warmup(int64_t now) {
  seq_base_ = 0;
  std::optional<uint64_t> total = static_cast<uint64_t>(config_.load.warmup_sessions);
  if (config_.load.warmup_s) total.reset();  // by time: until load.warmup_s passes
  // At its own level (load.warmup), else at the measure's concurrency.
  const LoadConfig warm = warmup_level(config_.load);
  scheduler_.emplace(warm, warm.mode, config_.seed, total, now);
  window_per_worker_ = refill_window(config_.load, sharder_.size(), proto::Phase::kWarmup);
}

std::optional<uint64_t> Assigner::start_measure(int64_t now) {
  const auto& load = config_.load;
  std::optional<uint64_t> total;
  if (load.sessions) {
    total = static_cast<uint64_t>(*load.sessions);
  } else if (!load.duration_s && !load.requests) {
    total = dataset_->size();
  }
  if (load.mode == LoadMode::kTrace) {
    total = std::min<uint64_t>(total.value_or(dataset_->size()), dataset_->size());
  }
  const bool profile = load.profile != ProfileKind::kSingle;
  if (profile) total.reset();  // the stages end the measure; the dataset cycles
  // After the warmup's conversations (load.warmup_s: however many it started).
  seq_base_ = scheduler_ ? seq_base_ + scheduler_->dispatched() : 0;
  const uint64_t base = seq_base_;
  auto trace_offset = [this, base](uint64_t seq) {
    return dataset_->start_ns((base + seq) % dataset_->size());
  };
  scheduler_.emplace(load, profile ? LoadMode::kConcurrency : load.mode, config_.seed, total, now,
                     trace_offset);
  window_per_worker_ = refill_window(load, sharder_.size(), proto::Phase::kMeasure);
  budget_ = RequestBudget(load.requests);
  return total;
}

void Assigner::stop_starting() {
  if (scheduler_) scheduler_->stop();
}

std::optional<int64_t> Assigner::next_due_ns() const {
  if (!scheduler_) return std::nullopt;
  if (auto next = scheduler_->next_intended_ns()) return *next - kLookaheadNs;
  return std::nullopt;
}

void Assigner::dispatch(int64_t now, proto::Phase p, ProfileDriver& profile) {
  if (!scheduler_ || dataset_failed_) return;
  // With load.requests, one at a time: each commits its turns before the next is taken, and
  // none is taken once every request is committed (windows too: top_up_windows()).
  // A stage that ends on `requests` is taken one conversation at a time as well.
  const bool staged = p == proto::Phase::kMeasure && profile.staged();
  const bool budgeted =
      (p == proto::Phase::kMeasure && budget_.limited()) || (staged && profile.one_at_a_time());
  start_windows(now);
  while (!budgeted || budget_.remaining() > 0) {
    if (staged && !profile.wants_more()) break;  // settling, or the stage is full
    const auto due = scheduler_->due(now, kLookaheadNs, budgeted ? 1 : SIZE_MAX);
    for (const Dispatch& d : due) {
      last_planned_turns_ = 0;
      if (!assign(seq_base_ + d.seq, d.intended_ns, p)) break;  // the dataset failed: stopping
      if (p == proto::Phase::kMeasure) facts_.intended_starts_ns.add(d.intended_ns);
      if (staged) profile.on_dispatched(seq_base_ + d.seq, d.intended_ns, last_planned_turns_);
    }
    if (!budgeted || due.empty() || dataset_failed_) break;
  }
  if (!dataset_failed_) top_up_windows(p);
  in_flight_.flush(send_);
}

bool Assigner::assign(uint64_t seq, int64_t intended_ns, proto::Phase phase, bool window) {
  if (dataset_failed_) return false;
  proto::Conversation c;
  try {
    c = dataset_->conversation(seq % dataset_->size());
  } catch (const std::exception& e) {
    dataset_failed_ = true;
    on_dataset_error_(std::string("cannot read the dataset during the run: ") + e.what());
    return false;
  }
  if (seq >= dataset_->size()) {
    // The dataset cycles: a new conversation with its own identity and the same content (its
    // sub-agents too).
    set_family_ids(c, config_.seed, seq, seq / dataset_->size());
  }
  c.phase = phase;
  if (phase == proto::Phase::kMeasure && config_.load.mode == LoadMode::kUsers) {
    // A user sends each next turn the fixed gap after the previous one ended (the first turn's
    // start is the scheduler's: the gap after the user's previous conversation ended).
    const double gap_ms = static_cast<double>(user_gap_ns(config_.load)) / 1e6;
    for (size_t t = c.first_turn + 1; t < c.turns.size(); ++t) c.turns[t].delay_ms = gap_ms;
  }
  // target.urls: the family's frontend, by the root's correlation id (never the worker's).
  c.url_index = pick_url(c.correlation_id, config_.target.urls.size());
  // target.models: the family's model, drawn from (seed, conversation index) alone.
  if (!config_.target.models.empty()) c.model = model_for(config_.target, config_.seed, c.index);
  const std::string& worker = sharder_.pick(c.correlation_id);
  if (worker.empty()) return true;  // all workers lost; the run reports it
  WorkerInfo* w = plane_.registry().find(worker);
  c.start_ns = intended_ns + (w ? w->offset_ns() : 0);
  if (w) {
    ++w->conversations_assigned;
    if (w->state == WorkerState::kReady) w->state = WorkerState::kRunning;
  }
  in_flight_.apply_grant(c, budget_);
  last_planned_turns_ =
      c.turns.size() > c.first_turn ? static_cast<int64_t>(c.turns.size() - c.first_turn) : 0;
  in_flight_.queue(worker, std::move(c), intended_ns, send_, window);
  return true;
}

void Assigner::send_assign(const std::string& worker, proto::Assign& msg) {
  // Numbered per worker: a worker that cannot decode part of a batch names it by number.
  if (WorkerInfo* w = plane_.registry().find(worker)) msg.batch = ++w->batches_sent;
  plane_.send(worker, msg);
}

void Assigner::start_windows(int64_t now) {
  if (!scheduler_ || in_flight_.windows() == 0) return;
  while (in_flight_.windows() > 0) {
    auto freed_at = scheduler_->take_free_slot(now);
    if (!freed_at) break;
    in_flight_.start_oldest_window(*freed_at, [this](const std::string& worker) {
      const WorkerInfo* w = plane_.registry().find(worker);
      return w ? w->offset_ns() : 0;
    });
  }
}

void Assigner::top_up_windows(proto::Phase phase) {
  if (window_per_worker_ == 0 || !scheduler_) return;
  // load.requests: a conversation commits its turns as it enters a window (assign()), so the
  // windows hold only committed work and none enters once every request is committed.
  const bool budgeted = phase == proto::Phase::kMeasure && budget_.limited();
  const size_t cap = window_per_worker_ * sharder_.size();
  while (in_flight_.windows() < cap && (!budgeted || budget_.remaining() > 0)) {
    auto seq = scheduler_->take_ahead();
    if (!seq) break;
    const size_t before = in_flight_.windows();
    if (!assign(seq_base_ + *seq, 0, phase, /*window=*/true)) break;
    if (in_flight_.windows() == before) break;  // no worker took it (all lost)
  }
}

void Assigner::slot_freed(uint64_t index, int64_t now) {
  if (scheduler_ && index >= seq_base_) scheduler_->on_end(now);
}

bool Assigner::on_end(const std::string& worker, const proto::ConversationEnd& end, int64_t now) {
  // Not the sender's (re-homed or lost): nothing to do. A window conversation only ever starts
  // in a slot (a refill announced in an earlier end, or the controller's start; a salvaged
  // window batch goes into the window too), so every conversation that ends held one.
  if (!in_flight_.end(worker, end.conversation_index, budget_)) return false;
  // Concurrency refill: the worker started a window conversation in the slot: still in use.
  if (end.refilled_by >= 0 && in_flight_.refilled(worker, static_cast<uint64_t>(end.refilled_by))) {
    return true;
  }
  slot_freed(end.conversation_index, now);
  return true;
}

bool Assigner::on_failed(const std::string& worker, uint64_t index, int64_t now) {
  const bool held_no_slot = in_flight_.in_window(index);
  if (!in_flight_.end(worker, index, budget_)) return false;
  if (!held_no_slot) slot_freed(index, now);  // a window conversation never held a slot
  return true;
}

std::vector<uint64_t> Assigner::undecodable(const std::string& worker,
                                            const proto::UndecodableAssign& u) {
  return in_flight_.undecodable(worker, u);
}

void Assigner::on_returned(const std::string& worker, const std::vector<uint64_t>& returned,
                           bool leaving, int64_t now) {
  if (returned.empty()) return;
  // A worker gives its window back once it stops starting: after a Stop, or while the run still
  // starts conversations when it is leaving (a signal; it lost the controller). A leaving worker
  // takes no new conversations (as after its Bye), and what it gave back goes to the others,
  // so load.sessions stays exact and load.requests' returned turns are not assigned to it again.
  if (leaving) sharder_.remove_worker(worker);
  for (uint64_t index : returned) {
    const auto r = in_flight_.returned(worker, index, &budget_);
    if (r == InFlight::Returned::kNotHeld || !scheduler_ || index < seq_base_) continue;
    if (r == InFlight::Returned::kSlot) scheduler_->on_end(now);
    if (leaving) scheduler_->give_back(index - seq_base_);
  }
}

Assigner::Lost Assigner::on_worker_lost(const std::string& worker, int64_t t, bool can_rehome) {
  sharder_.remove_worker(worker);
  // Re-home only what never started, and only while a survivor can take it. A window
  // conversation goes out again, except under load.requests: the worker may have started it in
  // a slot of its own by an end that never arrived, and the cap must not be exceeded, so it
  // keeps its commitment and is lost with the worker.
  can_rehome = can_rehome && !sharder_.empty();
  const bool exact_requests = budget_.limited();
  auto taken = in_flight_.take_worker(worker, [&](const InFlight::Entry& e) {
    if (e.window) return !exact_requests || e.phase != proto::Phase::kMeasure;
    return can_rehome && !e.started && e.intended_ns > t;
  });
  for (const auto& [index, e] : taken.rehome) {
    // A window conversation held no slot: it goes out again, to its new worker, in order.
    if (!e.window) {
      assign(index, e.intended_ns, e.phase);
    } else if (scheduler_ && index >= seq_base_) {
      scheduler_->give_back(index - seq_base_);
    }
  }
  for (uint64_t index : taken.lost) slot_freed(index, t);
  in_flight_.flush(send_);
  return Lost{std::move(taken.lost), std::move(taken.lost_window), taken.rehome.size()};
}

}  // namespace convoy::controller
