#include <algorithm>

#include "common/log.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/run/run_impl.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

void Run::on_control(const std::string& worker_id, zmq::message_t& payload) {
  const int64_t t = now();
  std::string error;
  auto d = proto::decode(payload.data(), payload.size(), &error);
  if (!d) {
    log_warn("dropped a malformed message from ", log_escape(worker_id), ": ", log_escape(error));
    return;
  }
  switch (d->type) {
    case proto::MsgType::kHello:
      if (auto hello = d->as<proto::Hello>()) on_hello(worker_id, *hello, d->version, t);
      break;
    case proto::MsgType::kPong:
      if (auto pong = d->as<proto::Pong>()) on_pong(worker_id, *pong, t);
      break;
    case proto::MsgType::kHeartbeat:
      if (auto hb = d->as<proto::Heartbeat>()) registry_.on_heartbeat(worker_id, *hb, t);
      break;
    default:
      registry_.on_seen(worker_id, t);
      log_warn("dropped an unexpected ", proto::to_string(d->type), " from ",
               log_escape(worker_id));
  }
}

void Run::refuse_worker(const std::string& worker_id, const Refusal& why) {
  // A flood of hellos is logged in moderation; every refusal is counted in summary.json.
  if (++facts_.rejected_workers <= 10 || facts_.rejected_workers % 100 == 0) {
    log_warn("refused worker ", log_escape(worker_id), " (", facts_.rejected_workers,
             " refused so far): ", log_escape(why.reason, 512));
  }
  send_to(worker_id, proto::Reject{why.reason, why.retry ? config_.workers.ready_timeout_s : 0});
}

// A worker is sent pings at its hello and its Welcome (with its results token) only once its
// clock check is done and a slot is free (on_pong): a peer that only says hello holds nothing.
void Run::on_hello(const std::string& worker_id, proto::Hello& hello, uint32_t version, int64_t t) {
  if (hello.worker_id != worker_id) hello.worker_id = worker_id;
  if (version != proto::kProtocolVersion) hello.protocol_version = version;
  const WorkerInfo* known = registry_.find(worker_id);
  const bool registered =
      known && known->state != WorkerState::kLost && known->state != WorkerState::kDone;
  const bool ending = machine_->phase() >= RunPhase::kDrain;
  if (!registered && ending) return refuse_worker(worker_id, Refusal{"the run is ending"});
  // Never more workers than workers.expect at once: late joiners only replace lost ones.
  const auto max_live = static_cast<size_t>(config_.expected_workers());
  if (auto err = registry_.on_hello(hello, t, max_live)) return refuse_worker(worker_id, *err);
  WorkerInfo* w = registry_.find(worker_id);
  // A repeat before any pong is answered with a ping again (the first may never have arrived).
  if (!w || w->state != WorkerState::kConnecting || !w->samples.empty()) return;
  send_to(worker_id, proto::Ping{++ping_seq_, now()});
}

void Run::on_pong(const std::string& worker_id, const proto::Pong& pong, int64_t t) {
  WorkerInfo* w = registry_.find(worker_id);
  if (!w) return;
  const bool ending = machine_->phase() >= RunPhase::kDrain;
  const auto max_live = ending ? size_t{0} : static_cast<size_t>(config_.expected_workers());
  const bool became_ready = registry_.on_pong(worker_id, pong, t, max_live);
  if (w->state == WorkerState::kConnecting && !w->handshake_done()) {
    send_to(worker_id, proto::Ping{++ping_seq_, now()});
  }
  if (w->state == WorkerState::kConnecting && w->handshake_done()) {
    // Its clock check is done but every slot was taken meanwhile: it may try again.
    registry_.forget(worker_id);
    if (ending) return refuse_worker(worker_id, Refusal{"the run is ending"});
    return refuse_worker(
        worker_id, Refusal{"worker " + worker_id + " refused for now: the run already has " +
                               std::to_string(max_live) + " worker(s), as many as workers.expect",
                           true});
  }
  if (!became_ready) return;
  w->token = random_token();
  send_to(worker_id, proto::Welcome{run_id_, sockets_->results_endpoint(),
                                    worker_settings(config_, url_), w->token});
  log_info("worker ", log_escape(worker_id), " (", log_escape(w->host), " pid ", w->pid,
           ") joined; clock offset ", w->offset_ns(), " ns (rtt ", w->best->rtt_ns, " ns)");
  const RunPhase p = machine_->phase();
  if (p == RunPhase::kWarmup || p == RunPhase::kMeasure) {
    sharder_.add_worker(worker_id);  // a late joiner takes new conversations
  }
}

