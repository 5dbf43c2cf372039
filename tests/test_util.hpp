// Helpers shared by the test binaries: scratch directories, whole files, JSON documents,
// loopback sockets and processes. Test-only, so failures here may REQUIRE.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
inline rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  return doc;
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

// A loopback port that was free a moment ago: bound to port 0, read, closed.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A loopback TCP listener that never accepts: the kernel completes connections into its backlog
// and nothing ever answers them. Enough for a reachability probe, or a target that hangs.
class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~LoopbackListener() { ::close(fd_); }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

inline bool process_alive(int64_t pid) {
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

}  // namespace convoy::test
