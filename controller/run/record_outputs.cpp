#include "controller/run/record_outputs.hpp"

#include <exception>

#include "common/log.hpp"
#include "controller/live/live_metrics.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/progress.hpp"

namespace convoy::controller {

void RunMetricsOutput::on_record(const RecordEvent& e) {
  if (e.in_metrics()) metrics_.add(e.record, e.metrics);
}

void FactsOutput::on_record(const RecordEvent& e) { facts_.add(e.record); }

void RecordsFileOutput::on_record(const RecordEvent& e) {
  writer_.write(e.record, e.metrics, e.worker_id, e.host, e.route.stage, e.route.settle);
}

void LiveOutput::begin_batch(std::string_view worker_id) { worker_ = &live_.worker(worker_id); }

void LiveOutput::on_record(const RecordEvent& e) {
  live_.on_record(*worker_, e.route.stage, e.record, e.metrics);
  // Started: its first request ended (summary.json counts sessions the same way).
  if (e.record.turn_index == 0 && e.record.subagent < 0 && !e.release_only) {
    live_.on_conversation_started();
  }
}

void ProgressOutput::on_record(const RecordEvent& e) {
  if (e.release_only) return;
  progress_.on_record(e.record, e.metrics, e.route.settle ? -1 : e.route.stage_index);
}

void AiperfRecordsOutput::on_record(const RecordEvent& e) {
  writer_.write(e.record, e.metrics, e.worker_id);
  // A family's lead names the session (a sub-agent's records carry their own ids).
  if (e.record.subagent < 0)
    sessions_.emplace(e.record.conversation_index, e.record.x_correlation_id);
}

void AiperfRecordsOutput::close() {
  writer_.close();
  // A cycled dataset repeats its conversations under new ids: index modulo the size.
  for (const auto& [index, session_id] : sessions_) {
    try {
      inputs_.write_session(session_id, dataset_.conversation(index % dataset_.size()));
    } catch (const std::exception& e) {  // a dataset file changed under the run
      log_warn("inputs.json: conversation ", index, " could not be read again: ", e.what());
    }
  }
  inputs_.close();
}

std::optional<OutputError> AiperfRecordsOutput::failure() const {
  if (auto e = writer_.failure()) return e;
  return inputs_.failure();
}

}  // namespace convoy::controller
