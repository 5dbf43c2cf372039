// Helpers shared by the test binaries: scratch directories, whole files, JSON documents,
// loopback sockets and processes. Test-only, so failures here may REQUIRE.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace convoy::test {

// `<temp>/convoy-<name>-<pid>` with nothing there: for an output directory the code under test
// creates itself. The pid keeps concurrent test processes apart; `name` keeps tests apart.
inline std::filesystem::path fresh_path(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("convoy-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// fresh_path(name), created empty.
inline std::filesystem::path fresh_dir(const std::string& name) {
  std::filesystem::path dir = fresh_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

// A directory with a unique name (`<temp>/<prefix>XXXXXX`, mkdtemp), removed at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The whole file ("" when it cannot be opened).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// `text` parsed; the caller checks HasParseError() where it matters.
// Numbers in full precision: tests compare values that went through JSON text exactly, and
// rapidjson's default parsing may be one unit in the last place off.
inline rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.c_str(), text.size());
  return doc;
}

// A JSON value written back compactly, for comparing against literal text.
inline std::string to_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return buffer.GetString();
}

// The member names of a JSON object.
inline std::set<std::string> keys_of(const rapidjson::Value& v) {
  std::set<std::string> keys;
  for (const auto& m : v.GetObject()) keys.insert(m.name.GetString());
  return keys;
}

inline rapidjson::Document read_json(const std::filesystem::path& path) {
  return parse_json(read_file(path));
}

// One document per line; every line must parse (a blank line fails too).
inline std::vector<rapidjson::Document> read_jsonl(const std::filesystem::path& path) {
  std::vector<rapidjson::Document> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(parse_json(line));
    REQUIRE_FALSE(out.back().HasParseError());
  }
  return out;
}

// The what() of the `Error` that `f` throws; "" when it throws none.
template <typename Error, typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A loopback TCP socket bound to a port of the kernel's choice (port 0), optionally listening.
// The port stays taken for the socket's lifetime, so nothing else can bind it between the test
// choosing it and using it (unlike binding, closing and hoping).
class LoopbackSocket {
 public:
  enum class Mode { kBoundOnly, kListening };
  explicit LoopbackSocket(Mode mode) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    if (mode == Mode::kListening) REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~LoopbackSocket() { close(); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;

  int fd() const { return fd_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A loopback port that refuses every connection: bound but not listening, so a connect gets
// RST (ECONNREFUSED) at once, and no other process can take the port while this lives.
class RefusingPort {
 public:
  int port() const { return socket_.port(); }
  std::string url() const { return socket_.url(); }

 private:
  LoopbackSocket socket_{LoopbackSocket::Mode::kBoundOnly};
};

// A loopback TCP listener that never accepts: the kernel completes connections into its backlog
// and nothing ever answers them. Enough for a reachability probe, or a target that hangs.
class LoopbackListener {
 public:
  int port() const { return socket_.port(); }
  std::string url() const { return socket_.url(); }

 private:
  LoopbackSocket socket_{LoopbackSocket::Mode::kListening};
};

// Waits until `ready()` holds, checking it again whenever something changes in `dir` (a file
// created, written, moved or removed there: inotify) or, while `dir` does not exist yet, in its
// parent. True when ready; false once `timeout_s` passes. For waiting on what a process under
// test writes without sleeping: the check runs after the watches are set, so no change is missed.
template <typename Ready>
bool wait_for_change(const std::filesystem::path& dir, Ready&& ready, double timeout_s) {
  constexpr uint32_t kChanges =
      IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE;
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  REQUIRE(fd >= 0);
  ::inotify_add_watch(fd, dir.parent_path().c_str(), IN_CREATE | IN_MOVED_TO);
  bool watching_dir = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool done = false;
  while (true) {
    if (!watching_dir) watching_dir = ::inotify_add_watch(fd, dir.c_str(), kChanges) >= 0;
    done = ready();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (done || left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left.count()) + 1);
    alignas(inotify_event) char events[4096];
    while (::read(fd, events, sizeof events) > 0) {
    }
  }
  ::close(fd);
  return done;
}

inline bool process_alive(int64_t pid) {
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

}  // namespace convoy::test
