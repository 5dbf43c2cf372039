// output.aiperf_export: the run also written in AIPerf's own layout, so that tools
// built for AIPerf read a convoy run unchanged:
//   profile_export_aiperf.json  AIPerf's JSON export, schema 1.5 (kAiperfSchemaVersion)
//   profile_export_aiperf.csv   its two-section CSV (record metrics, then "Metric,Value")
//   profile_export.jsonl        one line per request: {metadata, metrics {tag: {value, unit}},
//                               error}, streamed during the run
// Sources (ai-dynamo/aiperf): docs/reference/json-export-schema.md (fields and versions),
// src/aiperf/common/models/export_models.py (JsonExportData, JsonMetricResult),
// src/aiperf/common/models/record_models.py (MetricResult.to_json_result: count only on record
// metrics), src/aiperf/exporters/metrics_csv_exporter.py, src/aiperf/common/constants.py
// (STAT_KEYS), aiperf/common/models/record_models.py (MetricRecordInfo, MetricRecordMetadata)
// and docs/tutorials/working-with-profile-exports.md. Only AIPerf's metric tags are exported
// (convoy's own, such as schedule_lag, stay in summary.json).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/jsonl_writer.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/records_writer.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

inline constexpr const char* kAiperfSchemaVersion = "1.5";
inline constexpr const char* kAiperfJsonFile = "profile_export_aiperf.json";
inline constexpr const char* kAiperfCsvFile = "profile_export_aiperf.csv";
inline constexpr const char* kAiperfRecordsFile = "profile_export.jsonl";
inline constexpr const char* kAiperfInputsFile = "inputs.json";

// The run's identity, as summary.json has it (summary_writer.hpp SummaryExtras).
struct AiperfProvenance {
  std::string benchmark_id;
  std::string start_time;  // ISO 8601 UTC; "" = unknown (omitted, as AIPerf omits None)
  std::string end_time;
  bool was_cancelled = false;
};

// profile_export_aiperf.json: schema_version, aiperf_version ("convoy <version>": the tool that
// wrote it), convoy_version, benchmark_id, one block per AIPerf metric tag (record metrics:
// unit, avg, p1..p99, min, max, std, count, sum; aggregates and derived: unit, avg),
// input_config {endpoint, loadgen} (AIPerf's UserConfig names, the fields convoy has; a load
// profile's loadgen holds the levels its stages ran at: `concurrency: [4, 48]`),
// run_info, was_cancelled, error_summary, start_time, end_time.
// `url`: the target's base url as resolved (target.url mock: the mock's address).
// `stages_run`: the stages as they ran (a search's steps are known only then); null: the
// config's own load.stages.
std::string aiperf_profile_json(const MetricsSnapshot& snapshot, const Config& config,
                                const AiperfProvenance& provenance, std::string_view url,
                                const std::vector<StageConfig>* stages_run = nullptr);
// profile_export_aiperf.csv: "Metric,avg,min,max,sum,p1,...,p99,std" rows of the record
// metrics ("Header (unit)"), a blank line, then "Metric,Value" rows of the others; both sorted
// by tag, numbers as AIPerf formats them (integers bare, others with two decimals).
std::string aiperf_profile_csv(const MetricsSnapshot& snapshot);
// One profile_export.jsonl line (no newline). `wall_minus_steady_ns` maps the controller's
// steady clock to the epoch (AIPerf's *_ns are time.time_ns()). Valid UTF-8.
std::string aiperf_record_line(const proto::Record& record, std::string_view worker_id,
                               int64_t wall_minus_steady_ns);
// The same with `metrics` = compute_request_metrics(record), computed once by the caller.
std::string aiperf_record_line(const proto::Record& record, const RequestMetrics& metrics,
                               std::string_view worker_id, int64_t wall_minus_steady_ns);

// The offset from the run's steady clock to the epoch: `wall` and `steady_ns` read at one moment
// by the caller, the steady one from the run's injected clock (the clock records are moved
// onto), so that a test's hand-advanced clock gives known epoch times. Pure.
int64_t wall_minus_steady_ns(std::chrono::system_clock::time_point wall, int64_t steady_ns);

// Streams profile_export.jsonl, as RecordsWriter streams records.jsonl (same buffering and
// failure handling: a failed write is an output error, exit 3). close_request records are not
// requests in AIPerf's sense and are left out. `wall_minus_steady_ns` as aiperf_record_line
// takes it (wall_minus_steady_ns() above); the writer reads no clock itself.
class AiperfRecordsWriter {
 public:
  AiperfRecordsWriter(const std::filesystem::path& path, int64_t wall_minus_steady_ns);
  void write(const proto::Record& record, std::string_view worker_id);
  void write(const proto::Record& record, const RequestMetrics& metrics,
             std::string_view worker_id);
  void flush() { file_.flush(); }
  void close() { file_.close(); }
  std::optional<OutputError> failure() const { return file_.failure(); }
  int64_t lines() const { return file_.lines(); }

 private:
  JsonlWriter file_;
  int64_t wall_minus_steady_ns_;
};

// One turn's request body as inputs.json holds it: what the worker sends for the turn
// (worker/request_builder.cpp: model; messages with the system prompt, or the prompt, or the
// input; max_tokens or max_completion_tokens; stream and stream_options; target.extra_body and
// the turn's extra_json merged on top) without the conversation's history, as AIPerf formats
// each dataset turn alone. A turn's messages_json that is not a JSON array is sent as user text.
std::string aiperf_turn_payload(const proto::TargetSettings& target,
                                const std::string& system_prompt, const proto::Turn& turn);

// Streams inputs.json, AIPerf's InputsFile (ai-dynamo/aiperf
// src/aiperf/common/models/dataset_models.py InputsFile, SessionPayloads; written by the dataset
// manager's _generate_inputs_json_file): {"data": [{"session_id", "payloads": [...]}, ...]}, one
// session per line, with the failure contract of the JSON Lines outputs (exit 3 naming it).
// session_id is the conversation's correlation id (X-Correlation-ID, profile_export.jsonl's
// x_correlation_id); payloads one per turn (aiperf_turn_payload).
class AiperfInputsWriter {
 public:
  AiperfInputsWriter(const std::filesystem::path& path, proto::TargetSettings target);
  void write_session(std::string_view session_id, const proto::Conversation& conversation);
  void close();  // ends the document; idempotent
  std::optional<OutputError> failure() const { return file_.failure(); }
  int64_t sessions() const { return sessions_; }

 private:
  JsonlWriter file_;
  proto::TargetSettings target_;
  int64_t sessions_ = 0;
  bool closed_ = false;
};

}  // namespace convoy::controller
