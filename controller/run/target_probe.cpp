#include "controller/run/target_probe.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>

#include "common/log.hpp"
#include "common/redact.hpp"

namespace convoy::controller {

std::optional<UrlParts> parse_http_url(const std::string& url) {
  UrlParts p;
  size_t rest = 0;
  if (url.rfind("http://", 0) == 0) {
    p.scheme = "http";
    p.port = 80;
    rest = 7;
  } else if (url.rfind("https://", 0) == 0) {
    p.scheme = "https";
    p.port = 443;
    rest = 8;
  } else {
    return std::nullopt;
  }
  size_t end = url.find('/', rest);
  std::string authority =
      url.substr(rest, end == std::string::npos ? std::string::npos : end - rest);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    p.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port_text = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    p.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (p.host.empty()) return std::nullopt;
  if (!port_text.empty()) {
    try {
      size_t used = 0;
      int port = std::stoi(port_text, &used);
      if (used != port_text.size() || port <= 0 || port > 65535) return std::nullopt;
      p.port = port;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return p;
}

bool tcp_reachable(const std::string& host, int port, int timeout_ms, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res); rc != 0) {
    *error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return false;
  }
  std::string last = "no address";
  bool ok = false;
  for (addrinfo* ai = res; ai && !ok; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, timeout_ms) == 1) {
        int so_error = 0;
        socklen_t len = sizeof so_error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
        rc = so_error == 0 ? 0 : -1;
        errno = so_error;
      } else {
        rc = -1;
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      ok = true;
    } else {
      last = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (!ok) *error = host + ":" + port_text + ": " + last;
  return ok;
}

std::vector<std::string> unreachable_urls(const std::vector<std::string>& urls, int timeout_ms) {
  // One probe per URL at the same time: N dead frontends cost one timeout, not N.
  std::vector<std::future<std::string>> probes;
  probes.reserve(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    probes.push_back(std::async(std::launch::async, [&urls, i, timeout_ms]() -> std::string {
      const std::string name = "target.urls[" + std::to_string(i) + "] " + redact_url(urls[i]);
      const auto parts = parse_http_url(urls[i]);
      if (!parts) return name + ": not an http(s) url";
      std::string error;
      if (tcp_reachable(parts->host, parts->port, timeout_ms, &error)) return "";
      return name + ": " + error;
    }));
  }
  std::vector<std::string> failures;
  for (auto& probe : probes) {
    std::string failure = probe.get();
    if (!failure.empty()) failures.push_back(std::move(failure));
  }
  return failures;
}

bool targets_reachable_at_start(const Config& config) {
  if (!config.target.urls.empty()) {
    // Several frontends: every one is probed, and each unreachable one is named.
    const auto failures = unreachable_urls(config.target.urls, 5000);
    for (const auto& failure : failures) log_error("target unreachable at start: ", failure);
    if (failures.empty()) return true;
    log_error(failures.size(), " of ", config.target.urls.size(),
              " target.urls unreachable (is every frontend up?). Nothing was sent.");
    return false;
  }
  auto parts = parse_http_url(config.target.url);
  if (!parts) {
    throw ConfigError("target.url: not an http(s) url: " + redact_url(config.target.url));
  }
  std::string error;
  if (tcp_reachable(parts->host, parts->port, 5000, &error)) return true;
  log_error("target unreachable at start: ", error,
            " (is the server up at target.url?). Nothing was sent.");
  return false;
}

}  // namespace convoy::controller
