// load.trials: the combined summary of N trials of one profile. Each trial is a whole run with its
// own folder (OUT/trial-1, ...); this reads each trial's summary.json for the headline figures and
// writes OUT/summary.json: per figure the trial values, their mean and a t interval
// (trial_intervals.hpp), plus the top-level metric tags holding the means so that
// `convoy compare` reads the combined folder as a run (and its intervals from "trials").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "controller/report/trial_intervals.hpp"

namespace convoy::controller {

// One headline figure: a summary.json metric tag and the statistic read from it.
struct TrialFigure {
  const char* tag;    // e.g. "time_to_first_token"; "error_rate" is derived (%)
  const char* stat;   // "avg" for aggregates and the error rate, else "p50" / "p99"
  const char* label;  // the console's name, e.g. "TTFT p99"
};
// request throughput, output token throughput, error rate, TTFT / ITL / request latency p50 and
// p99, in the order the table shows them.
const std::vector<TrialFigure>& trial_figures();

// One trial as it ran.
struct TrialResult {
  int index = 0;              // 1-based
  uint64_t seed = 0;          // the seed it ran with (seed + index - 1)
  std::string folder;         // relative to the combined folder: "trial-1"
  int exit_code = 0;          // the trial's own exit code
  bool included = false;      // finished (exit 0 or 1) and read: its values are in the intervals
  std::string unread_reason;  // why a finished trial's summary.json could not be read
  // tag -> stat -> value, the trial_figures() it had (a run without successes has no TTFT).
  std::map<std::string, std::map<std::string, double>> values;
  std::map<std::string, std::string> units;   // tag -> unit as summary.json wrote it
  std::map<std::string, double> counts;       // tag -> the distribution's count
  std::optional<double> request_count;        // measured successes
  std::optional<double> error_request_count;  // measured failures
  std::string config_yaml;                    // run.config_yaml
};

// Fills `r`'s values, units, counts and config from one trial's summary.json text. False (with
// r.unread_reason) when the text is not a JSON object.
bool read_trial_summary(const std::string& summary_text, TrialResult& r);

// Everything the combined summary says.
struct TrialsSummary {
  int64_t planned = 0;              // load.trials
  uint64_t first_seed = 0;          // the config's seed: trial t ran with first_seed + t - 1
  std::vector<TrialResult> trials;  // those started, in order
  std::string benchmark_id;
  std::string start_time;  // ISO 8601 UTC ("" written null)
  std::string end_time;
  bool was_cancelled = false;  // Ctrl-C: the finished trials only
  std::string config_yaml;     // the resolved config (trial 1's, with the config's own seed)
};

// The interval of one figure over the included trials; nullopt when no included trial has it.
std::optional<TrialInterval> figure_interval(const TrialsSummary& s, const TrialFigure& f);

// The combined summary.json (docs/report.md, "Trials").
std::string trials_summary_json(const TrialsSummary& s);
// The console table: one row per figure, the trial values (up to 6 trials, else their count),
// the mean and the 95% interval.
void print_trials_table(std::ostream& out, const TrialsSummary& s);

}  // namespace convoy::controller
