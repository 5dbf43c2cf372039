// The keys of a Dynamo deployment with agents: target.urls (several frontends),
// session_routing.final_marker and .verify, dataset.subagents, telemetry.*, and the warning for
// session headers in target.headers.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>
#include <vector>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::ConfigError;
using convoy::parse_config;

namespace {

using convoy::test::contains;
using convoy::test::error_of;

}  // namespace

TEST_CASE("target.urls lists several frontends and url becomes urls[0]") {
  const Config c =
      parse_config("target:\n  urls: [\"http://a:8000\", \"https://b:8000/\"]\n", "c.yaml");
  CHECK(c.target.urls == std::vector<std::string>{"http://a:8000", "https://b:8000/"});
  CHECK(c.target.url == "http://a:8000");
  CHECK(Config{}.target.urls.empty());
  CHECK(parse_config("target: {urls: null}\n", "c.yaml").target.urls.empty());
}

TEST_CASE("target.urls is exclusive with target.url") {
  CHECK_ERROR("target:\n  url: http://a:1\n  urls: [http://b:1]\n",
              "c.yaml:2: target.url: target.url and target.urls are exclusive");
}

TEST_CASE("target.urls is a non-empty list of distinct http urls") {
  CHECK_ERROR("target:\n  urls: []\n", "c.yaml:2: target.urls: the list is empty");
  CHECK_ERROR("target:\n  urls: http://a:1\n", "target.urls: expected a list of URLs");
  CHECK_ERROR("target:\n  urls:\n    - http://a:1\n    - mock\n",
              "c.yaml:4: target.urls[1]: expected an http:// or https:// URL, got 'mock'");
  CHECK_ERROR("target:\n  urls: [http://a:1, \"http://\"]\n", "target.urls[1]: expected an");
  CHECK_ERROR("target:\n  urls: [http://a:1/, http://a:1]\n",
              "target.urls[1]: duplicate URL 'http://a:1'");
}

TEST_CASE("session_routing.final_marker is off, last_turn or close_request") {
  const Config off = parse_config("", "c.yaml");
  CHECK(off.session_routing.final_marker == convoy::FinalMarker::kOff);
  const Config c =
      parse_config("session_routing: {mode: header, final_marker: close_request}\n", "c.yaml");
  CHECK(c.session_routing.final_marker == convoy::FinalMarker::kCloseRequest);
  const Config d = parse_config("session_routing: {mode: header}\n", "c.yaml",
                                {"session_routing.final_marker=last_turn"});
  CHECK(d.session_routing.final_marker == convoy::FinalMarker::kLastTurn);
  CHECK_ERROR("session_routing: {mode: header, final_marker: last}\n",
              "session_routing.final_marker: expected one of off, last_turn, close_request");
}

TEST_CASE("session_routing.final_marker other than off needs header mode") {
  CHECK_ERROR("session_routing:\n  mode: bind\n  final_marker: last_turn\n",
              "c.yaml:3: session_routing.final_marker: X-Dynamo-Session-Final is a header-mode "
              "marker",
              "(mode is bind)");
  CHECK_NOTHROW(parse_config("session_routing: {mode: bind, final_marker: off}\n", "c.yaml"));
}

TEST_CASE("session_routing.verify is a bool in every mode") {
  CHECK_FALSE(Config{}.session_routing.verify);
  CHECK(parse_config("session_routing: {mode: legacy, verify: true}\n", "c.yaml")
            .session_routing.verify);
  CHECK(parse_config("", "c.yaml", {"session_routing.verify=true"}).session_routing.verify);
  CHECK_ERROR("session_routing: {verify: maybe}\n",
              "session_routing.verify: expected true or false");
}

