// Server telemetry in the report: report.html's "Server" section, per
// endpoint, with its headline series over time on the same time axis as the client's (client
// TTFT p50/p99 and requests in flight beside the server's queue depth, TTFT, KV cache usage and
// GPU utilisation) and a table of its headline figures; and the console's short server table.
// Both read the telemetry results' typed view (server_metrics_view.hpp).
#pragma once

#include <ostream>
#include <string>

#include "controller/report/metrics.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/server_metrics_view.hpp"
#include "controller/report/summary_writer.hpp"

namespace convoy::controller {

// The section (<section id="server">), or "" when the run had no server telemetry.
std::string server_section_html(const MetricsSnapshot& snapshot, const SummaryExtras& extras);

// The end, in seconds from the measure start, of the time axis that the over-time charts and
// the Server section's share: the latest client bucket, server point or stage start. 0 when the
// run had no server telemetry (each over-time chart then fits its own data, as before).
double server_axis_end_s(const MetricsSnapshot& snapshot, const SummaryExtras& extras);

// Per endpoint: its scrapes and errors, then up to kMaxServerTableRows headline rows (metric,
// unit, avg, p99, max, rate/s, total); nothing when there is no telemetry.
inline constexpr size_t kMaxServerTableRows = 10;
// `view` not present (no telemetry): nothing. Within `width` columns: below 110 the p99 column
// is left out, then the metric names are shortened (to 20 characters at least).
void print_server_table(std::ostream& out, const ServerMetricsView& view,
                        size_t width = kDefaultConsoleWidth);

}  // namespace convoy::controller
