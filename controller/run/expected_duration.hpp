// How long a run of a configuration will take, said before it starts (`convoy validate`): a
// sweep or a capacity search runs for minutes, and nothing else says so. Pure: a function of the
// config alone (STYLE.md rule 3), tested in tests/controller/run/expected_duration_test.cpp.
//
// What is bound by time adds up: load.warmup_s, every stage's or step's duration_s, every
// settle at its longest (a search step also waits up to load.grace_s for its in-flight work),
// and load.grace_s for the last in-flight requests. What is bound by a count (load.requests,
// load.sessions, a stage's requests or sessions, the dataset's conversations) cannot be timed
// from the config: it is named as "until N requests". A search's step count depends on what the
// server does: its bounds come from CapacitySearch itself, run over every outcome.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

struct ExpectedDuration {
  double min_s = 0;  // the time-bound parts, settles and drain at 0, a search at its fewest steps
  double max_s = 0;  // settles and drain at their longest, a search at its most steps; >= min_s
  std::vector<std::string> counted;  // parts bound by a count: "until 1000 requests are sent"
  int steps_min = 0;                 // a search: fewest and most steps it can take (0 otherwise)
  int steps_max = 0;
  std::string detail;  // how the figure was made: "7 steps of 30 s, 6 settles up to 5 s, ..."
};

// `dataset_conversations`: how many the dataset holds when the caller counted them (a file's
// rows); unset, the config's dataset.conversations for a synthetic dataset.
ExpectedDuration expected_duration(const Config& config,
                                   std::optional<uint64_t> dataset_conversations = std::nullopt);

// One line for people: "expected duration: between 3 min 35 s and 4 min 35 s (7 steps of 30 s
// ...)" or "expected duration: until 1000 requests are sent and answered (load.requests)".
std::string expected_duration_line(const Config& config,
                                   std::optional<uint64_t> dataset_conversations = std::nullopt);

// 45 s, 2 min 30 s, 1 h 5 min (rounded to the second; to the minute from one hour).
std::string human_seconds(double s);

}  // namespace convoy::controller
