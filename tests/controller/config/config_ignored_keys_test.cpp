// Keys the chosen load mode or profile never reads are validation warnings with FILE:LINE:key
// (load.rate without mode rate, ...), not silence; and the keys every mode does read stay quiet.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::parse_config;
using convoy::test::contains;

namespace {

std::vector<std::string> warnings_of(const std::string& text,
                                     const std::vector<std::string>& overrides = {}) {
  return parse_config(text, "c.yaml", overrides).warnings;
}

}  // namespace

TEST_CASE("ignored load keys: rate, arrival and burstiness outside rate mode warn at their line") {
  const auto w = warnings_of(
      "load:\n  mode: concurrency\n  concurrency: 8\n  rate: 50\n  arrival: gamma\n"
      "  burstiness: 0.5\n  duration_s: 10\n");
  REQUIRE(w.size() == 3);
  CHECK(contains(w[0], "c.yaml:4: load.rate: ignored: load.mode is concurrency"));
  CHECK(contains(w[0], "set load.mode: rate"));
  CHECK(contains(w[1], "c.yaml:5: load.arrival: ignored: load.mode is concurrency"));
  CHECK(contains(w[2], "c.yaml:6: load.burstiness: ignored:"));

  SUBCASE("the default mode (no load.mode) is concurrency too") {
    const auto d = warnings_of("load: {rate: 50, duration_s: 10}\n");
    REQUIRE(d.size() == 1);
    CHECK(contains(d[0], "c.yaml:1: load.rate: ignored: load.mode is concurrency"));
  }
  SUBCASE("from --set, the warning names the --set") {
    const auto s = warnings_of("load: {duration_s: 10}\n", {"load.rate=5"});
    REQUIRE(s.size() == 1);
    CHECK(contains(s[0], "--set load.rate=5: ignored: load.mode is concurrency"));
  }
  SUBCASE("trace mode reads its timestamps, not a rate") {
    const auto data = std::filesystem::path(CONVOY_SOURCE_DIR) / "configs/data/example.jsonl";
    const auto t = warnings_of("dataset: {type: jsonl, path: " + data.string() +
                               "}\nload: {mode: trace, rate: 3}\n");
    REQUIRE(t.size() == 1);
    CHECK(contains(t[0], "load.rate: ignored: load.mode is trace"));
  }
}

TEST_CASE("ignored load keys: rate mode reads rate and arrival, burstiness only with gamma") {
  CHECK(warnings_of("load: {mode: rate, rate: 5, arrival: gamma, burstiness: 0.5}\n").empty());
  CHECK(warnings_of("load: {mode: rate, rate: 5, arrival: poisson}\n").empty());
  const auto w = warnings_of("load:\n  mode: rate\n  rate: 5\n  burstiness: 2\n");
  REQUIRE(w.size() == 1);
  CHECK(contains(w[0],
                 "c.yaml:4: load.burstiness: ignored: it shapes gamma arrivals, and "
                 "load.arrival is poisson"));
}

TEST_CASE(
    "ignored load keys: a sweep or search of concurrency ignores rate, one of rate ignores "
    "load.rate") {
  const auto sweep = warnings_of(
      "load:\n  mode: rate\n  rate: 9\n  sweep: {concurrency: [1, 2], duration_s: 5}\n");
  REQUIRE(sweep.size() == 2);
  CHECK(contains(sweep[0], "c.yaml:3: load.rate: ignored: load.sweep varies concurrency"));
  CHECK(contains(sweep[1], "c.yaml:2: load.mode: ignored: load.sweep varies concurrency"));

  const auto by_rate = warnings_of(
      "load:\n  rate: 9\n  arrival: constant\n  sweep: {rate: [1, 2], duration_s: 5}\n");
  REQUIRE(by_rate.size() == 1);
  CHECK(contains(by_rate[0], "c.yaml:2: load.rate: ignored: load.sweep gives every step its own"));

  const auto search = warnings_of(
      "load:\n  rate: 9\n  search: {vary: concurrency, low: 1, high: 8, step_duration_s: 5,\n"
      "           slo: {error_rate: 0.1}}\n");
  REQUIRE(search.size() == 1);
  CHECK(contains(search[0], "c.yaml:2: load.rate: ignored: load.search varies concurrency"));
  CHECK(warnings_of("load:\n  mode: concurrency\n  sweep: {concurrency: [1, 2], duration_s: 5}\n")
            .empty());
}

