// RunPhaseMachine: every phase x every event, and every deadline, with a hand-advanced clock
// (no real time passes, nothing is sent).
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/run/run_phase_machine.hpp"
#include "test_time.hpp"

using convoy::controller::kAllRunEvents;
using convoy::controller::RunActionKind;
using convoy::controller::RunEvent;
using convoy::controller::RunPhase;
using convoy::controller::RunPhaseMachine;
using convoy::controller::RunPhaseSettings;
using convoy::controller::RunStep;

namespace {

constexpr int64_t kMachineT0 = 1'000 * kS;  // the clock's start: any value

RunPhaseSettings settings(bool warmup = true) {
  RunPhaseSettings s;
  s.ready_timeout_ns = 20 * kS;
  s.warmup = warmup;
  s.measure_duration_ns = 60 * kS;
  s.grace_ns = 5 * kS;
  s.bye_wait_ns = 10 * kS;
  return s;
}

std::vector<RunActionKind> kinds(const RunStep& step) {
  std::vector<RunActionKind> out;
  for (const auto& a : step.actions) out.push_back(a.kind);
  return out;
}

// A machine brought into `phase` at kT0 by the events a run would see.
RunPhaseMachine machine_in(RunPhase phase, const RunPhaseSettings& s = settings()) {
  RunPhaseMachine m(s, kMachineT0);
  auto go = [&](RunEvent e) { REQUIRE(m.on(e, kMachineT0).changed()); };
  if (phase >= RunPhase::kWarmup) go(RunEvent::kWorkersReady);
  if (phase >= RunPhase::kMeasure) go(RunEvent::kAllConversationsDone);
  if (phase >= RunPhase::kDrain) go(RunEvent::kStopRequested);
  if (phase >= RunPhase::kStopping) go(RunEvent::kCancelRequested);
  if (phase >= RunPhase::kDone) go(RunEvent::kWorkersFinished);
  REQUIRE(m.phase() == phase);
  return m;
}

using Outcome = std::pair<RunPhase, std::vector<RunActionKind>>;

// The whole table: what each event does in each phase (absent: ignored, nothing changes).
std::map<std::pair<RunPhase, RunEvent>, Outcome> transitions() {
  using A = RunActionKind;
  using E = RunEvent;
  using P = RunPhase;
  return {
      {{P::kStarting, E::kWorkersReady}, {P::kWarmup, {A::kStartWarmup}}},
      {{P::kStarting, E::kLocalWorkerExited}, {P::kDone, {A::kFinish}}},
      {{P::kStarting, E::kStopRequested}, {P::kDone, {A::kFinish}}},
      {{P::kStarting, E::kCancelRequested}, {P::kDone, {A::kFinish}}},
      {{P::kStarting, E::kDatasetUnreadable}, {P::kDone, {A::kFinish}}},

      {{P::kWarmup, E::kAllConversationsDone}, {P::kMeasure, {A::kStartMeasure}}},
      {{P::kWarmup, E::kStopRequested}, {P::kDrain, {A::kStopStarting}}},
      {{P::kWarmup, E::kCancelRequested}, {P::kStopping, {A::kCancelAll}}},
      {{P::kWarmup, E::kAllWorkersLost}, {P::kDone, {A::kFinish}}},
      {{P::kWarmup, E::kDatasetUnreadable}, {P::kStopping, {A::kCancelAll}}},
      {{P::kWarmup, E::kBreakerTripped}, {P::kDrain, {A::kStopStarting}}},

      {{P::kMeasure, E::kAllConversationsDone}, {P::kStopping, {A::kCancelAll}}},
      {{P::kMeasure, E::kRequestBudgetSpent}, {P::kStopping, {A::kCancelAll}}},
      {{P::kMeasure, E::kStopRequested}, {P::kDrain, {A::kStopStarting}}},
      {{P::kMeasure, E::kCancelRequested}, {P::kStopping, {A::kCancelAll}}},
      {{P::kMeasure, E::kAllWorkersLost}, {P::kDone, {A::kFinish}}},
      {{P::kMeasure, E::kDatasetUnreadable}, {P::kStopping, {A::kCancelAll}}},
      {{P::kMeasure, E::kProfileDone}, {P::kDrain, {A::kStopStarting}}},
      {{P::kMeasure, E::kBreakerTripped}, {P::kDrain, {A::kStopStarting}}},

      {{P::kDrain, E::kAllConversationsDone}, {P::kStopping, {A::kCancelAll}}},
      {{P::kDrain, E::kCancelRequested}, {P::kStopping, {A::kCancelAll}}},
      {{P::kDrain, E::kAllWorkersLost}, {P::kDone, {A::kFinish}}},
      {{P::kDrain, E::kDatasetUnreadable}, {P::kStopping, {A::kCancelAll}}},

      {{P::kStopping, E::kWorkersFinished}, {P::kDone, {A::kFinish}}},
      {{P::kStopping, E::kAllWorkersLost}, {P::kDone, {A::kFinish}}},
  };
}

constexpr RunPhase kAllPhases[] = {RunPhase::kStarting, RunPhase::kWarmup,   RunPhase::kMeasure,
                                   RunPhase::kDrain,    RunPhase::kStopping, RunPhase::kDone};

}  // namespace

