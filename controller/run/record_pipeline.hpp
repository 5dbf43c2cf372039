// Where every record goes. A batch of one worker's records is put on the controller's clock and
// checked; each record's derived facts are computed once into a RecordEvent (its per-request
// metrics, its stage, whether it is measured); then every output sees that one value, in the
// order the outputs were added. The pipeline keeps the run's one count of measured requests.
// AIPerf's results processors and Locust's request event are the models: typed, computed once,
// pluggable. A new output is one RecordOutput class and one add() where the run builds the list.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "controller/run/record_check.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

struct RunFacts;

// Which load-profile stage a record belongs to (stage_index -1: none) and whether it is a
// settle request (named after its stage, in no metric).
struct RecordRoute {
  int stage_index = -1;
  std::string_view stage;  // the stage's name; "" when none
  bool settle = false;
};

// One record as every output sees it. Valid only during RecordOutput::on_record.
struct RecordEvent {
  const proto::Record& record;    // on the controller's clock, checked (record_problem)
  const RequestMetrics& metrics;  // compute_request_metrics(record), computed once
  std::string_view worker_id;
  std::string_view host;  // the worker's host; its id when the worker is not known
  RecordRoute route;
  // final_marker's close request or an early release: written and counted apart, in no
  // metric, not a measured request.
  bool release_only = false;
  // A request of the measure phase that is not release-only: what load.requests, the circuit
  // breaker and the progress line count.
  bool measured = false;
  // Goes into the whole run's metrics (every record but a settle request).
  bool in_metrics() const { return !route.settle; }
};

class RecordOutput {
 public:
  RecordOutput() = default;
  RecordOutput(const RecordOutput&) = delete;
  RecordOutput& operator=(const RecordOutput&) = delete;
  virtual ~RecordOutput() = default;

  // The records of one worker's batch follow (an output may look the worker up once).
  virtual void begin_batch(std::string_view /*worker_id*/) {}
  virtual void on_record(const RecordEvent& event) = 0;
  virtual void flush() {}  // once per tick of the run loop
  virtual void close() {}  // the run is over: nothing follows
  // Why this output could not be written (the run's exit code shows it); nullopt when fine.
  virtual std::optional<OutputError> failure() const { return std::nullopt; }
};

class RecordPipeline {
 public:
  // Which stage a record belongs to; the load profile's driver, when the run has stages.
  using Router = std::function<RecordRoute(const proto::Record&)>;

  explicit RecordPipeline(RunFacts& facts) : facts_(facts) {}

  void add(std::unique_ptr<RecordOutput> output);  // owned by the pipeline
  void add(RecordOutput& output);                  // owned by the caller, outlives the pipeline
  void set_router(Router router) { router_ = std::move(router); }

  // One batch of `worker_id`'s records, its clock `offset_ns` ahead of the controller's. A
  // record that fails record_problem() is dropped and counted (RunFacts.malformed_records).
  // Returns how many records were accepted.
  size_t on_batch(std::string_view worker_id, std::string_view host, int64_t offset_ns,
                  std::vector<proto::Record>& records, const RecordBounds& bounds);

  int64_t measured_requests() const { return measured_; }
  void flush();
  void close();
  std::vector<OutputError> failures() const;

 private:
  void drop_malformed(std::string_view worker_id, const proto::Record& r, const std::string& why);

  RunFacts& facts_;
  Router router_;
  std::vector<RecordOutput*> outputs_;              // in order
  std::vector<std::unique_ptr<RecordOutput>> own_;  // those added by unique_ptr
  int64_t measured_ = 0;
};

}  // namespace convoy::controller
