// workers.results_listen: the controller's results endpoint, fixed for firewalls and Kubernetes
// Services (docs/multi-host.md).
#include <doctest/doctest.h>

#include <string>

#include "common/config.hpp"

namespace {

std::string error_of(const std::string& yaml) {
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
    const std::string e = error_of("workers:\n  results_listen: 0.0.0.0:5556\n");
    CHECK(e.find("c.yaml:2") != std::string::npos);
    CHECK(e.find("workers.results_listen") != std::string::npos);
    CHECK(e.find("expected tcp://HOST:PORT or ipc://PATH") != std::string::npos);
  }
}
