#include "controller/run/local_processes.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/log.hpp"

namespace convoy::controller {

std::string LocalProcesses::start_mock(const Config& config) {
  const MockConfig& m = config.mock;
  std::vector<std::string> argv = {find_executable("convoy-mock"),
                                   "--host",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--workers",
                                   std::to_string(m.workers),
                                   "--contract",
                                   m.contract,
                                   "--router-mode",
                                   m.router_mode,
                                   "--itl-ms",
                                   std::to_string(m.itl_ms),
                                   "--speedup",
                                   std::to_string(m.speedup),
                                   "--engine-sessions",
                                   m.engine_sessions ? "true" : "false",
                                   "--model",
                                   config.target.model};
  // target.models: the mock serves every one (models[0] is target.model).
  for (size_t i = 1; i < config.target.models.size(); ++i) {
    argv.insert(argv.end(), {"--model", config.target.models[i].name});
  }
  for (const auto& a : m.extra_args) argv.push_back(a);
  mock_ = ChildProcess::spawn(argv, /*capture_stdout=*/true);
  const std::string prefix = "convoy-mock listening on ";
  for (int i = 0; i < 50; ++i) {
    auto line = mock_->read_line(10000);
    if (!line) break;
    if (line->rfind(prefix, 0) == 0) {
      std::string url = line->substr(prefix.size());
      log_info("started convoy-mock at ", url);
      return url;
    }
  }
  throw std::runtime_error("convoy-mock did not report its address (is it built?)");
}

void LocalProcesses::start_workers(const Config& config, const std::string& control_endpoint) {
  if (config.workers.local <= 0) return;
  const std::string exe = find_executable("convoy-worker");
  std::vector<std::string> worker_keys;
  if (config.workers.curve_keys) {
    const std::filesystem::path dir = *config.workers.curve_keys;
    for (int i = 0; std::filesystem::exists(dir / ("worker-" + std::to_string(i) + ".key")); ++i) {
      worker_keys.push_back((dir / ("worker-" + std::to_string(i) + ".key")).string());
    }
    if (worker_keys.empty()) {
      throw ConfigError("workers.curve_keys: no worker-N.key files in " + dir.string());
    }
  }
  for (int i = 0; i < config.workers.local; ++i) {
    std::vector<std::string> argv = {
        exe, "--connect", control_endpoint, "--id", "local-" + std::to_string(i), "--wait-s", "30"};
    if (!worker_keys.empty()) {
      argv.push_back("--curve-server-key");
      argv.push_back(
          (std::filesystem::path(*config.workers.curve_keys) / "controller.pub").string());
      argv.push_back("--curve-key");
      argv.push_back(worker_keys[static_cast<size_t>(i) % worker_keys.size()]);
    }
    workers_.push_back(ChildProcess::spawn(argv, /*capture_stdout=*/false));
  }
}

std::optional<int> LocalProcesses::failed_worker_status() {
  for (auto& child : workers_) {
    if (!child.running() && child.exit_status() && *child.exit_status() != 0) {
      return child.exit_status();
    }
  }
  return std::nullopt;
}

bool LocalProcesses::workers_exited() {
  return std::none_of(workers_.begin(), workers_.end(),
                      [](ChildProcess& c) { return c.running(); });
}

void LocalProcesses::stop_workers(int grace_ms) {
  for (auto& child : workers_) child.stop(grace_ms);
}

void LocalProcesses::stop_mock(int grace_ms) {
  if (mock_) mock_->stop(grace_ms);
}

}  // namespace convoy::controller
