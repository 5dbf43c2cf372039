// The live view as a person sees it: `convoy run` in a pseudo-terminal (openpty), its output
// played on a small screen model (\r, \n, cursor up, erase to the end): the view's lines are
// there, the stage lines logged during the run sit whole on lines of their own above the view,
// and the run ends with its files. With -q: no view and no info lines.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// `argv` run with a pseudo-terminal `columns` wide as its stdin, stdout and stderr.
struct PtyRun {
  std::optional<int> rc;  // nullopt: killed at the deadline
  std::string output;     // every byte the terminal received
};

PtyRun run_in_pty(std::vector<std::string> argv, int columns, double timeout_s) {
  PtyRun r;
  int master = -1;
  winsize size{};
  size.ws_row = 40;
  size.ws_col = static_cast<unsigned short>(columns);
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[8192];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: the child and its descendants closed the terminal
      r.output.append(buf, static_cast<size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.rc = WEXITSTATUS(status);
  ::close(master);
  return r;
}

// The terminal's screen and scrollback after `bytes`: what the view's sequences do (\r, \n,
// ESC[nA cursor up, ESC[J erase to the end); other escape sequences are dropped.
std::vector<std::string> play_on_screen(const std::string& bytes) {
  std::vector<std::string> lines(1);
  size_t row = 0, col = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      if (++row == lines.size()) lines.emplace_back();
    } else if (c == '\033' && i + 1 < bytes.size() && bytes[i + 1] == '[') {
      size_t j = i + 2;
      size_t n = 0;
      while (j < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[j]))) {
        n = n * 10 + static_cast<size_t>(bytes[j++] - '0');
      }
      if (j >= bytes.size()) break;
      if (bytes[j] == 'A') row -= std::min(row, std::max<size_t>(n, 1));
      if (bytes[j] == 'J') {
        lines[row].resize(std::min(lines[row].size(), col));
        lines.resize(row + 1);
      }
      i = j;
    } else {
      std::string& line = lines[row];
      if (line.size() < col) line.resize(col, ' ');
      if (col < line.size()) {
        line[col] = c;
      } else {
        line += c;
      }
      ++col;
    }
  }
  return lines;
}

bool pty_line_starts(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A quickstart-like run against the bundled mock in two 2 s stages, single-turn conversations.
fs::path write_pty_config(const fs::path& dir) {
  const fs::path config = dir / "live.yaml";
  std::ofstream(config) << "name: live\nseed: 42\ntarget:\n  url: mock\nmock:\n  workers: 2\n"
                        << "dataset:\n  type: synthetic\n  conversations: 400\n"
                        << "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                        << "  input_tokens: {mean: 64, stddev: 0}\n"
                        << "  output_tokens: {mean: 16, stddev: 0}\n"
                        << "load:\n  concurrency: 4\n  grace_s: 5\n  stages:\n"
                        << "    - {name: low, mode: concurrency, concurrency: 2, duration_s: 2}\n"
                        << "    - {name: high, mode: concurrency, concurrency: 4, duration_s: 2}\n"
                        << "workers:\n  local: 2\noutput:\n  html: false\n";
  return config;
}

}  // namespace

TEST_CASE("live view in a pseudo-terminal: drawn in place, log lines whole above it") {
  TempDir dir("e2e-live-pty");
  const fs::path out = dir.path() / "out";
  const PtyRun run = run_in_pty(
      {bin("controller/convoy"), "run", write_pty_config(dir.path()).string(), "-o", out.string()},
      100, 90);
  INFO(run.output);
  REQUIRE(run.rc == 0);
  CHECK(fs::exists(out / "summary.json"));
  CHECK(fs::exists(out / "records.jsonl"));
  // Redrawn in place: up the frame, erase to the end of the screen.
  CHECK(run.output.find("\033[J") != std::string::npos);

  const std::vector<std::string> screen = play_on_screen(run.output);
  std::string shown;
  for (const std::string& line : screen) shown += line + "\n";
  INFO(shown);
  int view_lines = 0, stage_logs = 0;
  for (const std::string& line : screen) {
    const bool view_line = pty_line_starts(line, "stage 1/2 ") ||
                           pty_line_starts(line, "stage 2/2 ") ||
                           pty_line_starts(line, "requests ") || pty_line_starts(line, "TTFT ");
    if (view_line) CHECK(line.size() < 100);  // cut to the terminal's width: never wraps
    if (pty_line_starts(line, "stage 2/2 high")) ++view_lines;
    if (line.find("convoy: info: stage ") != std::string::npos) {
      // A log line stands on its own: nothing of the view before or after it.
      CHECK(pty_line_starts(line, "convoy: info: stage "));
      CHECK(line.find("stage 1/2") == std::string::npos);
      CHECK(line.find("stage 2/2") == std::string::npos);
      CHECK(line.find("(last ") == std::string::npos);
      ++stage_logs;
    }
  }
  // The second stage's start, logged while the view was up, is its own whole line.
  CHECK(std::find(screen.begin(), screen.end(), "convoy: info: stage 1 high (concurrency 4)") !=
        screen.end());
  // The stage starts (1 and 2) and settles (2) logged while the view was up, one view left on
  // screen: its final frame, above the results.
  CHECK(stage_logs >= 3);
  CHECK(view_lines == 1);
  CHECK(shown.find(" req/s") != std::string::npos);
  CHECK(shown.find("TTFT p50 ") != std::string::npos);
  CHECK(shown.find("ITL p50 ") != std::string::npos);
  // The startup is one line: the local workers ready over their private ipc folder.
  const size_t ready = shown.find("convoy: info: 2 worker(s) ready (ipc://");
  CHECK(ready != std::string::npos);
  CHECK(shown.find("worker(s) ready", ready + 20) == std::string::npos);
  CHECK(shown.find("joined") == std::string::npos);
  CHECK(shown.find("controller listening on") == std::string::npos);
}

TEST_CASE("live view in a pseudo-terminal: -q prints neither the view nor info lines") {
  TempDir dir("e2e-live-pty-quiet");
  const fs::path out = dir.path() / "out";
  const PtyRun run = run_in_pty({bin("controller/convoy"), "run",
                                 write_pty_config(dir.path()).string(), "-o", out.string(), "-q"},
                                100, 90);
  INFO(run.output);
  REQUIRE(run.rc == 0);
  CHECK(fs::exists(out / "summary.json"));
  CHECK(run.output.find("\033[J") == std::string::npos);
  CHECK(run.output.find("stage 1/2") == std::string::npos);
  CHECK(run.output.find(": info: ") == std::string::npos);
}
