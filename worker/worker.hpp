// One convoy-worker process: registers with the controller over ZeroMQ, runs the conversations it
// is given on one event loop, and streams records back in batches.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace convoy::worker {

struct WorkerOptions {
  std::string connect;                  // controller control endpoint, e.g. tcp://10.0.0.1:5555
  std::string id;                       // worker id; default "<host>-<pid>"
  double first_contact_timeout_s = 60;  // how long to wait for the controller's welcome
  double controller_silence_s = 5;      // then cancel everything and exit: no orphan load
  std::string curve_server_key;         // controller.pub from `convoy keygen` ("" = no CURVE)
  std::string curve_key;                // this worker's worker-N.key
};

// The results endpoint to connect to: `advertised` with a wildcard host replaced by the host of
// `connect` (the controller address this worker was given).
std::string reachable_endpoint(const std::string& advertised, const std::string& connect);

class Worker {
 public:
  explicit Worker(WorkerOptions options);
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
