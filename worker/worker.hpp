// One convoy-worker process: registers with the controller over ZeroMQ, runs the conversations it
// is given on one event loop, and streams records back in batches.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "worker/event_loop.hpp"
#include "worker/transport.hpp"

namespace zmq {
class context_t;
}

namespace convoy::worker {

struct WorkerOptions {
  std::string connect;                  // controller control endpoint, e.g. tcp://10.0.0.1:5555
  std::string id;                       // worker id; default "<host>-<pid>"
  double first_contact_timeout_s = 60;  // how long to wait for the controller's welcome
  double controller_silence_s = 5;      // then cancel everything and exit: no orphan load
  std::string curve_server_key;         // controller.pub from `convoy keygen` ("" = no CURVE)
  std::string curve_key;                // this worker's worker-N.key
  // Liveness, batching and shutdown. The defaults are the product's; tests shrink them.
  double heartbeat_period_s = 1;    // Hello retries before the Welcome, heartbeats after it
  double flush_interval_s = 0.010;  // a batch of records waits at most this long
  size_t max_batch_records = 512;   // a batch this full is sent at once
  double shutdown_drain_s = 5;      // after a cancel: how long cancelled transfers may report
  // How long the last batches and the Bye may take to leave once the run is over: first those
  // the PUSH socket has not taken (high-water mark), then ZeroMQ's linger. 0.2 s when the
  // controller is lost.
  double results_linger_s = 2;
};

// What a test puts in place of the process's own resources; the defaults are the real ones.
struct WorkerSeams {
  zmq::context_t* context = nullptr;  // borrowed (it must outlive the Worker); null: its own
  // Makes the transport once the Welcome arrives; null: an HttpClient on the worker's loop.
  std::function<std::unique_ptr<Transport>(EventLoop&)> make_transport;
  int results_send_hwm = 0;  // the results PUSH socket's send high-water mark; 0: the default
};

// The results endpoint to connect to: `advertised` with a wildcard host replaced by the host of
// `connect` (the controller address this worker was given).
std::string reachable_endpoint(const std::string& advertised, const std::string& connect);

class Worker {
 public:
  explicit Worker(WorkerOptions options, WorkerSeams seams = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs until the controller ends the run, goes silent, or a signal arrives.
  // Exit codes: 0 done, 2 refused by the controller, 3 controller lost or unreachable.
  int run();

  // Async-signal-safe: asks the loop to cancel everything, flush and exit.
  static void request_stop_from_signal();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::worker
