// Parsing and validating a config: the defaults, the examples in configs/, every key with its
// type, errors that name the file, line and key, did-you-mean suggestions, enum names, bounds,
// UTF-8. Loading from files, --set overrides and to_yaml are in config_load_test.cpp.
#include "controller/config/config.hpp"

#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "common/utf8.hpp"
#include "controller/config/did_you_mean.hpp"

namespace fs = std::filesystem;
using convoy::Config;
using convoy::parse_config;

namespace {

using convoy::test::contains;
using convoy::test::error_of;

}  // namespace

TEST_CASE("an empty config gives the defaults") {
  for (const char* text : {"", "# nothing but a comment\n", "---\n"}) {
    const Config c = parse_config(text, "empty.yaml");
    const Config d;
    CHECK(c.source_path == "empty.yaml");
    CHECK(convoy::to_yaml(c) == convoy::to_yaml(d));
    CHECK(c.name == "convoy");
    CHECK(c.seed == 42);
    CHECK(c.target.url == "mock");
    CHECK(c.target.endpoint == convoy::Endpoint::kChat);
    CHECK(c.target.extra_body_json == "{}");
    CHECK(c.dataset.turns.max == 32);
    CHECK(c.load.concurrency == 16);
    CHECK(c.load.mode == convoy::LoadMode::kConcurrency);
    CHECK(c.session_routing.mode == convoy::SessionRoutingMode::kOff);
    CHECK(c.session_routing.timeout_s == 300);
    CHECK(c.workers.local == 2);
    CHECK(c.expected_workers() == 2);
    CHECK_FALSE(c.fail_on.error_rate.has_value());
    CHECK(c.slo.empty());
  }
}

TEST_CASE("every example in configs/ validates") {
  const fs::path dir = fs::path(CONVOY_SOURCE_DIR) / "configs";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    names.push_back(entry.path().filename().string());
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(convoy::load_config(entry.path().string()));
  }
  for (const char* expected : {"quickstart.yaml", "rate-poisson.yaml", "dynamo-bind.yaml",
                               "dynamo-header.yaml", "jsonl-example.yaml", "remote-workers.yaml"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }

  SUBCASE("quickstart") {
    const Config c = convoy::load_config((dir / "quickstart.yaml").string());
    CHECK(c.name == "quickstart");
    CHECK(c.target.url == "mock");
    CHECK(c.mock.workers == 4);
    CHECK(c.mock.contract == "bind");
    CHECK(c.dataset.conversations == 24);
    CHECK(c.dataset.turns.mean == 3);
    CHECK(c.dataset.turns.min == 1);
    CHECK(c.dataset.turns.max == 6);
    CHECK(c.dataset.input_tokens.mean == 128);
    CHECK(c.dataset.output_tokens.mean == 32);
    CHECK(c.load.concurrency == 8);
    CHECK(c.session_routing.mode == convoy::SessionRoutingMode::kBind);
    CHECK(c.workers.local == 2);
    CHECK(c.output.dir == "artifacts/{name}-{timestamp}");
  }
  SUBCASE("jsonl path is resolved against the config's folder") {
    const Config c = convoy::load_config((dir / "jsonl-example.yaml").string());
    REQUIRE(c.dataset.path.has_value());
    CHECK(fs::equivalent(*c.dataset.path, dir / "data" / "example.jsonl"));
  }
  SUBCASE("remote workers") {
    const Config c = convoy::load_config((dir / "remote-workers.yaml").string());
    CHECK(c.workers.local == 0);
    CHECK(c.expected_workers() == 2);
    CHECK(c.workers.listen == "tcp://0.0.0.0:5555");
  }
}

