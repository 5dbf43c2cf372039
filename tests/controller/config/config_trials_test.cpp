// load.trials: an integer >= 1 (default 1), its file:line:key errors, its round trip through
// to_yaml and --set.
#include <doctest/doctest.h>

#include <string>

#include "controller/config/config.hpp"
#include "controller/config_test_util.hpp"

TEST_CASE("load.trials reads a whole count of at least 1, default 1") {
  CHECK(convoy::Config{}.load.trials == 1);
  const convoy::Config c = convoy::parse_config("load:\n  trials: 5\n", "c.yaml");
  CHECK(c.load.trials == 5);
  const std::string yaml = convoy::to_yaml(c);
  CHECK(convoy::test::contains(yaml, "  trials: 5\n"));
  CHECK(convoy::parse_config(yaml, "again.yaml").load.trials == 5);
  CHECK(convoy::parse_config("{}", "c.yaml", {"load.trials=3"}).load.trials == 3);
}

TEST_CASE("load.trials is checked with file:line:key") {
  CHECK_ERROR("load:\n  trials: 0\n", "c.yaml:2", "load.trials");
  CHECK_ERROR("load:\n  trials: -2\n", "c.yaml:2", "load.trials");
  CHECK_ERROR("load:\n  trials: 2.5\n", "c.yaml:2", "load.trials");
  CHECK_ERROR("load:\n  trials: many\n", "c.yaml:2", "load.trials");
  CHECK_ERROR("load:\n  trials: 1000000\n", "load.trials", "1000");
  CHECK_ERROR("load:\n  trails: 3\n", "c.yaml:2", "trials");  // did you mean
}
