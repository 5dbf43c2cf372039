// Shared by the e2e tests that read a loopback HTTP server directly (convoy's live /metrics,
// Prometheus' API, convoy-mock's /mock/stats): one GET over a plain socket, no client library.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace convoy::test {

// GET `path` from 127.0.0.1:`port` over HTTP/1.0 (the server closes after the body): the status
// line's code and the body; 0 and what came when no HTTP answer came within `timeout_s`.
inline std::pair<int, std::string> http_get(int port, const std::string& path,
                                            double timeout_s = 5) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(timeout_s));
      char buf[16384];
      while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        response.append(buf, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos) return {0, response};
  return {std::stoi(response.substr(9, 3)), response.substr(body + 4)};
}

}  // namespace convoy::test
