// The run's phases and what moves it between them, as a pure machine: the Run feeds it events
// and the time, the machine answers with the phase it is now in and the actions the Run must
// take. No I/O and no clock reads here; every deadline is a function of the `now_ns` it is
// given, so the whole machine is tested with a hand-advanced clock
// (tests/controller/run/run_phase_machine_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace convoy::controller {

// In order: a run only ever moves forward (a later phase is never left for an earlier one).
enum class RunPhase {
  // Waiting for workers.expect workers to register and measure their clocks. Nothing has been
  // sent to the target. Ends when they are ready (warmup or measure), when
  // workers.ready_timeout_s passes (done, incomplete), on Ctrl-C or when a local worker dies.
  kStarting,
  // load.warmup_sessions conversations run at the measure's concurrency; their records are
  // kept apart from the measurement. With load.warmup_s, warmup conversations start until that
  // time has passed. Ends when every one of them has ended (then measure).
  kWarmup,
  // The measured conversations are scheduled (rate, concurrency or trace). Ends at
  // load.duration_s (then drain), when the schedule or load.requests is used up and every
  // conversation has ended (then stopping), or on Ctrl-C (drain; twice: stopping).
  kMeasure,
  // No new conversations start; those in flight may finish within load.grace_s. Ends when
  // none is left or the grace period is over (then stopping).
  kDrain,
  // Workers were told to cancel what is left and say bye. Ends when every worker is finished
  // (its Bye arrived or its process exited) or after the bye wait (then done).
  kStopping,
  // The loop ends; the Run stops its processes and writes its outputs.
  kDone,
};
const char* to_string(RunPhase phase);

// What the Run observed. The Run raises an event whenever its condition holds (each loop
// turn); an event that means nothing in the current phase is ignored.
enum class RunEvent {
  kWorkersReady,          // workers.expect workers are registered and ready
  kLocalWorkerExited,     // a local worker exited with an error before the run started
  kAllConversationsDone,  // the schedule has nothing more to start and nothing is in flight
  kRequestBudgetSpent,    // load.requests all sent, and every conversation ended
  kWorkersFinished,       // every worker said bye or exited (only acted on while stopping)
  kStopRequested,         // first Ctrl-C: stop starting, let in-flight requests finish
  kCancelRequested,       // second Ctrl-C: cancel everything now
  kAllWorkersLost,        // the last live worker was declared lost
  kDatasetUnreadable,     // a conversation could not be read back from the dataset
  kProfileDone,           // the load profile's last stage (and its settle) is over
  kBreakerTripped,        // load.abort_on tripped: stop starting, cancel after load.grace_s
};
inline constexpr RunEvent kAllRunEvents[] = {
    RunEvent::kWorkersReady,       RunEvent::kLocalWorkerExited, RunEvent::kAllConversationsDone,
    RunEvent::kRequestBudgetSpent, RunEvent::kWorkersFinished,   RunEvent::kStopRequested,
    RunEvent::kCancelRequested,    RunEvent::kAllWorkersLost,    RunEvent::kDatasetUnreadable,
    RunEvent::kProfileDone,        RunEvent::kBreakerTripped};
const char* to_string(RunEvent event);

// What the Run must do for a phase change, in the order given.
enum class RunActionKind {
  kStartWarmup,     // a concurrency scheduler for load.warmup_sessions conversations
  kStartMeasure,    // the measure's scheduler, request budget, metrics origin and progress
  kStopStarting,    // stop the scheduler; Stop{cancel=false} to every worker
  kCancelAll,       // stop the scheduler; Stop{cancel=true} to every worker
  kReportNotReady,  // workers.ready_timeout_s passed: the run is incomplete (then kFinish)
  kFinish,          // the loop ends (every change to kDone carries it)
  kEndWarmup,       // load.warmup_s passed: no new warmup conversation (the phase stays)
};
const char* to_string(RunActionKind kind);

struct RunAction {
  RunActionKind kind;
  const char* why;  // for the log: "duration reached", "interrupted ...", ... (static text)
  bool operator==(const RunAction& other) const { return kind == other.kind; }
};

// The answer to one input.
struct RunStep {
  RunPhase phase = RunPhase::kStarting;  // after the input
  std::vector<RunAction> actions;        // one or more per phase change; empty: no change
  bool changed() const { return !actions.empty(); }
  bool has(RunActionKind kind) const;
};

struct RunPhaseSettings {
  int64_t ready_timeout_ns = 0;                // workers.ready_timeout_s
  bool warmup = false;                         // load.warmup_sessions > 0 or load.warmup_s
  std::optional<int64_t> warmup_duration_ns;   // load.warmup_s: warmup starts nothing after it
  std::optional<int64_t> measure_duration_ns;  // load.duration_s; nullopt: until the schedule ends
  int64_t grace_ns = 0;                        // load.grace_s: drain -> stopping
  int64_t bye_wait_ns = 10'000'000'000;        // stopping -> done without every bye
};

class RunPhaseMachine {
 public:
  // Starts in kStarting at `now_ns`: the ready deadline runs from here.
  RunPhaseMachine(const RunPhaseSettings& settings, int64_t now_ns);

  // One event at `now_ns`. Deadlines are not looked at: see advance().
  RunStep on(RunEvent event, int64_t now_ns);
  // The deadlines that have passed by `now_ns`: ready timeout, warmup_s, measure duration,
  // grace, bye wait.
  // Chained: with load.grace_s = 0 the measure's end goes through drain to stopping at once.
  RunStep advance(int64_t now_ns);

  RunPhase phase() const { return phase_; }
  // When advance() next has something to do (the current phase's deadline); nullopt: none.
  std::optional<int64_t> next_deadline_ns() const;
  int64_t measure_start_ns() const { return measure_start_ns_; }

 private:
  void enter(RunPhase phase, RunActionKind action, const char* why, RunStep& step);
  void enter_measure(int64_t now_ns, RunStep& step);
  void enter_drain(const char* why, int64_t now_ns, RunStep& step);
  void enter_stopping(const char* why, int64_t now_ns, RunStep& step);
  void enter_done(const char* why, RunStep& step);

  RunPhaseSettings settings_;
  RunPhase phase_ = RunPhase::kStarting;
  int64_t ready_deadline_ns_ = 0;
  int64_t measure_start_ns_ = 0;
  std::optional<int64_t> phase_deadline_ns_;  // of the current phase, for advance()
};

}  // namespace convoy::controller
