// run_benchmark(): the Run is the loop. It owns the worker plane (controller/run/worker_plane),
// the phase machine (run_phase_machine), the assigner (assigner: what goes where and when), the
// load profile's driver (profile_driver) and the record pipeline with its outputs
// (record_pipeline, record_outputs), and wires them: each worker message goes to the part it
// concerns, each phase change the machine answers is carried out here, and finish() writes the
// outputs on every path that sent traffic (success, failure, Ctrl-C).
#include "controller/run/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/clock.hpp"
#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/dataset/server_tokens.hpp"
#include "controller/dataset/token_plan.hpp"
#include "controller/live/listen_exposure.hpp"
#include "controller/live/live_metrics.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/assigner.hpp"
#include "controller/run/output_dir.hpp"
#include "controller/run/preflight.hpp"
#include "controller/run/profile_driver.hpp"
#include "controller/run/progress.hpp"
#include "controller/run/record_outputs.hpp"
#include "controller/run/record_pipeline.hpp"
#include "controller/run/run_phase_machine.hpp"
#include "controller/run/session_detect.hpp"
#include "controller/run/target_probe.hpp"
#include "controller/run/trials.hpp"
#include "controller/run/worker_plane.hpp"
#include "controller/telemetry/telemetry.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kMaxWaitNs = 50 * kNsPerMs;  // the loop wakes at least this often

// The only global mutable state: signals received.
std::atomic<int> g_signals{0};

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

bool running(RunPhase p) { return p == RunPhase::kWarmup || p == RunPhase::kMeasure; }

}  // namespace

class Run {
 public:
  Run(const RunOptions& options, const RunSeams& seams);
  int execute();

 private:
  // Who this run is: its clock, its target, its name and its output folder.
  struct Identity {
    std::function<int64_t()> clock;  // steady nanoseconds
    std::string url;                 // the target ("mock" resolved to the mock's address)
    std::string run_id;
    std::filesystem::path out_dir;
    int64_t started_ns = 0;  // the clock as run_benchmark began (record_check's bounds)
  };
  // How the run is ending: signals seen, and why it is incomplete (the first reason given).
  struct Ending {
    int handled_signals = 0;
    bool interrupted = false;
    bool incomplete = false;
    std::string reason;
    int64_t next_tick_ns = 0;
  };

  int64_t now() const { return id_.clock(); }
  void loop();
  // The phase machine: every phase change goes through raise() or the machine's advance(), and
  // apply() carries out what the machine answers.
  void raise(RunEvent event, int64_t now);
  void apply(const RunStep& step, int64_t now);
  void on_signals(int64_t now);
  void on_starting(int64_t now);
  void schedule(int64_t now);
  void dispatch(int64_t now);
  void start_warmup(int64_t now);
  void start_measure(int64_t now);
  void check_breaker(int64_t now);
  bool workers_finished();
  void tick(int64_t now);
  void incomplete(const std::string& reason);

  // Worker messages.
  void on_control(const std::string& worker_id, zmq::message_t& payload);
  void on_result(zmq::message_t& payload);
  void on_records(const std::string& worker_id, std::vector<proto::Record>& records);
  void on_end(const std::string& worker_id, const proto::ConversationEnd& end);
  void on_failed(const std::string& worker_id, uint64_t index, const std::string& error);
  void on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u);
  void on_worker_lost(const std::string& worker_id, int64_t now);
  void all_workers_lost(int64_t now);

  // Outputs.
  bool start_telemetry();  // false: a required endpoint is down (exit 3, nothing sent)
  // output.metrics_listen: bound before anything starts; a failure throws live::ListenError.
  void start_live();
  void update_live(int64_t now);
  void build_pipeline();
  int finish();

  const RunOptions& options_;
  const bool check_target_;  // RunSeams::check_target
  Config config_;
  Identity id_;
  RunFacts facts_;
  WorkerPlane plane_;
  std::optional<Assigner> assigner_;  // once the dataset is open
  ProfileDriver profile_;
  std::optional<MetricsAggregator> metrics_;
  // Server telemetry (controller/telemetry/): scraped on its own thread from the moment the
  // target is known until finish(); none when no endpoint is configured and no mock runs.
  std::optional<telemetry::Telemetry> telemetry_;
  // Live metrics on output.metrics_listen, served from civetweb's threads until the Run ends.
  std::optional<live::LiveMetrics> live_;
  Progress progress_;
  RecordPipeline pipeline_{facts_};
  std::optional<RunPhaseMachine> machine_;
  Ending ending_;
};

