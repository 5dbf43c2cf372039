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
#include "controller/registry.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// A bounded sample of event times (the first kMaxSamples), with the exact count and extent.
struct TimeSample {
  static constexpr size_t kMaxSamples = 200'000;
  int64_t count = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  std::vector<int64_t> samples;
  void add(int64_t t_ns);
};

struct RunFacts {
  std::chrono::system_clock::time_point start_wall;
  std::chrono::system_clock::time_point end_wall;
  int64_t measure_start_ns = 0;
  TimeSample intended_starts_ns;  // measured conversations, as scheduled
  TimeSample actual_starts_ns;    // first requests of measured conversations, as sent
  std::vector<std::string> lost_workers;
  std::vector<std::string> lost_conversations;        // correlation ids in flight on lost workers
  std::vector<std::string> unfinished_conversations;  // still outstanding at the end
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
};

Verdict judge_run(const ReportInputs& in);

// Writes every output and prints the console report. Returns kExitCriterionFailed (1) when a
// fail_on criterion was exceeded, else 0.
int write_run_report(const ReportInputs& in);

}  // namespace convoy::controller
