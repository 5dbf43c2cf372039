// When conversations start: pure functions of the load config, the seed and `now`. Intended
// start times are fixed in advance (rate, trace) so a late start shows up as schedule lag
// instead of silently stretching the schedule (wrk2's coordinated-omission lesson).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

// Inter-arrival gaps for mode rate: constant 1/rate, exponential (poisson) or gamma with shape
// `burstiness` and the same mean. Sequence i depends only on (seed, i), via one stream.
class ArrivalProcess {
 public:
  ArrivalProcess(const LoadConfig& load, uint64_t seed);
  int64_t next_gap_ns();  // the gap before the next arrival (the first arrival is at gap 0)

 private:
  Arrival arrival_;
  double rate_per_s_;
  double shape_;
  std::mt19937_64 rng_;
  bool first_ = true;
};

// Arrivals of one rate stage: a unit-rate process (constant, poisson, or gamma with
// shape `burstiness`) mapped through the inverse of the stage's cumulative rate
// Lambda(t) = integral of rate.at(t / duration). A ramp is then an inhomogeneous process following
// the ramp exactly, and a flat level is the ordinary process. Times are a function of the seed,
// the stage and the arrival's position only.
class StageArrivals {
 public:
  StageArrivals(const StageConfig& stage, uint64_t seed, int64_t start_ns);
  // The next arrival's intended time; nullopt when the rate is 0 from here on.
  std::optional<int64_t> next_ns();
  // Seconds after the stage start at which the cumulative rate reaches `u` (unit arrivals).
  std::optional<double> inverse_s(double u) const;

 private:
  double unit_gap();

  LoadLevel rate_;
  double duration_s_;  // the ramp's length (0: no ramp)
  Arrival arrival_;
  double shape_;
  std::mt19937_64 rng_;
  int64_t start_ns_;
  double unit_clock_ = 0;  // cumulative unit-rate time
  bool first_ = true;
};

// A stage's slot count at `elapsed_ns` into it: a flat level, or a ramp that steps through
// |to - from| + 1 whole levels at evenly spaced times over the stage's duration.
int64_t stage_slots_at(const LoadLevel& level, std::optional<double> duration_s,
                       int64_t elapsed_ns);
// When the slot count next changes after `elapsed_ns` (elapsed ns from the stage start);
// nullopt: never.
std::optional<int64_t> stage_slots_next_change_ns(const LoadLevel& level,
                                                  std::optional<double> duration_s,
                                                  int64_t elapsed_ns);

// Users mode: a window conversation may be started this far ahead of its user's due time (the
// controller's lookahead), and waits at its worker until then.
inline constexpr int64_t kUserLookaheadNs = 100'000'000;

struct Dispatch {
  uint64_t seq = 0;         // 0, 1, 2, ...; mode trace: ordered by intended time instead
  int64_t intended_ns = 0;  // controller steady clock
};

// Decides which conversations start and when. Not thread-safe; driven by the run loop.
class Scheduler {
 public:
  // `total`: conversations to start (nullopt = until stop()). `trace_offset_ns(seq)` gives the
  // intended offset from the start for mode trace; offsets need not be sorted (a trace file's
  // rows are not): with a total, conversations go out in order of offset.
  Scheduler(const LoadConfig& load, LoadMode mode, uint64_t seed, std::optional<uint64_t> total,
            int64_t start_ns, std::function<int64_t(uint64_t)> trace_offset_ns = {});

  // Conversations to hand out now: those intended by now + lookahead, within the concurrency
  // limit, at most `max` of them. In mode concurrency the intended time of a conversation is
  // when its slot freed.
  std::vector<Dispatch> due(int64_t now_ns, int64_t lookahead_ns, size_t max = SIZE_MAX);
  void on_end(int64_t now_ns);  // one dispatched conversation ended: its slot frees

  // Concurrency refill: conversations taken ahead of a slot wait in a worker's
  // window and hold no slot until one starts (in a slot its worker freed, which stays in use:
  // no on_end; or in a slot that came back here: take_free_slot()). In mode concurrency only.
  // The next conversation taken ahead, in order; nullopt when none may be taken now.
  std::optional<uint64_t> take_ahead();
  // A free slot for a waiting window conversation: now in use; returns when it freed.
  std::optional<int64_t> take_free_slot(int64_t now_ns);
  // A conversation taken but never started (its worker was lost): handed out again first.
  void give_back(uint64_t seq) { returned_.push_back(seq); }
  void stop() { stopped_ = true; }

