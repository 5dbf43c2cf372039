// The end of a run: the facts the run loop gathered beside the metrics, the verdict, and every
// output (summary.json, summary.csv, the console tables, insights, report.html).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "controller/metrics.hpp"
#include "controller/output_file.hpp"
#include "controller/registry.hpp"
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
  // For the insights.
  int64_t total_requests = 0;
  int64_t later_turn_requests = 0;
  int64_t later_turn_prompt_tokens = 0;
  int64_t later_turn_cached_tokens = 0;
  int64_t later_turn_requests_reporting_cached = 0;
  bool any_response = false;  // some request got an HTTP status
  int64_t connect_errors = 0;

  void add(const proto::Record& r);
};

struct Verdict {
  std::string status = "pass";  // pass | warn | fail
  std::vector<std::string> reasons;
  double intended_rate_per_s = 0;  // rate mode: configured
  double achieved_rate_per_s = 0;  // conversations started per second
  double ks_statistic = -1;        // -1: not computed
  double ks_p_value = -1;
};

// Kolmogorov-Smirnov statistic of inter-arrival gaps (ns) against the configured process
// (exponential for poisson, gamma for gamma); -1 for constant arrivals or fewer than 20 gaps.
double ks_statistic(std::vector<int64_t> gaps_ns, Arrival arrival, double rate_per_s, double shape);
// Asymptotic p-value of a KS statistic d over n samples.
double ks_p_value(double d, size_t n);

struct ReportInputs {
  const Config& config;
  const std::string& url;
  const std::filesystem::path& out_dir;
  const WorkerRegistry& registry;
  MetricsSnapshot snapshot;
  const RunFacts& facts;
  bool interrupted = false;
  bool incomplete = false;
  std::string incomplete_reason;
  std::vector<OutputError> output_errors;  // outputs already known incomplete (records.jsonl)
};

// Fails when no measured request succeeded, a fail_on criterion is exceeded, the run could not
// complete or an output file is incomplete (in.output_errors).
Verdict judge_run(const ReportInputs& in);
// Marks `v` failed because `e`'s file could not be written.
void add_output_failure(Verdict& v, const OutputError& e);

// Writes every output and prints the console report. Returns kExitIncomplete (3) when an output
// file could not be written (each is named on stderr and in summary.json "output_errors", and
// the verdict fails), else kExitCriterionFailed (1) when the verdict is fail, else 0.
int write_run_report(const ReportInputs& in);

}  // namespace convoy::controller
