// load.trace {speedup, start_offset_s, end_offset_s, max_idle_gap_s} and dataset.text: their
// rules with file:line:key, and their round trip through to_yaml.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/config/config.hpp"

namespace {

// A trace run's config with `trace` under load (a real file, so dataset.path exists).
std::string trace_yaml_with(const std::string& trace) {
  static const std::string path = [] {
    const auto file = std::filesystem::temp_directory_path() / "convoy-config-trace.jsonl";
    std::ofstream(file) << "{\"timestamp\": 0, \"input_length\": 4}\n";
    return file.string();
  }();
  return "dataset: {type: mooncake, path: " + path + "}\nload:\n  mode: trace\n  trace: " + trace +
         "\n";
}

}  // namespace

TEST_CASE("load.trace reads speedup, offsets and the idle-gap cap") {
  CHECK_FALSE(convoy::Config{}.load.trace.has_value());
  const convoy::Config c = convoy::parse_config(
      trace_yaml_with("{speedup: 4, start_offset_s: 60, end_offset_s: 660, max_idle_gap_s: 5}"),
      "c.yaml");
  REQUIRE(c.load.trace.has_value());
  CHECK(c.load.trace->speedup == 4);
  CHECK(c.load.trace->start_offset_s == 60);
  CHECK(c.load.trace->end_offset_s == 660);
  CHECK(c.load.trace->max_idle_gap_s == 5);
  const std::string yaml = convoy::to_yaml(c);
  CHECK(convoy::test::contains(
      yaml, "trace: {speedup: 4, start_offset_s: 60, end_offset_s: 660, max_idle_gap_s: 5}"));
  const convoy::Config again = convoy::parse_config(yaml, "again.yaml");
  REQUIRE(again.load.trace.has_value());
  CHECK(again.load.trace->end_offset_s == 660);
  CHECK(convoy::test::contains(convoy::to_yaml(convoy::Config{}), "trace: null"));

  SUBCASE("defaults: speedup 1, from the start, to the end, no cap") {
    const convoy::Config d = convoy::parse_config(trace_yaml_with("{speedup: 2}"), "c.yaml");
    REQUIRE(d.load.trace.has_value());
    CHECK(d.load.trace->start_offset_s == 0);
    CHECK_FALSE(d.load.trace->end_offset_s.has_value());
    CHECK_FALSE(d.load.trace->max_idle_gap_s.has_value());
  }
  SUBCASE("--set reaches each key") {
    const convoy::Config s =
        convoy::parse_config(trace_yaml_with("{}"), "c.yaml", {"load.trace.speedup=3"});
    CHECK(s.load.trace->speedup == 3);
  }
}

TEST_CASE("load.trace is checked with file:line:key") {
  CHECK_ERROR(trace_yaml_with("{speedup: 0}"),
              "c.yaml:4: load.trace.speedup: must be greater than 0", "got 0");
  CHECK_ERROR(trace_yaml_with("{speedup: -2}"), "c.yaml:4: load.trace.speedup:");
  CHECK_ERROR(
      trace_yaml_with("{start_offset_s: 10, end_offset_s: 10}"),
      "c.yaml:4: load.trace.end_offset_s: must be greater than start_offset_s (10), got 10");
  CHECK_ERROR(trace_yaml_with("{start_offset_s: 10, end_offset_s: 5}"),
              "load.trace.end_offset_s: must be greater than start_offset_s");
  CHECK_ERROR(trace_yaml_with("{start_offset_s: -1}"),
              "c.yaml:4: load.trace.start_offset_s: must be between 0 and");
  CHECK_ERROR(trace_yaml_with("{max_idle_gap_s: -0.5}"),
              "c.yaml:4: load.trace.max_idle_gap_s: must be between 0 and", "got -0.5");
  CHECK_ERROR(trace_yaml_with("{speed_up: 2}"),
              "load.trace.speed_up: unknown key; did you mean 'load.trace.speedup'?");
  SUBCASE("without a trace to transform") {
    CHECK_ERROR("load:\n  trace: {speedup: 2}\n",
                "c.yaml:2: load.trace: transforms a trace's timestamps: set load.mode to trace",
                "(load.mode is concurrency)");
    CHECK_ERROR("load:\n  mode: rate\n  trace: {speedup: 2}\n", "load.mode is rate");
    CHECK_ERROR("load:\n  mode: trace\n  trace: {speedup: 2}\n",
                "load.mode: trace replays recorded timestamps: set dataset.type");
  }
}

TEST_CASE("dataset.text: corpus by default, random_tokens with a local tokenizer") {
  CHECK(convoy::Config{}.dataset.text == convoy::DatasetText::kCorpus);
  const auto file = std::filesystem::temp_directory_path() / "convoy-config-text-tokenizer.json";
  std::ofstream(file) << "{}";
  const std::string tokenizer = "dataset:\n  tokenizer: " + file.string() + "\n";
  const convoy::Config c = convoy::parse_config(tokenizer + "  text: random_tokens\n", "c.yaml");
  CHECK(c.dataset.text == convoy::DatasetText::kRandomTokens);
  CHECK(convoy::test::contains(convoy::to_yaml(c), "text: random_tokens"));
  CHECK(convoy::parse_config(convoy::to_yaml(c), "again.yaml").dataset.text ==
        convoy::DatasetText::kRandomTokens);
  CHECK_ERROR("dataset:\n  text: random_tokens\n",
              "c.yaml:2: dataset.text: random_tokens draws from a tokenizer's vocabulary: set "
              "dataset.tokenizer");
  CHECK_ERROR("dataset:\n  tokenizer: server\n  text: random_tokens\n", "c.yaml:3: dataset.text:");
  CHECK_ERROR("dataset:\n  text: random\n", "c.yaml:2: dataset.text:", "random_tokens");
  const auto rows = std::filesystem::temp_directory_path() / "convoy-config-text-rows.jsonl";
  std::ofstream(rows) << "{\"text\": \"hi\"}\n";
  CHECK_ERROR(tokenizer + "  text: random_tokens\n  type: jsonl\n  path: " + rows.string() + "\n",
              "c.yaml:3: dataset.text: synthetic datasets only");
  std::filesystem::remove(file);
  std::filesystem::remove(rows);
}
