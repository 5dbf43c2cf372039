// The run's result files: summary.json (AIPerf's profile_export_aiperf.json layout),
// summary.csv, and (through the headers included below) records.jsonl and console tables.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/results_table.hpp"

namespace convoy::controller {

// Sections the caller builds, as JSON text; each must parse (object or array as named).
struct SummaryExtras {
  std::string run_json = "{}";
  std::string workers_json = "[]";
  std::string insights_json = "[]";
  std::string verdict_json = "{}";
  std::string output_errors_json = "[]";  // output_errors_json(): files that could not be written
};

// One object per metric tag {unit, avg, min, max, p1, p5, p10, p25, p50, p75, p90, p95, p99,
// std, count, sum}, then error_summary, insights, run, workers, verdict, output_errors. Valid
// UTF-8 whatever the text in it (a server's error messages): ill-formed bytes become U+FFFD.
// Throws std::invalid_argument when an extras section is not valid JSON.
std::string summary_json(const MetricsSnapshot& snapshot, const SummaryExtras& extras = {});
// Header "metric,unit,avg,min,max,p1,...,p99,std,count,sum", then one row per metric tag.
std::string summary_csv(const MetricsSnapshot& snapshot);

// Write atomically (a temporary beside the file, fsync, then rename; see output_file.hpp). Throw
// std::runtime_error naming the file and the OS error when it cannot be written, leaving no
// temporary behind.
void write_summary_json(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                        const SummaryExtras& extras = {});
void write_summary_csv(const std::filesystem::path& path, const MetricsSnapshot& snapshot);
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace convoy::controller
