// The load profile's driver: load.stages and load.search as a StagePlan (each stage's start,
// end and settle: its metrics, telemetry marks, live metrics and console line), the capacity
// search's next step, which stage a record belongs to, and the circuit breaker (load.abort_on).
// The run loop asks it whether the current stage wants another conversation and tells it what
// was dispatched; as a RecordOutput it feeds each stage's metrics and the breaker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/run/capacity_search.hpp"
#include "controller/run/circuit_breaker.hpp"
#include "controller/run/record_pipeline.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/stage_plan.hpp"

namespace convoy::telemetry {
class Telemetry;
}
namespace convoy::live {
class LiveMetrics;
}

namespace convoy::controller {

class Progress;
struct RunFacts;

// What the driver touches in the run it drives (each may be absent but the scheduler).
struct ProfileHooks {
  Scheduler* scheduler = nullptr;
  telemetry::Telemetry* telemetry = nullptr;  // server_metrics' stage marks
  live::LiveMetrics* live = nullptr;          // the live stage and its target level
  Progress* progress = nullptr;               // the console's live view
};

class ProfileDriver : public RecordOutput {
 public:
  ProfileDriver(const Config& config, RunFacts& facts, bool quiet);

  // The measure starts: the breaker is armed (load.abort_on) and a profile's first stage begins.
  void begin_measure(int64_t now, const ProfileHooks& hooks);
  bool staged() const { return plan_.has_value(); }

  // Dispatch, for a staged measure: one conversation at a time while a stage that ends on
  // `requests: N` runs; whether the stage takes one more; what was dispatched in it.
  bool one_at_a_time() const;
  bool wants_more() const;
  void on_dispatched(uint64_t index, int64_t intended_ns, int64_t planned_turns);
  // A conversation ended: it no longer decides the stage of its requests.
  void on_conversation_end(uint64_t index) { count_stage_of_.erase(index); }

  // Stage ends, settles, the next stage, the profile's end by `now` with `in_flight`
  // conversations running. `changed`: a stage started or ended (dispatch again); `done`: the
  // last stage settled.
  struct Advance {
    bool changed = false;
    bool done = false;
  };
  Advance advance(int64_t now, size_t in_flight);
  std::optional<int64_t> next_deadline_ns() const;
  // The breaker's reason, once, the first time it trips (RunFacts.aborted_reason set).
  std::optional<std::string> check_breaker(int64_t now);
  // A ramp's level moves during its stage: the live target now.
  void update_live(int64_t now, live::LiveMetrics& live) const;
  // The run is over at `end_ns`: every stage's numbers with the late records; a stage cut short
  // (Ctrl-C, the breaker) ends where the measure ended.
  void finish(int64_t end_ns);

  // The stage a record belongs to. A request belongs to the stage in which it was intended to
  // be sent; under a stage that ends on `requests: N`, to the stage that started its
  // conversation, the first N in its table and the rest settle requests.
  RecordRoute route(const proto::Record& r);
  void on_record(const RecordEvent& e) override;

 private:
  void start_profile(int64_t now);
  std::optional<StageConfig> next_search_step(int finished);
  void on_stage_events(const std::vector<StageEvent>& events, int64_t now, Advance& result);
  // "" when stage `stage`'s console line, printed as it settles, is its final table; else why
  // not ("; provisional: ...").
  std::string provisional_note(size_t stage) const;

  const Config& config_;
  RunFacts& facts_;
  bool quiet_;
  ProfileHooks hooks_;
  std::optional<StagePlan> plan_;
  std::vector<MetricsAggregator> stage_metrics_;  // one per stage, by index
  // A stage that ends on `requests: N` is ended by intended requests: every request of a
  // conversation it started belongs to it (whenever intended), the first N in its table and the
  // rest excluded as settle requests, so its table holds exactly N. Conversation index -> its
  // stage, until the conversation ends; and per stage, the requests in its table so far.
  std::unordered_map<uint64_t, int> count_stage_of_;
  std::vector<int64_t> stage_taken_;
  StageCounters counters_;  // of the current stage
  size_t in_flight_ = 0;    // conversations in flight at the last advance()
  std::optional<CapacitySearch> search_;
  std::optional<CircuitBreaker> breaker_;
};

}  // namespace convoy::controller
