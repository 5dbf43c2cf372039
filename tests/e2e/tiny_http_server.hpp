// A tiny HTTP/1.1 server on 127.0.0.1 for end-to-end tests that need a server to say something
// no real one would (invalid UTF-8, an error for every request). One thread serves one
// connection at a time; each reply comes from a callback and ends with Connection: close.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

namespace convoy::test {

class TinyHttpServer {
 public:
  // The whole reply (status line, headers, body) to the `index`-th request (from 0).
  using Responder = std::function<std::string(const std::string& request, int index)>;

  explicit TinyHttpServer(Responder responder) : responder_(std::move(responder)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 64) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(::pipe2(wake_, O_CLOEXEC) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyHttpServer() {
    (void)!::write(wake_[1], "x", 1);
    thread_.join();
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  TinyHttpServer(const TinyHttpServer&) = delete;
  TinyHttpServer& operator=(const TinyHttpServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }
  // GET .../v1/models requests (convoy's check before traffic), not in requests().
  int models_requests() const { return models_requests_.load(); }

  // "HTTP/1.1 <status>" with the given headers and body, Content-Length and Connection: close.
  static std::string reply(const std::string& status, const std::string& headers,
                           const std::string& body) {
    return "HTTP/1.1 " + status + "\r\n" + headers +
           "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           body;
  }

 private:
  static constexpr int kReadTimeoutMs = 5000;  // a client that stalls this long is dropped

  void serve() {
    for (;;) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      handle(fd);
      ::close(fd);
    }
  }

  // Reads more into `buf`; false on close, error or timeout.
  static bool read_more(int fd, std::string& buf) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kReadTimeoutMs) <= 0) return false;
    char chunk[8192];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  }

  static void send_all(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

  void handle(int fd) {
    std::string request;
    size_t header_end = std::string::npos;
    while ((header_end = request.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more(fd, request)) return;  // e.g. a reachability probe that just closes
    }
    std::string headers = request.substr(0, header_end);
    std::transform(headers.begin(), headers.end(), headers.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    size_t content_length = 0;
    if (size_t at = headers.find("\r\ncontent-length:"); at != std::string::npos) {
      content_length = std::strtoul(headers.c_str() + at + 17, nullptr, 10);
    }
    if (headers.find("\r\nexpect: 100-continue") != std::string::npos) {
      send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    }
    while (request.size() < header_end + 4 + content_length) {
      if (!read_more(fd, request)) return;
    }
    // convoy's check before a run (GET /v1/models) is answered but not counted: requests() is
    // what the run itself sent.
    const bool listing = request.rfind("GET ", 0) == 0 &&
                         request.find(" HTTP/") > request.find("/v1/models") &&
                         request.find("/v1/models") != std::string::npos;
    if (listing) models_requests_.fetch_add(1);
    send_all(fd, responder_(request, listing ? requests_.load() : requests_.fetch_add(1)));
    ::shutdown(fd, SHUT_WR);
    // Wait for the client to close so no unread byte turns our close into a reset.
    std::string rest;
    while (read_more(fd, rest)) {
    }
  }

  Responder responder_;
  std::atomic<int> models_requests_{0};
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace convoy::test
