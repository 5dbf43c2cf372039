// A config from files and from the command line: load_config and the paths it resolves, --set
// overrides, and to_yaml, which prints every key and reads back the same.
#include "controller/config/config.hpp"

#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/cli/keygen.hpp"

namespace fs = std::filesystem;
using convoy::Config;
using convoy::ConfigError;
using convoy::parse_config;

namespace {

using convoy::test::contains;
using convoy::test::error_of;

// A scratch folder under the build tree, emptied per use.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(CONVOY_BINARY_DIR) / "config_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("load_config reads files and names them in errors") {
  const fs::path dir = scratch("files");
  SUBCASE("missing file") {
    const std::string missing = (dir / "missing.yaml").string();
    CHECK_THROWS_WITH_AS(convoy::load_config(missing), (missing + ": no such file").c_str(),
                         ConfigError);
  }
  SUBCASE("a folder") { CHECK_THROWS_AS(convoy::load_config(dir.string()), ConfigError); }
  SUBCASE("an empty file gives the defaults") {
    write_file(dir / "empty.yaml", "");
    const Config c = convoy::load_config((dir / "empty.yaml").string());
    CHECK(c.load.concurrency == 16);
    CHECK(c.source_path == (dir / "empty.yaml").string());
  }
  SUBCASE("errors name the file's path") {
    write_file(dir / "bad.yaml", "load:\n  concurrency: abc\n");
    const std::string path = (dir / "bad.yaml").string();
    CHECK_THROWS_WITH_AS(convoy::load_config(path),
                         (path + ":2: load.concurrency: expected an integer, got 'abc'").c_str(),
                         ConfigError);
  }
  SUBCASE("a dataset path is relative to the config file") {
    fs::create_directories(dir / "sub" / "data");
    write_file(dir / "sub" / "data" / "t.jsonl", "{\"text\": \"hi\"}\n");
    write_file(dir / "sub" / "c.yaml", "dataset:\n  type: jsonl\n  path: data/t.jsonl\n");
    const Config c = convoy::load_config((dir / "sub" / "c.yaml").string());
    REQUIRE(c.dataset.path.has_value());
    CHECK(fs::equivalent(*c.dataset.path, dir / "sub" / "data" / "t.jsonl"));
    write_file(dir / "sub" / "missing.yaml", "dataset:\n  type: mooncake\n  path: nope.jsonl\n");
    CHECK_THROWS_WITH_AS(convoy::load_config((dir / "sub" / "missing.yaml").string()),
                         doctest::Contains("nope.jsonl' does not exist"), ConfigError);
  }
  SUBCASE("curve_keys must be an existing folder (of keys: config_gaps_test.cpp)") {
    REQUIRE(convoy::controller::write_curve_keys((dir / "keys").string(), 1) == 0);
    write_file(dir / "w.yaml", "workers:\n  curve_keys: keys\n");
    const Config c = convoy::load_config((dir / "w.yaml").string());
    REQUIRE(c.workers.curve_keys.has_value());
    CHECK(fs::equivalent(*c.workers.curve_keys, dir / "keys"));
  }
}

TEST_CASE("overrides (--set) apply before validation") {
  const std::string base = "name: base\nload:\n  concurrency: 4\n";
  SUBCASE("scalars, flow mappings and null") {
    const Config c =
        parse_config(base, "c.yaml",
                     {"load.mode=rate", "load.rate=50", "load.sessions=100",
                      "target.extra_body={ignore_eos: true}", "name=other", "load.sessions=null"});
    CHECK(c.load.mode == convoy::LoadMode::kRate);
    CHECK(c.load.rate == 50);
    CHECK_FALSE(c.load.sessions.has_value());  // the later --set wins
    CHECK(c.target.extra_body_json == R"({"ignore_eos":true})");
    CHECK(c.name == "other");
    CHECK(c.load.concurrency == 4);  // untouched keys keep the file's value
  }
  SUBCASE("into sections and maps the file does not have") {
    const Config c = parse_config("", "c.yaml",
                                  {"session_routing.mode=bind", "target.headers.X-Trace=1",
                                   "slo.time_to_first_token=250", "dataset.turns.max=8"});
    CHECK(c.session_routing.mode == convoy::SessionRoutingMode::kBind);
    CHECK(c.target.headers.at("X-Trace") == "1");
    CHECK(c.slo.at("time_to_first_token") == 250);
    CHECK(c.dataset.turns.max == 8);
    CHECK(c.dataset.turns.mean == 4);
  }
  SUBCASE("a value with '=' in it") {
    const Config c = parse_config("", "c.yaml", {"target.headers.X-Q=a=b"});
    CHECK(c.target.headers.at("X-Q") == "a=b");
  }
  SUBCASE("errors name the --set") {
    CHECK(error_of(base, {"load.concurency=8"}) ==
          "--set load.concurency=8: unknown key; did you mean 'load.concurrency'?");
    CHECK(error_of(base, {"laod.rate=5"}) ==
          "--set laod.rate=5: laod: unknown key; did you mean 'load'?");
    CHECK(error_of(base, {"load.concurrency=abc"}) ==
          "--set load.concurrency=abc: expected an integer, got 'abc'");
    CHECK(error_of(base, {"load.concurrency"}) ==
          "--set load.concurrency: expected key.path=value");
    CHECK(error_of(base, {"load..rate=1"}) == "--set load..rate=1: empty key in 'load..rate'");
    CHECK(contains(error_of(base, {"load.rate=[1,"}), "--set load.rate=[1,: invalid YAML value"));
    CHECK(error_of(base, {"name.first=x"}) ==
          "--set name.first=x: 'name' is 'base', not a mapping");
    CHECK(error_of(base, {"dataset={type: jsonl}"}) ==
          "--set dataset={type: jsonl}: dataset.path: required when dataset.type is jsonl");
    CHECK(error_of(base, {"load.mode=trace"}) ==
          "--set load.mode=trace: trace replays recorded timestamps: set dataset.type to "
          "mooncake or jsonl");
  }
  SUBCASE("errors in the file still name the file") {
    CHECK(contains(error_of("load:\n  rate: 0\n", {"load.mode=rate"}),
                   "c.yaml:2: load.rate: must be greater than 0 in rate mode"));
  }
  SUBCASE("a top level that is not a mapping is reported before any --set") {
    CHECK(contains(error_of("[1]\n", {"name=x"}), "c.yaml:1: expected a mapping"));
  }
}

