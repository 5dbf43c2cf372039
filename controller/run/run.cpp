// run_benchmark(): setup, the loop, what the phase machine's answers make the Run do, and the
// assignment of conversations. Worker messages and worker loss are handled in
// run_messages.cpp, the load profile in run_profile.cpp, telemetry, live metrics and the
// outputs at the end in run_outputs.cpp.
#include "controller/run/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/dataset/server_tokens.hpp"
#include "controller/dataset/token_plan.hpp"
#include "controller/run/output_dir.hpp"
#include "controller/run/run_impl.hpp"
#include "controller/run/session_detect.hpp"
#include "controller/run/target_probe.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kLookaheadNs = 100 * kNsPerMs;  // conversations go out this far ahead
constexpr int64_t kMaxWaitNs = 50 * kNsPerMs;     // the loop wakes at least this often

// The only global mutable state: signals received.
std::atomic<int> g_signals{0};

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RunPhaseSettings phase_settings(const Config& c) {
  RunPhaseSettings s;
  s.ready_timeout_ns = seconds_to_ns(c.workers.ready_timeout_s);
  s.warmup = c.load.warmup_sessions > 0 || c.load.warmup_s.has_value();
  if (c.load.warmup_s) s.warmup_duration_ns = seconds_to_ns(*c.load.warmup_s);
  if (c.load.duration_s) s.measure_duration_ns = seconds_to_ns(*c.load.duration_s);
  s.grace_ns = seconds_to_ns(c.load.grace_s);
  return s;
}

// The live metrics' target level of a run without stages: its concurrency or its rate; a trace
// has none.
double measure_target(const LoadConfig& load) {
  if (load.mode == LoadMode::kRate) return load.rate;
  if (load.mode == LoadMode::kTrace) return std::nan("");
  return static_cast<double>(load.concurrency);
}

}  // namespace

proto::WorkerSettings worker_settings(const Config& c, const std::string& url) {
  proto::WorkerSettings s;
  static_cast<proto::TargetSettings&>(s) = c.target;  // every target.* key, as configured
  s.url = url;                                        // "mock" resolved to the mock's address
  s.session_routing = c.session_routing;
  s.cancel_fraction = c.load.cancel.fraction;
  s.cancel_after_ms = c.load.cancel.after_ms;
  s.history = c.dataset.history;
  s.seed = c.seed;
  if (c.dataset.tokenizer && !c.dataset.tokenizer_is_server()) s.tokenizer = *c.dataset.tokenizer;
  return s;
}

Run::Run(const RunOptions& options, const RunSeams& seams)
    : options_(options),
      config_(options.config),
      clock_(seams.clock ? seams.clock : steady_now_ns),
      ctx_(seams.context ? seams.context : &own_ctx_.emplace(1)),
      registry_(seams.liveness) {}

void Run::incomplete(const std::string& reason) {
  if (incomplete_) return;  // the first reason is the one reported
  incomplete_ = true;
  incomplete_reason_ = reason;
  log_error(reason);
}

void Run::raise(RunEvent event, int64_t now) { apply(machine_->on(event, now), now); }

void Run::apply(const RunStep& step, int64_t now) {
  for (const RunAction& a : step.actions) {
    switch (a.kind) {
      case RunActionKind::kStartWarmup:
        start_warmup(now);
        break;
      case RunActionKind::kStartMeasure:
        start_measure(now);
        break;
      case RunActionKind::kStopStarting:
        log_info(a.why, ": no new conversations; in-flight requests may finish within ",
                 config_.load.grace_s, " s");
        if (scheduler_) scheduler_->stop();
        broadcast_stop(/*cancel=*/false);
        break;
      case RunActionKind::kCancelAll:
        if (!in_flight_.empty()) {
          log_warn(a.why, ": cancelling ", in_flight_.size(), " conversation(s)");
        }
        if (scheduler_) scheduler_->stop();
        broadcast_stop(/*cancel=*/true);
        break;
      case RunActionKind::kReportNotReady:
        incomplete("only " + std::to_string(registry_.count(WorkerState::kReady)) + " of " +
                   std::to_string(config_.expected_workers()) + " worker(s) ready after " +
                   std::to_string(config_.workers.ready_timeout_s) +
                   " s (workers.ready_timeout_s)");
        break;
      case RunActionKind::kFinish:
        log_debug("run done: ", a.why);
        break;
      case RunActionKind::kEndWarmup:
        log_info(a.why, ": no new warmup conversations; the measure starts when they end");
        if (scheduler_) scheduler_->stop();
        break;
    }
  }
}