  // Load profiles. From `start_ns` the level follows `stage`: its mode, its slot count
  // (a ramp steps the slots; in mode rate it is the cap) and, in mode rate, its arrivals
  // (StageArrivals, seeded by `seed` and the stage index). Conversations in flight carry over:
  // when the slot count drops, nothing new starts until fewer than the new count are in flight.
  // A stage with duration_s dispatches nothing intended at or after its end; one with sessions
  // dispatches at most that many. Resumes a paused scheduler.
  void set_stage(const StageConfig& stage, uint64_t seed, int64_t start_ns);
  // No new conversation until the next set_stage() (a stage ended; its settle).
  void pause() { paused_ = true; }
  bool paused() const { return paused_; }
  uint64_t stage_dispatched() const { return stage_dispatched_; }
  int64_t limit() const { return limit_; }

  bool exhausted() const;  // stopped, or every conversation dispatched
  int64_t in_flight() const { return in_flight_; }
  uint64_t dispatched() const { return next_seq_; }
  // The next intended start not yet dispatched (rate/trace), for the loop's wake-up.
  std::optional<int64_t> next_intended_ns() const;

 private:
  // Modes whose conversations hold slots: concurrency, and users (a slot per user).
  bool has_slots() const { return mode_ == LoadMode::kConcurrency || mode_ == LoadMode::kUsers; }
  int64_t intended_for_next(int64_t now_ns);
  void apply_stage_level(int64_t now_ns);  // ramp steps up to now_ns
  void set_limit(int64_t limit, int64_t at_ns);
  void push_free(int64_t at_ns);  // a slot freed at at_ns
  int64_t pop_earliest_free();    // the earliest-freed slot (freed_at_ns_ not empty)
  uint64_t next_seq();            // a given-back one first, else the next in order
  uint64_t seq_at(uint64_t position) const {
    return position < trace_order_.size() ? trace_order_[position] : position;
  }

  LoadMode mode_;
  int64_t limit_;  // max in flight
  std::optional<uint64_t> total_;
  int64_t start_ns_;
  ArrivalProcess arrivals_;
  std::function<int64_t(uint64_t)> trace_offset_ns_;
  std::vector<uint64_t> trace_order_;  // mode trace: seqs by (offset, seq); empty = 0, 1, 2, ...
  uint64_t next_seq_ = 0;
  int64_t in_flight_ = 0;
  bool stopped_ = false;
  std::optional<int64_t> next_intended_;  // rate/trace: computed once per seq
  int64_t rate_clock_ns_;                 // the running sum of gaps
  // Concurrency: when each free slot freed; users: when its user's next conversation is due,
  // the gap after its last one ended (a min-heap).
  std::vector<int64_t> freed_at_ns_;
  int64_t gap_ns_ = 0;  // users: each user's gap after an end (load.concurrency / load.rate)
  std::deque<uint64_t> returned_;  // given back (give_back): out again before new ones
  // Load profile state (set_stage); absent for a single-level run.
  std::optional<StageConfig> stage_;
  std::optional<StageArrivals> stage_arrivals_;
  int64_t stage_start_ns_ = 0;
  std::optional<int64_t> stage_end_ns_;          // duration_s: nothing intended from here on
  std::optional<int64_t> next_level_change_ns_;  // a ramp's next slot step
  uint64_t stage_dispatched_ = 0;
  bool paused_ = false;
  bool rate_done_ = false;  // the stage's rate is 0 from here on
};

// load.requests (AIPerf's --request-count): exactly this many measured requests are sent. A
// conversation commits its planned turns when it is assigned; the one that would overshoot is
// cut so that the committed total never exceeds the limit (its last kept turn becomes its final
// turn). A conversation that ends early (aborted, cancelled) gives back the turns it did not
// send, so further conversations can be assigned. Warmup conversations do not count.
class RequestBudget {
 public:
  RequestBudget() = default;  // unlimited
  explicit RequestBudget(std::optional<int64_t> limit) : limit_(limit) {}

  bool limited() const { return limit_.has_value(); }
  // Turns granted of `planned` (all of them when unlimited; fewer when the budget runs out).
  int64_t commit(int64_t planned);
  // A conversation granted `granted` turns ended after sending `sent`: the rest come back.
  void release(int64_t granted, int64_t sent);
  int64_t remaining() const;  // not yet committed; INT64_MAX when unlimited
  bool used() const { return limit_ && committed_ >= *limit_; }
  int64_t committed() const { return committed_; }

 private:
  std::optional<int64_t> limit_;
  int64_t committed_ = 0;
};

}  // namespace convoy::controller