TEST_CASE("dataset.subagents is read as distributions") {
  CHECK_FALSE(Config{}.dataset.subagents.has_value());
  const Config c = parse_config(
      "dataset:\n  subagents:\n    probability: 0.5\n    count: 2\n"
      "    turns: {mean: 3, stddev: 1, max: 8}\n",
      "c.yaml");
  REQUIRE(c.dataset.subagents.has_value());
  const auto& s = *c.dataset.subagents;
  CHECK(s.probability == 0.5);
  CHECK(s.count.mean == 2);
  CHECK(s.count.max == 2);
  CHECK(s.turns.mean == 3);
  CHECK(s.turns.min == 1);  // the floor
  CHECK(s.turns.max == 8);
  CHECK(s.spawn_after_turn.mean == 1);  // default kept
  CHECK_FALSE(parse_config("dataset: {subagents: null}\n", "c.yaml").dataset.subagents);
  CHECK(parse_config("", "c.yaml", {"dataset.subagents.probability=1"})
            .dataset.subagents->probability == 1);
}

TEST_CASE("dataset.subagents values are checked") {
  CHECK_ERROR("dataset:\n  subagents: {probability: 1.5}\n",
              "c.yaml:2: dataset.subagents.probability: must be between 0 and 1");
  CHECK_ERROR("dataset:\n  subagents: {count: 0}\n", "dataset.subagents.count: must be at least 1");
  CHECK_ERROR("dataset:\n  subagents: {turns: {mean: 0}}\n", "dataset.subagents.turns");
  CHECK_ERROR("dataset:\n  subagents: {spawn_after_turn: {mean: 9, max: 4}}\n",
              "dataset.subagents.spawn_after_turn: mean 9 is outside [1, 4]");
  CHECK_ERROR("dataset:\n  subagents: {probabilty: 0.5}\n",
              "dataset.subagents.probabilty: unknown key; did you mean "
              "'dataset.subagents.probability'?");
}

TEST_CASE("dataset.subagents is for synthetic datasets only") {
  CHECK_ERROR("dataset:\n  type: jsonl\n  path: /dev/null\n  subagents: {probability: 0.5}\n",
              "c.yaml:4: dataset.subagents: synthetic datasets only",
              "\"parent\", \"spawn_after_turn\"");
}

TEST_CASE("telemetry is read with its endpoints") {
  const Config d;
  CHECK(d.telemetry.interval_s == 1);
  CHECK(d.telemetry.timeout_s == 2);
  CHECK(d.telemetry.max_series == 10000);
  CHECK(d.telemetry.endpoints.empty());
  const Config c = parse_config(R"(telemetry:
  interval_s: 0.5
  timeout_s: 3
  max_series: 500
  endpoints:
    - {name: frontend, url: "http://frontend:8000/metrics"}
    - name: gpus
      url: https://node1:9400/metrics
      headers: {Authorization: Bearer x}
      required: true
)",
                                "c.yaml");
  CHECK(c.telemetry.interval_s == 0.5);
  CHECK(c.telemetry.timeout_s == 3);
  CHECK(c.telemetry.max_series == 500);
  REQUIRE(c.telemetry.endpoints.size() == 2);
  CHECK(c.telemetry.endpoints[0].name == "frontend");
  CHECK(c.telemetry.endpoints[0].url == "http://frontend:8000/metrics");
  CHECK_FALSE(c.telemetry.endpoints[0].required);  // only `required: true` is fatal
  CHECK(c.telemetry.endpoints[1].headers.at("Authorization") == "Bearer x");
  CHECK(c.telemetry.endpoints[1].required);
  CHECK(parse_config("", "c.yaml", {"telemetry.interval_s=5"}).telemetry.interval_s == 5);
}

TEST_CASE("telemetry values are checked") {
  CHECK_ERROR("telemetry: {interval_s: 0}\n", "c.yaml:1: telemetry.interval_s: must be greater");
  CHECK_ERROR("telemetry: {timeout_s: -1}\n", "telemetry.timeout_s: must be greater than 0");
  CHECK_ERROR("telemetry: {max_series: 0}\n", "telemetry.max_series: must be at least 1");
  CHECK_ERROR("telemetry: {endpoints: {name: a}}\n", "telemetry.endpoints: expected a list");
  CHECK_ERROR("telemetry: {intervall_s: 1}\n",
              "telemetry.intervall_s: unknown key; did you mean 'telemetry.interval_s'?");
}

