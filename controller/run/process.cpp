#include "controller/run/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace convoy::controller {

namespace {
int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
}  // namespace

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, bool capture_stdout) {
  if (argv.empty()) throw std::runtime_error("spawn: empty command");
  int pipe_fds[2] = {-1, -1};
  if (capture_stdout && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  // A pipe that reports exec failure: it closes on a successful exec (O_CLOEXEC).
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    if (capture_stdout) ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    int e = errno;
    [[maybe_unused]] auto n = ::write(err_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  int exec_errno = 0;
  ssize_t got = ::read(err_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(err_pipe[0]);
  ChildProcess child;
  child.pid_ = pid;
  if (capture_stdout) {
    ::close(pipe_fds[1]);
    child.stdout_fd_ = pipe_fds[0];
  }
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    child.stop(0);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(exec_errno));
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) stop(2000);
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) stop(2000);
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
    pid_ = std::exchange(other.pid_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    buffered_ = std::move(other.buffered_);
    status_ = other.status_;
  }
  return *this;
}

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = decode_status(status);
    pid_ = -1;
    return false;
  }
  return r == 0;
}

std::optional<std::string> ChildProcess::read_line(int timeout_ms) {
  if (stdout_fd_ < 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto nl = buffered_.find('\n'); nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

int ChildProcess::stop(int grace_ms) {
  if (pid_ <= 0) return status_.value_or(-1);
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_now();
      break;
    }
    ::poll(nullptr, 0, 5);  // waiting on the child; there is no fd to wait on
  }
  return status_.value_or(-1);
}

void ChildProcess::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_) status_ = decode_status(status);
  pid_ = -1;
}

std::string find_executable(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("CONVOY_BIN_DIR"); dir && *dir) candidates.push_back(dir);
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = self.parent_path();
    candidates.push_back(dir);
    candidates.push_back(dir.parent_path() / "worker");
    candidates.push_back(dir.parent_path() / "mock");
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) candidates.push_back(p.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string looked;
  for (const auto& dir : candidates) {
    fs::path f = dir / name;
    if (::access(f.c_str(), X_OK) == 0) return f.string();
    if (looked.size() < 400) looked += " " + dir.string();
  }
  throw std::runtime_error("cannot find the '" + name + "' executable (looked in:" + looked +
                           "; set CONVOY_BIN_DIR)");
}

}  // namespace convoy::controller
