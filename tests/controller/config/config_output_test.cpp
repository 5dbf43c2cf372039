// output.slice_s, output.metrics_listen and output.aiperf_export: parsed, defaulted,
// and refused with file:line:key when they cannot be used.
#include <doctest/doctest.h>

#include "controller/config/config.hpp"
#include "controller/config_test_util.hpp"

using convoy::parse_config;

TEST_CASE("output: slice_s, metrics_listen and aiperf_export default off and parse") {
  const auto off = parse_config("name: x\n", "c.yaml", {});
  CHECK_FALSE(off.output.slice_s.has_value());
  CHECK_FALSE(off.output.metrics_listen.has_value());
  CHECK_FALSE(off.output.aiperf_export);
  const auto on = parse_config(
      "output: {slice_s: 2.5, metrics_listen: '127.0.0.1:9464', aiperf_export: true}\n", "c.yaml",
      {});
  REQUIRE(on.output.slice_s.has_value());
  CHECK(*on.output.slice_s == 2.5);
  CHECK(on.output.metrics_listen.value_or("") == "127.0.0.1:9464");
  CHECK(on.output.aiperf_export);
  CHECK(parse_config("output: {metrics_listen: '*:9464'}\n", "c.yaml", {})
            .output.metrics_listen.value_or("") == "*:9464");
}

TEST_CASE(
    "output: a metrics_listen that cannot be bound and a slice_s that is not positive are errors") {
  CHECK_ERROR("output:\n  metrics_listen: localhost:9464\n", "c.yaml:2", "output.metrics_listen",
              "not an IP address");
  CHECK_ERROR("output:\n  metrics_listen: 127.0.0.1\n", "c.yaml:2", "output.metrics_listen",
              "HOST:PORT");
  CHECK_ERROR("output:\n  metrics_listen: 127.0.0.1:99999\n", "output.metrics_listen",
              "not a port");
  CHECK_ERROR("output:\n  metrics_listen: '[zz]:9464'\n", "output.metrics_listen",
              "not an IPv6 address");
  CHECK_ERROR("output:\n  slice_s: 0\n", "c.yaml:2", "output.slice_s");
  CHECK_ERROR("output:\n  aiperf_export: maybe\n", "c.yaml:2", "output.aiperf_export");
  CHECK_ERROR("output:\n  slices_s: 1\n", "output.slices_s", "slice_s");
}

TEST_CASE("output: an IPv6 metrics_listen is refused at load, saying why and what to use") {
  // civetweb (prometheus-cpp's HTTP server) is built without IPv6 here: the run could only fail
  // at start (tests/controller/live/live_ipv6_test.cpp checks that premise).
  CHECK_ERROR("name: x\noutput:\n  metrics_listen: '[::1]:9464'\n", "c.yaml:3",
              "output.metrics_listen", "'[::1]' is IPv6", "built without IPv6",
              "e.g. 127.0.0.1:9464");
  CHECK_ERROR("output:\n  metrics_listen: '[::]:0'\n", "c.yaml:2", "output.metrics_listen",
              "built without IPv6", "e.g. *:0");
  CHECK_ERROR("output:\n  metrics_listen: '[fd00::2]:9464'\n", "output.metrics_listen",
              "an IPv4 address of this host with port 9464");
  // IPv4 still parses.
  CHECK(parse_config("output: {metrics_listen: '127.0.0.1:0'}\n", "c.yaml", {})
            .output.metrics_listen.value_or("") == "127.0.0.1:0");
}

TEST_CASE("output: metrics_linger_s defaults to 0 and takes 0 to 3600 seconds") {
  CHECK(parse_config("name: x\n", "c.yaml", {}).output.metrics_linger_s == 0);
  CHECK(
      parse_config("output: {metrics_listen: '127.0.0.1:0', metrics_linger_s: 15}\n", "c.yaml", {})
          .output.metrics_linger_s == 15);
  CHECK_ERROR("output:\n  metrics_linger_s: 3601\n", "c.yaml:2", "output.metrics_linger_s", "3600");
  CHECK_ERROR("output:\n  metrics_linger_s: -1\n", "c.yaml:2", "output.metrics_linger_s");
  CHECK_ERROR("output:\n  metrics_linger_s: soon\n", "c.yaml:2", "output.metrics_linger_s");
}
