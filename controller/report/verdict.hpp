// The verdict of a run: pass, warn or fail with its reasons, from the metrics, the run's facts
// and (mode rate) two checks that the intended arrival process was delivered: the arrival count
// against its expected spread, and a Kolmogorov-Smirnov test of the inter-arrival gaps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/run_facts.hpp"

namespace convoy::controller {

// Ordered: a run's status only ever moves up (pass -> warn -> fail).
enum class VerdictStatus : uint8_t { kPass, kWarn, kFail };
// "pass" | "warn" | "fail" (summary.json's verdict.status, the console, report.html).
const char* to_string(VerdictStatus status);

struct Verdict {
  VerdictStatus status = VerdictStatus::kPass;
  std::vector<std::string> reasons;
  double intended_rate_per_s = 0;  // rate mode: configured
  double achieved_rate_per_s = 0;  // conversations started per second
  double ks_statistic = -1;        // -1: not computed
  double ks_p_value = -1;
  // Load profiles: requests intended inside a settle window (in no metric), and why
  // load.abort_on stopped the run (nullopt: it did not).
  int64_t settle_requests = 0;
  std::optional<std::string> aborted_reason;
  // A stage's verdict (judge_stage): whether a capacity-search step met load.search.slo.
  std::optional<bool> slo_met;
  std::vector<std::string> slo_failures;
};

// Kolmogorov-Smirnov statistic of inter-arrival gaps (ns) against the configured process
// (exponential for poisson, gamma for gamma); -1 for constant arrivals or fewer than 20 gaps.
double ks_statistic(std::vector<int64_t> gaps_ns, Arrival arrival, double rate_per_s, double shape);
// Asymptotic p-value of a KS statistic d over n samples.
double ks_p_value(double d, size_t n);

// The verdict's rate check (mode rate). Over the span from the first to the last of `starts`
// conversation starts, `starts - 1` arrivals were seen where rate * span were expected. It warns
// only when the difference exceeds both kRateToleranceFraction of the expected count and
// kRateSigmas standard deviations of the count the configured process itself gives (poisson:
// sqrt(expected); gamma with shape k: sqrt(expected / k)); constant arrivals have no spread, so
// they get kConstantRateAllowance arrivals instead. Short runs then do not warn on ordinary
// noise, and long runs still catch a real shortfall. No warning below kMinRateCheckStarts.
inline constexpr double kRateToleranceFraction = 0.05;
inline constexpr double kRateSigmas = 3.0;
inline constexpr double kConstantRateAllowance = 2.0;
inline constexpr int64_t kMinRateCheckStarts = 20;

struct RateCheck {
  double achieved_per_s = 0;     // (starts - 1) / span; 0 when not computed
  double expected_count = 0;     // rate * span
  int64_t observed_count = 0;    // starts - 1
  double allowed_deviation = 0;  // in arrivals: the larger of the band and the spread
  bool computed = false;         // at least 2 starts over a positive span
  bool warn = false;
};

RateCheck check_arrival_rate(Arrival arrival, double rate_per_s, double burstiness, int64_t starts,
                             int64_t span_ns);

// Fails when no measured request succeeded, a fail_on criterion is exceeded, the run could not
// complete or an output file is incomplete (in.output_errors).
Verdict judge_run(const ReportInputs& in);
// Marks `v` failed because `e`'s file could not be written.
void add_output_failure(Verdict& v, const OutputError& e);

// One stage of a load profile (summary.json stages[].verdict, the stage table of report.html).
// Its status says whether the stage delivered and measured its load, judged on the stage's own
// metrics: fail when none of its requests completed or none succeeded; warn when some failed or
// its schedule_lag p99 exceeds the run's limit. A search step's SLO judgement is carried beside
// it (slo_met, slo_failures) and does not move the status: missing the SLO at some load is what
// a search is for.
Verdict judge_stage(const StageFacts& stage);

}  // namespace convoy::controller
