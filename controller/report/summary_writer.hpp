// The run's result files: summary.json (AIPerf's profile_export_aiperf.json layout),
// summary.csv, and (through the headers included below) records.jsonl and console tables.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/server_metrics_view.hpp"

namespace convoy::controller {

struct Headline;  // headline.hpp

// summary.json's own schema version (its top-level "schema_version"): bumped when the layout
// changes. "1.0": aggregates carry {unit, avg} only, the top-level provenance fields, timeslices
// (as AIPerf's export has them). The aiperf_export file profile_export_aiperf.json carries AIPerf's
// version instead.
inline constexpr const char* kSummarySchemaVersion = "1.0";

// Sections the caller builds, as JSON text; each must parse (object or array as named).
struct SummaryExtras {
  // Top level, written first, as AIPerf's profile_export_aiperf.json has them:
  // schema_version, convoy_version (this build), benchmark_id (a uuid4 per run), start_time /
  // end_time (ISO 8601 UTC with milliseconds; "" is written null), was_cancelled (Ctrl-C).
  std::string benchmark_id;
  std::string start_time;
  std::string end_time;
  bool was_cancelled = false;
  std::string run_json = "{}";
  std::string workers_json = "[]";
  std::string insights_json = "[]";
  std::string verdict_json = "{}";
  std::string output_errors_json = "[]";  // output_errors_json(): files that could not be written
  // Load profiles (load.stages, sweep, search): summary.json "stages" and "search", report.html's
  // stage table, stage marks and throughput-latency curve. Views of the RunFacts the report was
  // given, not owned; empty / null (a single-level run): no such section.
  ProfileKind profile = ProfileKind::kSingle;
  std::span<const StageFacts> stages;
  const SearchFacts* search = nullptr;
  int64_t measure_start_ns = 0;  // stages' start_s / end_s count from here (the series' origin)
  // Server telemetry: summary.json "server_metrics" (its typed metrics, written there) and
  // report.html's Server section (its view); RunFacts::server, shared; nullptr: no such section.
  std::shared_ptr<const ServerTelemetry> server;
  // What was tested and what came out, in words (headline.hpp): the box at the top of
  // report.html. Not in summary.json (its figures are there under their own keys); nullptr: the
  // page shows the run's facts only.
  std::shared_ptr<const Headline> headline;
};

// schema_version, convoy_version, benchmark_id, start_time, end_time, was_cancelled; then one
// object per metric tag: a distribution {unit, avg, min, max, p1, p5, p10, p25, p50, p75, p90,
// p95, p99, std, count, sum}, an aggregate (MetricStats::aggregate: throughputs, counts, totals,
// duration) {unit, avg} only; then error_summary, insights, run, workers, verdict, output_errors
// (and with output.slice_s "timeslices": [{index, start_s, end_s, <metric tags>}]). Valid
// UTF-8 whatever the text in it (a server's error messages): ill-formed bytes become U+FFFD.
// Throws std::invalid_argument when an extras section is not valid JSON.
//
// With a load profile it adds "stages": [{name, index, value, reached_value, start_s, end_s,
// settle_end_s, config {mode, concurrency, rate, arrival, burstiness, duration_s | sessions |
// requests, settle_s}, <every metric tag of the stage, as at top level>, error_summary, verdict
// {status, reasons, slo_met, slo_failures}}] (times in seconds from extras.measure_start_ns) and,
// for a capacity search, "search": {vary, low, high, precision, step_duration_s | step_requests,
// settle_s, slo, steps [{stage, index, value, met, failures}], result {max_meeting_slo,
// min_failing}} (null where there is none).
std::string summary_json(const MetricsSnapshot& snapshot, const SummaryExtras& extras = {});
// Header "metric,unit,avg,min,max,p1,...,p99,std,count,sum,stage", then one row per metric tag
// of the whole run (stage ""), then one block of rows per stage (stage = its name, quoted when it
// holds a comma, a quote or a line break).
std::string summary_csv(const MetricsSnapshot& snapshot, std::span<const StageFacts> stages = {});

// A fresh uuid4 (random_device seeded) for summary.json's benchmark_id: one per run.
std::string make_benchmark_id();
// "2026-12-02T00:01:28.123Z": ISO 8601, UTC, milliseconds.
std::string iso_time_ms(std::chrono::system_clock::time_point t);

// Write atomically (a temporary beside the file, fsync, then rename; see output_file.hpp). Throw
// std::runtime_error naming the file and the OS error when it cannot be written, leaving no
// temporary behind.
void write_summary_json(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                        const SummaryExtras& extras = {});
void write_summary_csv(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                       std::span<const StageFacts> stages = {});
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace convoy::controller
