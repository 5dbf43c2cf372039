// dataset.tenants and dataset.agent_hints: what each conversation tells Dynamo about itself,
// their rules with file:line:key (Dynamo's own ranges: priority i32, strict_priority u32), and
// their round trip through to_yaml.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>

#include "controller/config/config.hpp"

TEST_CASE("dataset.tenants and dataset.agent_hints read and print back") {
  CHECK(convoy::Config{}.dataset.tenants.empty());
  CHECK_FALSE(convoy::Config{}.dataset.agent_hints.has_value());
  const convoy::Config c = convoy::parse_config(
      "dataset:\n"
      "  tenants: [{name: acme, weight: 3}, {name: globex}]\n"
      "  agent_hints:\n"
      "    priority: {mix: [{weight: 1, mean: 10, stddev: 0}, {weight: 1, mean: -5, stddev: 0}]}\n"
      "    strict_priority: 2\n"
      "    osl: true\n"
      "    speculative_prefill: false\n",
      "c.yaml");
  REQUIRE(c.dataset.tenants.size() == 2);
  CHECK(c.dataset.tenants[0].name == "acme");
  CHECK(c.dataset.tenants[0].weight == 3);
  CHECK(c.dataset.tenants[1].weight == 1);
  REQUIRE(c.dataset.agent_hints.has_value());
  REQUIRE(c.dataset.agent_hints->priority.has_value());
  CHECK(c.dataset.agent_hints->priority->mix.size() == 2);
  CHECK(c.dataset.agent_hints->strict_priority->mean == 2);
  CHECK(c.dataset.agent_hints->osl);
  CHECK(c.dataset.agent_hints->speculative_prefill == false);
  const std::string yaml = convoy::to_yaml(c);
  CHECK(convoy::test::contains(yaml,
                               "tenants: [{name: \"acme\", weight: 3}, {name: \"globex\", "
                               "weight: 1}]"));
  const convoy::Config again = convoy::parse_config(yaml, "again.yaml");
  CHECK(again.dataset.tenants.size() == 2);
  REQUIRE(again.dataset.agent_hints.has_value());
  CHECK(again.dataset.agent_hints->priority->mix.size() == 2);
  CHECK(again.dataset.agent_hints->osl);
  CHECK(convoy::to_yaml(again) == yaml);
  const std::string plain = convoy::to_yaml(convoy::Config{});
  CHECK(convoy::test::contains(plain, "tenants: null"));
  CHECK(convoy::test::contains(plain, "agent_hints: null"));
}

TEST_CASE("dataset.tenants and dataset.agent_hints are checked with file:line:key") {
  CHECK_ERROR("dataset:\n  tenants: []\n",
              "c.yaml:2: dataset.tenants: expected a non-empty list of {name, weight}");
  CHECK_ERROR("dataset:\n  tenants: [{name: a, weight: 0}]\n",
              "dataset.tenants[0].weight: must be greater than 0, got 0");
  CHECK_ERROR("dataset:\n  tenants:\n    - {name: a}\n    - {name: a}\n",
              "c.yaml:4: dataset.tenants[1].name: 'a' is listed twice");
  CHECK_ERROR("dataset:\n  tenants: [{weight: 2}]\n",
              "dataset.tenants[0].name: each entry needs a name");
  CHECK_ERROR("dataset:\n  tenants: [{name: a, wieght: 2}]\n",
              "dataset.tenants[0].wieght: unknown key; did you mean");
  CHECK_ERROR(
      "dataset:\n  agent_hints:\n    priority: 2147483648\n",
      "c.yaml:3: dataset.agent_hints.priority: must be at most 2147483647 (Dynamo's range)");
  CHECK_ERROR(
      "dataset:\n  agent_hints:\n    priority: {mix: [{weight: 1, mean: 0}, {weight: 1, "
      "mean: 3000000000}]}\n",
      "dataset.agent_hints.priority: must be at most 2147483647 (Dynamo's range), got 3e+09");
  CHECK_ERROR("dataset:\n  agent_hints:\n    strict_priority: -1\n",
              "c.yaml:3: dataset.agent_hints.strict_priority: must be at least 0, got -1");
  CHECK_ERROR("dataset:\n  agent_hints:\n    priorty: 1\n",
              "c.yaml:3: dataset.agent_hints.priorty: unknown key; did you mean "
              "'dataset.agent_hints.priority'?");
  CHECK_ERROR("dataset:\n  agent_hints: {osl: false}\n",
              "dataset.agent_hints.priority: agent_hints names no hint");
  CHECK_ERROR("dataset:\n  agent_hints: {osl: 12}\n", "dataset.agent_hints.osl");
}