void Run::start_warmup(int64_t now) {
  seq_base_ = 0;
  std::optional<uint64_t> total = static_cast<uint64_t>(config_.load.warmup_sessions);
  if (config_.load.warmup_s) total.reset();  // by time: until load.warmup_s passes
  scheduler_.emplace(config_.load, LoadMode::kConcurrency, config_.seed, total, now);
  window_per_worker_ = refill_window(config_.load, sharder_.size(), proto::Phase::kWarmup);
  if (live_) {
    live_->set_stage("warmup", "concurrency", static_cast<double>(config_.load.concurrency));
  }
  if (config_.load.warmup_s) {
    log_info("warmup: ", *config_.load.warmup_s, " s");
  } else {
    log_info("warmup: ", config_.load.warmup_sessions, " conversation(s)");
  }
}

void Run::start_measure(int64_t now) {
  metrics_->set_origin_ns(now);
  const auto& load = config_.load;
  std::optional<uint64_t> total;
  if (load.sessions) {
    total = static_cast<uint64_t>(*load.sessions);
  } else if (!load.duration_s && !load.requests) {
    total = dataset_->size();
  }
  if (config_.load.mode == LoadMode::kTrace) {
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
  if (load.abort_on) breaker_.emplace(*load.abort_on);
  facts_.measure_start_ns = now;
  if (telemetry_) telemetry_->start_window(now);  // server_metrics cover the measured window
  progress_.begin(now, total, load.requests);
  if (profile) {
    log_info("measuring: ", to_string(load.profile), " profile, ", registry_.live_count(),
             " worker(s)");
    start_profile(now);
  } else {
    log_info("measuring: ", to_string(load.mode), " mode, ", registry_.live_count(), " worker(s)");
    if (live_) live_->set_stage("measure", to_string(load.mode), measure_target(load));
  }
  dispatch(now);  // the measured conversations start now, not at the next wake-up
}

void Run::check_breaker(int64_t now) {
  if (!breaker_ || facts_.aborted_reason) return;
  const RunPhase p = machine_->phase();
  if (p != RunPhase::kWarmup && p != RunPhase::kMeasure) return;
  auto why = breaker_->check(now);
  if (!why) return;
  facts_.aborted_reason = *why;
  log_error("circuit breaker tripped: ", *why, "; stopping (in-flight work is cancelled after ",
            config_.load.grace_s, " s)");
  raise(RunEvent::kBreakerTripped, now);
}

void Run::broadcast_stop(bool cancel) {
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    send_to(id, proto::Stop{cancel});
  }
}

void Run::on_signals(int64_t now) {
  const int signals = g_signals.load();
  if (signals <= handled_signals_) return;
  handled_signals_ = signals;
  interrupted_ = true;
  if (machine_->phase() == RunPhase::kStarting) log_warn("interrupted before the run started");
  raise(signals == 1 ? RunEvent::kStopRequested : RunEvent::kCancelRequested, now);
}

void Run::on_starting(int64_t now) {
  // A local worker that died at start will never register: fail fast.
  if (auto status = local_.failed_worker_status()) {
    incomplete("a local worker exited with status " + std::to_string(*status) +
               " before the run started");
    raise(RunEvent::kLocalWorkerExited, now);
    return;
  }
  if (static_cast<int>(registry_.count(WorkerState::kReady)) >= config_.expected_workers()) {
    for (const auto& [id, w] : registry_.workers()) {
      if (w.state == WorkerState::kReady) sharder_.add_worker(id);
    }
    facts_.start_wall = std::chrono::system_clock::now();
    raise(RunEvent::kWorkersReady, now);
    return;
  }
  apply(machine_->advance(now), now);  // workers.ready_timeout_s
}

void Run::dispatch(int64_t now) {
  const RunPhase phase = machine_->phase();
  if (!scheduler_ || (phase != RunPhase::kWarmup && phase != RunPhase::kMeasure)) return;
  const proto::Phase p =
      phase == RunPhase::kWarmup ? proto::Phase::kWarmup : proto::Phase::kMeasure;
  // With load.requests, one at a time: each commits its turns before the next is taken, and
  // none is taken once every request is committed (windows too: top_up_windows()).
  // A stage that ends on `requests` is taken one conversation at a time as well.
  const bool staged = p == proto::Phase::kMeasure && plan_;
  const bool budgeted = (p == proto::Phase::kMeasure && budget_.limited()) ||
                        (staged && plan_->running() && plan_->windows().back().config.requests);
  start_windows(now);
  while (!budgeted || budget_.remaining() > 0) {
    if (staged && !plan_->wants_more(stage_counters_)) break;  // settling, or the stage is full
    const auto due = scheduler_->due(now, kLookaheadNs, budgeted ? 1 : SIZE_MAX);
    for (const Dispatch& d : due) {
      if (machine_->phase() != phase) break;  // the dataset could not be read: stopping
      last_planned_turns_ = 0;
      assign(seq_base_ + d.seq, d.intended_ns, p);
      if (p == proto::Phase::kMeasure) facts_.intended_starts_ns.add(d.intended_ns);
      if (staged) {
        ++stage_counters_.dispatched;
        stage_counters_.planned_requests += last_planned_turns_;
        if (plan_->windows().back().config.requests) {
          count_stage_of_[seq_base_ + d.seq] = plan_->current();
        }
        stage_counters_.last_intended_ns =
            std::max(stage_counters_.last_intended_ns, d.intended_ns);
      }
    }
    if (!budgeted || due.empty()) break;
  }
  top_up_windows(p);
  in_flight_.flush(send_assign_);
}