Run::Run(const RunOptions& options, const RunSeams& seams)
    : options_(options),
      check_target_(seams.check_target),
      config_(options.config),
      id_{seams.clock ? seams.clock : steady_now_ns, {}, {}, {}, 0},
      plane_(seams.context, seams.liveness, id_.clock, config_, facts_),
      profile_(config_, facts_, options.quiet) {}

void Run::incomplete(const std::string& reason) {
  if (ending_.incomplete) return;  // the first reason is the one reported
  ending_.incomplete = true;
  ending_.reason = reason;
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
        assigner_->stop_starting();
        plane_.broadcast(proto::Stop{false});
        break;
      case RunActionKind::kCancelAll:
        if (!assigner_->idle()) {
          log_warn(a.why, ": cancelling ", assigner_->in_flight(), " conversation(s)");
        }
        assigner_->stop_starting();
        plane_.broadcast(proto::Stop{true});
        break;
      case RunActionKind::kReportNotReady:
        incomplete("only " + std::to_string(plane_.registry().count(WorkerState::kReady)) + " of " +
                   std::to_string(config_.expected_workers()) + " worker(s) ready after " +
                   std::to_string(config_.workers.ready_timeout_s) +
                   " s (workers.ready_timeout_s)");
        break;
      case RunActionKind::kFinish:
        log_debug("run done: ", a.why);
        break;
      case RunActionKind::kEndWarmup:
        log_info(a.why, ": no new warmup conversations; the measure starts when they end");
        assigner_->stop_starting();
        break;
    }
  }
}

void Run::start_warmup(int64_t now) {
  assigner_->start_warmup(now);
  if (live_) {
    const LoadConfig warm = warmup_level(config_.load);  // load.warmup's own level
    const bool rate = warm.mode == LoadMode::kRate;
    live_->set_stage("warmup", rate ? "rate" : "concurrency",
                     rate ? warm.rate : static_cast<double>(warm.concurrency));
  }
  if (config_.load.warmup_s) {
    log_info("warmup: ", *config_.load.warmup_s, " s");
  } else {
    log_info("warmup: ", config_.load.warmup_sessions, " conversation(s)");
  }
}

void Run::start_measure(int64_t now) {
  metrics_->set_origin_ns(now);
  const LoadConfig& load = config_.load;
  const std::optional<uint64_t> total = assigner_->start_measure(now);
  facts_.measure_start_ns = now;
  if (telemetry_) telemetry_->start_window(now);  // server_metrics cover the measured window
  progress_.begin(now, total, load);
  const size_t workers = plane_.registry().live_count();
  if (load.profile != ProfileKind::kSingle) {
    log_info("measuring: ", to_string(load.profile), " profile, ", workers, " worker(s)");
  } else {
    log_info("measuring: ", to_string(load.mode), " mode, ", workers, " worker(s)");
    if (live_) live_->set_stage("measure", to_string(load.mode), measure_target(load));
  }
  profile_.begin_measure(now,
                         ProfileHooks{assigner_->scheduler(), telemetry_ ? &*telemetry_ : nullptr,
                                      live_ ? &*live_ : nullptr, &progress_});
  dispatch(now);  // the measured conversations start now, not at the next wake-up
}

