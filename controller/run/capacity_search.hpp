// load.search: the highest load that meets the SLO, by bisection, in one run. Pure:
// the Run runs each value as a stage (search_step()), judges it with judge_slo() once its
// in-flight work ended, and records the answer here; this says which value comes next.
//
// Order: `low` first (if it misses, nothing lower is tried: the answer is "none"), then `high`
// (if it meets, the answer is "at least high"), then midpoints of the bracket [highest met,
// lowest failed] until (failed - met) / failed <= precision. With vary: concurrency every value
// is a whole slot count, and the search also stops when no whole number is left in between.
//
// Noise: a step whose result lies within the noise of the SLO (within_slo_noise: a limited
// statistic within kSloNoisePct of its limit) says little either way, and one wrong verdict
// sends the bisection into the wrong half for good. Such a step runs again, up to
// search.repeats more times, and its verdict is the majority of its runs (a tie misses: an
// answer the SLO cannot be shown to hold at is no capacity). Its verdict then says how many of
// its runs met the SLO: the confidence the answer has.
#pragma once

#include <optional>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/run_facts.hpp"

namespace convoy::controller {

// A step is within the noise of the SLO when one of its limited statistics lies within this
// share of its limit, either side (a p99 limit of 500 ms: 450 to 550 ms). Repeated runs of a quiet
// server move a p50 by a few percent and a p99 of a few hundred requests by more (convoy
// compare calls a 5% difference noise without records): twice that is where one run cannot
// tell met from missed.
inline constexpr double kSloNoisePct = 10.0;

// Whether `m` lies within the noise of `slo` (kSloNoisePct of any limit, the error rate's
// included). False when nothing was measured (a step without successes misses, plainly).
bool within_slo_noise(const SloSpec& slo, const MetricsSnapshot& m);

// One value's verdict: every run of its step and how many met the SLO.
using StepVerdict = SearchVerdict;

class CapacitySearch {
 public:
  explicit CapacitySearch(const SearchConfig& config);

  // The next value to run; nullopt when the search is over.
  std::optional<double> next() const;
  // The step at `value` (the one next() gave) met the SLO or not; `within_noise`: its result lay
  // within the noise of the SLO, so next() gives the same value again until the majority of up
  // to 1 + search.repeats runs agrees (only the first run's noise decides whether to repeat).
  void record(double value, bool met, bool within_noise = false);
  bool done() const { return !next(); }
  // The run of the value next() gives: 1, or 2 and more for a repeat of a noisy step.
  int next_run() const { return pending_runs_ + 1; }
  // The verdict of a value the search decided; nullopt for one it did not.
  std::optional<StepVerdict> verdict_of(std::optional<double> value) const;

  std::optional<double> max_meeting_slo() const { return met_; }  // nullopt: even low missed
  std::optional<double> min_failing() const { return failed_; }   // nullopt: even high met
  int steps() const { return steps_; }  // values decided (a repeated step counts once)
  const SearchConfig& config() const { return config_; }

 private:
  double whole(double v) const;  // concurrency: a whole slot count, at least 1
  void decide(double value, bool met);

  SearchConfig config_;
  std::optional<double> met_;
  std::optional<double> failed_;
  int steps_ = 0;
  bool over_ = false;
  // The step being repeated: its runs so far (0: none pending) and how many met the SLO.
  double pending_value_ = 0;
  int pending_runs_ = 0;
  int pending_met_ = 0;
  bool pending_noisy_ = false;         // its first run lay within the noise
  std::vector<StepVerdict> verdicts_;  // every value decided, in order
};

}  // namespace convoy::controller