TEST_CASE("run phase machine: every event in every phase does what the table says") {
  const auto table = transitions();
  for (RunPhase phase : kAllPhases) {
    for (RunEvent event : kAllRunEvents) {
      RunPhaseMachine m = machine_in(phase);
      const RunStep step = m.on(event, kMachineT0 + kS);
      INFO(to_string(phase), " + ", to_string(event));
      auto it = table.find({phase, event});
      if (it == table.end()) {
        CHECK_FALSE(step.changed());
        CHECK(step.phase == phase);
        CHECK(m.phase() == phase);
      } else {
        CHECK(step.phase == it->second.first);
        CHECK(m.phase() == it->second.first);
        CHECK(kinds(step) == it->second.second);
      }
      for (const auto& a : step.actions) CHECK(a.why != nullptr);
    }
  }
}

TEST_CASE("run phase machine: phases only move forward and every change to done finishes") {
  for (RunPhase phase : kAllPhases) {
    for (RunEvent event : kAllRunEvents) {
      RunPhaseMachine m = machine_in(phase);
      const RunStep step = m.on(event, kMachineT0);
      INFO(to_string(phase), " + ", to_string(event));
      CHECK(step.phase >= phase);
      CHECK(step.has(RunActionKind::kFinish) == (step.phase == RunPhase::kDone && step.changed()));
    }
  }
}

TEST_CASE("run phase machine: without warmup, ready workers start the measure") {
  RunPhaseMachine m(settings(/*warmup=*/false), kMachineT0);
  const RunStep step = m.on(RunEvent::kWorkersReady, kMachineT0 + 3 * kS);
  CHECK(step.phase == RunPhase::kMeasure);
  CHECK(kinds(step) == std::vector<RunActionKind>{RunActionKind::kStartMeasure});
  CHECK(m.measure_start_ns() == kMachineT0 + 3 * kS);
  CHECK(m.next_deadline_ns() == kMachineT0 + 3 * kS + 60 * kS);
}

TEST_CASE("run phase machine: warmup then measure then drain then stopping then done") {
  RunPhaseMachine m(settings(), kMachineT0);
  int64_t now = kMachineT0;
  CHECK(m.on(RunEvent::kWorkersReady, now += kS).phase == RunPhase::kWarmup);
  CHECK_FALSE(m.advance(now += 100 * kS).changed());  // warmup has no deadline
  const int64_t measure_at = now += kS;
  CHECK(m.on(RunEvent::kAllConversationsDone, measure_at).phase == RunPhase::kMeasure);
  CHECK(m.measure_start_ns() == measure_at);
  // load.duration_s counts from the measure's start, not from the run's.
  CHECK_FALSE(m.advance(measure_at + 60 * kS - 1).changed());
  RunStep drain = m.advance(measure_at + 60 * kS);
  CHECK(drain.phase == RunPhase::kDrain);
  CHECK(kinds(drain) == std::vector<RunActionKind>{RunActionKind::kStopStarting});
  CHECK(std::string(drain.actions[0].why) == "duration reached");
  // load.grace_s from the drain's start.
  const int64_t drain_at = measure_at + 60 * kS;
  CHECK(m.next_deadline_ns() == drain_at + 5 * kS);
  CHECK_FALSE(m.advance(drain_at + 5 * kS - 1).changed());
  RunStep stopping = m.advance(drain_at + 5 * kS);
  CHECK(stopping.phase == RunPhase::kStopping);
  CHECK(kinds(stopping) == std::vector<RunActionKind>{RunActionKind::kCancelAll});
  // The bye wait from the stop's start.
  const int64_t stop_at = drain_at + 5 * kS;
  CHECK_FALSE(m.advance(stop_at + 10 * kS - 1).changed());
  RunStep done = m.advance(stop_at + 10 * kS);
  CHECK(done.phase == RunPhase::kDone);
  CHECK(kinds(done) == std::vector<RunActionKind>{RunActionKind::kFinish});
  CHECK_FALSE(m.next_deadline_ns().has_value());
  CHECK_FALSE(m.advance(stop_at + 1000 * kS).changed());
}

