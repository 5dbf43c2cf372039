// workers.listen and workers.results_listen: the controller's endpoints. results_listen is fixed
// for firewalls and Kubernetes Services (docs/multi-host.md); an endpoint ZeroMQ cannot bind is a
// config error naming the key, not "No such device" after the mock was started.
#include <doctest/doctest.h>

#include <string>

#include "controller/config/config.hpp"

namespace {

std::string listen_error_of(const std::string& yaml) {
  try {
    (void)convoy::parse_config(yaml, "c.yaml");
  } catch (const convoy::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("workers.results_listen") {
  SUBCASE("defaults to null: the listen host on a free port") {
    const convoy::Config c = convoy::parse_config("name: a\n", "c.yaml");
    CHECK_FALSE(c.workers.results_listen.has_value());
    CHECK(convoy::to_yaml(c).find("  results_listen: null\n") != std::string::npos);
  }
  SUBCASE("a fixed endpoint is kept and printed back") {
    const convoy::Config c = convoy::parse_config(
        "workers:\n  listen: tcp://0.0.0.0:5555\n  results_listen: tcp://0.0.0.0:5556\n", "c.yaml");
    REQUIRE(c.workers.results_listen.has_value());
    CHECK(*c.workers.results_listen == "tcp://0.0.0.0:5556");
    const std::string yaml = convoy::to_yaml(c);
    const convoy::Config again = convoy::parse_config(yaml, "resolved.yaml");
    CHECK(again.workers.results_listen == c.workers.results_listen);
  }
  SUBCASE("from --set") {
    const convoy::Config c =
        convoy::parse_config("name: a\n", "c.yaml", {"workers.results_listen=tcp://10.0.0.1:7000"});
    CHECK(c.workers.results_listen == std::optional<std::string>("tcp://10.0.0.1:7000"));
  }
  SUBCASE("must be an endpoint") {
    const std::string e = listen_error_of("workers:\n  results_listen: 0.0.0.0:5556\n");
    CHECK(e.find("c.yaml:2") != std::string::npos);
    CHECK(e.find("workers.results_listen") != std::string::npos);
    CHECK(e.find("expected tcp://HOST:PORT or ipc://PATH") != std::string::npos);
  }
}

TEST_CASE("workers.listen must be an address ZeroMQ can bind") {
  SUBCASE("a host name is refused with the key, the line and a suggestion") {
    const std::string e = listen_error_of("name: a\nworkers:\n  listen: tcp://localhost:0\n");
    INFO(e);
    CHECK(e.find("c.yaml:3") != std::string::npos);
    CHECK(e.find("workers.listen") != std::string::npos);
    CHECK(e.find("'localhost'") != std::string::npos);
    CHECK(e.find("tcp://127.0.0.1:PORT") != std::string::npos);
    CHECK(
        listen_error_of("workers:\n  listen: tcp://controller.example:5555\n").find("host name") !=
        std::string::npos);
  }
  SUBCASE("results_listen too") {
    const std::string e = listen_error_of(
        "workers:\n  listen: tcp://0.0.0.0:5555\n  results_listen: tcp://localhost:1\n");
    CHECK(e.find("workers.results_listen") != std::string::npos);
  }
  SUBCASE("a bracketed host must be an IPv6 address") {
    CHECK(listen_error_of("workers:\n  listen: tcp://[nope]:0\n").find("not an IPv6 address") !=
          std::string::npos);
  }
  SUBCASE("addresses, the wildcard, interface names and ipc are accepted") {
    for (const char* ok : {"tcp://127.0.0.1:0", "tcp://0.0.0.0:5555", "tcp://*:5555",
                           "tcp://[::]:0", "tcp://[::1]:7000", "tcp://lo:0", "ipc:///tmp/c.sock"}) {
      CHECK_MESSAGE(listen_error_of(std::string("workers:\n  listen: ") + ok + "\n").empty(), ok);
    }
  }
}
