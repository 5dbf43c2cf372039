#include "controller/run/run_phase_machine.hpp"

#include <algorithm>

namespace convoy::controller {

const char* to_string(RunPhase phase) {
  switch (phase) {
    case RunPhase::kStarting:
      return "starting";
    case RunPhase::kWarmup:
      return "warmup";
    case RunPhase::kMeasure:
      return "measure";
    case RunPhase::kDrain:
      return "drain";
    case RunPhase::kStopping:
      return "stopping";
    case RunPhase::kDone:
      return "done";
  }
  return "?";
}

const char* to_string(RunEvent event) {
  switch (event) {
    case RunEvent::kWorkersReady:
      return "workers ready";
    case RunEvent::kLocalWorkerExited:
      return "local worker exited";
    case RunEvent::kAllConversationsDone:
      return "all conversations done";
    case RunEvent::kRequestBudgetSpent:
      return "request budget spent";
    case RunEvent::kWorkersFinished:
      return "workers finished";
    case RunEvent::kStopRequested:
      return "stop requested";
    case RunEvent::kCancelRequested:
      return "cancel requested";
    case RunEvent::kAllWorkersLost:
      return "all workers lost";
    case RunEvent::kDatasetUnreadable:
      return "dataset unreadable";
    case RunEvent::kProfileDone:
      return "profile done";
    case RunEvent::kBreakerTripped:
      return "breaker tripped";
  }
  return "?";
}

const char* to_string(RunActionKind kind) {
  switch (kind) {
    case RunActionKind::kStartWarmup:
      return "start warmup";
    case RunActionKind::kStartMeasure:
      return "start measure";
    case RunActionKind::kStopStarting:
      return "stop starting";
    case RunActionKind::kCancelAll:
      return "cancel all";
    case RunActionKind::kReportNotReady:
      return "report not ready";
    case RunActionKind::kFinish:
      return "finish";
    case RunActionKind::kEndWarmup:
      return "end warmup";
  }
  return "?";
}

bool RunStep::has(RunActionKind kind) const {
  return std::any_of(actions.begin(), actions.end(),
                     [kind](const RunAction& a) { return a.kind == kind; });
}

RunPhaseMachine::RunPhaseMachine(const RunPhaseSettings& settings, int64_t now_ns)
    : settings_(settings),
      ready_deadline_ns_(now_ns + settings.ready_timeout_ns),
      phase_deadline_ns_(ready_deadline_ns_) {}

void RunPhaseMachine::enter(RunPhase phase, RunActionKind action, const char* why, RunStep& step) {
  phase_ = phase;
  phase_deadline_ns_.reset();
  step.actions.push_back({action, why});
}

void RunPhaseMachine::enter_measure(int64_t now_ns, RunStep& step) {
  enter(RunPhase::kMeasure, RunActionKind::kStartMeasure, "measuring", step);
  measure_start_ns_ = now_ns;
  if (settings_.measure_duration_ns) phase_deadline_ns_ = now_ns + *settings_.measure_duration_ns;
}

void RunPhaseMachine::enter_drain(const char* why, int64_t now_ns, RunStep& step) {
  enter(RunPhase::kDrain, RunActionKind::kStopStarting, why, step);
  phase_deadline_ns_ = now_ns + settings_.grace_ns;
}

void RunPhaseMachine::enter_stopping(const char* why, int64_t now_ns, RunStep& step) {
  enter(RunPhase::kStopping, RunActionKind::kCancelAll, why, step);
  phase_deadline_ns_ = now_ns + settings_.bye_wait_ns;
}

void RunPhaseMachine::enter_done(const char* why, RunStep& step) {
  enter(RunPhase::kDone, RunActionKind::kFinish, why, step);
}

RunStep RunPhaseMachine::on(RunEvent event, int64_t now_ns) {
  RunStep step;
  const RunPhase p = phase_;
  const bool scheduling = p == RunPhase::kWarmup || p == RunPhase::kMeasure;
  const bool running = scheduling || p == RunPhase::kDrain;  // workers hold conversations
  switch (event) {
    case RunEvent::kWorkersReady:
      if (p != RunPhase::kStarting) break;
      if (settings_.warmup) {
        enter(RunPhase::kWarmup, RunActionKind::kStartWarmup, "warmup", step);
        if (settings_.warmup_duration_ns) {
          phase_deadline_ns_ = now_ns + *settings_.warmup_duration_ns;
        }
      } else {
        enter_measure(now_ns, step);
      }
      break;
    case RunEvent::kLocalWorkerExited:
      if (p == RunPhase::kStarting) enter_done("a local worker exited before the run", step);
      break;
    case RunEvent::kAllConversationsDone:
      // Warmup over: the measure starts now. Measure or drain over: nothing is left to wait for.
      if (p == RunPhase::kWarmup) enter_measure(now_ns, step);
      if (p == RunPhase::kMeasure) enter_stopping("every conversation ended", now_ns, step);
      if (p == RunPhase::kDrain) enter_stopping("every conversation ended", now_ns, step);
      break;
    case RunEvent::kRequestBudgetSpent:
      // load.requests counts measured requests only: the warmup's do not spend it.
      if (p == RunPhase::kMeasure) enter_stopping("request count reached", now_ns, step);
      break;
    case RunEvent::kWorkersFinished:
      if (p == RunPhase::kStopping) enter_done("every worker finished", step);
      break;
    case RunEvent::kStopRequested:
      if (p == RunPhase::kStarting) enter_done("interrupted before the run started", step);
      if (scheduling) enter_drain("interrupted (Ctrl-C again to cancel now)", now_ns, step);
      break;
    case RunEvent::kCancelRequested:
      if (p == RunPhase::kStarting) enter_done("interrupted before the run started", step);
      if (running) enter_stopping("interrupted twice", now_ns, step);
      break;
    case RunEvent::kAllWorkersLost:
      // While starting no worker holds anything yet: the ready timeout covers it.
      if (p != RunPhase::kStarting && p != RunPhase::kDone) enter_done("all workers lost", step);
      break;
    case RunEvent::kDatasetUnreadable:
      if (p == RunPhase::kStarting) enter_done("the dataset cannot be read", step);
      if (running) enter_stopping("the dataset cannot be read", now_ns, step);
      break;
    case RunEvent::kProfileDone:
      // In-flight work of the last stage may finish within load.grace_s.
      if (p == RunPhase::kMeasure) enter_drain("load profile done", now_ns, step);
      break;
    case RunEvent::kBreakerTripped:
      if (scheduling) enter_drain("circuit breaker tripped (load.abort_on)", now_ns, step);
      break;
  }
  step.phase = phase_;
  return step;
}

RunStep RunPhaseMachine::advance(int64_t now_ns) {
  RunStep step;
  // Each change moves forward, so this ends after at most one pass per phase.
  for (int i = 0; i < 6 && phase_deadline_ns_; ++i) {
    const RunPhase p = phase_;
    if (p == RunPhase::kStarting && now_ns > *phase_deadline_ns_) {
      step.actions.push_back({RunActionKind::kReportNotReady, "workers not ready in time"});
      enter_done("workers not ready in time", step);
    } else if (p == RunPhase::kWarmup && now_ns >= *phase_deadline_ns_) {
      // Warmup by time: what started may finish; then kAllConversationsDone starts the measure.
      step.actions.push_back({RunActionKind::kEndWarmup, "warmup time reached"});
      phase_deadline_ns_.reset();
    } else if (p == RunPhase::kMeasure && now_ns >= *phase_deadline_ns_) {
      enter_drain("duration reached", now_ns, step);
    } else if (p == RunPhase::kDrain && now_ns >= *phase_deadline_ns_) {
      enter_stopping("grace period over", now_ns, step);
    } else if (p == RunPhase::kStopping && now_ns >= *phase_deadline_ns_) {
      enter_done("no bye from every worker in time", step);
    } else {
      break;
    }
  }
  step.phase = phase_;
  return step;
}

std::optional<int64_t> RunPhaseMachine::next_deadline_ns() const {
  if (phase_ == RunPhase::kStarting && phase_deadline_ns_) return *phase_deadline_ns_ + 1;
  return phase_deadline_ns_;
}

}  // namespace convoy::controller
