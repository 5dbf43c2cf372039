// The controller's side of its workers: the two sockets, the registry of who has joined and
// how each one's clock and heartbeats stand, the local worker and mock processes, and the
// control conversation (Hello, the clock check's pings, Welcome or Reject, heartbeats, Stop).
// The run loop asks it who joined, who was lost and whether a results message is authentic; it
// knows nothing of conversations.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "controller/config/config.hpp"
#include "controller/run/local_processes.hpp"
#include "controller/run/registry.hpp"
#include "controller/run/run_sockets.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

struct RunFacts;

// What every worker is told in its Welcome: every target.* key as configured, `url` the target
// ("mock" resolved to the mock's address), session routing, cancellation, history, the seed and
// the tokenizer file (a local one; `server` counts nothing on workers).
proto::WorkerSettings worker_settings(const Config& c, const std::string& url);

class WorkerPlane {
 public:
  // `context`: the sockets' (nullptr: the plane's own); `clock`: the run's steady clock, which
  // stamps each ping. `facts` counts refused workers and forged messages for the report.
  WorkerPlane(zmq::context_t* context, const Liveness& liveness, std::function<int64_t()> clock,
              const Config& config, RunFacts& facts);

  // Binds the sockets (throws ConfigError naming the key when an endpoint cannot be bound).
  void open(bool own_workers_only);
  // What a worker is told in its Welcome once its clock check is done.
  void set_welcome(std::string run_id, proto::WorkerSettings settings);

  // Waits up to timeout_ns for either socket, then drains both (results first).
  void poll(int64_t timeout_ns, const RunSockets::ResultHandler& on_result,
            const RunSockets::ControlHandler& on_control) {
    sockets_->poll(timeout_ns, on_result, on_control);
  }
  // A control message of `worker_id`. `ending`: the run drains or stops (no one new joins).
  // Returns the worker that it welcomed, if it did.
  std::optional<std::string> on_control(const std::string& worker_id, zmq::message_t& payload,
                                        bool ending, int64_t now);
  // Results and Bye: the named worker, when the message carries its token; else counted.
  WorkerInfo* authentic(const std::string& worker_id, const std::string& token, const char* what);
  // Heartbeats out and clock checks on their deadlines; returns the workers found lost.
  std::vector<std::string> tick(int64_t now);
  void broadcast(const proto::Stop& stop);
  template <class T>
  void send(const std::string& worker_id, const T& msg) {
    sockets_->send(worker_id, msg);
  }
  // Every worker is gone: done or lost (remote workers), or exited (local ones).
  bool all_gone() const;

  WorkerRegistry& registry() { return registry_; }
  const WorkerRegistry& registry() const { return registry_; }
  LocalProcesses& local() { return local_; }
  const RunSockets& sockets() const { return *sockets_; }
  // `convoy run`'s own workers only, over ipc:// in a private folder: the startup is one line.
  bool own_workers_only() const { return own_workers_only_; }

 private:
  void on_hello(const std::string& worker_id, proto::Hello& hello, uint32_t version, bool ending,
                int64_t now);
  std::optional<std::string> on_pong(const std::string& worker_id, const proto::Pong& pong,
                                     bool ending, int64_t now);
  void refuse(const std::string& worker_id, const Refusal& why);
  // Once, when as many workers as expected are ready: how many, where and how long it took.
  void announce_ready(int64_t now);

  proto::Ping ping() { return proto::Ping{++ping_seq_, clock_()}; }

  std::function<int64_t()> clock_;
  const Config& config_;
  RunFacts& facts_;
  LocalProcesses local_;
  std::optional<zmq::context_t> own_context_;  // unless the caller gave one
  zmq::context_t* context_;
  std::optional<RunSockets> sockets_;
  WorkerRegistry registry_;
  std::string run_id_;
  proto::WorkerSettings settings_;
  uint64_t welcomed_ = 0;  // Welcomes sent: the next one's share of load.prefill_concurrency
  uint64_t ping_seq_ = 0;
  bool own_workers_only_ = false;
  int64_t opened_ns_ = 0;         // the run's clock when the sockets were bound
  bool announced_ready_ = false;  // announce_ready() said it
};

}  // namespace convoy::controller
