// A capacity search's SLO judged on one step's metrics: every `{tag: {statistic:
// limit}}` of load.search.slo and its error_rate. Pure: a function of the spec and a snapshot.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"

namespace convoy::controller {

struct SloJudgement {
  bool met = false;
  // Why not, one line per limit missed, e.g. "time_to_first_token p99 812 ms > 500 ms",
  // "error_rate 0.12 > 0.01", "no successful request". Empty when met.
  std::vector<std::string> failures;
};

// Met when the step had a successful request, every named statistic is within its limit
// (latencies in ms must not exceed it; output_token_throughput_per_user, tokens/sec, must reach
// it) and the error rate does not exceed slo.error_rate. A statistic the snapshot does not
// carry, or a tag with no measurement, is a failure (it cannot be shown to be met).
SloJudgement judge_slo(const SloSpec& slo, const MetricsSnapshot& m);

// The value of `statistic` ("avg", "min", "max", "std", "p1" ... "p99", "p50", ...) in `s`;
// nullopt when the snapshot does not carry it.
std::optional<double> slo_statistic(const MetricStats& s, std::string_view statistic);

}  // namespace convoy::controller