TEST_CASE("telemetry endpoints have unique names and http urls") {
  CHECK_ERROR(
      "telemetry:\n  endpoints:\n    - {name: a, url: \"http://x:1/metrics\"}\n"
      "    - {name: a, url: \"http://y:1/metrics\"}\n",
      "c.yaml:4: telemetry.endpoints[1].name: duplicate endpoint name 'a'");
  CHECK_ERROR("telemetry:\n  endpoints:\n    - {url: \"http://x:1/metrics\"}\n",
              "c.yaml:3: telemetry.endpoints[0].name: required");
  CHECK_ERROR("telemetry:\n  endpoints:\n    - {name: a, url: \"x:1/metrics\"}\n",
              "telemetry.endpoints[0].url: expected an http:// or https:// URL, got 'x:1/metrics'");
  CHECK_ERROR(
      "telemetry:\n  endpoints:\n    - {name: a, url: \"http://x\", headers: {\"a b\": c}}\n",
      "telemetry.endpoints[0].headers.a b: not a valid HTTP header name");
  CHECK_ERROR("telemetry:\n  endpoints:\n    - {name: a, url: \"http://x\", requird: true}\n",
              "telemetry.endpoints[0].requird: unknown key; did you mean "
              "'telemetry.endpoints[0].required'?");
}

TEST_CASE("a session identity header in target.headers is a warning, not an error") {
  for (const char* header :
       {"X-Session-ID", "x-dynamo-session-id", "X-Claude-Code-Session-Id", "thread-id"}) {
    CAPTURE(header);
    const Config c = parse_config(
        std::string("name: w\ntarget:\n  headers:\n    ") + header + ": abc\n", "c.yaml");
    REQUIRE(c.warnings.size() == 1);
    CHECK(contains(c.warnings[0], std::string("c.yaml:4: target.headers.") + header + ": "));
    CHECK(contains(c.warnings[0], "Dynamo reads this header as session identity"));
  }
  CHECK(parse_config("target: {headers: {X-Tenant: blue}}\n", "c.yaml").warnings.empty());
}

TEST_CASE(
    "the frontends, session routing, sub-agent and telemetry keys print in to_yaml and read back "
    "the same") {
  const Config a = parse_config(R"(target:
  urls: [http://a:1, http://b:2]
session_routing: {mode: header, final_marker: last_turn, verify: true}
dataset:
  subagents: {probability: 0.25, count: {mean: 2, stddev: 1, max: 4}}
telemetry:
  interval_s: 2
  endpoints:
    - {name: f, url: "http://f:1/metrics", headers: {X-Api-Key: secret, X-T: t}, required: true}
)",
                                "a.yaml");
  const std::string yaml = convoy::to_yaml(a);
  const Config b = parse_config(yaml, "a.yaml");
  CHECK(convoy::to_yaml(b) == yaml);
  CHECK(b.target.urls == a.target.urls);
  CHECK(b.target.url == "http://a:1");
  CHECK(b.session_routing.final_marker == convoy::FinalMarker::kLastTurn);
  CHECK(b.session_routing.verify);
  REQUIRE(b.dataset.subagents.has_value());
  CHECK(b.dataset.subagents->count.max == 4);
  REQUIRE(b.telemetry.endpoints.size() == 1);
  CHECK(b.telemetry.endpoints[0].required);
  CHECK(contains(yaml, "  urls: [\"http://a:1\", \"http://b:2\"]\n"));
  CHECK(contains(yaml, "  final_marker: last_turn\n  verify: true\n"));
  CHECK_FALSE(contains(yaml, "secret"));
  const std::string defaults = convoy::to_yaml(Config{});
  CHECK(contains(defaults, "  urls: null\n"));
  CHECK(contains(defaults, "  subagents: null\n"));
  CHECK(contains(defaults,
                 "telemetry:\n  interval_s: 1\n  timeout_s: 2\n  max_series: 10000\n"
                 "  endpoints: []\n"));
}
