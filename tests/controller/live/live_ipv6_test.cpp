// output.metrics_listen and IPv6: the HTTP server prometheus-cpp serves /metrics with (civetweb,
// Debian's build) has no IPv6, so the config refuses an [IPv6]:PORT at load (exit 2, before
// anything starts) instead of letting the run fail at start (exit 3). The live-room case below
// checks that premise on the library this build links: when it fails, the civetweb here can
// serve IPv6 and the refusal in controller/config/config.cpp (ipv6_listen_refusal) can go.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "controller/live/live_metrics.hpp"

namespace {

// Whether this host can bind [::1] at all (a host without IPv6 proves nothing about civetweb).
bool host_binds_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("live metrics: the civetweb this build links cannot listen on IPv6") {
  if (!host_binds_ipv6_loopback()) {
    MESSAGE("this host cannot bind [::1]: nothing to learn about civetweb here");
    return;
  }
  std::string what;
  try {
    convoy::live::LiveMetrics live("[::1]:0", "ipv6");
  } catch (const convoy::live::ListenError& e) {
    what = e.what();
  }
  INFO(what);
  CHECK(what.find("output.metrics_listen [::1]:0: cannot listen") != std::string::npos);
  CHECK(what.find("built without IPv6") != std::string::npos);
}
