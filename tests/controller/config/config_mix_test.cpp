// Mixture distributions: {mix: [{weight, mean, stddev, min, max}, ...]} for every distribution key
// (AIPerf's sequence distribution), their file:line:key errors and their round trip through
// to_yaml.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <cmath>
#include <string>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::MixComponent;
using convoy::parse_config;

TEST_CASE("dataset.input_tokens reads a mix of components") {
  const Config c = parse_config(
      "dataset:\n"
      "  input_tokens:\n"
      "    mix:\n"
      "      - {weight: 70, mean: 64, stddev: 10}\n"
      "      - {weight: 30, mean: 1024, stddev: 0, min: 512, max: 2048}\n"
      "  output_tokens: {mix: [{weight: 1, mean: 32}]}\n",
      "c.yaml");
  const auto& d = c.dataset.input_tokens;
  REQUIRE(d.mix.size() == 2);
  CHECK(d.mix[0] == MixComponent{70, 64, 10, 1, std::nullopt});  // min: the key's floor
  CHECK(d.mix[1] == MixComponent{30, 1024, 0, 512, 2048});
  // The mixture's own mean and stddev stand for it in reports.
  CHECK(d.mean == doctest::Approx(0.7 * 64 + 0.3 * 1024));
  const double second = 0.7 * (100 + 64 * 64) + 0.3 * 1024 * 1024;
  CHECK(d.stddev == doctest::Approx(std::sqrt(second - d.mean * d.mean)));
  CHECK(d.min == 1);
  CHECK_FALSE(d.max.has_value());
  REQUIRE(c.dataset.output_tokens.mix.size() == 1);
  CHECK(c.dataset.output_tokens.mix[0].stddev == 0);
}

TEST_CASE("every distribution key takes a mix, and a plain form given later replaces it") {
  const Config c = parse_config(
      "dataset:\n"
      "  turns: {mix: [{weight: 1, mean: 2}, {weight: 1, mean: 8, max: 10}]}\n"
      "  think_time_ms: {mix: [{weight: 1, mean: 0}, {weight: 3, mean: 500, stddev: 50}]}\n"
      "  subagents: {probability: 1, count: {mix: [{weight: 1, mean: 1}, {weight: 1, mean: 4}]}}\n",
      "c.yaml");
  CHECK(c.dataset.turns.mix.size() == 2);
  CHECK(c.dataset.think_time_ms.mix[0].min == 0);  // think time's floor is 0
  CHECK(c.dataset.subagents->count.mix.size() == 2);
  const Config plain = parse_config("dataset: {turns: {mix: [{weight: 1, mean: 2}]}}\n", "c.yaml",
                                    {"dataset.turns={mean: 3, stddev: 0}"});
  CHECK(plain.dataset.turns.mix.empty());
  CHECK(plain.dataset.turns.mean == 3);
}

TEST_CASE("a mix prints back through to_yaml and loads again to the same value") {
  const Config c = parse_config(
      "dataset:\n"
      "  input_tokens: {mix: [{weight: 0.5, mean: 100, stddev: 0}, {weight: 0.5, mean: 1000, "
      "stddev: 20, max: 1200}]}\n",
      "c.yaml");
  const std::string yaml = convoy::to_yaml(c);
  CHECK(convoy::test::contains(yaml,
                               "input_tokens: {mix: [{weight: 0.5, mean: 100, stddev: 0, min: 1, "
                               "max: null}, {weight: 0.5, mean: 1000, stddev: 20, min: 1, max: "
                               "1200}]}"));
  const Config again = parse_config(yaml, "again.yaml");
  CHECK(again.dataset.input_tokens.mix == c.dataset.input_tokens.mix);
  CHECK(again.dataset.input_tokens.mean == c.dataset.input_tokens.mean);
  // The plain form prints as before.
  CHECK(convoy::test::contains(convoy::to_yaml(Config{}),
                               "input_tokens: {mean: 256, stddev: 32, min: 1, max: null}"));
}

TEST_CASE("a bad mix is refused with file:line:key") {
  CHECK_ERROR("dataset:\n  input_tokens: {mix: []}\n",
              "c.yaml:2: dataset.input_tokens.mix: expected a non-empty list");
  CHECK_ERROR("dataset:\n  input_tokens: {mix: 5}\n", "c.yaml:2: dataset.input_tokens.mix");
  CHECK_ERROR(
      "dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 10}\n"
      "      - {weight: -1, mean: 20}\n",
      "c.yaml:5: dataset.input_tokens.mix[1].weight: must be at least 0, got -1");
  CHECK_ERROR(
      "dataset:\n  input_tokens:\n    mix:\n      - {weight: 0, mean: 10}\n",
      "c.yaml:3: dataset.input_tokens.mix: the weights must sum to a positive number, got 0");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mean: 10\n    mix: [{weight: 1, mean: 10}]\n",
              "c.yaml:3: dataset.input_tokens.mean: a mix gives each component its own mean");
  CHECK_ERROR("dataset:\n  input_tokens: {stddev: 2, mix: [{weight: 1, mean: 10}]}\n",
              "dataset.input_tokens.stddev: a mix gives each component");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 10, stdev: 1}\n",
              "c.yaml:4: dataset.input_tokens.mix[0].stdev: unknown key; did you mean "
              "'dataset.input_tokens.mix[0].stddev'?");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {mean: 10}\n",
              "c.yaml:4: dataset.input_tokens.mix[0].weight: each component needs a weight");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - 10\n",
              "c.yaml:4: dataset.input_tokens.mix[0]: expected a mapping");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 0}\n",
              "dataset.input_tokens.mix[0]: mean 0 is outside [1, unbounded]");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 10, stddev: -1}\n",
              "dataset.input_tokens.mix[0].stddev: must be at least 0, got -1");
  CHECK_ERROR(
      "dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 10, min: 20, max: 5}\n",
      "dataset.input_tokens.mix[0]: min 20 is greater than max 5");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {weight: 1, mean: 20000000}\n",
              "c.yaml:4: dataset.input_tokens.mix[0].mean");
  CHECK_ERROR("dataset:\n  input_tokens:\n    mix:\n      - {weight: 1e300, mean: 10}\n",
              "c.yaml:4: dataset.input_tokens.mix[0].weight: out of range");
  CHECK_ERROR("dataset:\n  input_tokens: {mean: 10, mixx: 3}\n",
              "dataset.input_tokens.mixx: unknown key; did you mean 'dataset.input_tokens.mix'?");
}