TEST_CASE("run phase machine: the ready timeout ends a run that never started") {
  RunPhaseMachine m(settings(), kMachineT0);
  CHECK(m.next_deadline_ns() == kMachineT0 + 20 * kS + 1);
  SUBCASE("not at the deadline itself, one nanosecond after it") {
    CHECK_FALSE(m.advance(kMachineT0 + 20 * kS).changed());
    RunStep step = m.advance(kMachineT0 + 20 * kS + 1);
    CHECK(step.phase == RunPhase::kDone);
    CHECK(kinds(step) ==
          std::vector<RunActionKind>{RunActionKind::kReportNotReady, RunActionKind::kFinish});
  }
  SUBCASE("workers ready in time: the ready deadline no longer applies") {
    REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0 + 19 * kS).changed());
    CHECK_FALSE(m.advance(kMachineT0 + 21 * kS).changed());
    CHECK(m.phase() == RunPhase::kWarmup);
  }
}

TEST_CASE("run phase machine: without load.duration_s the measure has no deadline") {
  RunPhaseSettings s = settings(/*warmup=*/false);
  s.measure_duration_ns.reset();
  RunPhaseMachine m(s, kMachineT0);
  REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0).phase == RunPhase::kMeasure);
  CHECK_FALSE(m.next_deadline_ns().has_value());
  CHECK_FALSE(m.advance(kMachineT0 + 1'000'000 * kS).changed());
  CHECK(m.on(RunEvent::kAllConversationsDone, kMachineT0 + kS).phase == RunPhase::kStopping);
}

TEST_CASE("run phase machine: with no grace the duration's end goes straight to stopping") {
  RunPhaseSettings s = settings(/*warmup=*/false);
  s.grace_ns = 0;
  RunPhaseMachine m(s, kMachineT0);
  REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0).changed());
  RunStep step = m.advance(kMachineT0 + 60 * kS);
  CHECK(step.phase == RunPhase::kStopping);
  CHECK(kinds(step) ==
        std::vector<RunActionKind>{RunActionKind::kStopStarting, RunActionKind::kCancelAll});
}

TEST_CASE("run phase machine: after a stalled loop the grace period runs from the stop") {
  // The loop woke long after the measure's end: the workers are told to stop only now, so their
  // in-flight requests get the whole grace period from now.
  RunPhaseMachine m(settings(/*warmup=*/false), kMachineT0);
  REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0).changed());
  const int64_t late = kMachineT0 + 1000 * kS;
  RunStep step = m.advance(late);
  CHECK(kinds(step) == std::vector<RunActionKind>{RunActionKind::kStopStarting});
  CHECK(step.phase == RunPhase::kDrain);
  CHECK(m.next_deadline_ns() == late + 5 * kS);
}

TEST_CASE("run phase machine: Ctrl-C once drains, twice cancels") {
  SUBCASE("once during the measure: drain, with the grace period from then") {
    RunPhaseMachine m = machine_in(RunPhase::kMeasure);
    RunStep step = m.on(RunEvent::kStopRequested, kMachineT0 + 7 * kS);
    CHECK(step.phase == RunPhase::kDrain);
    CHECK(kinds(step) == std::vector<RunActionKind>{RunActionKind::kStopStarting});
    CHECK(std::string(step.actions[0].why).find("Ctrl-C again") != std::string::npos);
    CHECK(m.next_deadline_ns() == kMachineT0 + 12 * kS);
    SUBCASE("a second Ctrl-C cancels at once, before the grace period ends") {
      RunStep again = m.on(RunEvent::kCancelRequested, kMachineT0 + 8 * kS);
      CHECK(again.phase == RunPhase::kStopping);
      CHECK(kinds(again) == std::vector<RunActionKind>{RunActionKind::kCancelAll});
      CHECK(m.next_deadline_ns() == kMachineT0 + 18 * kS);
    }
    SUBCASE("the same first Ctrl-C seen again changes nothing") {
      CHECK_FALSE(m.on(RunEvent::kStopRequested, kMachineT0 + 8 * kS).changed());
      CHECK(m.phase() == RunPhase::kDrain);
    }
  }
  SUBCASE("twice at once (both signals in one loop turn): straight to stopping") {
    RunPhaseMachine m = machine_in(RunPhase::kMeasure);
    CHECK(m.on(RunEvent::kCancelRequested, kMachineT0).phase == RunPhase::kStopping);
  }
  SUBCASE("during warmup: the measure never starts") {
    RunPhaseMachine m = machine_in(RunPhase::kWarmup);
    REQUIRE(m.on(RunEvent::kStopRequested, kMachineT0).phase == RunPhase::kDrain);
    CHECK_FALSE(
        m.on(RunEvent::kAllConversationsDone, kMachineT0).has(RunActionKind::kStartMeasure));
    CHECK(m.phase() == RunPhase::kStopping);
  }
  SUBCASE("before the run started: done, nothing to stop") {
    RunPhaseMachine m(settings(), kMachineT0);
    RunStep step = m.on(RunEvent::kStopRequested, kMachineT0);
    CHECK(step.phase == RunPhase::kDone);
    CHECK_FALSE(step.has(RunActionKind::kStopStarting));
    CHECK_FALSE(step.has(RunActionKind::kCancelAll));
  }
}

