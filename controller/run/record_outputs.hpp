// The run's record outputs: each takes the RecordEvent the pipeline computed once and hands it
// to what it feeds (the whole run's metrics, the report's facts, records.jsonl, AIPerf's
// profile_export.jsonl, the live metrics, the console's live view).
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "controller/report/aiperf_export.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/run/record_pipeline.hpp"

namespace convoy::live {
class LiveMetrics;
struct WorkerSeries;
}  // namespace convoy::live

namespace convoy::controller {

class Progress;
struct RunFacts;

// The whole run's metrics: every record but a settle request.
class RunMetricsOutput : public RecordOutput {
 public:
  explicit RunMetricsOutput(MetricsAggregator& metrics) : metrics_(metrics) {}
  void on_record(const RecordEvent& e) override;

 private:
  MetricsAggregator& metrics_;
};

// What the report says beside the metrics: request counts, session ledgers, start times.
class FactsOutput : public RecordOutput {
 public:
  explicit FactsOutput(RunFacts& facts) : facts_(facts) {}
  void on_record(const RecordEvent& e) override;

 private:
  RunFacts& facts_;
};

// records.jsonl (output.records): one line per record, its stage or settle named.
class RecordsFileOutput : public RecordOutput {
 public:
  explicit RecordsFileOutput(const std::filesystem::path& path) : writer_(path) {}
  void on_record(const RecordEvent& e) override;
  void flush() override { writer_.flush(); }
  void close() override { writer_.close(); }
  std::optional<OutputError> failure() const override { return writer_.failure(); }

 private:
  RecordsWriter writer_;
};

// AIPerf's profile_export.jsonl (output.aiperf_export).
class AiperfRecordsOutput : public RecordOutput {
 public:
  // `wall_minus_steady_ns`: the run's clock mapped to the wall clock (wall_minus_steady_ns()).
  AiperfRecordsOutput(const std::filesystem::path& path, int64_t wall_minus_steady_ns)
      : writer_(path, wall_minus_steady_ns) {}
  void on_record(const RecordEvent& e) override { writer_.write(e.record, e.metrics, e.worker_id); }
  void flush() override { writer_.flush(); }
  void close() override { writer_.close(); }
  std::optional<OutputError> failure() const override { return writer_.failure(); }

 private:
  AiperfRecordsWriter writer_;
};

// The live metrics (output.metrics_listen): requests by worker, stage and outcome, started
// conversations.
class LiveOutput : public RecordOutput {
 public:
  explicit LiveOutput(live::LiveMetrics& live) : live_(live) {}
  void begin_batch(std::string_view worker_id) override;
  void on_record(const RecordEvent& e) override;

 private:
  live::LiveMetrics& live_;
  live::WorkerSeries* worker_ = nullptr;  // of the current batch: one lookup per batch
};

// The console's live view: each measured request's outcome, error kind, TTFT, ITL and output
// tokens, and its stage.
class ProgressOutput : public RecordOutput {
 public:
  explicit ProgressOutput(Progress& progress) : progress_(progress) {}
  void on_record(const RecordEvent& e) override;

 private:
  Progress& progress_;
};

}  // namespace convoy::controller
