// A real Dynamo on loopback for a test: `scripts/dynamo up` on a free port with its
// own state folder, the frontend's URL and /metrics, each mocker worker's pid, /metrics and the
// id nvext.worker_id reports; `scripts/dynamo down` at scope exit (and, should the test process
// die first, by itself: --owner-pid).
//
//   DynamoOptions options;
//   options.affinity_ttl_s = 60;
//   DynamoStack stack(options, "my-test");
//   CONVOY_REQUIRE_DYNAMO(stack);   // skips the test (a MESSAGE says why) when PyPI is unreachable
//   ... stack.url() ...
//
// A stack that fails to come up for any other reason fails the test; CONVOY_DYNAMO_REQUIRED=1
// (CI) turns the PyPI skip into a failure too.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace convoy::test {

struct DynamoOptions {
  std::string version = "1.6.1";  // a version `scripts/dynamo versions` lists
  int workers = 4;                // mocker processes, 1..99
  std::optional<int> affinity_ttl_s =
      std::nullopt;                // --router-session-affinity-ttl-secs (header era)
  std::string router_mode = "kv";  // kv | round-robin | random
  double speedup_ratio = 10;       // mocker --speedup-ratio (1 = real-time simulated engine)
  std::vector<std::string> frontend_args = {};  // appended to `python -m dynamo.frontend`
  std::vector<std::string> mocker_args = {};    // appended to every `python -m dynamo.mocker`
};

struct DynamoProcess {
  pid_t pid = -1;           // leads its own process group
  std::string metrics_url;  // its Prometheus text endpoint
  std::string worker_id;    // workers: the decimal id nvext.worker_id reports; frontend: ""
};

class DynamoStack {
 public:
  explicit DynamoStack(DynamoOptions options, const std::string& name = "dynamo")
      : state_dir_(fresh_path(name + "-" + std::to_string(next_index()))) {
    std::vector<std::string> argv = {src("scripts/dynamo"),
                                     "up",
                                     "--version",
                                     options.version,
                                     "--workers",
                                     std::to_string(options.workers),
                                     "--router-mode",
                                     options.router_mode,
                                     "--port",
                                     std::to_string(free_port()),
                                     "--state-dir",
                                     state_dir_.string(),
                                     "--speedup-ratio",
                                     format_ratio(options.speedup_ratio),
                                     "--owner-pid",
                                     std::to_string(::getpid())};
    if (options.affinity_ttl_s) {
      argv.insert(argv.end(), {"--affinity-ttl-s", std::to_string(*options.affinity_ttl_s)});
    }
    for (const std::string& a : options.frontend_args)
      argv.insert(argv.end(), {"--frontend-arg", a});
    for (const std::string& a : options.mocker_args) argv.insert(argv.end(), {"--mocker-arg", a});
    Subprocess up(argv);
    // A first install downloads ~100 MB from PyPI; later ups take seconds.
    const std::optional<int> rc = up.wait(280);
    log_ = up.output();
    if (rc == 2 && log_.find("PyPI cannot be reached") != std::string::npos) {
      skip_reason_ = "real-Dynamo test skipped: PyPI cannot be reached to install ai-dynamo";
      return;
    }
    started_ = rc == 0 && read_stack();
  }
  ~DynamoStack() {
    if (!std::filesystem::exists(state_dir_ / "stack")) return;
    Subprocess down({src("scripts/dynamo"), "down", "--state-dir", state_dir_.string()});
    down.wait(60);
  }
  DynamoStack(const DynamoStack&) = delete;
  DynamoStack& operator=(const DynamoStack&) = delete;

  bool started() const { return started_; }
  // Non-empty when the stack was not started because PyPI could not be reached.
  const std::string& skip_reason() const { return skip_reason_; }
  // What `scripts/dynamo up` printed (for INFO on failure).
  const std::string& log() const { return log_; }

  const std::string& url() const { return url_; }  // http://127.0.0.1:PORT
  int port() const { return std::stoi(url_.substr(url_.rfind(':') + 1)); }
  const DynamoProcess& frontend() const { return frontend_; }
  const std::vector<DynamoProcess>& workers() const { return workers_; }
  std::vector<std::string> worker_ids() const {
    std::vector<std::string> ids;
    for (const DynamoProcess& w : workers_) ids.push_back(w.worker_id);
    return ids;
  }
  const std::filesystem::path& state_dir() const { return state_dir_; }
  std::filesystem::path frontend_log() const { return state_dir_ / "frontend.log"; }

  // SIGKILL a process group: the frontend, or worker `i` (a fault, not a shutdown).
  void kill_frontend() const { ::kill(-frontend_.pid, SIGKILL); }
  void kill_worker(size_t i) const { ::kill(-workers_.at(i).pid, SIGKILL); }

 private:
  // Parses the state folder's `stack` file (see scripts/dynamo).
  bool read_stack() {
    std::ifstream in(state_dir_ / "stack");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string kind;
      words >> kind;
      if (kind == "url") {
        words >> url_;
      } else if (kind == "frontend") {
        words >> frontend_.pid >> frontend_.metrics_url;
      } else if (kind == "worker") {
        DynamoProcess w;
        words >> w.pid >> w.metrics_url >> w.worker_id;
        workers_.push_back(w);
      }
    }
    return !url_.empty() && frontend_.pid > 0 && !workers_.empty();
  }

  static int next_index() {
    static int index = 0;  // several stacks in one test process get their own folders
    return index++;
  }

  // A port the kernel just gave out on 127.0.0.1 (the frontend binds it moments later).
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
  }

  static std::string format_ratio(double r) {
    std::ostringstream s;
    s << r;
    return s.str();
  }

  std::filesystem::path state_dir_;  // logs, discovery folder, `stack`; per test process
  std::string log_;
  std::string skip_reason_;
  bool started_ = false;
  std::string url_;
  DynamoProcess frontend_;
  std::vector<DynamoProcess> workers_;
};

// True when CI demands the real Dynamo (CONVOY_DYNAMO_REQUIRED=1): no skipping then.
inline bool dynamo_required() {
  const char* v = std::getenv("CONVOY_DYNAMO_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace convoy::test

// In a TEST_CASE: returns early with a MESSAGE when PyPI cannot be reached (unless
// CONVOY_DYNAMO_REQUIRED=1); fails the test when the stack did not come up for any other reason.
#define CONVOY_REQUIRE_DYNAMO(stack)                                            \
  do {                                                                          \
    if (!(stack).skip_reason().empty() && !::convoy::test::dynamo_required()) { \
      MESSAGE((stack).skip_reason());                                           \
      return;                                                                   \
    }                                                                           \
    INFO("scripts/dynamo up printed:\n" << (stack).log());                      \
    REQUIRE((stack).started());                                                 \
  } while (false)
