// records.jsonl: one JSON line per request, streamed to disk as results arrive.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>

#include "controller/report/jsonl_writer.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/output_file.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// One line (without the newline): x_request_id, x_correlation_id, conversation_id,
// conversation_index, turn_index, final_turn, worker_id, host, phase ("warmup" | "measure"),
// intended_ns, sent_ns, first_byte_ns, first_token_ns, first_output_token_ns, second_token_ns,
// last_token_ns, end_ns (controller steady clock; null when it did not happen), metrics {ttft_ms,
// ttst_ms, request_latency_ms, itl_ms, schedule_lag_ms, corrected_request_latency_ms, isl, osl,
// reasoning_tokens, cached_tokens} (null where not measured; reasoning_tokens 0 when none),
// http_status, error {kind, code, type, message} (null when ok), session_control (the object as
// sent; null when none). Always valid UTF-8: ill-formed bytes a server sent are replaced with
// U+FFFD.
//
// Load profiles (load.stages, sweep, search): `stage` names the stage the request was intended in;
// the line gets "stage": NAME after "phase" (no key when empty: a single-level run, or warmup). A
// request intended in the settle window after a stage is in no stage's metrics: pass that stage's
// name with `settle` true and the line gets "settle": NAME instead of "stage", so that selecting
// .stage == NAME gives exactly the requests behind that stage's numbers.
std::string record_json_line(const proto::Record& record, std::string_view worker_id,
                             std::string_view host, std::string_view stage = {},
                             bool settle = false);

// Streams records.jsonl through a JsonlWriter (jsonl_writer.hpp: its failure contract: a failed
// write is kept as a value, later records are dropped and counted, the run goes on and exits 3,
// the file never ends in a partial line).
class RecordsWriter {
 public:
  static constexpr size_t kFlushBytes = size_t{256} * 1024;

  // Creates or truncates `path`; throws std::runtime_error naming it and the OS error.
  explicit RecordsWriter(const std::filesystem::path& path);
  // target.models: each line gets "model" (after url_index), the conversation's draw
  // (model_index_for with the run's seed). Without it, no key.
  void set_models(std::vector<proto::ModelWeight> models, uint64_t seed);

  // Buffers one line; writes the buffer out once it holds kFlushBytes. Server-supplied text
  // that is not valid UTF-8 is written with U+FFFD in place of the bad bytes.
  // `stage` and `settle` as for record_json_line.
  void write(const proto::Record& record, std::string_view worker_id, std::string_view host = {},
             std::string_view stage = {}, bool settle = false);
  // The same with `metrics` = compute_request_metrics(record), computed once by the caller.
  void write(const proto::Record& record, const RequestMetrics& metrics, std::string_view worker_id,
             std::string_view host, std::string_view stage, bool settle);
  // Buffers one line the caller formatted (another layout of the same records: AIPerf's
  // profile_export.jsonl, aiperf_export.hpp); `line` is valid UTF-8 and holds no newline.
  void write_line(std::string_view line) { file_.write_line(line); }
  // Writes the buffer out; the run loop calls this periodically (e.g. every second).
  void flush() { file_.flush(); }
  // Flushes, fsyncs and closes, then checks that `path` still names the file written (a folder
  // removed mid-run fails here); later writes are dropped. Called by the destructor.
  void close() { file_.close(); }

  int64_t lines() const { return file_.lines(); }      // records given to write()
  int64_t written() const { return file_.written(); }  // records whose whole line is in the file
  int64_t lost() const { return file_.lost(); }
  bool failed() const { return file_.failed(); }
  // The first failure: the step and the OS error ("write: No space left on device"); "" if none.
  const std::string& error() const { return file_.error(); }
  // The failure as an output error (file, path, error, what is lost); nullopt when none.
  std::optional<OutputError> failure() const { return file_.failure(); }
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  JsonlWriter file_;
  rapidjson::StringBuffer scratch_;         // a session_control key of the body's own, checked
  std::vector<proto::ModelWeight> models_;  // target.models; empty: no "model" key
  uint64_t seed_ = 0;                       // the run's seed, for the model draw
};

}  // namespace convoy::controller
