#include "controller/run/record_pipeline.hpp"

#include "common/log.hpp"
#include "controller/report/run_facts.hpp"

namespace convoy::controller {

void RecordPipeline::add(std::unique_ptr<RecordOutput> output) {
  outputs_.push_back(output.get());
  own_.push_back(std::move(output));
}

void RecordPipeline::add(RecordOutput& output) { outputs_.push_back(&output); }

size_t RecordPipeline::on_batch(std::string_view worker_id, std::string_view host,
                                int64_t offset_ns, std::vector<proto::Record>& records,
                                const RecordBounds& bounds) {
  for (RecordOutput* o : outputs_) o->begin_batch(worker_id);
  size_t accepted = 0;
  for (proto::Record& r : records) {
    // Onto the controller's clock: every timestamp, so records of all workers share one axis.
    for (const auto& [name, field] : proto::kRecordTimestamps) {
      if (r.*field != 0) r.*field -= offset_ns;
    }
    if (auto why = record_problem(r, bounds)) {
      drop_malformed(worker_id, r, *why);
      continue;
    }
    ++accepted;
    const RequestMetrics metrics = compute_request_metrics(r);
    RecordEvent e{r, metrics, worker_id, host, RecordRoute{}, false, false};
    e.release_only = proto::session_release_only(r);
    e.measured = r.phase == proto::Phase::kMeasure && !e.release_only;
    if (e.measured) ++measured_;
    if (router_) e.route = router_(r);
    for (RecordOutput* o : outputs_) o->on_record(e);
  }
  return accepted;
}

void RecordPipeline::drop_malformed(std::string_view worker_id, const proto::Record& r,
                                    const std::string& why) {
  if (facts_.malformed_records++ == 0) facts_.malformed_example = why;
  if (facts_.malformed_records <= 10 || facts_.malformed_records % 1000 == 0) {
    log_warn("dropped a malformed record from worker ", log_escape(worker_id), " (conversation ",
             r.conversation_index, " turn ", r.turn_index, "): ", why, " (",
             facts_.malformed_records, " so far)");
  }
}

void RecordPipeline::flush() {
  for (RecordOutput* o : outputs_) o->flush();
}

void RecordPipeline::close() {
  for (RecordOutput* o : outputs_) o->close();
}

std::vector<OutputError> RecordPipeline::failures() const {
  std::vector<OutputError> errors;
  for (const RecordOutput* o : outputs_) {
    if (auto e = o->failure()) errors.push_back(std::move(*e));
  }
  return errors;
}

}  // namespace convoy::controller
