// What the run loop hands the report: the facts it gathered beside the metrics (start times,
// lost and unfinished conversations, forged messages), a summary of each worker, and the inputs
// of the verdict and of every output file.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/server_metrics_view.hpp"
#include "controller/report/session_ledger.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// The earliest `capacity` event times, kept exactly, with the count and extent of all of them.
// The storage is allocated (and touched) once, up front, so a long run's memory stays flat.
//
// Why the earliest K and not the first K to arrive or a random reservoir: the KS check in
// judge_run tests the gaps between *consecutive* starts. Records arrive in completion order,
// not start order, so the first K to arrive can miss starts inside their own span, and a
// reservoir thins the process (stretching every gap). The K earliest starts are one contiguous
// stretch of the schedule, so their gaps are genuine inter-arrival gaps.
class TimeSample {
 public:
  static constexpr size_t kMaxSamples = 200'000;

  explicit TimeSample(size_t capacity = kMaxSamples);
  void add(int64_t t_ns);
  std::vector<int64_t> samples() const;  // the kept times, ascending
  size_t size() const { return size_; }
  size_t capacity() const { return heap_.size(); }
  const int64_t* storage() const { return heap_.data(); }  // stable: never reallocated

  int64_t count = 0;  // every time added
  int64_t first_ns = 0;
  int64_t last_ns = 0;

 private:
  std::vector<int64_t> heap_;  // [0, size_) is a max-heap: the latest kept time on top
  size_t size_ = 0;
};

// One stage of a load profile as it ran. Times are on the controller's clock; a
// request belongs to the stage in which it was intended to be sent, and requests intended in a
// stage's settle window are in no stage (and in no metric).
struct StageFacts {
  StageConfig config;    // as resolved (name, index, mode, level, end, settle)
  int64_t start_ns = 0;  // measured window [start_ns, end_ns)
  int64_t end_ns = 0;
  int64_t settle_end_ns = 0;  // end_ns + settle actually spent (== end_ns without settle)
  double reached_value = 0;   // the level at the stage's end (a ramp's last level)
  MetricsSnapshot metrics;    // this stage's requests only
  // Capacity search steps: whether the step met load.search.slo, and why not.
  std::optional<bool> slo_met;
  std::vector<std::string> slo_failures;  // e.g. "time_to_first_token p99 812 ms > 500 ms"
};

// load.search as it ran: every step is also a StageFacts (stage_index into RunFacts::stages).
struct SearchStep {
  int stage_index = 0;
  double value = 0;
  bool met = false;
  bool within_noise = false;  // its result lay within the noise of the SLO (kSloNoisePct)
  int run = 1;                // 1, or 2 and more for a repeat of a noisy step at this value
};
// A decided value of the search: its runs and how many met the SLO (the answer's confidence).
struct SearchVerdict {
  double value = 0;
  int runs = 0;      // >= 1
  int met_runs = 0;  // <= runs
  bool met = false;  // the majority's verdict (a tie misses)
};
struct SearchFacts {
  SearchConfig config;
  std::vector<SearchStep> steps;
  std::optional<double> max_meeting_slo;  // nullopt: even `low` missed the SLO
  std::optional<double> min_failing;      // nullopt: even `high` met it, or never judged
  // The verdicts of the two bounds (nullopt with their bound).
  std::optional<SearchVerdict> max_meeting_verdict{};
  std::optional<SearchVerdict> min_failing_verdict{};
  // The search reached its answer. False: interrupted (Ctrl-C, load.abort_on, workers lost)
  // before; a bound it never judged is then no finding.
  bool complete = false;
};

struct RunFacts {
  std::chrono::system_clock::time_point start_wall;
  std::chrono::system_clock::time_point end_wall;
  int64_t measure_start_ns = 0;
  TimeSample intended_starts_ns{0};  // measured conversations, as scheduled (count and extent)
  TimeSample actual_starts_ns;       // first requests of measured conversations, as sent
  std::vector<std::string> lost_workers;
  std::vector<std::string> lost_conversations;        // correlation ids in flight on lost workers
  std::vector<std::string> unfinished_conversations;  // still outstanding at the end
  // Correlation ids their worker could not decode, so never ran (run.failed_conversations).
  std::vector<std::string> failed_conversations;
  int64_t forged_messages = 0;   // Results/Bye without the named worker's token, dropped
  int64_t rejected_workers = 0;  // Hellos refused (over workers.expect, bad id, version, ...)
  // Records of authenticated workers dropped as malformed (controller/run/record_check.hpp):
  // in no metric and no output file; the first one's reason, for the verdict.
  int64_t malformed_records = 0;
  std::string malformed_example;
  // For the insights. total_requests: the measured requests, the record pipeline's one count
  // (set as the run finishes).
  int64_t total_requests = 0;
  int64_t later_turn_requests = 0;
  int64_t later_turn_prompt_tokens = 0;
  int64_t later_turn_cached_tokens = 0;
  int64_t later_turn_requests_reporting_cached = 0;
  bool any_response = false;  // some request got an HTTP status
  int64_t connect_errors = 0;
  // Load profiles (empty / nullopt for a single-level run).
  std::vector<StageFacts> stages;
  std::optional<SearchFacts> search;
  int64_t settle_requests = 0;  // intended inside a settle window: in no metric
  // load.abort_on tripped: why (e.g. "error rate 0.97 over the last 10 s (412 requests) >=
  // 0.5"); the verdict fails with it and the run exits 1.
  std::optional<std::string> aborted_reason;
  // Server telemetry: the telemetry room's results (summary.json's "server_metrics" and its
  // typed view), built once when it stopped; nullptr = no telemetry.
  std::shared_ptr<const ServerTelemetry> server;
  // summary.json run.session_routing: the mode (auto's detection) and the sessions' ledger.
  SessionLedger sessions;

  void add(const proto::Record& r);
};

// What the report says about one worker: a plain value the run loop fills from its registry, so
// the report room does not depend on the run room.
struct WorkerSummary {
  std::string id;
  std::string host;
  int64_t pid = 0;
  std::string state;  // connecting | ready | running | lost | done | rejected
  int64_t records = 0;
  int64_t conversations_assigned = 0;
  int64_t clock_offset_ns = 0;
  int64_t clock_rtt_ns = -1;  // -1: never measured
  double max_cpu_percent = 0;
  int64_t max_rss_bytes = 0;
  int64_t legacy_open_sessions = 0;  // at its last heartbeat
};

struct ReportInputs {
  const Config& config;
  const std::string& url;
  const std::filesystem::path& out_dir;
  std::vector<WorkerSummary> workers;
  MetricsSnapshot snapshot;
  const RunFacts& facts;
  bool interrupted = false;
  bool incomplete = false;
  std::string incomplete_reason;
  std::vector<OutputError> output_errors;  // outputs already known incomplete (records.jsonl)
};

}  // namespace convoy::controller