TEST_CASE("run phase machine: losing every worker ends the run from any running phase") {
  for (RunPhase phase :
       {RunPhase::kWarmup, RunPhase::kMeasure, RunPhase::kDrain, RunPhase::kStopping}) {
    INFO(to_string(phase));
    RunPhaseMachine m = machine_in(phase);
    RunStep step = m.on(RunEvent::kAllWorkersLost, kMachineT0);
    CHECK(step.phase == RunPhase::kDone);
    CHECK_FALSE(m.next_deadline_ns().has_value());
  }
  // While starting, no worker holds anything: the ready timeout still decides.
  RunPhaseMachine m(settings(), kMachineT0);
  CHECK_FALSE(m.on(RunEvent::kAllWorkersLost, kMachineT0).changed());
  CHECK(m.advance(kMachineT0 + 21 * kS).has(RunActionKind::kReportNotReady));
}

TEST_CASE("run phase machine: load.warmup_s stops starting warmup conversations at its end") {
  RunPhaseSettings s = settings();
  s.warmup_duration_ns = 30 * kS;
  RunPhaseMachine m(s, kMachineT0);
  REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0 + kS).phase == RunPhase::kWarmup);
  CHECK(m.next_deadline_ns() == kMachineT0 + 31 * kS);
  CHECK_FALSE(m.advance(kMachineT0 + 31 * kS - 1).changed());
  const RunStep step = m.advance(kMachineT0 + 31 * kS);
  CHECK(kinds(step) == std::vector<RunActionKind>{RunActionKind::kEndWarmup});
  CHECK(step.phase == RunPhase::kWarmup);  // what started may finish
  CHECK_FALSE(m.next_deadline_ns().has_value());
  CHECK_FALSE(m.advance(kMachineT0 + 100 * kS).changed());
  // The last warmup conversation ends: the measure starts then.
  CHECK(m.on(RunEvent::kAllConversationsDone, kMachineT0 + 40 * kS).phase == RunPhase::kMeasure);
  CHECK(m.measure_start_ns() == kMachineT0 + 40 * kS);
}

TEST_CASE("run phase machine: a tripped breaker drains then cancels after load.grace_s") {
  RunPhaseMachine m = machine_in(RunPhase::kMeasure);
  const RunStep step = m.on(RunEvent::kBreakerTripped, kMachineT0 + 7 * kS);
  CHECK(step.phase == RunPhase::kDrain);
  CHECK(kinds(step) == std::vector<RunActionKind>{RunActionKind::kStopStarting});
  CHECK(m.next_deadline_ns() == kMachineT0 + 12 * kS);  // grace 5 s, not the 60 s duration
  CHECK(kinds(m.advance(kMachineT0 + 12 * kS)) ==
        std::vector<RunActionKind>{RunActionKind::kCancelAll});
  CHECK(m.phase() == RunPhase::kStopping);
}

TEST_CASE("run phase machine: the end of the load profile drains the last stage") {
  RunPhaseSettings s = settings(/*warmup=*/false);
  s.measure_duration_ns.reset();  // a profile ends itself
  RunPhaseMachine m(s, kMachineT0);
  REQUIRE(m.on(RunEvent::kWorkersReady, kMachineT0).phase == RunPhase::kMeasure);
  CHECK_FALSE(m.next_deadline_ns().has_value());
  CHECK(m.on(RunEvent::kProfileDone, kMachineT0 + 90 * kS).phase == RunPhase::kDrain);
  CHECK(m.next_deadline_ns() == kMachineT0 + 95 * kS);
  CHECK(m.on(RunEvent::kProfileDone, kMachineT0 + 91 * kS).changed() == false);
}
