// A load profile's stages as they run, as a pure machine: the Run gives it the time
// and what the current stage has started, and it answers when a stage ends, when its settle
// ends and the next begins, and when the profile is done. No clock reads, no I/O: tested with
// a hand-advanced clock (tests/controller/run/stage_plan_test.cpp).
//
// A stage is a window [start, end) on the controller's clock. A request belongs to the stage
// in which it was intended to be sent (route()), whatever stage started its conversation:
// conversations continue across boundaries. After a stage with settle_s, nothing new starts
// until the settle ends: at end + settle_s, or earlier when nothing is in flight. Requests
// intended in a settle window are in no stage and in no metric. The next stage starts where the
// settle ended, so the windows tile the profile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

// What the Run tells the plan about the current stage.
struct StageCounters {
  uint64_t dispatched = 0;       // conversations started in the current stage
  int64_t planned_requests = 0;  // their planned turns (a `requests` end counts these)
  int64_t last_intended_ns = 0;  // the intended start of the last of them
  size_t in_flight = 0;          // conversations in flight, whichever stage started them
};

enum class StageEventKind {
  kStarted,  // the stage's window opens: its level applies from at_ns
  kEnded,    // its window closes: nothing more starts in it (its settle, if any, begins)
  kSettled,  // its settle is over (at once without one): its metrics are complete
  kDone,     // the last stage settled and no next one came: the profile is over
};
struct StageEvent {
  StageEventKind kind;
  int stage = 0;  // index into windows()
  int64_t at_ns = 0;
};

struct StageWindow {
  StageConfig config;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;         // set when the stage ended
  std::optional<int64_t> settle_end_ns;  // set when its settle ended (== end without one)
};

// Where a request intended at some time belongs.
struct StageRoute {
  int stage = -1;       // the stage; -1: outside the profile (before it, or its drain)
  bool settle = false;  // inside that stage's settle window: in no stage and in no metric
};

class StagePlan {
 public:
  // Asked for the stage after `finished` once that one settled and the list has no more; a
  // capacity search answers with its next step, or nullopt when it is done.
  using NextStage = std::function<std::optional<StageConfig>(int finished)>;

  // `wait_idle_ns`: after every stage, wait at least this long for in-flight work to end (a
  // search step is judged after its in-flight work ended, bounded by load.grace_s); the wait is
  // part of the settle. Stages need at least one entry, or a `next` that gives the first.
  StagePlan(std::vector<StageConfig> stages, NextStage next = {}, int64_t wait_idle_ns = 0);

  // The last stage of a list that ends on `requests: N` waits up to this long for its
  // conversations' later turns (the stage's N count them), ending as soon as nothing is in
  // flight; the profile ends after it. Without it the run's drain would cut those turns and the
  // last stage would hold fewer than N requests. The Run passes load.grace_s.
  void set_final_count_wait_ns(int64_t ns) { final_count_wait_ns_ = ns; }

  // The first stage starts at now_ns.
  std::vector<StageEvent> start(int64_t now_ns);
  // Ends, settles and starts stages by now_ns (at most one stage ends per call; call again
  // after the Run has acted on the events and reset its counters).
  std::vector<StageEvent> advance(int64_t now_ns, const StageCounters& current);

  // May the current stage start one more conversation (running, and a `requests` end not yet
  // reached by the planned turns)?
  bool wants_more(const StageCounters& current) const;
  // When advance() next has something to do by the clock alone; nullopt: none (a count end).
  std::optional<int64_t> next_deadline_ns() const;

  bool done() const { return state_ == State::kDone; }
  bool settling() const { return state_ == State::kSettling; }
  bool running() const { return state_ == State::kRunning; }
  int current() const { return static_cast<int>(windows_.size()) - 1; }  // -1 before start()
  StageRoute route(int64_t intended_ns) const;
  const std::vector<StageWindow>& windows() const { return windows_; }

 private:
  enum class State { kIdle, kRunning, kSettling, kDone };
  void finish(int64_t at_ns, std::vector<StageEvent>& events);
  void begin(StageConfig stage, int64_t at_ns, std::vector<StageEvent>& events);
  std::optional<int64_t> end_by(int64_t now_ns, const StageCounters& c) const;

  std::vector<StageConfig> pending_;  // stages not started yet, in order
  NextStage next_;
  int64_t wait_idle_ns_;
  int64_t final_count_wait_ns_ = 0;  // see set_final_count_wait_ns; 0: no wait
  std::vector<StageWindow> windows_;
  State state_ = State::kIdle;
  int64_t settle_deadline_ns_ = 0;
};

}  // namespace convoy::controller
