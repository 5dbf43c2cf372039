// Insights that connect the client's figures with the server's own, each with its evidence,
// from the server telemetry's typed view (InsightInputs::server, server_metrics_view.hpp) and
// the client's TTFT:
//   server_queueing         the client's TTFT rose while the server's waiting count rose;
//   kv_cache_pressure       KV cache usage above 95% with preemptions increasing;
//   client_side_overhead    the gap between the client's TTFT and the server's: measured per
//                           request with target.server_timing, else the client's p50 against
//                           one TTFT histogram family's p50 (the frontend's when scraped); a
//                           negative gap is reported as coarse buckets, never as network time;
//   telemetry_endpoint_failed  a scrape endpoint that failed every scrape.
// Pure: a function of InsightInputs; detect_insights calls server_insights.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controller/report/insights.hpp"

namespace convoy::controller {

struct MetricsSnapshot;

// Thresholds (documented in docs/report.md).
inline constexpr double kKvPressureFraction = 0.95;
inline constexpr size_t kMinQueueingPoints = 6;    // paired client/server time buckets
inline constexpr double kMinQueueingPeak = 2;      // requests waiting at the peak
inline constexpr double kQueueingTtftRatio = 1.5;  // TTFT when queued / when not
inline constexpr double kMinQueueingTtftRiseMs = 20;
inline constexpr double kMinQueueingCorrelation = 0.5;
inline constexpr double kMinOverheadMs = 5;           // a smaller gap is not worth a word
inline constexpr double kMinOverheadFraction = 0.10;  // of the client's TTFT p50
inline constexpr double kLargeOverheadFraction = 0.5;
inline constexpr double kLargeOverheadMs = 50;

// Fills InsightInputs' server members from the telemetry results (nullptr: none) and the run's
// metrics.
void add_server_inputs(const MetricsSnapshot& snapshot,
                       std::shared_ptr<const ServerTelemetry> server, InsightInputs* in);

void server_insights(const InsightInputs& in, std::vector<Insight>* out);

}  // namespace convoy::controller
