// dataset.type sharegpt / aiperf_*: dataset.max_turns, and dataset.output_tokens given or not
// (a sharegpt dataset asks for each recorded reply's length unless it is given), through to_yaml.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <filesystem>
#include <string>

#include "controller/config/config.hpp"

namespace {

std::string sharegpt_yaml(const std::string& extra) {
  const auto path = std::filesystem::path(CONVOY_SOURCE_DIR) / "configs/data/sharegpt-example.json";
  return "dataset:\n  type: sharegpt\n  path: " + path.string() + "\n" + extra;
}

}  // namespace

TEST_CASE("dataset.max_turns and whether output_tokens was given survive to_yaml") {
  const convoy::Config plain = convoy::parse_config(sharegpt_yaml(""), "c.yaml");
  CHECK(plain.dataset.type == convoy::DatasetType::kSharegpt);
  CHECK_FALSE(plain.dataset.output_tokens_set);
  CHECK_FALSE(plain.dataset.max_turns.has_value());
  const std::string yaml = convoy::to_yaml(plain);
  CHECK(convoy::test::contains(yaml, "max_turns: null"));
  CHECK_FALSE(convoy::parse_config(yaml, "again.yaml").dataset.output_tokens_set);

  const convoy::Config fixed = convoy::parse_config(
      sharegpt_yaml("  output_tokens: {mean: 100, stddev: 0}\n  max_turns: 3\n"), "c.yaml");
  CHECK(fixed.dataset.output_tokens_set);
  CHECK(fixed.dataset.max_turns == 3);
  const convoy::Config again = convoy::parse_config(convoy::to_yaml(fixed), "again.yaml");
  CHECK(again.dataset.output_tokens_set);
  CHECK(again.dataset.max_turns == 3);
  CHECK(convoy::parse_config(sharegpt_yaml(""), "c.yaml", {"dataset.output_tokens.mean=9"})
            .dataset.output_tokens_set);
}

TEST_CASE("dataset.max_turns is checked with file:line:key") {
  CHECK_ERROR(sharegpt_yaml("  max_turns: 0\n"), "c.yaml:4: dataset.max_turns: must be at least 1");
  CHECK_ERROR("dataset:\n  max_turns: 2\n",
              "c.yaml:2: dataset.max_turns: applies to dataset.type sharegpt, aiperf_single_turn "
              "and aiperf_multi_turn");
  CHECK_ERROR("dataset:\n  type: aiperf_multi_turn\n", "c.yaml:2: dataset.path");
}