TEST_CASE("every key is read with its type") {
  const std::string text = R"(name: full
seed: 18446744073709551615
target:
  url: https://example.com:8443/v1
  endpoint: completions
  model: m
  streaming: false
  api_key_env: MY_KEY
  headers: {X-Tenant: blue, X-Num: 7}
  extra_body: {ignore_eos: true, top_k: 5, temperature: 0.5, stop: ["a", 1], tag: "7", nvext: {x: null}}
  request_timeout_s: 30
  connect_timeout_s: 2.5
  use_server_token_counts: false
  max_completion_tokens: true
  http2: true
  insecure: true
mock:
  workers: 2
  contract: legacy
  router_mode: round-robin
  itl_ms: 0
  speedup: 10
  engine_sessions: true
  extra_args: [--error-rate, 0.1]
dataset:
  type: synthetic
  conversations: 7
  turns: 5
  input_tokens: {mean: 100, stddev: 0, max: 200}
  output_tokens: {mean: 10, stddev: 1, min: null}
  shared_prefix_tokens: 64
  think_time_ms: {mean: 250, stddev: 50}
  history: recorded
load:
  mode: rate
  concurrency: 3
  rate: 2.5
  arrival: gamma
  burstiness: 0.5
  sessions: 10
  requests: null
  duration_s: 60
  grace_s: 0
  warmup_sessions: 1
  cancel: {fraction: 0.25, after_ms: 100}
session_routing:
  mode: legacy
  timeout_s: 60.0
  header_name: X-Session
workers:
  local: 0
  listen: ipc:///tmp/convoy.sock
  expect: 3
  curve_keys: null
  ready_timeout_s: 5
output:
  dir: out/{name}
  records: false
  html: no
slo: {time_to_first_token: 500, inter_token_latency: 50}
fail_on: {error_rate: 0.05}
)";
  const Config c = parse_config(text, "full.yaml");
  CHECK(c.name == "full");
  CHECK(c.seed == 18446744073709551615ULL);
  CHECK(c.target.url == "https://example.com:8443/v1");
  CHECK(c.target.endpoint == convoy::Endpoint::kCompletions);
  CHECK_FALSE(c.target.streaming);
  CHECK(c.target.api_key_env == "MY_KEY");
  CHECK(c.target.headers.at("X-Tenant") == "blue");
  CHECK(c.target.headers.at("X-Num") == "7");
  CHECK(
      c.target.extra_body_json ==
      R"({"ignore_eos":true,"top_k":5,"temperature":0.5,"stop":["a",1],"tag":"7","nvext":{"x":null}})");
  CHECK(c.target.request_timeout_s == 30);
  CHECK(c.target.connect_timeout_s == 2.5);
  CHECK_FALSE(c.target.use_server_token_counts);
  CHECK(c.target.max_completion_tokens);
  CHECK(c.target.http2);
  CHECK(c.target.insecure);
  CHECK(c.mock.workers == 2);
  CHECK(c.mock.contract == "legacy");
  CHECK(c.mock.router_mode == "round-robin");
  CHECK(c.mock.itl_ms == 0);
  CHECK(c.mock.speedup == 10);
  CHECK(c.mock.engine_sessions);
  CHECK(c.mock.extra_args == std::vector<std::string>{"--error-rate", "0.1"});
  CHECK(c.dataset.conversations == 7);
  SUBCASE("a bare number is a constant distribution") {
    CHECK(c.dataset.turns.mean == 5);
    CHECK(c.dataset.turns.stddev == 0);
    CHECK(c.dataset.turns.min == 5);
    CHECK(c.dataset.turns.max == 5);
  }
  SUBCASE("omitted distribution fields keep the key's defaults; min null is the floor") {
    CHECK(c.dataset.input_tokens.min == 1);
    CHECK(c.dataset.input_tokens.max == 200);
    CHECK(c.dataset.output_tokens.min == 1);
    CHECK_FALSE(c.dataset.output_tokens.max.has_value());
    CHECK(c.dataset.think_time_ms.mean == 250);
    CHECK(c.dataset.think_time_ms.min == 0);
  }
  CHECK(c.dataset.shared_prefix_tokens == 64);
  CHECK(c.dataset.history == convoy::HistoryMode::kRecorded);
  CHECK(c.load.mode == convoy::LoadMode::kRate);
  CHECK(c.load.rate == 2.5);
  CHECK(c.load.arrival == convoy::Arrival::kGamma);
  CHECK(c.load.burstiness == 0.5);
  CHECK(c.load.sessions == 10);
  CHECK_FALSE(c.load.requests.has_value());
  CHECK(c.load.duration_s == 60);
  CHECK(c.load.grace_s == 0);
  CHECK(c.load.warmup_sessions == 1);
  CHECK(c.load.cancel.fraction == 0.25);
  CHECK(c.load.cancel.after_ms == 100);
  CHECK(c.session_routing.mode == convoy::SessionRoutingMode::kLegacy);
  CHECK(c.session_routing.timeout_s == 60);
  CHECK(c.session_routing.header_name == "X-Session");
  CHECK(c.workers.local == 0);
  CHECK(c.workers.listen == "ipc:///tmp/convoy.sock");
  CHECK(c.expected_workers() == 3);
  CHECK_FALSE(c.workers.curve_keys.has_value());
  CHECK(c.workers.ready_timeout_s == 5);
  CHECK(c.output.dir == "out/{name}");
  CHECK_FALSE(c.output.records);
  CHECK_FALSE(c.output.html);
  CHECK(c.slo.size() == 2);
  CHECK(c.slo.at("time_to_first_token") == 500);
  CHECK(c.fail_on.error_rate == 0.05);
}

