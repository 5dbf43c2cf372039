// report.html: one self-contained page (inline SVG, no network) with the summary, latency
// distributions, throughput and TTFT over time, TTFT by turn, errors, insights and the verdict.
#pragma once

#include <filesystem>
#include <string>

#include "controller/report/metrics.hpp"
#include "controller/report/summary_writer.hpp"

namespace convoy::controller {

std::string report_html(const MetricsSnapshot& snapshot, const SummaryExtras& extras);
void write_report_html(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                       const SummaryExtras& extras);

}  // namespace convoy::controller