void Run::check_breaker(int64_t now) {
  if (!running(machine_->phase())) return;
  auto why = profile_.check_breaker(now);
  if (!why) return;
  log_error("circuit breaker tripped: ", *why, "; stopping (in-flight work is cancelled after ",
            config_.load.grace_s, " s)");
  raise(RunEvent::kBreakerTripped, now);
}

void Run::on_signals(int64_t now) {
  const int signals = g_signals.load();
  if (signals <= ending_.handled_signals) return;
  ending_.handled_signals = signals;
  ending_.interrupted = true;
  if (machine_->phase() == RunPhase::kStarting) log_warn("interrupted before the run started");
  raise(signals == 1 ? RunEvent::kStopRequested : RunEvent::kCancelRequested, now);
}

void Run::on_starting(int64_t now) {
  // A local worker that died at start will never register: fail fast.
  if (auto status = plane_.local().failed_worker_status()) {
    incomplete("a local worker exited with status " + std::to_string(*status) +
               " before the run started");
    raise(RunEvent::kLocalWorkerExited, now);
    return;
  }
  const WorkerRegistry& registry = plane_.registry();
  if (static_cast<int>(registry.count(WorkerState::kReady)) >= config_.expected_workers()) {
    for (const auto& [id, w] : registry.workers()) {
      if (w.state == WorkerState::kReady) assigner_->sharder().add_worker(id);
    }
    facts_.start_wall = std::chrono::system_clock::now();
    raise(RunEvent::kWorkersReady, now);
    return;
  }
  apply(machine_->advance(now), now);  // workers.ready_timeout_s
}

void Run::dispatch(int64_t now) {
  const RunPhase phase = machine_->phase();
  if (!running(phase)) return;
  assigner_->dispatch(
      now, phase == RunPhase::kWarmup ? proto::Phase::kWarmup : proto::Phase::kMeasure, profile_);
}

bool Run::workers_finished() {
  const bool all_gone = plane_.all_gone();
  const bool children_gone = plane_.local().workers_exited();
  // Remote workers (controller only) are done when their Bye arrives: it follows their last
  // batch and carries the final legacy open-session count.
  return (assigner_->idle() && (options_.controller_only ? all_gone : children_gone)) ||
         (all_gone && children_gone);
}

void Run::schedule(int64_t now) {
  dispatch(now);
  if (machine_->phase() == RunPhase::kMeasure) {
    // Stage ends, settles, the next stage, the profile's end.
    const auto step = profile_.advance(now, assigner_->in_flight());
    if (step.done) raise(RunEvent::kProfileDone, now);
    if (step.changed) dispatch(now);  // a new stage's first conversations start at its start
  }
  check_breaker(now);
  apply(machine_->advance(now), now);  // load.duration_s, load.grace_s, the bye wait
  if (machine_->phase() == RunPhase::kMeasure && assigner_->idle() && assigner_->budget_spent()) {
    // Every request load.requests allowed was sent and has ended: nothing to drain.
    log_info("request count reached: ", pipeline_.measured_requests(), " measured request(s)");
    raise(RunEvent::kRequestBudgetSpent, now);
  }
  if (assigner_->idle() && assigner_->exhausted()) {
    raise(RunEvent::kAllConversationsDone, now);  // warmup -> measure; measure, drain -> stopping
  }
  if (machine_->phase() == RunPhase::kStopping && workers_finished()) {
    raise(RunEvent::kWorkersFinished, now);
  }
}