TEST_CASE("errors name the file, line and key") {
  SUBCASE("unknown keys at every level") {
    CHECK_ERROR("name: a\ntargte: {}\n", "c.yaml:2: targte: unknown key", "did you mean 'target'");
    CHECK_ERROR("load:\n  mode: rate\n  concurency: 4\n", "c.yaml:3: load.concurency: unknown key",
                "did you mean 'load.concurrency'?");
    CHECK_ERROR("load:\n  cancel:\n    fraktion: 0.1\n", "c.yaml:3: load.cancel.fraktion",
                "did you mean 'load.cancel.fraction'?");
    CHECK_ERROR("dataset:\n  turns: {mean: 3, sd: 1}\n", "c.yaml:2: dataset.turns.sd: unknown key");
    CHECK_ERROR("slo:\n  ttft_ms: 5\n", "c.yaml:2: slo.ttft_ms: unknown key");
    CHECK_ERROR("slo:\n  time_to_first_tokn: 5\n", "did you mean 'slo.time_to_first_token'?");
    CHECK_ERROR("fail_on: {errors: 0.1}\n", "c.yaml:1: fail_on.errors: unknown key");
  }
  SUBCASE("a key in the wrong section points to the right one") {
    CHECK_ERROR("load:\n  header_name: X\n", "c.yaml:2: load.header_name: unknown key",
                "did you mean 'session_routing.header_name'?");
  }
  SUBCASE("nothing close: no suggestion") {
    const std::string m = error_of("\n\nzzzzzz: 1\n");
    CHECK(contains(m, "c.yaml:3: zzzzzz: unknown key"));
    CHECK_FALSE(contains(m, "did you mean"));
  }
  SUBCASE("duplicate keys") { CHECK_ERROR("name: a\nname: b\n", "c.yaml:2: name: duplicate key"); }
  SUBCASE("wrong types") {
    CHECK_ERROR("load:\n  concurrency: abc\n", "c.yaml:2: load.concurrency: expected an integer",
                "'abc'");
    CHECK_ERROR("load:\n  concurrency: 2.5\n", "load.concurrency: expected an integer");
    CHECK_ERROR("load:\n  rate: fast\n", "c.yaml:2: load.rate: expected a number, got 'fast'");
    CHECK_ERROR("target:\n  streaming: maybe\n",
                "c.yaml:2: target.streaming: expected true or false");
    CHECK_ERROR("target:\n  model: [a, b]\n", "target.model: expected a string, got a list");
    CHECK_ERROR("target: 5\n", "c.yaml:1: target: expected a mapping, got '5'");
    CHECK_ERROR("seed: -1\n", "seed: expected a non-negative integer");
    CHECK_ERROR("load:\n  concurrency: null\n", "load.concurrency: expected an integer, got null");
    CHECK_ERROR("target:\n  headers: [a]\n", "target.headers: expected a mapping");
    CHECK_ERROR("target:\n  extra_body: 5\n", "target.extra_body: expected a mapping");
    CHECK_ERROR("mock:\n  extra_args: --x\n", "mock.extra_args: expected a list of strings");
    CHECK_ERROR("dataset:\n  turns: many\n",
                "dataset.turns: expected a number, {mean, stddev, min, max} or {mix: ");
    CHECK_ERROR("mock:\n  workers: 99999999999\n", "mock.workers: out of range");
  }
  SUBCASE("bad enum values list the allowed ones") {
    CHECK_ERROR("session_routing:\n  mode: bnd\n", "c.yaml:2: session_routing.mode:",
                "expected one of off, bind, legacy, header, auto, sglang_gateway, sglang_session, "
                "vllm_dp_rank, custom (or a list of them), got 'bnd'",
                "did you mean 'bind'?");
    CHECK_ERROR("target:\n  endpoint: chats\n", "c.yaml:2: target.endpoint:",
                "expected one of chat, completions, embeddings, responses, messages, got 'chats'",
                "did you mean 'chat'?");
    CHECK_ERROR("load:\n  arrival: uniform\n",
                "load.arrival: expected one of constant, poisson, gamma");
    CHECK_ERROR("dataset:\n  type: csv\n", "expected one of synthetic, jsonl, mooncake");
    CHECK_ERROR("dataset:\n  history: both\n",
                "c.yaml:2: dataset.history:", "expected one of live, recorded, got 'both'");
    CHECK_ERROR("mock:\n  contract: v2\n",
                "mock.contract: expected one of none, legacy, bind, header");
    CHECK_ERROR("mock:\n  router_mode: round_robin\n", "expected one of kv, round-robin, random",
                "did you mean 'round-robin'?");
  }
  SUBCASE("out-of-range values") {
    CHECK_ERROR("load:\n  concurrency: 0\n",
                "c.yaml:2: load.concurrency: must be at least 1, got 0");
    CHECK_ERROR("dataset:\n  conversations: -3\n", "dataset.conversations: must be at least 1");
    CHECK_ERROR("load:\n  mode: rate\n  rate: 0\n",
                "c.yaml:3: load.rate: must be greater than 0 in rate mode");
    CHECK_ERROR("load:\n  cancel: {fraction: 1.5}\n",
                "load.cancel.fraction: must be between 0 and 1");
    CHECK_ERROR("fail_on:\n  error_rate: -0.1\n", "fail_on.error_rate: must be between 0 and 1");
    CHECK_ERROR("load:\n  duration_s: 0\n", "load.duration_s: must be greater than 0");
    CHECK_ERROR("load:\n  sessions: -1\n", "load.sessions: must be at least 1");
    CHECK_ERROR("load:\n  warmup_sessions: -1\n", "load.warmup_sessions: must be at least 0");
    CHECK_ERROR("load:\n  grace_s: -1\n", "load.grace_s: must be at least 0");
    CHECK_ERROR("target:\n  request_timeout_s: 0\n",
                "target.request_timeout_s: must be greater than 0");
    CHECK_ERROR("dataset:\n  shared_prefix_tokens: -1\n", "dataset.shared_prefix_tokens");
    CHECK_ERROR("\ndataset:\n  turns: {mean: 3, min: 9, max: 2}\n",
                "c.yaml:3: dataset.turns: min 9 is greater than max 2");
    CHECK_ERROR("dataset:\n  turns: {mean: 40}\n", "dataset.turns: mean 40 is outside [1, 32]");
    CHECK_ERROR("dataset:\n  turns: {mean: 3, stddev: -1}\n",
                "dataset.turns.stddev: must be at least 0");
    CHECK_ERROR("dataset:\n  turns: 0\n", "dataset.turns: must be at least 1");
    CHECK_ERROR("slo: {time_to_first_token: 0}\n",
                "slo.time_to_first_token: must be greater than 0");
    CHECK_ERROR("mock:\n  speedup: 0\n", "mock.speedup: must be greater than 0");
    CHECK_ERROR("load:\n  burstiness: 0\n", "load.burstiness: must be greater than 0");
  }
  SUBCASE("session_routing.timeout_s is a whole positive number of seconds") {
    CHECK_ERROR("session_routing:\n  timeout_s: 1.5\n",
                "c.yaml:2: session_routing.timeout_s: must be a whole positive number of seconds");
    CHECK_ERROR("session_routing:\n  timeout_s: 0\n", "session_routing.timeout_s: must be a whole");
    CHECK_ERROR("session_routing:\n  timeout_s: -5\n",
                "session_routing.timeout_s: must be a whole");
  }
  SUBCASE("target.url, header names and the API key variable") {
    CHECK_ERROR("target:\n  url: localhost:8000\n",
                "c.yaml:2: target.url: expected \"mock\" or an http:// or https:// URL");
    CHECK_ERROR("target:\n  url: http://\n", "target.url: expected");
    CHECK_ERROR("session_routing:\n  header_name: \"X Session\"\n",
                "c.yaml:2: session_routing.header_name: not a valid HTTP header name");
    CHECK_ERROR("session_routing:\n  header_name: \"\"\n", "session_routing.header_name");
    CHECK_ERROR("target:\n  headers:\n    \"Bad Header\": x\n",
                "c.yaml:3: target.headers.Bad Header: not a valid HTTP header name");
    CHECK_ERROR("target:\n  headers: {X-A: \"a\\nb\"}\n", "must not contain line breaks");
    CHECK_ERROR("target:\n  api_key_env: sk-abc123\n", "target.api_key_env: expected the NAME");
  }
  SUBCASE("workers") {
    CHECK_ERROR("workers:\n  local: -1\n", "workers.local: must be at least 0");
    CHECK_ERROR("workers:\n  local: 2\n  expect: 0\n",
                "c.yaml:3: workers.expect: must be at least 1");
    CHECK_ERROR("workers:\n  local: 0\n",
                "c.yaml:2: workers.expect: required when workers.local is 0");
    CHECK_ERROR("workers:\n  listen: 127.0.0.1:5555\n", "workers.listen: expected tcp://HOST:PORT");
    CHECK_ERROR("workers:\n  listen: tcp://host:99999\n", "workers.listen");
    CHECK_ERROR("workers:\n  curve_keys: /nonexistent/convoy-keys\n",
                "workers.curve_keys: folder '/nonexistent/convoy-keys' does not exist");
  }
  SUBCASE("output and name") {
    CHECK_ERROR("output:\n  dir: \"\"\n", "c.yaml:2: output.dir: must not be empty");
    CHECK_ERROR("output:\n  dir: out/{nmae}\n", "output.dir: unknown substitution {nmae}",
                "did you mean {name}?");
    CHECK_ERROR("name: a/b\n", "c.yaml:1: name: is used in a folder name");
    CHECK_ERROR("name: \"\"\n", "name: must not be empty");
  }
  SUBCASE("datasets") {
    CHECK_ERROR("dataset:\n  type: jsonl\n",
                "c.yaml:2: dataset.path: required when dataset.type is jsonl");
    CHECK_ERROR("dataset:\n  type: mooncake\n  path: /nonexistent/trace.jsonl\n",
                "c.yaml:3: dataset.path: file '/nonexistent/trace.jsonl' does not exist");
    CHECK_ERROR("dataset:\n  type: jsonl\n  path: /\n", "dataset.path: '/' is a folder");
    CHECK_ERROR("load:\n  mode: trace\n", "c.yaml:2: load.mode: trace replays recorded timestamps",
                "set dataset.type to mooncake or jsonl");
  }
  SUBCASE("YAML syntax errors carry the line") {
    CHECK_ERROR("name: a\nload: [1,\nseed: 2\n", "c.yaml:4: invalid YAML:");
    CHECK_ERROR("name: a\n  seed: 2\n", "c.yaml:2: invalid YAML:");
  }
  SUBCASE("the top level must be a mapping") {
    CHECK_ERROR("- a\n- b\n", "c.yaml:1: expected a mapping of keys at the top level, got a list");
    CHECK_ERROR("just words\n", "c.yaml:1: expected a mapping of keys at the top level");
  }
}

