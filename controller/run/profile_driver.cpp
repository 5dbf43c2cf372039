#include "controller/run/profile_driver.hpp"

#include <algorithm>

#include "common/duration.hpp"
#include "common/log.hpp"
#include "controller/config/load_profile.hpp"
#include "controller/live/live_metrics.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/slo_check.hpp"
#include "controller/run/progress.hpp"
#include "controller/telemetry/telemetry.hpp"

namespace convoy::controller {

ProfileDriver::ProfileDriver(const Config& config, RunFacts& facts, bool quiet)
    : config_(config), facts_(facts), quiet_(quiet) {}

void ProfileDriver::begin_measure(int64_t now, const ProfileHooks& hooks) {
  hooks_ = hooks;
  if (config_.load.abort_on) breaker_.emplace(*config_.load.abort_on);
  if (config_.load.profile != ProfileKind::kSingle) start_profile(now);
}

void ProfileDriver::start_profile(int64_t now) {
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
    plan_->set_final_count_wait_ns(seconds_to_ns(load.grace_s));
  }
  Advance ignored;
  on_stage_events(plan_->start(now), now, ignored);
}

std::optional<StageConfig> ProfileDriver::next_search_step(int finished) {
  if (finished >= 0) {
    StageFacts& stage = facts_.stages[static_cast<size_t>(finished)];
    stage.metrics = stage_metrics_[static_cast<size_t>(finished)].snapshot();
    const SloJudgement j = judge_slo(search_->config().slo, stage.metrics);
    stage.slo_met = j.met;
    stage.slo_failures = j.failures;
    const double value = stage.config.value;
    const bool noisy = within_slo_noise(search_->config().slo, stage.metrics);
    const int run = search_->next_run();
    search_->record(value, j.met, noisy);
    facts_.search->steps.push_back({finished, value, j.met, noisy, run});
    facts_.search->max_meeting_slo = search_->max_meeting_slo();
    facts_.search->min_failing = search_->min_failing();
    facts_.search->max_meeting_verdict = search_->verdict_of(search_->max_meeting_slo());
    facts_.search->min_failing_verdict = search_->verdict_of(search_->min_failing());
    if (hooks_.progress)
      hooks_.progress->set_bracket(search_->max_meeting_slo(), search_->min_failing());
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
  StageConfig step = search_step(config_.load, *next, finished + 1);
  if (const int run = search_->next_run(); run > 1) {
    log_info("search: ", step.name, " lay within the noise of the SLO: run ", run);
    step.name += " (run " + std::to_string(run) + ")";  // stage names stay unique
  }
  return step;
}

void ProfileDriver::on_stage_events(const std::vector<StageEvent>& events, int64_t now,
                                    Advance& result) {
  (void)now;
  for (const StageEvent& e : events) {
    const auto i = static_cast<size_t>(e.stage);
    result.changed = true;
    switch (e.kind) {
      case StageEventKind::kStarted: {
        const StageConfig& stage = plan_->windows()[i].config;
        stage_metrics_.emplace_back(config_).set_origin_ns(e.at_ns);
        stage_taken_.push_back(0);
        StageFacts facts;
        facts.config = stage;
        facts.start_ns = e.at_ns;
        facts_.stages.push_back(std::move(facts));
        counters_ = StageCounters{};
        hooks_.scheduler->set_stage(stage, config_.seed, e.at_ns);
        if (hooks_.telemetry) hooks_.telemetry->mark_stage(stage.name, e.at_ns);
        log_info("stage ", stage.index, " ", stage.name, " (", stage_level_text(stage), ")");
        if (hooks_.progress) {
          // A search makes its steps one by one: how many is not known.
          const int count = search_ ? 0 : static_cast<int>(config_.load.stages.size());
          hooks_.progress->set_stage(stage, count, e.at_ns);
        }
        if (hooks_.live) {
          const LoadLevel& level = stage.mode == LoadMode::kRate ? stage.rate : stage.concurrency;
          hooks_.live->set_stage(stage.name, to_string(stage.mode), level.at(0));
        }
        break;
      }
      case StageEventKind::kEnded: {
        hooks_.scheduler->pause();  // nothing new until the next stage (its settle)
        if (hooks_.telemetry) hooks_.telemetry->mark_settle(e.at_ns);  // in no stage's window
        if (hooks_.progress) hooks_.progress->stage_ended();
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
        if (!quiet_) log_info(stage_line(facts), provisional_note(i));
        break;
      }
      case StageEventKind::kDone:
        result.done = true;
        break;
    }
  }
}

bool ProfileDriver::one_at_a_time() const {
  return plan_ && plan_->running() && plan_->windows().back().config.requests.has_value();
}

bool ProfileDriver::wants_more() const { return !plan_ || plan_->wants_more(counters_); }

void ProfileDriver::on_dispatched(uint64_t index, int64_t intended_ns, int64_t planned_turns) {
  if (!plan_) return;
  ++counters_.dispatched;
  counters_.planned_requests += planned_turns;
  if (plan_->windows().back().config.requests) count_stage_of_[index] = plan_->current();
  counters_.last_intended_ns = std::max(counters_.last_intended_ns, intended_ns);
}

ProfileDriver::Advance ProfileDriver::advance(int64_t now, size_t in_flight) {
  Advance result;
  if (!plan_ || plan_->done()) return result;
  counters_.in_flight = in_flight;
  in_flight_ = in_flight;
  on_stage_events(plan_->advance(now, counters_), now, result);
  return result;
}

std::optional<int64_t> ProfileDriver::next_deadline_ns() const {
  return plan_ ? plan_->next_deadline_ns() : std::nullopt;
}

std::optional<std::string> ProfileDriver::check_breaker(int64_t now) {
  if (!breaker_ || facts_.aborted_reason) return std::nullopt;
  auto why = breaker_->check(now);
  if (why) facts_.aborted_reason = *why;
  return why;
}

std::string ProfileDriver::provisional_note(size_t stage) const {
  const StageConfig& c = plan_->windows()[stage].config;
  if (c.requests && stage_taken_[stage] < *c.requests) {
    return "; provisional: " + std::to_string(stage_taken_[stage]) + " of its " +
           std::to_string(*c.requests) + " requests are in (the final table counts them all)";
  }
  if (!c.requests && in_flight_ > 0) {
    return "; provisional: conversations still in flight may add requests intended in it";
  }
  return "";
}

void ProfileDriver::update_live(int64_t now, live::LiveMetrics& live) const {
  if (!plan_ || facts_.stages.empty() || facts_.stages.back().end_ns != 0) return;
  const StageFacts& stage = facts_.stages.back();
  const StageConfig& c = stage.config;
  const LoadLevel& level = c.mode == LoadMode::kRate ? c.rate : c.concurrency;
  if (!level.ramp || !c.duration_s || *c.duration_s <= 0) return;
  const double fraction = static_cast<double>(now - stage.start_ns) / (*c.duration_s * 1e9);
  live.set_stage_target(level.at(std::clamp(fraction, 0.0, 1.0)));
}

void ProfileDriver::finish(int64_t end_ns) {
  for (size_t i = 0; i < facts_.stages.size(); ++i) {
    StageFacts& stage = facts_.stages[i];
    if (stage.end_ns == 0) stage.end_ns = std::max(stage.start_ns, end_ns);
    if (stage.settle_end_ns == 0) stage.settle_end_ns = stage.end_ns;
    stage.metrics = stage_metrics_[i].snapshot();
  }
}

RecordRoute ProfileDriver::route(const proto::Record& r) {
  RecordRoute route;
  if (!plan_ || r.phase != proto::Phase::kMeasure) return route;
  if (auto it = count_stage_of_.find(r.conversation_index); it != count_stage_of_.end()) {
    const auto i = static_cast<size_t>(it->second);
    route.stage_index = it->second;
    route.stage = plan_->windows()[i].config.name;
    if (proto::session_release_only(r)) return route;  // in no metric: counted apart
    if (stage_taken_[i] >= plan_->windows()[i].config.requests.value_or(0)) {
      route.settle = true;  // past the stage's N: the last conversation's extra turns
      ++facts_.settle_requests;
      return route;
    }
    ++stage_taken_[i];
    return route;
  }
  const StageRoute by_time = plan_->route(r.intended_ns);
  if (by_time.stage < 0) return route;  // before the profile, or its drain: whole run only
  route.stage_index = by_time.stage;
  route.stage = plan_->windows()[static_cast<size_t>(by_time.stage)].config.name;
  route.settle = by_time.settle;
  if (route.settle) ++facts_.settle_requests;
  return route;
}

void ProfileDriver::on_record(const RecordEvent& e) {
  if (e.route.stage_index >= 0 && !e.route.settle) {
    stage_metrics_[static_cast<size_t>(e.route.stage_index)].add(e.record, e.metrics);
  }
  if (breaker_ && e.measured) {
    breaker_->add(e.record.end_ns, e.record.error.kind != proto::ErrorKind::kNone);
  }
}

}  // namespace convoy::controller