void Run::loop() {
  machine_.emplace(phase_settings(config_), now());
  if (!plane_.own_workers_only()) {
    log_info("waiting for ", config_.expected_workers(), " worker(s) on ",
             plane_.sockets().control_endpoint());
  }
  while (machine_->phase() != RunPhase::kDone) {
    int64_t t = now();
    int64_t wake = std::min(t + kMaxWaitNs, ending_.next_tick_ns);
    if (auto next = assigner_->next_due_ns()) wake = std::min(wake, *next);
    if (auto deadline = machine_->next_deadline_ns()) wake = std::min(wake, *deadline);
    if (auto edge = profile_.next_deadline_ns()) wake = std::min(wake, *edge);
    plane_.poll(
        std::max<int64_t>(0, wake - t), [this](zmq::message_t& m) { on_result(m); },
        [this](const std::string& id, zmq::message_t& m) { on_control(id, m); });
    t = now();
    on_signals(t);
    if (machine_->phase() == RunPhase::kStarting) on_starting(t);
    if (machine_->phase() == RunPhase::kDone) break;
    tick(t);
    schedule(t);
    if (!options_.quiet) progress_.print(t, assigner_->running(), pipeline_.measured_requests());
  }
}

void Run::tick(int64_t t) {
  if (t < ending_.next_tick_ns) return;
  ending_.next_tick_ns = t + plane_.registry().liveness().heartbeat_period_ns;
  for (const auto& id : plane_.tick(t)) on_worker_lost(id, t);
  pipeline_.flush();
  if (live_) update_live(t);
}

void Run::on_control(const std::string& worker_id, zmq::message_t& payload) {
  const bool ending = machine_->phase() >= RunPhase::kDrain;
  const auto joined = plane_.on_control(worker_id, payload, ending, now());
  // A late joiner takes new conversations.
  if (joined && running(machine_->phase())) assigner_->sharder().add_worker(*joined);
}

void Run::on_result(zmq::message_t& payload) {
  std::string error;
  auto d = proto::decode_in_place(payload.data(), payload.size(), &error);  // payload outlives d
  if (!d) {
    log_warn("dropped a malformed result batch: ", log_escape(error));
    return;
  }
  if (d->type == proto::MsgType::kBye) {
    // The worker's results socket carries its bye after every batch: all its records are in.
    if (auto bye = d->as<proto::Bye>()) {
      WorkerInfo* w = plane_.authentic(bye->worker_id, bye->token, "bye");
      if (!w) return;
      // A worker declared lost stays lost: its conversations were already counted lost.
      if (w->state != WorkerState::kLost) w->state = WorkerState::kDone;
      w->last_heartbeat.legacy_open_sessions = bye->legacy_open_sessions;
      assigner_->sharder().remove_worker(bye->worker_id);
    }
    return;
  }
  if (d->type != proto::MsgType::kResults) {
    log_warn("dropped an unexpected ", proto::to_string(d->type), " on the results socket");
    return;
  }
  auto results = d->as<proto::Results>();
  if (!results) {
    log_warn("dropped a result batch of the wrong shape");
    return;
  }
  if (!plane_.authentic(results->worker_id, results->token, "results")) return;
  const std::string& worker = results->worker_id;
  plane_.registry().on_seen(worker, now());
  on_records(worker, results->records);
  for (const auto& e : results->ended) on_end(worker, e);
  for (const auto& f : results->failed) on_failed(worker, f.conversation_index, f.error);
  for (const auto& u : results->undecodable) on_undecodable(worker, u);
  // A worker gives its window back once it stops starting; while the run still starts
  // conversations, it is leaving (a signal; it lost the controller).
  assigner_->on_returned(worker, results->returned, running(machine_->phase()), now());
}

void Run::on_records(const std::string& worker_id, std::vector<proto::Record>& records) {
  WorkerInfo* w = plane_.registry().find(worker_id);
  const RecordBounds bounds{id_.started_ns, now(), config_.target.urls.size()};
  const size_t accepted = pipeline_.on_batch(worker_id, w ? std::string_view(w->host) : worker_id,
                                             w ? w->offset_ns() : 0, records, bounds);
  if (w) w->records += static_cast<int64_t>(accepted);
}

void Run::on_end(const std::string& worker_id, const proto::ConversationEnd& end) {
  if (!assigner_->on_end(worker_id, end, now())) return;  // not the sender's
  profile_.on_conversation_end(end.conversation_index);
  facts_.sessions.add_end(end);
  progress_.on_conversation_end(end.reason);
  if (live_) live_->on_conversation_finished(end.reason);
}

