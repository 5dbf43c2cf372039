// load.search: the highest load that meets the SLO, by bisection, in one run. Pure:
// the Run runs each value as a stage (search_step()), judges it with judge_slo() once its
// in-flight work ended, and records the answer here; this says which value comes next.
//
// Order: `low` first (if it misses, nothing lower is tried: the answer is "none"), then `high`
// (if it meets, the answer is "at least high"), then midpoints of the bracket [highest met,
// lowest failed] until (failed - met) / failed <= precision. With vary: concurrency every value
// is a whole slot count, and the search also stops when no whole number is left in between.
#pragma once

#include <optional>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

class CapacitySearch {
 public:
  explicit CapacitySearch(const SearchConfig& config);

  // The next value to run; nullopt when the search is over.
  std::optional<double> next() const;
  // The step at `value` (the one next() gave) met the SLO or not.
  void record(double value, bool met);
  bool done() const { return !next(); }

  std::optional<double> max_meeting_slo() const { return met_; }  // nullopt: even low missed
  std::optional<double> min_failing() const { return failed_; }   // nullopt: even high met
  int steps() const { return steps_; }
  const SearchConfig& config() const { return config_; }

 private:
  double whole(double v) const;  // concurrency: a whole slot count, at least 1

  SearchConfig config_;
  std::optional<double> met_;
  std::optional<double> failed_;
  int steps_ = 0;
  bool over_ = false;
};

}  // namespace convoy::controller
