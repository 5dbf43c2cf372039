// The processes `convoy run` starts on this machine: the bundled mock (target.url: mock) and
// workers.local convoy-worker processes. Supervision only: how each is started, whether one
// died before the run began, and stopping them in order at the end (workers first: they may
// still flush results, then the mock they were talking to).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/run/process.hpp"

namespace convoy::controller {

class LocalProcesses {
 public:
  // Starts convoy-mock as mock.* says and returns the URL it reports listening on. Throws
  // std::runtime_error when it cannot be started or reports no address.
  std::string start_mock(const Config& config);
  // Starts workers.local convoy-worker processes that connect to `control_endpoint` (with the
  // `convoy keygen` key pairs in turn when workers.curve_keys is set). Throws ConfigError when
  // workers.curve_keys holds no worker key.
  void start_workers(const Config& config, const std::string& control_endpoint);

  // The exit status of a local worker that has exited with an error, if one has (reaps).
  std::optional<int> failed_worker_status();
  // Every local worker has exited (true when none was started).
  bool workers_exited();
  size_t worker_count() const { return workers_.size(); }

  // SIGTERM, then SIGKILL after grace_ms: the workers, then the mock.
  void stop_workers(int grace_ms);
  void stop_mock(int grace_ms);

 private:
  std::optional<ChildProcess> mock_;
  std::vector<ChildProcess> workers_;
};

}  // namespace convoy::controller
