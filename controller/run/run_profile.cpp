// The load profile's side of the run: load.stages and load.search as a StagePlan, each stage's
// start, end and settle (metrics, telemetry marks, live metrics, the console line), the
// capacity search's next step, and which stage a record belongs to.
#include <algorithm>

#include "common/duration.hpp"
#include "common/log.hpp"
#include "controller/config/load_profile.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/slo_check.hpp"
#include "controller/run/run_impl.hpp"

namespace convoy::controller {

void Run::start_profile(int64_t now) {
  const LoadConfig& load = config_.load;
  if (load.search) {
    // One step at a time: each next value depends on whether the last step met the SLO, judged
    // once its in-flight work ended (bounded by load.grace_s).
    search_.emplace(*load.search);
    facts_.search = SearchFacts{*load.search, {}, std::nullopt, std::nullopt};
    const int64_t wait_ns = seconds_to_ns(load.grace_s);
    plan_.emplace(
        std::vector<StageConfig>{}, [this](int finished) { return next_search_step(finished); },
        wait_ns);
  } else {
    plan_.emplace(load.stages);
  }
  on_stage_events(plan_->start(now), now);
}

std::optional<StageConfig> Run::next_search_step(int finished) {
  if (finished >= 0) {
    StageFacts& stage = facts_.stages[static_cast<size_t>(finished)];
    stage.metrics = stage_metrics_[static_cast<size_t>(finished)].snapshot();
    const SloJudgement j = judge_slo(search_->config().slo, stage.metrics);
    stage.slo_met = j.met;
    stage.slo_failures = j.failures;
    const double value = stage.config.value;
    search_->record(value, j.met);
    facts_.search->steps.push_back({finished, value, j.met});
    facts_.search->max_meeting_slo = search_->max_meeting_slo();
    facts_.search->min_failing = search_->min_failing();
    if (j.met) {
      log_info("search: ", stage.config.name, " met the SLO");
    } else {
      log_info("search: ", stage.config.name, " missed the SLO: ", j.failures.front());
    }
  }
  auto next = search_->next();
  if (!next) {
    facts_.search->complete = true;
    return std::nullopt;
  }
  return search_step(config_.load, *next, finished + 1);
}

void Run::on_stage_events(const std::vector<StageEvent>& events, int64_t now) {
  for (const StageEvent& e : events) {
    const auto i = static_cast<size_t>(e.stage);
    switch (e.kind) {
      case StageEventKind::kStarted: {
        const StageConfig& stage = plan_->windows()[i].config;
        stage_metrics_.emplace_back(config_).set_origin_ns(e.at_ns);
        stage_taken_.push_back(0);
        StageFacts facts;
        facts.config = stage;
        facts.start_ns = e.at_ns;
        facts_.stages.push_back(std::move(facts));
        stage_counters_ = StageCounters{};
        scheduler_->set_stage(stage, config_.seed, e.at_ns);
        if (telemetry_) telemetry_->mark_stage(stage.name, e.at_ns);  // server_metrics stages[]
        log_info("stage ", stage.index, " ", stage.name, " (", stage_level_text(stage), ")");
        if (live_) {
          const LoadLevel& level = stage.mode == LoadMode::kRate ? stage.rate : stage.concurrency;
          live_->set_stage(stage.name, to_string(stage.mode), level.at(0));
        }
        break;
      }
      case StageEventKind::kEnded: {
        scheduler_->pause();  // nothing new until the next stage (its settle)
        if (telemetry_) telemetry_->mark_settle(e.at_ns);  // settle is in no stage's window
        StageFacts& facts = facts_.stages[i];
        facts.end_ns = e.at_ns;
        const StageConfig& c = facts.config;
        const LoadLevel& level = c.mode == LoadMode::kRate ? c.rate : c.concurrency;
        double fraction = 1;
        if (c.duration_s && *c.duration_s > 0) {
          fraction = static_cast<double>(e.at_ns - facts.start_ns) / (*c.duration_s * 1e9);
        }
        facts.reached_value = level.at(std::min(1.0, fraction));
        break;
      }
      case StageEventKind::kSettled: {
        StageFacts& facts = facts_.stages[i];
        facts.settle_end_ns = e.at_ns;
        facts.metrics = stage_metrics_[i].snapshot();  // again at the end, with late records
        if (!options_.quiet) log_info(stage_line(facts), provisional_note(i));
        break;
      }
      case StageEventKind::kDone:
        raise(RunEvent::kProfileDone, now);
        break;
    }
  }
}

void Run::advance_profile(int64_t now) {
  if (!plan_ || plan_->done() || machine_->phase() != RunPhase::kMeasure) return;
  stage_counters_.in_flight = in_flight_.size();
  const auto events = plan_->advance(now, stage_counters_);
  if (events.empty()) return;
  on_stage_events(events, now);
  dispatch(now);  // a new stage's first conversations are intended at its start
}

std::string Run::provisional_note(size_t stage) const {
  const StageConfig& c = plan_->windows()[stage].config;
  if (c.requests && stage_taken_[stage] < *c.requests) {
    return "; provisional: " + std::to_string(stage_taken_[stage]) + " of its " +
           std::to_string(*c.requests) + " requests are in (the final table counts them all)";
  }
  if (!c.requests && !in_flight_.empty()) {
    return "; provisional: conversations still in flight may add requests intended in it";
  }
  return "";
}

bool Run::route_record(const proto::Record& r, std::string_view& stage, bool& settle) {
  if (!plan_ || r.phase != proto::Phase::kMeasure) return true;
  if (auto it = count_stage_of_.find(r.conversation_index); it != count_stage_of_.end()) {
    const auto i = static_cast<size_t>(it->second);
    stage = plan_->windows()[i].config.name;
    if (proto::session_release_only(r)) {  // in no metric: counted apart
      stage_metrics_[i].add(r);
      return true;
    }
    if (stage_taken_[i] >= plan_->windows()[i].config.requests.value_or(0)) {
      settle = true;  // past the stage's N: the last conversation's extra turns
      ++facts_.settle_requests;
      return false;
    }
    ++stage_taken_[i];
    stage_metrics_[i].add(r);
    return true;
  }
  // A request belongs to the stage in which it was intended to be sent (controller clock).
  const StageRoute route = plan_->route(r.intended_ns);
  if (route.stage < 0) return true;  // before the profile, or its drain: whole-run metrics only
  const auto i = static_cast<size_t>(route.stage);
  stage = plan_->windows()[i].config.name;
  settle = route.settle;
  if (route.settle) {
    ++facts_.settle_requests;
    return false;
  }
  stage_metrics_[i].add(r);
  return true;
}

}  // namespace convoy::controller