void Run::on_failed(const std::string& worker_id, uint64_t index, const std::string& error) {
  if (!assigner_->on_failed(worker_id, index, now())) return;
  const std::string id = correlation_id(config_.seed, index);  // = the conversation's
  facts_.failed_conversations.push_back(id);
  if (facts_.failed_conversations.size() <= 20) {
    log_error("conversation ", id, " failed on worker ", log_escape(worker_id),
              " without being sent: ", log_escape(error, 512));
  }
  progress_.on_conversation_end(proto::EndReason::kAborted);
  if (live_) live_->on_conversation_finished("failed");
}

void Run::on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u) {
  const std::vector<uint64_t> failed = assigner_->undecodable(worker_id, u);
  log_error("worker ", log_escape(worker_id), " could not read ", failed.size(),
            " conversation(s) of assignment batch ", u.batch, ": ", log_escape(u.error, 512));
  for (uint64_t index : failed) on_failed(worker_id, index, u.error);
}

void Run::on_worker_lost(const std::string& worker_id, int64_t t) {
  const auto lost = assigner_->on_worker_lost(worker_id, t, machine_->phase() < RunPhase::kDrain);
  for (const auto* list : {&lost.in_slot, &lost.in_window}) {
    for (uint64_t index : *list) {
      facts_.lost_conversations.push_back(correlation_id(config_.seed, index));
      if (live_) live_->on_conversation_finished("lost");
    }
  }
  facts_.lost_workers.push_back(worker_id);
  const double silent_s = static_cast<double>(plane_.registry().liveness().lost_after_ns()) / 1e9;
  log_error("worker ", worker_id, " lost (no heartbeat for ", silent_s,
            " s): ", lost.in_slot.size(), " conversation(s) in flight lost, ",
            lost.in_window.size(), " waiting in its window lost, ", lost.rehomed, " re-homed");
  const RunPhase p = machine_->phase();
  if (assigner_->sharder().empty() && p != RunPhase::kStarting && p != RunPhase::kDone) {
    ending_.incomplete = true;
    ending_.reason = "all workers lost";
    log_error("all workers lost: ending the run with partial results");
    raise(RunEvent::kAllWorkersLost, t);
  }
}

// Server telemetry starts once the target is known (the mock's address included), before any
// worker. An endpoint that fails its first scrape is a warning and a counted error; one marked
// `required` stops the run before any traffic.
bool Run::start_telemetry() {
  auto endpoints = telemetry::run_endpoints(config_, id_.url);
  if (endpoints.empty()) return true;
  telemetry_.emplace(config_.telemetry, std::move(endpoints), id_.clock,
                     id_.out_dir / "server_metrics.jsonl");
  bool fatal = false;
  for (const auto& failure : telemetry_->wait_first_round(&stop_requested)) {
    if (!failure.required) continue;  // the scraper has warned
    log_error("telemetry endpoint unreachable at start: ", failure.what,
              " (required: true). Nothing was sent.");
    fatal = true;
  }
  if (!fatal) return true;
  telemetry_.reset();
  plane_.local().stop_mock(3000);
  return false;
}

void Run::start_live() {
  if (!config_.output.metrics_listen) return;
  const std::string& listen = *config_.output.metrics_listen;
  live::warn_unless_loopback("output.metrics_listen", listen, listen.substr(0, listen.rfind(':')),
                             ": any host that reaches it can read the run's live metrics");
  live_.emplace(listen, id_.run_id);  // throws live::ListenError: exit 3, nothing started
  log_info("serving live metrics on ", live_->url());
}