void Run::on_result(zmq::message_t& payload) {
  std::string error;
  auto d = proto::decode_in_place(payload.data(), payload.size(), &error);  // payload outlives d
  if (!d) {
    log_warn("dropped a malformed result batch: ", log_escape(error));
    return;
  }
  if (d->type == proto::MsgType::kBye) {
    // The worker's results socket carries its bye after every batch: all its records are in.
    if (auto bye = d->as<proto::Bye>()) {
      WorkerInfo* w = authentic(bye->worker_id, bye->token, "bye");
      if (!w) return;
      // A worker declared lost stays lost: its conversations were already counted lost.
      if (w->state != WorkerState::kLost) w->state = WorkerState::kDone;
      w->last_heartbeat.legacy_open_sessions = bye->legacy_open_sessions;
      sharder_.remove_worker(bye->worker_id);
    }
    return;
  }
  if (d->type != proto::MsgType::kResults) {
    log_warn("dropped an unexpected ", proto::to_string(d->type), " on the results socket");
    return;
  }
  auto results = d->as<proto::Results>();
  if (!results) {
    log_warn("dropped a result batch of the wrong shape");
    return;
  }
  if (!authentic(results->worker_id, results->token, "results")) return;
  registry_.on_seen(results->worker_id, now());
  on_records(results->worker_id, results->records);
  for (const auto& e : results->ended) on_end(results->worker_id, e);
  for (const auto& f : results->failed) {
    on_failed(results->worker_id, f.conversation_index, f.error);
  }
  for (const auto& u : results->undecodable) on_undecodable(results->worker_id, u);
  on_returned(results->worker_id, results->returned);
}

void Run::on_returned(const std::string& worker_id, const std::vector<uint64_t>& returned) {
  if (returned.empty()) return;
  // A worker gives its window back once it stops starting: after a Stop, or while the run still
  // starts conversations when it is leaving (a signal; it lost the controller). A leaving worker
  // takes no new conversations (as after its Bye), and what it gave back goes to the others,
  // so load.sessions stays exact and load.requests' returned turns are not assigned to it again.
  const RunPhase p = machine_->phase();
  const bool leaving = p == RunPhase::kWarmup || p == RunPhase::kMeasure;
  if (leaving) sharder_.remove_worker(worker_id);
  for (uint64_t index : returned) {
    const auto r = in_flight_.returned(worker_id, index, &budget_);
    if (r == InFlight::Returned::kNotHeld || !scheduler_ || index < seq_base_) continue;
    if (r == InFlight::Returned::kSlot) scheduler_->on_end(now());
    if (leaving) scheduler_->give_back(index - seq_base_);
  }
}

WorkerInfo* Run::authentic(const std::string& worker_id, const std::string& token,
                           const char* what) {
  // The PULL socket takes pushes from anyone who reaches it: only the token issued in a
  // worker's Welcome (on its own control connection) proves a message is that worker's.
  WorkerInfo* w = registry_.find(worker_id);
  if (w && !w->token.empty() && tokens_equal(token, w->token)) return w;
  if (++facts_.forged_messages <= 10 || facts_.forged_messages % 1000 == 0) {
    log_warn("dropped a ", what, " message claiming to be worker ", log_escape(worker_id), " (",
             w ? "wrong token" : "no such worker", "; ", facts_.forged_messages,
             " dropped so far)");
  }
  return nullptr;
}

void Run::on_failed(const std::string& worker_id, uint64_t index, const std::string& error) {
  const bool held_no_slot = in_flight_.in_window(index);
  if (!in_flight_.end(worker_id, index, budget_)) return;
  const std::string id = correlation_id(config_.seed, index);  // = the conversation's
  facts_.failed_conversations.push_back(id);
  if (facts_.failed_conversations.size() <= 20) {
    log_error("conversation ", id, " failed on worker ", log_escape(worker_id),
              " without being sent: ", log_escape(error, 512));
  }
  progress_.on_conversation_end(proto::EndReason::kAborted);
  if (live_) live_->on_conversation_finished("failed");
  if (held_no_slot) return;  // a window conversation: it never held a slot
  if (scheduler_ && index >= seq_base_) scheduler_->on_end(now());
}

void Run::on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u) {
  const std::vector<uint64_t> failed = in_flight_.undecodable(worker_id, u);
  log_error("worker ", log_escape(worker_id), " could not read ", failed.size(),
            " conversation(s) of assignment batch ", u.batch, ": ", log_escape(u.error, 512));
  for (uint64_t index : failed) on_failed(worker_id, index, u.error);
}

