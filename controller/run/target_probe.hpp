// The target server as the controller sees it before the run: url parts and a reachability
// probe, so an unreachable target fails fast (exit 3) before any worker starts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

struct UrlParts {
  std::string scheme;  // http | https
  std::string host;    // without brackets for IPv6
  int port = 0;
};

std::optional<UrlParts> parse_http_url(const std::string& url);

// A TCP connect to host:port within timeout_ms. On failure returns false with *error set.
bool tcp_reachable(const std::string& host, int port, int timeout_ms, std::string* error);

// Probes every URL of target.urls (a TCP connect each, all at once within timeout_ms) and returns
// one line per URL that is not an http(s) url or cannot be reached, naming it:
// "target.urls[1] http://127.0.0.1:9: 127.0.0.1:9: Connection refused". Empty: all reachable.
std::vector<std::string> unreachable_urls(const std::vector<std::string>& urls, int timeout_ms);

// Every configured frontend (target.urls, else target.url; not the mock) answers a TCP connect
// within 5 s. False, with each unreachable one named in the log and "Nothing was sent.", when
// not; throws ConfigError when target.url is not an http(s) url.
bool targets_reachable_at_start(const Config& config);

}  // namespace convoy::controller