void Run::update_live(int64_t now) {
  std::array<size_t, static_cast<size_t>(WorkerState::kDone) + 1> by_state{};
  for (const auto& [id, w] : plane_.registry().workers()) {
    ++by_state[static_cast<size_t>(w.state)];
    const bool gone = w.state == WorkerState::kLost || w.state == WorkerState::kDone;
    const int64_t requests = gone ? 0 : w.last_heartbeat.in_flight_requests;
    live_->set_requests_in_flight(live_->worker(id), requests);
  }
  for (size_t i = 0; i < by_state.size(); ++i) {
    live_->set_workers(to_string(static_cast<WorkerState>(i)), by_state[i]);
  }
  live_->set_conversations_in_flight(assigner_->running());
  profile_.update_live(now, *live_);
}

// Every record goes through the pipeline to these outputs, in this order. A new output is one
// RecordOutput class and one line here.
void Run::build_pipeline() {
  pipeline_.set_router([this](const proto::Record& r) { return profile_.route(r); });
  pipeline_.add(*assigner_);  // which conversations started
  pipeline_.add(std::make_unique<RunMetricsOutput>(*metrics_));
  pipeline_.add(profile_);  // each stage's metrics, the breaker
  pipeline_.add(std::make_unique<FactsOutput>(facts_));
  if (config_.output.records) {
    pipeline_.add(std::make_unique<RecordsFileOutput>(id_.out_dir / "records.jsonl", config_.target,
                                                      config_.seed));
  }
  if (config_.output.aiperf_export) {
    // Its epoch times: the run's clock, mapped to the wall clock once, here.
    pipeline_.add(std::make_unique<AiperfRecordsOutput>(
        id_.out_dir, wall_minus_steady_ns(std::chrono::system_clock::now(), now()),
        assigner_->dataset(), config_.target));
  }
  if (live_) pipeline_.add(std::make_unique<LiveOutput>(*live_));
  pipeline_.add(std::make_unique<ProgressOutput>(progress_));
}

int Run::finish() {
  // The view's last frame stays; what follows prints below it.
  progress_.finish(now(), assigner_->running(), pipeline_.measured_requests());
  // Stop everything we started, in order: workers first (they may still flush), then the mock.
  plane_.local().stop_workers(3000);
  plane_.poll(  // late batches that arrived while workers exited
      0, [this](zmq::message_t& m) { on_result(m); },
      [this](const std::string& id, zmq::message_t& m) { on_control(id, m); });
  if (live_) update_live(now());
  if (telemetry_) {
    // One last scrape (within telemetry.timeout_s) while the mock still runs; none after Ctrl-C,
    // which must end the run promptly whatever an endpoint does.
    telemetry_->stop(!ending_.interrupted);
    facts_.server = telemetry_->results();
  }
  plane_.local().stop_mock(3000);
  facts_.end_wall = std::chrono::system_clock::now();
  pipeline_.close();

  const bool sent_traffic =
      metrics_ && (metrics_->request_count() + metrics_->error_request_count() +
                       metrics_->warmup_request_count() >
                   0);
  if (!sent_traffic && ending_.incomplete) {
    log_error("the run could not start: ", ending_.reason);
    return kExitIncomplete;
  }
  for (uint64_t index : assigner_->unfinished()) {
    facts_.unfinished_conversations.push_back(correlation_id(config_.seed, index));
  }
  profile_.finish(now());
  facts_.total_requests = pipeline_.measured_requests();
  std::vector<OutputError> output_errors = pipeline_.failures();
  if (telemetry_) {
    if (auto e = telemetry_->output_failure()) output_errors.push_back(std::move(*e));
  }
  // Every output shows URLs with their passwords redacted.
  const Config shown = with_urls_redacted(config_);
  const std::string shown_url = redact_url(id_.url);
  ReportInputs in{shown,
                  shown_url,
                  id_.out_dir,
                  worker_summaries(plane_.registry()),
                  metrics_->snapshot(),
                  facts_,
                  ending_.interrupted,
                  ending_.incomplete,
                  ending_.reason,
                  std::move(output_errors)};
  int code = write_run_report(in);
  if (const std::string line = facts_.sessions.console_line(); !line.empty()) log_info(line);
  // output.metrics_linger_s: the last scrape sees the final counters (none after Ctrl-C).
  if (live_ && !ending_.interrupted) live_->linger(config_.output.metrics_linger_s, stop_requested);
  // An output that could not be written outranks the rest: what the user would act on is
  // not all there.
  if (code == kExitIncomplete) return code;
  if (ending_.interrupted) return kExitInterrupted;
  if (ending_.incomplete) return kExitIncomplete;
  return code;
}

