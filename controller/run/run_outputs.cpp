// What the run writes and serves beside its loop: server telemetry (started before any worker,
// stopped with one last scrape), the live metrics endpoint, and finish(): stopping what the run
// started, then summary.json, the report and the exit code.
#include <algorithm>

#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/live/listen_exposure.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/run_impl.hpp"

namespace convoy::controller {

// Server telemetry starts once the target is known (the mock's address included), before any
// worker. An endpoint that fails its first scrape is a warning and a counted error; one marked
// `required` stops the run before any traffic.
bool Run::start_telemetry() {
  auto endpoints = telemetry::run_endpoints(config_, url_);
  if (endpoints.empty()) return true;
  telemetry_.emplace(config_.telemetry, std::move(endpoints), clock_,
                     out_dir_ / "server_metrics.jsonl");
  bool fatal = false;
  for (const auto& failure : telemetry_->wait_first_round(&stop_requested)) {
    if (!failure.required) continue;  // the scraper has warned
    log_error("telemetry endpoint unreachable at start: ", failure.what,
              " (required: true). Nothing was sent.");
    fatal = true;
  }
  if (!fatal) return true;
  telemetry_.reset();
  local_.stop_mock(3000);
  return false;
}

void Run::start_live() {
  if (!config_.output.metrics_listen) return;
  const std::string& listen = *config_.output.metrics_listen;
  live::warn_unless_loopback("output.metrics_listen", listen, listen.substr(0, listen.rfind(':')),
                             ": any host that reaches it can read the run's live metrics");
  live_.emplace(listen, run_id_);  // throws live::ListenError: exit 3, nothing started
  log_info("serving live metrics on ", live_->url());
}

void Run::update_live(int64_t now) {
  std::array<size_t, static_cast<size_t>(WorkerState::kDone) + 1> by_state{};
  for (const auto& [id, w] : registry_.workers()) {
    ++by_state[static_cast<size_t>(w.state)];
    const bool gone = w.state == WorkerState::kLost || w.state == WorkerState::kDone;
    const int64_t requests = gone ? 0 : w.last_heartbeat.in_flight_requests;
    live_->set_requests_in_flight(live_->worker(id), requests);
  }
  for (size_t i = 0; i < by_state.size(); ++i) {
    live_->set_workers(to_string(static_cast<WorkerState>(i)), by_state[i]);
  }
  live_->set_conversations_in_flight(in_flight_.running());
  if (!plan_ || facts_.stages.empty() || facts_.stages.back().end_ns != 0) return;
  // A ramp's level moves during its stage.
  const StageFacts& stage = facts_.stages.back();
  const StageConfig& c = stage.config;
  const LoadLevel& level = c.mode == LoadMode::kRate ? c.rate : c.concurrency;
  if (!level.ramp || !c.duration_s || *c.duration_s <= 0) return;
  const double fraction = static_cast<double>(now - stage.start_ns) / (*c.duration_s * 1e9);
  live_->set_stage_target(level.at(std::clamp(fraction, 0.0, 1.0)));
}

int Run::finish() {
  // Stop everything we started, in order: workers first (they may still flush), then the mock.
  local_.stop_workers(3000);
  poll(0);  // late batches that arrived while workers exited
  if (live_) update_live(now());
  if (telemetry_) {
    // One last scrape (within telemetry.timeout_s) while the mock still runs; none after Ctrl-C,
    // which must end the run promptly whatever an endpoint does.
    telemetry_->stop(!interrupted_);
    facts_.server = telemetry_->results();
  }
  local_.stop_mock(3000);
  facts_.end_wall = std::chrono::system_clock::now();
  if (records_) records_->close();
  if (aiperf_records_) aiperf_records_->close();

  bool sent_traffic = metrics_ && (metrics_->request_count() + metrics_->error_request_count() +
                                       metrics_->warmup_request_count() >
                                   0);
  if (!sent_traffic && incomplete_) {
    log_error("the run could not start: ", incomplete_reason_);
    return kExitIncomplete;
  }
  for (uint64_t index : in_flight_.indexes()) {
    facts_.unfinished_conversations.push_back(correlation_id(config_.seed, index));
  }
  // Every stage's numbers with the records that came in after it settled; a stage cut short
  // (Ctrl-C, the breaker) ends where the measure ended.
  const int64_t end_ns = now();
  for (size_t i = 0; i < facts_.stages.size(); ++i) {
    StageFacts& stage = facts_.stages[i];
    if (stage.end_ns == 0) stage.end_ns = std::max(stage.start_ns, end_ns);
    if (stage.settle_end_ns == 0) stage.settle_end_ns = stage.end_ns;
    stage.metrics = stage_metrics_[i].snapshot();
  }
  std::vector<OutputError> output_errors;
  if (records_) {
    if (auto e = records_->failure()) output_errors.push_back(std::move(*e));
  }
  if (aiperf_records_) {
    if (auto e = aiperf_records_->failure()) output_errors.push_back(std::move(*e));
  }
  if (telemetry_) {
    if (auto e = telemetry_->output_failure()) output_errors.push_back(std::move(*e));
  }
  // Every output shows URLs with their passwords redacted.
  const Config shown = with_urls_redacted(config_);
  const std::string shown_url = redact_url(url_);
  ReportInputs in{
      shown,  shown_url,    out_dir_,    worker_summaries(registry_), metrics_->snapshot(),
      facts_, interrupted_, incomplete_, incomplete_reason_,          std::move(output_errors)};
  int code = write_run_report(in);
  if (const std::string line = facts_.sessions.console_line(); !line.empty()) log_info(line);
  // An output that could not be written outranks the rest: what the user would act on is
  // not all there.
  if (code == kExitIncomplete) return code;
  if (interrupted_) return kExitInterrupted;
  if (incomplete_) return kExitIncomplete;
  return code;
}

}  // namespace convoy::controller