TEST_CASE("did you mean") {
  using convoy::closest_match;
  const std::vector<std::string_view> keys = {"mode", "concurrency", "rate", "sessions",
                                              "requests"};
  CHECK(convoy::edit_distance("concurrency", "concurency") == 1);
  CHECK(convoy::edit_distance("mdoe", "mode") == 1);  // a transposition counts once
  CHECK(convoy::edit_distance("ABC", "abc") == 0);
  CHECK(convoy::edit_distance("", "abc") == 3);
  CHECK(closest_match("concurency", keys) == "concurrency");
  CHECK(closest_match("mdoe", keys) == "mode");
  CHECK(closest_match("Rate", keys) == "rate");
  CHECK(closest_match("sess", keys) == "sessions");            // a prefix
  CHECK(closest_match("requests_total", keys) == "requests");  // the key is a prefix
  CHECK_FALSE(closest_match("xyz", keys).has_value());
  CHECK_FALSE(closest_match("r", keys).has_value());
}

TEST_CASE("enum names") {
  CHECK(std::string(convoy::to_string(convoy::Endpoint::kEmbeddings)) == "embeddings");
  CHECK(std::string(convoy::to_string(convoy::DatasetType::kMooncake)) == "mooncake");
  CHECK(std::string(convoy::to_string(convoy::HistoryMode::kRecorded)) == "recorded");
  CHECK(std::string(convoy::to_string(convoy::LoadMode::kTrace)) == "trace");
  CHECK(std::string(convoy::to_string(convoy::Arrival::kConstant)) == "constant");
  CHECK(std::string(convoy::to_string(convoy::SessionRoutingMode::kHeader)) == "header");
  CHECK(convoy::proto::parse_session_routing_mode("legacy") == convoy::SessionRoutingMode::kLegacy);
  CHECK(convoy::proto::parse_session_routing_mode("off") == convoy::SessionRoutingMode::kOff);
  CHECK_FALSE(convoy::proto::parse_session_routing_mode("Bind").has_value());
}