int Run::execute() {
  id_.run_id = config_.name + "-" + timestamp_text();
  id_.started_ns = now();
  // Validated before anything starts: a bad dataset starts no mock and sends nothing.
  const auto tokens = local_token_plan(config_);  // dataset.tokenizer: read once
  std::unique_ptr<Dataset> dataset = open_dataset(config_, tokens);
  // Listen next: an endpoint that cannot be bound fails the run before anything is started.
  const bool own_workers_only =
      !options_.controller_only && config_.workers.listen == WorkersConfig{}.listen &&
      !config_.workers.results_listen && config_.expected_workers() <= config_.workers.local;
  plane_.open(own_workers_only);
  start_live();  // output.metrics_listen: bound before the mock, the workers and any traffic
  if (config_.target.urls.empty() && config_.target.url == "mock") {
    id_.url = plane_.local().start_mock(config_);
  } else {
    id_.url = config_.target.urls.empty() ? config_.target.url : config_.target.urls.front();
    if (!targets_reachable_at_start(config_)) return kExitIncomplete;
    // Before the session probe and any worker (a refused key would fail every request).
    if (check_target_ && !target_passes_preflight(config_)) return kExitBadInput;
  }
  // session_routing: auto learns its mode from the target now, before any worker exists.
  const std::string routing_error = resolve_session_routing(
      config_,
      config_.target.urls.empty() ? std::vector<std::string>{id_.url} : config_.target.urls,
      facts_.sessions);
  if (!routing_error.empty()) {
    log_error(routing_error);
    return kExitIncomplete;
  }
  // dataset.tokenizer: server, count_chat_template: learned from the target before any traffic
  // (a server without what is needed fails the run here: ServerTokensError, exit 2).
  if (needs_server_tokens(config_)) {
    dataset = open_dataset(config_, learn_token_plan(config_, id_.url, tokens));
  }
  assigner_.emplace(config_, std::move(dataset), plane_, facts_, [this](const std::string& what) {
    // A dataset file changed under the run (rewritten in place): what was measured is kept,
    // nothing more starts, and the run ends as incomplete with its outputs written.
    incomplete(what);
    raise(RunEvent::kDatasetUnreadable, now());
  });
  plane_.set_welcome(id_.run_id, worker_settings(config_, id_.url));
  id_.out_dir = make_output_dir(config_, options_.output_dir);
  metrics_.emplace(config_);
  build_pipeline();
  if (!start_telemetry()) return kExitIncomplete;
  if (!options_.controller_only) {
    plane_.local().start_workers(config_, plane_.sockets().control_endpoint());
  }
  facts_.start_wall = std::chrono::system_clock::now();
  loop();
  return finish();
}

int run_single(const RunOptions& options, const RunSeams& seams) {
  Run run(options, seams);
  return run.execute();
}

int run_benchmark(const RunOptions& options, const RunSeams& seams) {
  if (options.quiet && log_level() == LogLevel::kInfo) set_log_level(LogLevel::kWarn);
  if (options.config.load.trials <= 1) return run_single(options, seams);
  return run_trials(options,
                    [&seams](const RunOptions& trial) { return run_single(trial, seams); });
}

void request_stop_from_signal() { g_signals.fetch_add(1); }
bool stop_requested() { return g_signals.load() > 0; }

}  // namespace convoy::controller
