// Sanity checks on a worker's records: bad input from the network is refused, not folded in. A
// worker that holds its token is authenticated, not trusted to be correct: a broken or hostile one
// could send negative token counts, times far from the run, or a target.urls index that does not
// exist, and one such record would bend every metric it enters. Such a record is dropped as
// malformed, counted and named in the verdict. Pure: the caller gives the run's time span on the
// controller's clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "proto/messages.hpp"

namespace convoy::controller {

// How far outside [run start, now] a timestamp may be before it is "far outside the run":
// well beyond any clock-offset error (ms) or batching delay, far short of a corrupt value.
inline constexpr int64_t kRecordTimeSlackNs = 60'000'000'000;

struct RecordBounds {
  int64_t run_start_ns = 0;  // the controller's clock when the run began
  int64_t now_ns = 0;        // the controller's clock as the record arrives
  size_t url_count = 1;      // target.urls (1 for target.url)
};

// Why `r` (its times already on the controller's clock) cannot be a real request, e.g.
// "output_tokens -5 < 0"; nullopt when it can.
std::optional<std::string> record_problem(const proto::Record& r, const RecordBounds& bounds);

}  // namespace convoy::controller