TEST_CASE("ignored load keys: stages read load.rate only where a rate stage omits it") {
  CHECK(warnings_of("load:\n  rate: 7\n  stages:\n    - {mode: rate, duration_s: 5}\n").empty());
  const auto w = warnings_of(
      "load:\n  rate: 7\n  mode: rate\n  stages:\n    - {mode: rate, rate: 3, duration_s: 5}\n"
      "    - {mode: concurrency, concurrency: 2, duration_s: 5}\n"
      "    - {mode: rate, rate: 4, burstiness: 3, duration_s: 5}\n");
  REQUIRE(w.size() == 2);
  CHECK(contains(w[0], "c.yaml:2: load.rate: ignored: no stage of load.stages takes it"));
  CHECK(contains(w[1], "c.yaml:7: load.stages[2].burstiness: ignored: it shapes gamma arrivals"));
}

TEST_CASE("ignored load keys: the example configs raise none") {
  const std::filesystem::path configs = std::filesystem::path(CONVOY_SOURCE_DIR) / "configs";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() != ".yaml") continue;
    const Config c = convoy::load_config(entry.path().string());
    for (const auto& w : c.warnings) {
      CHECK_MESSAGE(!contains(w, ": ignored: "), entry.path().string(), ": ", w);
    }
    ++checked;
  }
  CHECK(checked >= 5);
}

TEST_CASE("ignored load keys: the resolved config, loaded again, raises none") {
  // convoy validate and summary.json write every key resolved (defaults and stage copies).
  for (const char* text :
       {"load: {concurrency: 4, duration_s: 10}\n",
        "load: {mode: rate, rate: 5, arrival: gamma, burstiness: 0.5, duration_s: 10}\n",
        "load:\n  rate: 7\n  arrival: gamma\n  burstiness: 0.5\n  mode: rate\n  stages:\n"
        "    - {duration_s: 5}\n    - {mode: concurrency, concurrency: 2, duration_s: 5}\n",
        "load:\n  sweep: {rate: [1, 2], duration_s: 5}\n",
        "load:\n  search: {vary: rate, low: 1, high: 8, step_duration_s: 5,\n"
        "           slo: {error_rate: 0.1}}\n"}) {
    const Config first = parse_config(text, "c.yaml");
    const Config again = parse_config(convoy::to_yaml(first), "resolved.yaml");
    for (const auto& w : again.warnings) {
      CHECK_MESSAGE(!contains(w, ": ignored: "), text, " -> ", w);
    }
  }
}

TEST_CASE("ignored load keys: a default value is no belief to correct") {
  CHECK(warnings_of("load: {rate: 10, arrival: poisson, burstiness: 1, duration_s: 5}\n").empty());
  CHECK(
      warnings_of("load:\n  mode: concurrency\n  sweep: {rate: [1, 2], duration_s: 5}\n").empty());
}

TEST_CASE("ignored dataset keys: a file dataset's rows give its turns and prompts") {
  const auto data = std::filesystem::path(CONVOY_SOURCE_DIR) / "configs/data/example.jsonl";
  const auto w = warnings_of("dataset:\n  type: jsonl\n  path: " + data.string() +
                             "\n  turns: {mean: 8}\n  input_tokens: {mean: 900, stddev: 10}\n"
                             "  shared_prefix_tokens: 100\n  output_tokens: {mean: 50}\n");
  REQUIRE(w.size() == 3);
  CHECK(contains(w[0], "c.yaml:4: dataset.turns: ignored: a jsonl dataset's rows give"));
  CHECK(contains(w[1], "c.yaml:5: dataset.input_tokens: ignored:"));
  CHECK(contains(w[2], "c.yaml:6: dataset.shared_prefix_tokens: ignored:"));
  CHECK(warnings_of("dataset: {turns: {mean: 8}, shared_prefix_tokens: 100}\n").empty());
}

TEST_CASE("ignored output keys: metrics_linger_s without metrics_listen warns at its line") {
  const auto w = warnings_of("output:\n  html: false\n  metrics_linger_s: 5\n");
  REQUIRE(w.size() == 1);
  CHECK(contains(w[0],
                 "c.yaml:3: output.metrics_linger_s: ignored: output.metrics_listen is not set"));
  CHECK(warnings_of("output:\n  metrics_listen: 127.0.0.1:0\n  metrics_linger_s: 5\n").empty());
  CHECK(warnings_of("output:\n  metrics_linger_s: 0\n").empty());
}