TEST_CASE("target.max_response_bytes is a positive integer, 64 MiB by default") {
  CHECK(Config{}.target.max_response_bytes == 67108864);
  CHECK(parse_config("", "c.yaml").target.max_response_bytes == 67108864);
  CHECK(parse_config("target:\n  max_response_bytes: 1048576\n", "c.yaml")
            .target.max_response_bytes == 1048576);
  CHECK(parse_config("", "c.yaml", {"target.max_response_bytes=4096"}).target.max_response_bytes ==
        4096);
  CHECK(contains(convoy::to_yaml(parse_config("target: {max_response_bytes: 123}\n", "c.yaml")),
                 "  max_response_bytes: 123\n"));
  CHECK_ERROR("target:\n  max_response_bytes: 0\n",
              "c.yaml:2: target.max_response_bytes:", "positive");
  CHECK_ERROR("target:\n  max_response_bytes: -5\n", "c.yaml:2: target.max_response_bytes:");
  CHECK_ERROR("target:\n  max_response_bytes: 64MiB\n",
              "c.yaml:2: target.max_response_bytes:", "expected an integer");
  CHECK_ERROR("target:\n  max_response_bytes: 1.5\n", "c.yaml:2: target.max_response_bytes:");
  CHECK_ERROR("target:\n  max_response_bytes: null\n", "c.yaml:2: target.max_response_bytes:");
}

