// Load profiles (docs/config.md, "Load profiles"): a stage's level over time, a capacity-search
// step as a stage, and the SLO statistics a search may name. Pure functions of their inputs
// (STYLE.md rule 3). load_config() resolves load.stages and load.sweep into LoadConfig::stages; a
// search's steps are made one by one while the run goes, by search_step().
#pragma once

#include <string>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy {

// A search step as a stage: vary concurrency -> mode concurrency at `value` (rounded to a whole
// slot count, at least 1); vary rate -> mode rate at `value` conversations/s, capped at
// load.concurrency, with load.arrival and load.burstiness. The step ends after
// search.step_duration_s or search.step_requests, settles for search.settle_s, and is named
// "concurrency=8" / "rate=2.5". `index` is its position in the run (0-based). Requires
// load.search.
StageConfig search_step(const LoadConfig& load, double value, int index);

// The stage name of a sweep or search value: "concurrency=8", "rate=2.5".
std::string stage_value_name(LoadMode vary, double value);

// The statistics an SLO may name for a metric tag, spelled as summary.json spells them:
// "avg", "min", "max", "p1" ... "p99".
std::vector<std::string> known_slo_statistics();

// The metric tags an SLO (load.search.slo, top-level slo) may name: the millisecond metrics.
std::vector<std::string> known_slo_metrics();

}  // namespace convoy
