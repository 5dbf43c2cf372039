// The run's record outputs: each takes the RecordEvent the pipeline computed once and hands it
// to what it feeds (the whole run's metrics, the report's facts, records.jsonl, AIPerf's
// profile_export.jsonl, the live metrics, the console's live view).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "controller/dataset/dataset.hpp"
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
  // `target`'s models (when several) name each line's model, drawn with `seed`.
  RecordsFileOutput(const std::filesystem::path& path, const proto::TargetSettings& target,
                    uint64_t seed)
      : writer_(path) {
    writer_.set_models(target.models, seed);
  }
  void on_record(const RecordEvent& e) override;
  void flush() override { writer_.flush(); }
  void close() override { writer_.close(); }
  std::optional<OutputError> failure() const override { return writer_.failure(); }

 private:
  RecordsWriter writer_;
};

// AIPerf's profile_export.jsonl and inputs.json (output.aiperf_export). inputs.json holds the
// turns of every conversation the run sent a request of, read again from the dataset when the
// run closes (only their index and session id are kept meanwhile).
class AiperfRecordsOutput : public RecordOutput {
 public:
  // `wall_minus_steady_ns`: the run's clock mapped to the wall clock (wall_minus_steady_ns()).
  // `dir`: the run's output folder; `dataset` outlives the output.
  AiperfRecordsOutput(const std::filesystem::path& dir, int64_t wall_minus_steady_ns,
                      const Dataset& dataset, const proto::TargetSettings& target)
      : writer_(dir / kAiperfRecordsFile, wall_minus_steady_ns),
        inputs_(dir / kAiperfInputsFile, target),
        dataset_(dataset) {}
  void on_record(const RecordEvent& e) override;
  void flush() override { writer_.flush(); }
  void close() override;
  std::optional<OutputError> failure() const override;

 private:
  AiperfRecordsWriter writer_;
  AiperfInputsWriter inputs_;
  const Dataset& dataset_;
  std::map<uint64_t, std::string> sessions_;  // conversation index -> its correlation id
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