TEST_CASE("workers.local has an upper bound") {
  CHECK(parse_config("workers: {local: 256}\n", "c.yaml").workers.local ==
        convoy::kMaxLocalWorkers);
  CHECK_ERROR("name: a\nworkers:\n  local: 257\n", "c.yaml:3: workers.local:", "at most 256");
  CHECK_ERROR("workers:\n  local: 100000\n", "c.yaml:2: workers.local:", "at most 256");
  CHECK(contains(error_of("", {"workers.local=5000"}), "--set workers.local=5000"));
}

TEST_CASE("a string that is not valid UTF-8 is an error naming file, line and key") {
  SUBCASE("a top-level string") {
    CHECK_ERROR("seed: 1\nname: \"ok\xff\"\n", "c.yaml:2: name:", "not valid UTF-8");
    CHECK_ERROR("name: caf\xc3\n", "c.yaml:1: name:", "not valid UTF-8");  // truncated
    CHECK_ERROR("name: \xed\xa0\x80x\n", "c.yaml:1: name:");               // a surrogate
    CHECK_ERROR("name: \xc0\xafx\n", "c.yaml:1: name:");                   // overlong '/'
  }
  SUBCASE("nested strings, list items, extra_body and header values") {
    CHECK_ERROR("target:\n  model: m\xfe\n", "c.yaml:2: target.model:", "not valid UTF-8");
    CHECK_ERROR("target:\n  headers:\n    X-A: \"v\x80\"\n", "c.yaml:3: target.headers.X-A:");
    CHECK_ERROR("target:\n  extra_body:\n    a:\n      b: \"\xff\"\n",
                "c.yaml:4: target.extra_body.a.b:");
    CHECK_ERROR("mock:\n  extra_args:\n    - ok\n    - \"\xff\"\n",
                "c.yaml:4: mock.extra_args[1]:");
    CHECK_ERROR("output:\n  dir: \"out-\xff\"\n", "c.yaml:2: output.dir:");
  }
  SUBCASE("a key") {
    const std::string message = error_of("target:\n  extra_body:\n    \"k\xff\": 1\n");
    CHECK(contains(message, "c.yaml:3: target.extra_body.k"));
    CHECK(contains(message, "key is not valid UTF-8"));
    CHECK(convoy::is_valid_utf8(message));  // the message itself shows a replacement character
  }
  SUBCASE("from --set") {
    const std::string message = error_of("", {"name=bad\xff"});
    CHECK(contains(message, "--set name=bad"));
    CHECK(contains(message, "not valid UTF-8"));
  }
  SUBCASE("valid UTF-8 beyond ASCII is fine") {
    const Config c =
        parse_config("name: \"caf\xc3\xa9-\xe5\x90\x8d-\xf0\x9f\x9a\x80\"\n", "c.yaml");
    CHECK(c.name == "caf\xc3\xa9-\xe5\x90\x8d-\xf0\x9f\x9a\x80");
  }
}

TEST_CASE("target and session_routing are the wire structs the workers receive") {
  // One type per concept: a target.* key added to proto::TargetSettings reaches every worker
  // with no copy, no second default and nothing for the worker to parse.
  static_assert(std::is_same_v<convoy::TargetConfig, convoy::proto::TargetSettings>);
  static_assert(
      std::is_same_v<convoy::SessionRoutingConfig, convoy::proto::SessionRoutingSettings>);
  static_assert(std::is_base_of_v<convoy::proto::TargetSettings, convoy::proto::WorkerSettings>);
  const Config c = parse_config(
      "target:\n  request_timeout_s: 12\n  endpoint: embeddings\n"
      "session_routing:\n  mode: header\n",
      "c.yaml");
  convoy::proto::WorkerSettings ws;
  static_cast<convoy::proto::TargetSettings&>(ws) = c.target;
  ws.session_routing = c.session_routing;
  CHECK(ws.request_timeout_s == 12);
  CHECK(ws.endpoint == convoy::proto::Endpoint::kEmbeddings);
  CHECK(ws.session_routing.mode == convoy::proto::SessionRoutingMode::kHeader);
  CHECK(Config{}.target.request_timeout_s == 600);
}