TEST_CASE("to_yaml prints every key and reads back the same") {
  const fs::path dir = fs::path(CONVOY_SOURCE_DIR) / "configs";
  SUBCASE("the examples") {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".yaml") continue;
      CAPTURE(entry.path().string());
      const Config a = convoy::load_config(entry.path().string());
      const Config b = parse_config(convoy::to_yaml(a), entry.path().string());
      CHECK(convoy::to_yaml(b) == convoy::to_yaml(a));
      CHECK(b.name == a.name);
      CHECK(b.target.url == a.target.url);
      CHECK(b.target.extra_body_json == a.target.extra_body_json);
      CHECK(b.dataset.path == a.dataset.path);
      CHECK(b.dataset.turns.max == a.dataset.turns.max);
      CHECK(b.load.concurrency == a.load.concurrency);
      CHECK(b.session_routing.mode == a.session_routing.mode);
      CHECK(b.workers.expect == a.workers.expect);
      CHECK(b.output.dir == a.output.dir);
    }
  }
  SUBCASE("awkward values") {
    const Config a = parse_config(
        "name: \"quo\\\"te: #x\"\n"
        "seed: 7\n"
        "target:\n"
        "  model: \"yes\"\n"
        "  api_key_env: null\n"
        "  headers: {X-A: \"{b}\", X-Empty: \"\"}\n"
        "  extra_body: {s: \"line\\nbreak\", n: 1.25, big: 1e300, neg: -3, q: \"true\",\n"
        "               u: \"caf\\u00e9\", list: [[], {}]}\n"
        "dataset:\n  think_time_ms: {mean: 0.1, stddev: 0.05}\n"
        "mock:\n  extra_args: [\"--a b\", \"'c'\"]\n"
        "load:\n  duration_s: 0.5\n  requests: 9\n"
        "slo: {request_latency: 1000.5}\n"
        "fail_on: {error_rate: 0}\n",
        "a.yaml");
    const std::string yaml = convoy::to_yaml(a);
    const Config b = parse_config(yaml, "a.yaml");
    CHECK(convoy::to_yaml(b) == yaml);
    CHECK(b.name == "quo\"te: #x");
    CHECK(b.target.model == "yes");
    CHECK(b.target.api_key_env.empty());
    CHECK(b.target.headers.at("X-A") == "{b}");
    CHECK(b.target.headers.at("X-Empty").empty());
    CHECK(b.target.extra_body_json == a.target.extra_body_json);
    CHECK(contains(b.target.extra_body_json, R"("q":"true")"));
    CHECK(b.dataset.think_time_ms.mean == 0.1);
    CHECK(b.mock.extra_args == a.mock.extra_args);
    CHECK(b.load.duration_s == 0.5);
    CHECK(b.load.requests == 9);
    CHECK(b.slo.at("request_latency") == 1000.5);
    CHECK(b.fail_on.error_rate == 0);
    CHECK(contains(yaml, "think_time_ms: {mean: 0.1, stddev: 0.05, min: 0, max: null}"));
  }
  SUBCASE("DESIGN order and no secrets") {
    const Config c = parse_config(
        "target:\n  api_key_env: MY_SECRET_KEY\n  headers: {Authorization: Bearer sk-123}\n",
        "s.yaml");
    const std::string yaml = convoy::to_yaml(c);
    CHECK(contains(yaml, "api_key_env: \"MY_SECRET_KEY\""));
    CHECK_FALSE(contains(yaml, "sk-123"));
    CHECK(contains(yaml, "\"Authorization\": \"<redacted>\""));
    std::size_t last = 0;
    for (const char* key : {"name:", "seed:", "target:", "mock:", "dataset:", "load:",
                            "session_routing:", "workers:", "output:", "slo:", "fail_on:"}) {
      const std::size_t at = yaml.find(std::string("\n") + key);
      CHECK_MESSAGE((key == std::string("name:") || (at != std::string::npos && at > last)), key);
      if (at != std::string::npos) last = at;
    }
  }
}
