// The target server as the controller sees it before the run: url parts and a reachability
// probe, so an unreachable target fails fast (exit 3) before any worker starts.
#pragma once

#include <optional>
#include <string>

namespace convoy::controller {

struct UrlParts {
  std::string scheme;  // http | https
  std::string host;    // without brackets for IPv6
  int port = 0;
};

std::optional<UrlParts> parse_http_url(const std::string& url);

// A TCP connect to host:port within timeout_ms. On failure returns false with *error set.
bool tcp_reachable(const std::string& host, int port, int timeout_ms, std::string* error);

}  // namespace convoy::controller
