// dataset.prefixes: {pool, tokens, per_conversation}, its rules with file:line:key, and its round
// trip through to_yaml.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>

#include "controller/config/config.hpp"

TEST_CASE("dataset.prefixes reads pool, tokens and per_conversation") {
  CHECK_FALSE(convoy::Config{}.dataset.prefixes.has_value());
  const convoy::Config c = convoy::parse_config(
      "dataset:\n  prefixes: {pool: 8, tokens: 512, per_conversation: 2}\n", "c.yaml");
  REQUIRE(c.dataset.prefixes.has_value());
  CHECK(c.dataset.prefixes->pool == 8);
  CHECK(c.dataset.prefixes->tokens == 512);
  CHECK(c.dataset.prefixes->per_conversation == 2);
  const std::string yaml = convoy::to_yaml(c);
  CHECK(convoy::test::contains(yaml, "prefixes: {pool: 8, tokens: 512, per_conversation: 2}"));
  const convoy::Config again = convoy::parse_config(yaml, "again.yaml");
  REQUIRE(again.dataset.prefixes.has_value());
  CHECK(again.dataset.prefixes->per_conversation == 2);
  CHECK(convoy::test::contains(convoy::to_yaml(convoy::Config{}), "prefixes: null"));
}

TEST_CASE("dataset.prefixes is checked with file:line:key") {
  CHECK_ERROR("dataset:\n  prefixes: {pool: 0}\n",
              "c.yaml:2: dataset.prefixes.pool: must be at least 1, got 0");
  CHECK_ERROR("dataset:\n  prefixes: {pool: 2, per_conversation: 3}\n",
              "c.yaml:2: dataset.prefixes.per_conversation: must be at most pool (2), got 3");
  CHECK_ERROR("dataset:\n  prefixes: {pool: 100, per_conversation: 65}\n",
              "dataset.prefixes.per_conversation: out of range");
  CHECK_ERROR("dataset:\n  prefixes:\n    pool: 4\n    token: 10\n",
              "c.yaml:4: dataset.prefixes.token: unknown key; did you mean "
              "'dataset.prefixes.tokens'?");
  CHECK_ERROR("dataset:\n  type: mooncake\n  path: x\n  prefixes: {pool: 2}\n",
              "c.yaml:4: dataset.prefixes: synthetic datasets only");
}
