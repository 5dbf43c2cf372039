// A quantile from a Prometheus histogram's cumulative bucket counts, as Prometheus'
// histogram_quantile() computes it: the telemetry room's window statistics and timelines and
// the report's server insights use this one function, so that a p50 reads the same in
// summary.json and in report.html.
#pragma once

#include <optional>
#include <span>
#include <utility>

namespace convoy {

// q in [0, 1]; `cumulative` holds (upper bound `le`, observations at or below it), le
// ascending, the last +Inf. Linear inside the bucket the rank falls in; 0 is the first bucket's
// lower bound when its bound is positive (its own bound when not); the highest finite bound
// when the rank falls in +Inf. nullopt with no observation (or only the +Inf bucket).
std::optional<double> bucket_quantile(std::span<const std::pair<double, double>> cumulative,
                                      double q);

}  // namespace convoy
