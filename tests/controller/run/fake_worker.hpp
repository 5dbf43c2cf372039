// A scripted stand-in for convoy-worker that speaks the wire protocol with cppzmq: DEALER
// (identity = worker id) to the controller's ROUTER, PUSH to the Welcome's results endpoint.
// It runs each assigned conversation instantly when its start time arrives (a window one as
// convoy-worker does: in the slot an end frees, or on a start; given back on Stop), and can be
// told to hang (go silent) to exercise the controller's liveness handling. Driven by pump(): no
// threads of its own, every wait bounded. It heartbeats every 10 ms, well inside the short
// liveness the protocol tests give the controller (RunSeams::liveness).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "proto/envelope.hpp"

namespace convoy::test {

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class FakeWorker {
 public:
  static constexpr int64_t kHeartbeatEveryNs = 10'000'000;
  static constexpr int64_t kHelloEveryNs = 100'000'000;

  FakeWorker(zmq::context_t& ctx, const std::string& control_endpoint, std::string id,
             uint32_t version = proto::kProtocolVersion)
      : id_(std::move(id)),
        version_(version),
        control_(ctx, zmq::socket_type::dealer),
        results_(ctx, zmq::socket_type::push) {
    control_.set(zmq::sockopt::routing_id, id_);
    control_.set(zmq::sockopt::linger, 0);
    results_.set(zmq::sockopt::linger, 1000);
    control_.connect(control_endpoint);
  }

  const std::string& id() const { return id_; }
  zmq::socket_t& control() { return control_; }

  // --- knobs ---
  // After completing this many conversations, send turn 0 of the next one (leaving it in
  // flight) and go silent: no pongs, heartbeats or results. -1 = never.
  int silent_after_completed = -1;
  // Reported in heartbeats; the Bye always reports 0.
  int64_t heartbeat_legacy_open_sessions = 0;
  // As a worker that could not decode its assignment: conversations whose index is a multiple
  // of this are reported failed by index instead of run (0 = never), and the conversations of
  // the first Assign batch at these positions as unreadable (UndecodableAssign).
  uint64_t fail_index_multiple = 0;
  std::vector<uint32_t> unreadable_positions_of_first_batch;
  // After completing this many conversations, leave mid-run as a signalled worker does: give
  // the window back unstarted and say bye. -1 = never.
  int leave_after_completed = -1;

  // --- what happened ---
  bool welcomed = false;
  bool rejected = false;
  std::string reject_reason;
  std::string results_endpoint;
  std::string token;  // from Welcome; every Results and Bye carries it
  bool silent = false;
  bool stop_starting = false;
  bool bye_sent = false;
  int completed = 0;
  int pings = 0;  // clock pings answered (kClockPings at registration, then the re-checks)
  std::vector<proto::Conversation> assigned;     // every conversation received, in order
  std::set<std::string> window_ids;              // those of them that came in window batches
  std::set<std::string> completed_ids;           // correlation ids run to the end
  std::set<std::string> failed_ids;              // reported failed (fail_* knobs)
  std::optional<std::string> left_in_flight_id;  // the one abandoned mid-conversation
  std::vector<std::string> unexpected;           // message types this worker did not expect

  void send_raw_control(const std::string& bytes) {
    (void)control_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  void send_raw_results(const std::string& bytes) {
    (void)results_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  template <class T>
  void send_control(const T& msg) {
    send_raw_control(proto::encode(msg, version_));
  }
  void hello() {
    send_control(proto::Hello{version_, id_, "fake-host", 1000 + static_cast<int64_t>(id_.size())});
    last_hello_ns_ = steady_ns();
  }

  // One round of work: drains every control message, runs due conversations, heartbeats.
  void step() {
    for (int i = 0; i < 10000; ++i) {
      zmq::message_t msg;
      if (!control_.recv(msg, zmq::recv_flags::dontwait)) break;
      on_control(msg);
    }
    if (silent || rejected) return;
    const int64_t now = steady_ns();
    if (!welcomed) {
      if (now - last_hello_ns_ > kHelloEveryNs) hello();
      return;
    }
    run_due(now);
    if (now - last_heartbeat_ns_ > kHeartbeatEveryNs) {
      proto::Heartbeat hb;
      hb.sent_ns = now;
      hb.active_conversations = static_cast<int64_t>(queue_.size());
      hb.legacy_open_sessions = heartbeat_legacy_open_sessions;
      send_control(hb);
      last_heartbeat_ns_ = now;
    }
  }

 private:
  void on_control(zmq::message_t& msg) {
    std::string error;
    auto d = proto::decode(msg.data(), msg.size(), &error);
    if (!d) {
      unexpected.push_back("undecodable: " + error);
      return;
    }
    switch (d->type) {
      case proto::MsgType::kWelcome:
        if (auto w = d->as<proto::Welcome>(); w && !welcomed) {
          welcomed = true;
          results_endpoint = w->results_endpoint;
          token = w->token;
          results_.connect(results_endpoint);
        }
        break;
      case proto::MsgType::kReject:
        rejected = true;
        if (auto r = d->as<proto::Reject>()) reject_reason = r->reason;
        break;
      case proto::MsgType::kPing:
        if (auto p = d->as<proto::Ping>(); p && !silent) {
          ++pings;
          proto::Pong pong{p->seq, p->controller_send_ns, steady_ns(), 0};
          pong.worker_send_ns = steady_ns();
          send_control(pong);
        }
        break;
      case proto::MsgType::kHeartbeat:
        break;
      case proto::MsgType::kAssign:
        if (auto a = d->as<proto::Assign>()) on_assign(*a);
        break;
      case proto::MsgType::kStop:
        if (auto s = d->as<proto::Stop>(); s && !silent) on_stop(s->cancel);
        break;
      default:
        unexpected.push_back(std::string(proto::to_string(d->type)));
    }
  }

  void on_assign(proto::Assign& a) {
    proto::Results report = new_batch();
    const bool first = ++batches_ == 1;
    for (uint32_t pos = 0; pos < a.conversations.size(); ++pos) {
      proto::Conversation& c = a.conversations[pos];
      assigned.push_back(c);
      if (a.window) window_ids.insert(c.correlation_id);
      const auto& unreadable = unreadable_positions_of_first_batch;
      if (first && std::find(unreadable.begin(), unreadable.end(), pos) != unreadable.end()) {
        failed_ids.insert(c.correlation_id);
        continue;
      }
      if (fail_index_multiple > 0 && c.index % fail_index_multiple == 0) {
        report.failed.push_back({c.index, "undecodable assignment: str size overflow"});
        failed_ids.insert(c.correlation_id);
        continue;
      }
      if (!a.window && stop_starting) {
        report.ended.push_back({c.index, proto::EndReason::kCancelled});  // never started
      } else if (!a.window) {
        queue_.push_back(std::move(c));
      } else if (stop_starting) {
        report.returned.push_back(c.index);
      } else {
        window_.push_back(std::move(c));  // waits for a slot this worker frees, or a start
      }
    }
    for (const proto::WindowStart& s : a.start) {
      auto it = std::find_if(window_.begin(), window_.end(), [&](const proto::Conversation& c) {
        return c.index == s.conversation_index;
      });
      if (it == window_.end()) continue;  // refilled here already, or given back
      it->start_ns = s.start_ns;
      queue_.push_back(std::move(*it));
      window_.erase(it);
    }
    if (first && !unreadable_positions_of_first_batch.empty()) {
      report.undecodable.push_back(
          {a.batch, unreadable_positions_of_first_batch, -1, "not a conversation"});
    }
    if (!report.failed.empty() || !report.undecodable.empty() || !report.returned.empty() ||
        !report.ended.empty()) {
      send_raw_results(proto::encode(report, version_));
    }
  }

  void on_stop(bool cancel) {
    stop_starting = true;
    // Nothing is mid-request here: every queued conversation ends unstarted.
    proto::Results batch = new_batch();
    for (const auto& c : queue_) batch.ended.push_back({c.index, proto::EndReason::kCancelled});
    queue_.clear();
    for (const auto& c : window_) batch.returned.push_back(c.index);  // never started
    window_.clear();
    if (!batch.ended.empty() || !batch.returned.empty()) {
      send_raw_results(proto::encode(batch, version_));
    }
    if (cancel && !bye_sent) {
      send_raw_results(proto::encode(proto::Bye{id_, token, "done", 0}, version_));
      bye_sent = true;
    }
  }

  proto::Results new_batch() const {
    proto::Results batch;
    batch.worker_id = id_;
    batch.token = token;
    return batch;
  }

  static proto::Record record_for(const proto::Conversation& c, uint32_t turn, int64_t now) {
    proto::Record r;
    r.x_request_id = c.correlation_id + "/" + std::to_string(turn);
    r.x_correlation_id = c.correlation_id;
    r.conversation_id = c.conversation_id;
    r.conversation_index = c.index;
    r.turn_index = turn;
    r.final_turn = turn + 1 == c.turns.size();
    r.phase = c.phase;
    r.intended_ns = turn == 0 ? c.start_ns : now;
    r.sent_ns = now;
    r.first_byte_ns = now + 1'000'000;
    r.first_token_ns = now + 1'000'000;
    r.second_token_ns = now + 2'000'000;
    r.last_token_ns = now + 3'000'000;
    r.end_ns = now + 3'000'000;
    r.chunk_gaps_ns = {1'000'000, 1'000'000};
    r.input_tokens = 10;
    r.output_tokens = 3;
    r.http_status = 200;
    return r;
  }

  void run_due(int64_t now) {
    if (stop_starting) return;
    proto::Results batch = new_batch();
    while (!queue_.empty() && queue_.front().start_ns <= now) {
      proto::Conversation c = std::move(queue_.front());
      queue_.pop_front();
      if (silent_after_completed >= 0 && completed >= silent_after_completed) {
        // Turn 0 done, the rest never comes: this conversation is in flight when we hang.
        batch.records.push_back(record_for(c, 0, now));
        left_in_flight_id = c.correlation_id;
        send_raw_results(proto::encode(batch, version_));
        silent = true;
        return;
      }
      for (uint32_t t = 0; t < c.turns.size(); ++t) batch.records.push_back(record_for(c, t, now));
      batch.ended.push_back({c.index, proto::EndReason::kCompleted});
      completed_ids.insert(c.correlation_id);
      ++completed;
      if (!window_.empty() && !leaving()) {
        // Concurrency refill, as convoy-worker does it: the window's next starts in this slot.
        proto::Conversation next = std::move(window_.front());
        window_.pop_front();
        batch.ended.back().refilled_by = static_cast<int64_t>(next.index);
        next.start_ns = now;
        queue_.push_back(std::move(next));
      }
    }
    const bool leave = leaving() && !stop_starting;
    if (leave) {
      // As a signalled convoy-worker: what ran has ended, the window goes back unstarted (in
      // the same batch as the last ends), then the Bye.
      for (const auto& c : window_) batch.returned.push_back(c.index);
      window_.clear();
      stop_starting = true;
    }
    if (!batch.records.empty() || !batch.ended.empty() || !batch.returned.empty()) {
      send_raw_results(proto::encode(batch, version_));
    }
    if (leave && !bye_sent) {
      send_raw_results(proto::encode(proto::Bye{id_, token, "done", 0}, version_));
      bye_sent = true;
    }
  }

  bool leaving() const { return leave_after_completed >= 0 && completed >= leave_after_completed; }

  std::string id_;
  uint32_t version_;
  zmq::socket_t control_;
  zmq::socket_t results_;
  std::deque<proto::Conversation> queue_;   // assigned, not yet run (start order = arrival order)
  std::deque<proto::Conversation> window_;  // window conversations: not started, hold no slot
  int64_t last_hello_ns_ = 0;
  int batches_ = 0;
  int64_t last_heartbeat_ns_ = 0;
};

// Steps every worker until `done()` or `timeout_s`, waking on control traffic or every 2 ms
// (conversations start on their own timers). Returns done().
template <class Done>
bool pump(std::vector<FakeWorker*> workers, double timeout_s, Done&& done) {
  const int64_t deadline = steady_ns() + static_cast<int64_t>(timeout_s * 1e9);
  std::vector<zmq::pollitem_t> items;
  for (FakeWorker* w : workers) items.push_back({w->control().handle(), 0, ZMQ_POLLIN, 0});
  while (!done()) {
    if (steady_ns() > deadline) return false;
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(2));
    for (FakeWorker* w : workers) w->step();
  }
  return true;
}

}  // namespace convoy::test