void Run::on_records(const std::string& worker_id, std::vector<proto::Record>& records) {
  WorkerInfo* w = registry_.find(worker_id);
  const int64_t offset = w ? w->offset_ns() : 0;
  const std::string& host = w ? w->host : worker_id;
  live::WorkerSeries* live_worker = live_ ? &live_->worker(worker_id) : nullptr;  // per batch
  const RecordBounds bounds{started_ns_, now(), config_.target.urls.size()};
  for (auto& r : records) {
    // Onto the controller's clock: every timestamp, so records of all workers share one axis.
    for (int64_t* t : {&r.intended_ns, &r.sent_ns, &r.first_byte_ns, &r.first_token_ns,
                       &r.second_token_ns, &r.last_token_ns, &r.end_ns, &r.first_output_token_ns}) {
      if (*t != 0) *t -= offset;
    }
    if (auto why = record_problem(r, bounds)) {
      drop_malformed(worker_id, r, *why);
      continue;
    }
    if (w) ++w->records;
    in_flight_.on_record(r);
    // final_marker close_request's extra request and early releases: written and counted apart
    // (metrics skip them), but not measured requests: not in load.requests, the breaker or the
    // progress line.
    const bool release_only = proto::session_release_only(r);
    const bool measured = r.phase == proto::Phase::kMeasure && !release_only;
    if (measured) ++measure_requests_;
    // Load profiles: a settle request is in no metric, the whole run's included.
    std::string_view stage;
    bool settle = false;
    if (route_record(r, stage, settle)) metrics_->add(r);
    if (breaker_ && measured) breaker_->add(r.end_ns, r.error.kind != proto::ErrorKind::kNone);
    facts_.add(r);
    if (records_) records_->write(r, worker_id, host, stage, settle);
    if (aiperf_records_) aiperf_records_->write(r, worker_id);
    if (live_worker) {
      live_->on_record(*live_worker, stage, r);
      // Started: its first request ended (summary.json counts sessions the same way).
      if (r.turn_index == 0 && r.subagent < 0 && !release_only) {
        live_->on_conversation_started();
      }
    }
    if (!release_only) progress_.on_record(r);
  }
}

void Run::drop_malformed(const std::string& worker_id, const proto::Record& r,
                         const std::string& why) {
  if (facts_.malformed_records++ == 0) facts_.malformed_example = why;
  if (facts_.malformed_records <= 10 || facts_.malformed_records % 1000 == 0) {
    log_warn("dropped a malformed record from worker ", log_escape(worker_id), " (conversation ",
             r.conversation_index, " turn ", r.turn_index, "): ", why, " (",
             facts_.malformed_records, " so far)");
  }
}

void Run::on_end(const std::string& worker_id, const proto::ConversationEnd& end) {
  // Not the sender's (re-homed or lost): nothing to do. A window conversation only ever starts
  // in a slot (a refill announced in an earlier end, or the controller's start; a salvaged
  // window batch goes into the window too), so every conversation that ends held one.
  if (!in_flight_.end(worker_id, end.conversation_index, budget_)) return;
  count_stage_of_.erase(end.conversation_index);
  facts_.sessions.add_end(end);
  progress_.on_conversation_end(end.reason);
  if (live_) live_->on_conversation_finished(end.reason);
  // Concurrency refill: the worker started a window conversation in the slot: still in use.
  if (end.refilled_by >= 0 &&
      in_flight_.refilled(worker_id, static_cast<uint64_t>(end.refilled_by))) {
    return;
  }
  if (scheduler_ && end.conversation_index >= seq_base_) scheduler_->on_end(now());
}

void Run::on_worker_lost(const std::string& worker_id, int64_t t) {
  sharder_.remove_worker(worker_id);
  // Re-home only what never started, and only while a survivor can take it. A window
  // conversation goes out again, except under load.requests: the worker may have started it in
  // a slot of its own by an end that never arrived, and the cap must not be exceeded, so it
  // keeps its commitment and is lost with the worker.
  const bool can_rehome = machine_->phase() < RunPhase::kDrain && !sharder_.empty();
  const bool exact_requests = budget_.limited();
  auto taken = in_flight_.take_worker(worker_id, [&](const InFlight::Entry& e) {
    if (e.window) return !exact_requests || e.phase != proto::Phase::kMeasure;
    return can_rehome && !e.started && e.intended_ns > t;
  });
  for (const auto& [index, e] : taken.rehome) {
    // A window conversation held no slot: it goes out again, to its new worker, in order.
    if (!e.window) {
      assign(index, e.intended_ns, e.phase);
    } else if (scheduler_ && index >= seq_base_) {
      scheduler_->give_back(index - seq_base_);
    }
  }
  for (uint64_t index : taken.lost) {
    facts_.lost_conversations.push_back(correlation_id(config_.seed, index));
    if (live_) live_->on_conversation_finished("lost");
    if (scheduler_ && index >= seq_base_) scheduler_->on_end(t);
  }
  for (uint64_t index : taken.lost_window) {  // they held no slot
    facts_.lost_conversations.push_back(correlation_id(config_.seed, index));
    if (live_) live_->on_conversation_finished("lost");
  }
  facts_.lost_workers.push_back(worker_id);
  const double silent_s = static_cast<double>(registry_.liveness().lost_after_ns()) / 1e9;
  log_error("worker ", worker_id, " lost (no heartbeat for ", silent_s, " s): ", taken.lost.size(),
            " conversation(s) in flight lost, ", taken.lost_window.size(),
            " waiting in its window lost, ", taken.rehome.size(), " re-homed");
  in_flight_.flush(send_assign_);
  const RunPhase p = machine_->phase();
  if (sharder_.empty() && p != RunPhase::kStarting && p != RunPhase::kDone) {
    incomplete_ = true;
    incomplete_reason_ = "all workers lost";
    log_error("all workers lost: ending the run with partial results");
    raise(RunEvent::kAllWorkersLost, t);
  }
}

}  // namespace convoy::controller