bool Run::workers_finished() {
  const auto& all = registry_.workers();
  const bool all_gone = std::all_of(all.begin(), all.end(), [](const auto& kv) {
    return kv.second.state == WorkerState::kLost || kv.second.state == WorkerState::kDone;
  });
  const bool children_gone = local_.workers_exited();
  // Remote workers (controller only) are done when their Bye arrives: it follows their last
  // batch and carries the final legacy open-session count.
  return (in_flight_.empty() && (options_.controller_only ? all_gone : children_gone)) ||
         (all_gone && children_gone);
}

void Run::schedule(int64_t now) {
  dispatch(now);
  advance_profile(now);  // stage ends, settles, the next stage, the profile's end
  check_breaker(now);
  apply(machine_->advance(now), now);  // load.duration_s, load.grace_s, the bye wait
  const RunPhase p = machine_->phase();
  const bool idle = in_flight_.empty();
  if (p == RunPhase::kMeasure && idle && budget_.used()) {
    // Every request load.requests allowed was sent and has ended: nothing to drain.
    log_info("request count reached: ", measure_requests_, " measured request(s)");
    raise(RunEvent::kRequestBudgetSpent, now);
  }
  if (in_flight_.empty() && (!scheduler_ || scheduler_->exhausted())) {
    raise(RunEvent::kAllConversationsDone, now);  // warmup -> measure; measure, drain -> stopping
  }
  if (machine_->phase() == RunPhase::kStopping && workers_finished()) {
    raise(RunEvent::kWorkersFinished, now);
  }
}

void Run::poll(int64_t timeout_ns) {
  sockets_->poll(
      timeout_ns, [this](zmq::message_t& m) { on_result(m); },
      [this](const std::string& id, zmq::message_t& m) { on_control(id, m); });
}

void Run::loop() {
  machine_.emplace(phase_settings(config_), now());
  log_info("waiting for ", config_.expected_workers(), " worker(s) on ",
           sockets_->control_endpoint());
  while (machine_->phase() != RunPhase::kDone) {
    int64_t t = now();
    int64_t wake = std::min(t + kMaxWaitNs, next_tick_ns_);
    if (auto next = scheduler_ ? scheduler_->next_intended_ns() : std::nullopt) {
      wake = std::min(wake, *next - kLookaheadNs);
    }
    if (auto deadline = machine_->next_deadline_ns()) wake = std::min(wake, *deadline);
    if (auto stage_edge = plan_ ? plan_->next_deadline_ns() : std::nullopt) {
      wake = std::min(wake, *stage_edge);
    }
    poll(std::max<int64_t>(0, wake - t));
    t = now();
    on_signals(t);
    if (machine_->phase() == RunPhase::kStarting) on_starting(t);
    if (machine_->phase() == RunPhase::kDone) break;
    tick(t);
    schedule(t);
  }
}

void Run::tick(int64_t t) {
  if (t < next_tick_ns_) return;
  next_tick_ns_ = t + registry_.liveness().heartbeat_period_ns;
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    proto::Heartbeat hb;
    hb.sent_ns = t;
    send_to(id, hb);
  }
  // Each live worker's clock offset is measured again on its own deadline.
  for (const auto& id : registry_.due_clock_checks(t)) send_to(id, proto::Ping{++ping_seq_, now()});
  for (const auto& id : registry_.expire(t)) on_worker_lost(id, t);
  if (!options_.quiet) progress_.print(t, in_flight_.running());
  if (records_) records_->flush();
  if (aiperf_records_) aiperf_records_->flush();
  if (live_) update_live(t);
}

