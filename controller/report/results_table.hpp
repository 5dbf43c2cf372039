// Console tables after a run, laid out like AIPerf's.
#pragma once

#include <ostream>
#include <string>

#include "controller/report/metrics.hpp"

namespace convoy::controller {

// Rows: TTFT (all, first turn, later turns), TTST, ITL, inter-chunk latency, request latency,
// schedule lag, ISL, OSL, cached tokens (each when measured); columns avg min max p50 p90 p99;
// then output token throughput, request throughput, goodput (with slo), request count, errors.
void print_results_table(std::ostream& out, const MetricsSnapshot& snapshot);
// The error groups, largest first; nothing when there were no errors.
void print_error_table(std::ostream& out, const MetricsSnapshot& snapshot);

// 1234567.891 -> "1,234,567.89" (decimals after the point).
std::string format_grouped(double value, int decimals = 2);

}  // namespace convoy::controller
