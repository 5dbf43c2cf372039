// Child processes the controller starts (local workers, the bundled mock): move-only owners that
// never leave a process behind. Children get their own process group, so a terminal's Ctrl-C
// reaches only the controller, which then stops them in order, and PR_SET_PDEATHSIG, so they
// die with the controller even when it is SIGKILLed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace convoy::controller {

class ChildProcess {
 public:
  ChildProcess() = default;
  // Throws std::runtime_error when the program cannot be started.
  static ChildProcess spawn(const std::vector<std::string>& argv, bool capture_stdout);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_fd_; }                // -1 unless captured
  bool running();                                             // reaps it when it has exited
  std::optional<int> exit_status() const { return status_; }  // exit code, or 128+signal

  // Reads one line from the captured stdout, waiting at most timeout_ms. nullopt on timeout/EOF.
  std::optional<std::string> read_line(int timeout_ms);
  // SIGTERM, wait up to grace_ms, then SIGKILL; returns the exit status.
  int stop(int grace_ms);
  void kill_now();

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffered_;
  std::optional<int> status_;
};

// Finds a convoy executable: $CONVOY_BIN_DIR, next to this executable, in the build tree
// (../worker, ../mock), then PATH. Throws std::runtime_error naming where it looked.
std::string find_executable(const std::string& name);

}  // namespace convoy::controller