void Run::assign(uint64_t seq, int64_t intended_ns, proto::Phase phase, bool window) {
  proto::Conversation c;
  try {
    c = dataset_->conversation(seq % dataset_->size());
  } catch (const std::exception& e) {
    // A dataset file changed under the run (rewritten in place): what was measured is kept,
    // nothing more starts, and the run ends as incomplete with its outputs written.
    incomplete(std::string("cannot read the dataset during the run: ") + e.what());
    raise(RunEvent::kDatasetUnreadable, now());
    return;
  }
  if (seq >= dataset_->size()) {
    // The dataset cycles: a new conversation with its own identity and the same content (its
    // sub-agents too).
    set_family_ids(c, config_.seed, seq, seq / dataset_->size());
  }
  c.phase = phase;
  // target.urls: the family's frontend, by the root's correlation id (never the worker's).
  c.url_index = pick_url(c.correlation_id, config_.target.urls.size());
  const std::string& worker = sharder_.pick(c.correlation_id);
  if (worker.empty()) return;  // all workers lost; finish() reports it
  WorkerInfo* w = registry_.find(worker);
  c.start_ns = intended_ns + (w ? w->offset_ns() : 0);
  if (w) {
    ++w->conversations_assigned;
    if (w->state == WorkerState::kReady) w->state = WorkerState::kRunning;
  }
  in_flight_.apply_grant(c, budget_);
  last_planned_turns_ =
      c.turns.size() > c.first_turn ? static_cast<int64_t>(c.turns.size() - c.first_turn) : 0;
  in_flight_.queue(worker, std::move(c), intended_ns, send_assign_, window);
}

void Run::send_assign(const std::string& worker, proto::Assign& msg) {
  // Numbered per worker: a worker that cannot decode part of a batch names it by number.
  if (WorkerInfo* w = registry_.find(worker)) msg.batch = ++w->batches_sent;
  send_to(worker, msg);
}

int Run::execute() {
  run_id_ = config_.name + "-" + timestamp_text();
  started_ns_ = now();
  // Validated before anything starts: a bad dataset starts no mock and sends nothing.
  const auto tokens = local_token_plan(config_);  // dataset.tokenizer: read once
  dataset_ = open_dataset(config_, tokens);
  // Listen next: an endpoint that cannot be bound fails the run before anything is started.
  const bool own_workers_only =
      !options_.controller_only && config_.workers.listen == WorkersConfig{}.listen &&
      !config_.workers.results_listen && config_.expected_workers() <= config_.workers.local;
  sockets_.emplace(*ctx_, config_, own_workers_only);
  start_live();  // output.metrics_listen: bound before the mock, the workers and any traffic
  if (!config_.target.urls.empty()) {
    // Several frontends: every one is probed, and each unreachable one is named.
    url_ = config_.target.urls.front();
    const auto failures = unreachable_urls(config_.target.urls, 5000);
    for (const auto& failure : failures) log_error("target unreachable at start: ", failure);
    if (!failures.empty()) {
      log_error(failures.size(), " of ", config_.target.urls.size(),
                " target.urls unreachable (is every frontend up?). Nothing was sent.");
      return kExitIncomplete;
    }
  } else if (config_.target.url == "mock") {
    url_ = local_.start_mock(config_);
  } else {
    url_ = config_.target.url;
    auto parts = parse_http_url(url_);
    if (!parts) throw ConfigError("target.url: not an http(s) url: " + redact_url(url_));
    std::string error;
    if (!tcp_reachable(parts->host, parts->port, 5000, &error)) {
      log_error("target unreachable at start: ", error,
                " (is the server up at target.url?). Nothing was sent.");
      return kExitIncomplete;
    }
  }
  // session_routing: auto learns its mode from the target now, before any worker exists.
  const std::string routing_error = resolve_session_routing(
      config_, config_.target.urls.empty() ? std::vector<std::string>{url_} : config_.target.urls,
      facts_.sessions);
  if (!routing_error.empty()) {
    log_error(routing_error);
    return kExitIncomplete;
  }
  // dataset.tokenizer: server, count_chat_template: learned from the target before any traffic
  // (a server without what is needed fails the run here: ServerTokensError, exit 2).
  if (needs_server_tokens(config_)) {
    dataset_ = open_dataset(config_, learn_token_plan(config_, url_, tokens));
  }
  out_dir_ = make_output_dir(config_, options_.output_dir);
  metrics_.emplace(config_);
  if (config_.output.records) records_.emplace(out_dir_ / "records.jsonl");
  if (config_.output.aiperf_export) {
    // Its epoch times: the run's clock, mapped to the wall clock once, here.
    aiperf_records_.emplace(out_dir_ / kAiperfRecordsFile,
                            wall_minus_steady_ns(std::chrono::system_clock::now(), now()));
  }
  if (!start_telemetry()) return kExitIncomplete;
  if (!options_.controller_only) local_.start_workers(config_, sockets_->control_endpoint());
  facts_.start_wall = std::chrono::system_clock::now();
  loop();
  return finish();
}

int run_benchmark(const RunOptions& options, const RunSeams& seams) {
  Run run(options, seams);
  return run.execute();
}

void request_stop_from_signal() { g_signals.fetch_add(1); }
bool stop_requested() { return g_signals.load() > 0; }

}  // namespace convoy::controller
