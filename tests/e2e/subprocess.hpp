// Runs the real convoy binaries from tests: a child with captured output, a bounded wait, and
// a kill on scope exit so no test leaves a process behind.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace convoy::test {

class Subprocess {
 public:
  explicit Subprocess(std::vector<std::string> argv, std::vector<std::string> env = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      for (auto& e : env) ::putenv(e.data());
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_fd_ = fds[0];
  }
  ~Subprocess() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
  }
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }
  void signal(int sig) { ::kill(pid_, sig); }

  // Reads output until the process exits or `timeout_s` passes; the exit code (128+signal when
  // killed), or nullopt on timeout.
  std::optional<int> wait(double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!status_) {
      read_available(50);
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        while (read_available(0)) {
        }
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    }
    return status_;
  }

  // Reads until `needle` appears in the output (true) or the timeout passes (false).
  bool wait_for_output(const std::string& needle, double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (output_.find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      if (!read_available(50) && status_) return false;
    }
    return true;
  }

 private:
  bool read_available(int timeout_ms) {
    if (out_fd_ < 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[8192];
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n <= 0) return false;
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
  std::optional<int> status_;
};

inline std::string bin(const std::string& rel) {
  return std::string(CONVOY_BINARY_DIR) + "/" + rel;
}
inline std::string src(const std::string& rel) {
  return std::string(CONVOY_SOURCE_DIR) + "/" + rel;
}

}  // namespace convoy::test
